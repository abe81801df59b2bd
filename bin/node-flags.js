// V8 options the member agent (`run`) needs on Node's command line, whatever starts it (the
// image's ENTRYPOINT, npm's bin, a benchmark). V8 reads them only at start (they are refused in
// NODE_OPTIONS, and v8.setFlagsFromString() after start did not change what V8 optimised), so
// bin/clusterset-agent.js re-executes Node with them, in the same process (process.execve),
// before anything is loaded.
//
// --max-opt=1: V8 runs the member's code in its interpreter and baseline compiler (Sparkplug) and
// never in its optimising compilers (Maglev, TurboFan). Their code pages in the node binary,
// their working memory and the optimised code were ~12 MiB of the member's RSS after importing
// 2,000 ResourceImports (bench/member-heap.ts: 110.6 -> 98.4 MiB at rest), for ~7 % more CPU in
// that sync (6.8 -> 7.3 s; most of its CPU is in C++: JSON, TLS, HTTP/2). The leader's
// controllers (`leader run`) and the short commands keep V8's defaults.

/** The member's V8 options, as they appear in `process.execArgv`. */
export const MEMBER_V8_OPTIONS = ['--max-opt=1'];

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
