// The bundle's compile cache (bin/compile-cache.js): a start of the CLI reuses V8's bytecode
// instead of parsing the 5.4 MiB bundle again (issue 31: a restarted leader is ready sooner).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { COMPILE_CACHE_DIR, enableCompileCache, usesCompileCache } from '../../bin/compile-cache.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(path.join(tmpdir(), 'compile-cache-'));
after(() => { rmSync(tmp, { recursive: true, force: true }); });

void describe('the compile cache of the bundle', () => {
  void it('lives beside the bundle, in dist/bundle/compile-cache', () => {
    assert.equal(COMPILE_CACHE_DIR, path.join(root, 'dist', 'bundle', 'compile-cache'));
  });

  void it('asks Node for a portable cache in that directory', () => {
    const calls: unknown[] = [];
    const status = enableCompileCache({ enableCompileCache: (options) => { calls.push(options); return { status: 1 }; } }, '/x');
    assert.equal(status, 1);
    assert.deepEqual(calls, [{ directory: '/x', portable: true }]);
  });

  void it('falls back to the directory alone on a Node without the options form, and never throws', () => {
    const calls: unknown[] = [];
    const older = (options: string | { directory: string; portable: boolean }) => {
      calls.push(options);
      if (typeof options !== 'string') throw new TypeError('ERR_INVALID_ARG_TYPE');
      return { status: 1 };
    };
    assert.equal(enableCompileCache({ enableCompileCache: older }, '/x'), 1);
    assert.deepEqual(calls, [{ directory: '/x', portable: true }, '/x']);
    assert.equal(enableCompileCache({ enableCompileCache: () => { throw new Error('read-only'); } }, '/x'), undefined);
    assert.equal(enableCompileCache({}, '/x'), undefined);
  });

  void it('is used by every command but the member\'s `run`, whose RSS it would grow for the life of the process', () => {
    assert.equal(usesCompileCache(['run', '--config', 'c.yaml']), false);
    for (const args of [['leader', 'run'], ['leader'], ['join'], ['status'], ['version'], [], ['--help']]) assert.equal(usesCompileCache(args), true, args.join(' '));
  });

  void it('is on in the process that runs the command as the launcher starts it: not for `run`, for `leader run` and `version`', async () => {
    // A probe required through NODE_OPTIONS reports, when the process exits, where Node's
    // compile cache is; it runs again in the process the launcher re-executes for the agents.
    // What the launcher imports after (the bundle) needs a build: its exit status is not judged.
    const probe = path.join(tmp, 'print-cache-dir.cjs');
    writeFileSync(probe, "process.on('exit', () => { process.stdout.write(`cacheDir ${JSON.stringify(require('node:module').getCompileCacheDir() ?? null)}\\n`); });\n");
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: `--require ${probe}` };
    delete env['NODE_COMPILE_CACHE'];
    delete env['NODE_DISABLE_COMPILE_CACHE'];
    for (const [args, want] of [[['run', '--help'], null], [['leader', 'run', '--help'], COMPILE_CACHE_DIR], [['version'], COMPILE_CACHE_DIR]] as const) {
      const stdout = await run(process.execPath, [path.join(root, 'bin', 'clusterset-agent.js'), ...args], { env })
        .then((r) => r.stdout, (err: unknown) => (err as { stdout?: string }).stdout ?? '');
      // Node names its subdirectory for the Node version and V8 flags: the bundle's cache is what is asked.
      const seen = stdout.split('\n').filter((l) => l.startsWith('cacheDir ')).map((l) => JSON.parse(l.slice('cacheDir '.length)) as string | null)
        .map((dir) => (dir?.startsWith(COMPILE_CACHE_DIR + path.sep) === true ? COMPILE_CACHE_DIR : dir));
      assert.deepEqual(seen, [want], `${args.join(' ')}: ${stdout}`);
    }
  });

  void it('a second start reads the module from the cache the first one wrote, even moved elsewhere', async () => {
    // A module of its own (the bundle needs a build): what V8 accepts for it, it accepts for the bundle.
    const dir = path.join(tmp, 'a');
    const start = async (where: string) => {
      writeFileSync(path.join(where, 'mod.mjs'), `export const answer = ${'[1,2,3].map((x) => x * 2).length + '.repeat(200)}1;\n`);
      const script = `import m from 'node:module'; import { enableCompileCache } from ${JSON.stringify(pathToFileURL(path.join(root, 'bin', 'compile-cache.js')).href)};
        enableCompileCache(m, ${JSON.stringify(path.join(where, 'cache'))}); await import(${JSON.stringify(pathToFileURL(path.join(where, 'mod.mjs')).href)});`;
      const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' } });
      return stderr;
    };
    await run('mkdir', ['-p', dir]);
    const first = await start(dir);
    assert.doesNotMatch(first, /mod\.mjs was accepted/, first);
    assert.match(await start(dir), /V8 code cache for ESM \S+mod\.mjs was accepted/);
    // Portable: the same files under another path (an image built elsewhere, an npm install) still hit.
    const moved = path.join(tmp, 'b');
    await run('cp', ['-r', dir, moved]);
    assert.match(await start(moved), /V8 code cache for ESM \S+mod\.mjs was accepted/);
  });
});
