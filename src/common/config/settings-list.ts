// The settings listed one by one off the schema, with their environment variables and flags,
// for the command line's parser and --help, the docs and the tests.

import { CONFIG_FILE_OPTION, LEAVES, type Leaf, type LeafKind } from './schema.js';

/** Environment variables loadConfig reads. */
export const CONFIG_ENV_VARS: readonly string[] = [
  CONFIG_FILE_OPTION.env,
  ...LEAVES.flatMap((leaf) => [...(leaf.meta.fallbackEnv === undefined ? [] : [leaf.meta.fallbackEnv]), leaf.meta.env]),
];

/** Flags loadConfig accepts, without the leading `--`. */
export const CONFIG_FLAGS: readonly string[] = [CONFIG_FILE_OPTION.flag, ...LEAVES.flatMap((leaf) => (leaf.meta.flag === undefined ? [] : [leaf.meta.flag]))];

/** A setting as the command line's --help and the README describe it. */
export interface ConfigSetting {
  /** Dotted path in the file, e.g. `heartbeat.intervalSeconds`; undefined for --config itself. */
  readonly path?: string;
  readonly env: string;
  readonly fallbackEnv?: string;
  readonly flag?: string;
  /** What the flag's value is called, e.g. `seconds`. */
  readonly flagValue: string;
  /** true for --leader-elect and the like: `--x`, `--x=false` and `--no-x`. */
  readonly boolean: boolean;
  readonly list: boolean;
  readonly description: string;
  /** The default as text; undefined when there is none (--config). */
  readonly defaultText?: string;
}

function showDefault(leaf: Leaf): string {
  if (leaf.meta.defaultText !== undefined) return leaf.meta.defaultText;
  const value = leaf.default;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  return String(value);
}

const KIND_VALUE: Readonly<Record<LeafKind, string>> = { string: 'value', integer: 'n', number: 'n', boolean: 'true|false', stringList: 'list' };

/** Every setting, then --config, in declaration order. */
export const CONFIG_SETTINGS: readonly ConfigSetting[] = [
  { env: CONFIG_FILE_OPTION.env, flag: CONFIG_FILE_OPTION.flag, flagValue: CONFIG_FILE_OPTION.flagValue, boolean: false, list: false, description: CONFIG_FILE_OPTION.description },
  ...LEAVES.map((leaf): ConfigSetting => ({
    path: leaf.path,
    env: leaf.meta.env,
    ...(leaf.meta.fallbackEnv === undefined ? {} : { fallbackEnv: leaf.meta.fallbackEnv }),
    ...(leaf.meta.flag === undefined ? {} : { flag: leaf.meta.flag }),
    flagValue: leaf.meta.flagValue ?? KIND_VALUE[leaf.kind],
    boolean: leaf.kind === 'boolean',
    list: leaf.kind === 'stringList',
    description: leaf.meta.description,
    defaultText: showDefault(leaf),
  })),
];
