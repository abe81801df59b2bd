/** Whether a start of the CLI with `args` (process.argv after the script) uses the cache: every command but the member's `run`. */
export declare function usesCompileCache(args: readonly string[]): boolean;
/** Where the bundle's compile cache lives: dist/bundle/compile-cache, beside the bundle. */
export declare const COMPILE_CACHE_DIR: string;
/** Turns Node's compile cache on for the bundle; Node's status, or undefined when it failed. Never throws. */
export declare function enableCompileCache(
  nodeModule: { enableCompileCache?: (options: string | { directory: string; portable: boolean }) => { status: number } },
  directory?: string,
): number | undefined;
