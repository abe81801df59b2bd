import type { Plugin } from 'esbuild';
/** Bundled ES imports of node:http read the module through require: no getter of Node's own undici runs. */
export declare const httpThroughRequire: Plugin;
