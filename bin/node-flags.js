// V8 options the agents (the member's `run`, the leader's `leader run`) need on Node's command
// line, whatever starts them (the image's ENTRYPOINT, npm's bin, a benchmark). V8 reads them
// only at start (they are refused in NODE_OPTIONS, and v8.setFlagsFromString() after start did
// not change what V8 optimised), so bin/clusterset-agent.js re-executes Node with them, in the
// same process (process.execve), before anything is loaded. The image's ENTRYPOINT gives them
// itself, which spares its starts that second Node (~30 ms).
//
// --max-opt=2: V8 optimises the agents' hot code with Maglev, never with TurboFan. TurboFan's
// code pages in the node binary, its working memory and its code were ~5.5 MiB of the member's
// RSS after importing 2,000 ResourceImports (bench/member-heap.ts, at rest: 109-110 -> 104 MiB),
// for no CPU difference beyond the noise in that sync (7.3-7.8 s with Maglev, 6.8-7.9 s with
// both). The leader at 50 members (bench/fleet.ts' fleet, 200 Services, 100 updates; four runs
// each, interleaved, in two windows of load 5-17): after the rest 90.1-98.2 MiB instead of
// 95.7-102.6, after its restart 88.0-89.4 instead of 94.1-94.7, with the CPU at rest, under
// churn and after the restart the same within the noise (0.32-0.56, 0.86-1.23, 0.54-0.82 s per
// minute against 0.34-0.62, 0.84-1.19, 0.52-0.76). Its restart -> ready (0.75-1.08 s, one run
// 5.4 s, against 0.56-0.92, one 2.7 s) and populate times (10.9-45.2 s against 8.1-30.9) were
// as noisy as the machine, maybe a little slower. --max-opt=1 (no Maglev either) saved ~11 MiB
// of the member's (98.3 MiB at rest), but cost 7-35 % more CPU in the sync, which a sync that
// is mostly the apiserver's time can still feel on a quiet machine. The short commands keep
// V8's defaults.

/** The agents' V8 options, as they appear in `process.execArgv`. */
export const AGENT_V8_OPTIONS = ['--max-opt=2'];

/** Whether `args` (process.argv after the script) start an agent: `run` or `leader run`. */
function isAgent(args) {
  return args[0] === 'run' || (args[0] === 'leader' && args[1] === 'run');
}

/**
 * Node's arguments for running the CLI with `args` (process.argv after the script) when the
 * agents' V8 options must be added to `execArgv` (process.execArgv), or undefined: not an agent
 * (`run`, `leader run`), or already there, or an optimisation tier chosen by whoever started Node.
 */
export function agentExecArgv(args, execArgv) {
  if (!isAgent(args)) return undefined;
  if (execArgv.some((a) => /^--(max-opt|jitless|no-opt|lite-mode|maglev|turbofan|no-maglev|no-turbofan)(=|$)/.test(a))) return undefined;
  return [...execArgv, ...AGENT_V8_OPTIONS];
}
