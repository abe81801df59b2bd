// V8's bytecode of the bundle, kept next to it (Node's module compile cache). Without it, every
// start parses all 5.4 MiB of the bundle before the first line of the agent runs: about half a
// second on an idle machine, more than a second on a busy one, and a restarted leader reports
// ready that much later (issue 31: `leader run` restart → ready). scripts/bundle.mjs warms the
// cache at build time with the image's V8 flags (V8 keys it by its flags; heap sizes are not
// among them), so the image, whose root filesystem is read-only, starts from it. Where the
// directory is writable, Node also adds what a run compiled on top when the process exits.
// Plain JavaScript, like node-version.js: it runs before the bundle is loaded.
import { fileURLToPath } from 'node:url';

/**
 * Whether a start of the CLI with `args` (process.argv after the script) uses the cache: every
 * command but the member's `run`. With the cache on, the process holds it in memory for its
 * whole life: ~1.6 MiB of the idle member's RSS (bench/member-heap.ts --idle-only, two runs
 * each: 84.5-84.6 MiB with it, 82.9-83.0 without), which the long-running member would pay for
 * a start 0.2-0.3 s sooner (docs/install.md: `--version` in 0.30 s instead of 0.5-0.6) that
 * nothing waits on. The leader keeps it: its restart -> ready is a figure users wait on (issue 31).
 */
export function usesCompileCache(args) {
  return args[0] !== 'run';
}

/** Where the bundle's compile cache lives: dist/bundle/compile-cache, beside the bundle. */
export const COMPILE_CACHE_DIR = fileURLToPath(new URL('../dist/bundle/compile-cache', import.meta.url));

/**
 * Turns the compile cache on for the bundle, `portable` (keyed by paths relative to the cache,
 * so a cache warmed at build time also serves an install elsewhere); a Node without the options
 * form gets the directory alone. Never throws: without a cache the CLI only starts slower.
 * Returns Node's status (module.constants.compileCacheStatus), or undefined when it failed.
 */
export function enableCompileCache(nodeModule, directory = COMPILE_CACHE_DIR) {
  if (typeof nodeModule.enableCompileCache !== 'function') return undefined;
  try {
    return nodeModule.enableCompileCache({ directory, portable: true }).status;
  } catch {
    try {
      return nodeModule.enableCompileCache(directory).status;
    } catch {
      return undefined;
    }
  }
}
