import type { Plugin } from 'esbuild';

export declare const slimDependencies: Plugin;
export declare const LEFT_OUT: readonly RegExp[];
