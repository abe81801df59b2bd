// Bundles the compiled CLI (dist/cli/main.js, from tsc) and its dependencies into one ES
// module, dist/bundle/clusterset-agent.mjs, which bin/clusterset-agent.js and the image run.
//
// Why: loaded module by module, @kubernetes/client-node brings ~2,800 files (every generated
// API and model); V8 keeps each one's source, and that alone was most of the idle agent's
// heap. Tree-shaken and without whitespace, the agent idles at ~95 MiB RSS instead of ~125
// (measured on the same machine after loading, --max-semi-space-size=2). Identifiers are kept,
// so stack traces still name functions and classes; the linked source map (to src/*.ts) is
// read only when Node runs with --enable-source-maps. Since issue 31 the bundle also leaves out
// client-node's generated APIs and models and undici's fetch (scripts/slim-dependencies.mjs):
// 5.4 -> 2.5 MiB, all of it source every agent keeps resident.
//
// dist/bundle/ sits two levels below the package root, like dist/cli/, so the CLI finds
// package.json (its version) at the same relative path.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { COMPILE_CACHE_DIR } from '../bin/compile-cache.js';
import { AGENT_V8_OPTIONS } from '../bin/node-flags.js';
import { builtinsThroughRequire } from './builtins-through-require.mjs';
import { cronUtcWithoutIcu, patched as cronPatched } from './cron-utc-without-icu.mjs';
import { LEFT_OUT, slimDependencies } from './slim-dependencies.mjs';

const root = path.resolve(import.meta.dirname, '..');

const result = await build({
  entryPoints: [path.join(root, 'dist', 'cli', 'main.js')],
  outfile: path.join(root, 'dist', 'bundle', 'clusterset-agent.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  sourcemap: 'linked',
  sourcesContent: false,
  // CommonJS dependencies call require() for Node built-ins, which an ES module lacks.
  banner: { js: "import { createRequire as __csaCreateRequire } from 'node:module'; const require = __csaCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  metafile: true,
  plugins: [builtinsThroughRequire, cronUtcWithoutIcu, slimDependencies],
});
// The member's heartbeat must not load ICU (scripts/cron-utc-without-icu.mjs): a node-cron that
// moved its code elsewhere would bundle unpatched, and the member would be ~8 MiB bigger again.
if (Object.keys(result.metafile.inputs).some((f) => f.includes('node-cron')) && cronPatched.size === 0) {
  throw new Error('node-cron is bundled but scripts/cron-utc-without-icu.mjs patched none of its files: node-cron changed, see that file');
}
// What scripts/slim-dependencies.mjs leaves out (client-node's generated APIs and models,
// undici's fetch) must stay out: ~2.9 MiB of source every agent would keep resident.
const unwanted = Object.keys(result.metafile.inputs).filter((f) => LEFT_OUT.some((pattern) => pattern.test(f)));
if (unwanted.length > 0) throw new Error(`the bundle would take in what scripts/slim-dependencies.mjs leaves out: ${unwanted.slice(0, 5).join(', ')}${unwanted.length > 5 ? ', ...' : ''}`);
const bytes = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined)?.bytes ?? 0;
console.log(`bundled dist/bundle/clusterset-agent.mjs (${(bytes / 2 ** 20).toFixed(1)} MiB)`);

// The compile cache (bin/compile-cache.js), warmed by starts of the new bundle with the image's
// V8 flags (the ENTRYPOINT's --optimize-for-size, and the agents' options added to it by the
// launcher: V8 keys its cache by its flags, and a cache for other flags is no hit). Node
// keeps one cache per user id (a directory named after it): the Dockerfile's build runs as root
// and names the image's user in COMPILE_CACHE_UID, warmed too. The old cache goes first: its
// entries would only be misses for the new bundle.
rmSync(COMPILE_CACHE_DIR, { recursive: true, force: true });
mkdirSync(COMPILE_CACHE_DIR, { recursive: true });
const extraUid = Number(process.env['COMPILE_CACHE_UID'] ?? '');
const users = [undefined, ...(Number.isInteger(extraUid) && extraUid > 0 && extraUid !== process.getuid?.() ? [extraUid] : [])];
for (const uid of users) {
  // The other user writes its own subdirectory: the cache directory is its for the moment.
  if (uid !== undefined) chownSync(COMPILE_CACHE_DIR, uid, uid);
  // Once per set of V8 flags a process of the image runs with: the short commands' and the
  // agents' (bin/node-flags.js adds its options to `run` and `leader run`).
  for (const flags of [[], AGENT_V8_OPTIONS]) {
    const warm = spawnSync(process.execPath, ['--optimize-for-size', ...flags, path.join(root, 'bin', 'clusterset-agent.js'), 'version'],
      { encoding: 'utf8', ...(uid !== undefined && { uid, gid: uid }) });
    if (warm.status !== 0) throw new Error(`warming the compile cache${uid === undefined ? '' : ` for uid ${String(uid)}`} (${['--optimize-for-size', ...flags].join(' ')}): the bundle did not start (exit ${String(warm.status)}): ${warm.stderr}`);
  }
}
// Owned by the builder and readable by all: the agent reads it and never writes it in the image.
for (const entry of readdirSync(COMPILE_CACHE_DIR, { recursive: true, withFileTypes: true })) {
  const file = path.join(entry.parentPath, entry.name);
  if (users.length > 1) chownSync(file, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
  chmodSync(file, entry.isDirectory() ? 0o755 : 0o644);
}
if (users.length > 1) chownSync(COMPILE_CACHE_DIR, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
chmodSync(COMPILE_CACHE_DIR, 0o755);
