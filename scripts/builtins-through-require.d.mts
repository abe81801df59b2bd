import type { Plugin } from 'esbuild';
/** Getters some module of the bundle imports by name. */
export declare const IMPORTED_GETTERS: Readonly<Record<string, readonly string[]>>;
/** Bundled ES imports of Node's built-ins read them through require: none of their getters runs. */
export declare const builtinsThroughRequire: Plugin;
