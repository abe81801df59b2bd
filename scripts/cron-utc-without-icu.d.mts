import type { Plugin } from 'esbuild';
/** The stand-in for Intl.DateTimeFormat prepended to node-cron's module. */
export declare const UTC_DATE_TIME_FORMAT: string;
/** Files the plugin patched. */
export declare const patched: Set<string>;
/** node-cron reads a UTC schedule's times from the Date's UTC fields, never through Intl.DateTimeFormat. */
export declare const cronUtcWithoutIcu: Plugin;
