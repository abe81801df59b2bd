// V8 options the member agent (`run`) needs on Node's command line, whatever starts it (the
// image's ENTRYPOINT, npm's bin, a benchmark). V8 reads them only at start (they are refused in
// NODE_OPTIONS, and v8.setFlagsFromString() after start did not change what V8 optimised), so
// bin/clusterset-agent.js re-executes Node with them, in the same process (process.execve),
// before anything is loaded.
//
// --max-opt=2: V8 optimises the member's hot code with Maglev, never with TurboFan. TurboFan's code
// pages in the node binary, its working memory and its code were ~5.5 MiB of the member's RSS
// after importing 2,000 ResourceImports (bench/member-heap.ts, at rest: 109-110 -> 104 MiB), for
// no CPU difference beyond the noise in that sync (7.3-7.8 s with Maglev, 6.8-7.9 s with both).
// --max-opt=1 (no Maglev either) saved ~11 MiB (98.3 MiB at rest), but cost 7-35 % more CPU in
// the sync, which a sync that is mostly the apiserver's time can still feel on a quiet machine.
// The leader's controllers (`leader run`) and the short commands keep V8's defaults.

/** The member's V8 options, as they appear in `process.execArgv`. */
export const MEMBER_V8_OPTIONS = ['--max-opt=2'];

/**
 * Node's arguments for running the CLI with `args` (process.argv after the script) when the
 * member's V8 options must be added to `execArgv` (process.execArgv), or undefined: not the
 * member (`run`), or already there, or an optimisation tier chosen by whoever started Node.
 */
export function memberExecArgv(args, execArgv) {
  if (args[0] !== 'run') return undefined;
  if (execArgv.some((a) => /^--(max-opt|jitless|no-opt|lite-mode|maglev|turbofan|no-maglev|no-turbofan)(=|$)/.test(a))) return undefined;
  return [...execArgv, ...MEMBER_V8_OPTIONS];
}
