/** The agents' (`run`, `leader run`) V8 options, as they appear in `process.execArgv`. */
export declare const AGENT_V8_OPTIONS: readonly string[];
/** Node's arguments for running the CLI with `args` when the agents' V8 options must be added to `execArgv`, or undefined. */
export declare function agentExecArgv(args: readonly string[], execArgv: readonly string[]): string[] | undefined;
