/** The member's V8 options, as they appear in `process.execArgv`. */
export declare const MEMBER_V8_OPTIONS: readonly string[];
/** Node's arguments for running the CLI with `args` when the member's V8 options must be added to `execArgv`, or undefined. */
export declare function memberExecArgv(args: readonly string[], execArgv: readonly string[]): string[] | undefined;
