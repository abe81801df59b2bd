// Agent configuration: defaults < YAML config file < environment < command-line flags.
//
// The settings, their types, defaults, environment variables and flags are declared once, in
// schema.ts; this module reads them from those sources (the YAML file in config-file.ts) and
// validates them (validate.ts). When the heartbeat fires is heartbeat-schedule.ts. Everything is
// validated up front and reported as one ConfigError listing every problem with where its
// value came from, so a misconfigured Deployment fails once, at start, with the whole story,
// instead of one crash-loop per typo.
//
// - An empty environment variable counts as unset, because Helm templates render unset values
//   as empty strings. Lists are comma-separated there.
// - POD_NAMESPACE ranks just above the built-in default and below the config file (see
//   `fallbackEnv` in schema.ts).
// - --leader-elect, --leader-elect=true|false and --no-leader-elect are all accepted.
// - The YAML file nests keys along the setting paths (`heartbeat:\n  intervalSeconds: 10`);
//   `key:` or `key: null` counts as unset, which is how Helm renders an empty value.
// - Booleans are `true`/`false` (any case). Unknown CSA_* variables are NOT rejected:
//   Kubernetes injects `<SERVICE>_PORT`-style variables for every Service in the namespace, so
//   a Service named `csa` would otherwise crash-loop the agent. Unknown flags and unknown file
//   keys are rejected.

import { readFileSync } from 'node:fs';
import { readConfigFile } from './config-file.js';
import { suggest } from './did-you-mean.js';
import { heartbeatCron } from './heartbeat-schedule.js';
import { COMPUTED_PATHS, CONFIG_FILE_OPTION, CONFIG_SCHEMA, LEAVES, type AgentConfig, type Leaf, type LogValue } from './schema.js';
import { origin, parseText, show, type Setting, type Source } from './setting-value.js';
import { checkRelations, leafProblems } from './validate.js';

export { cidrProblem, parseBindAddress } from './addresses.js';
export {
  EXPORT_ENDPOINT_IP_TYPES,
  HEARTBEAT_INTERVALS,
  IMPORTABLE_KINDS,
  SYSTEM_DENIED_NAMESPACES,
  type AgentConfig,
  type BindConfig,
  type ExportEndpointIPType,
  type ExportPolicyConfig,
  type HeartbeatConfig,
  type ImportableKind,
  type ImportPolicyConfig,
  type LeaderElectionConfig,
  type LeaderModeConfig,
  type StatusConfig,
} from './schema.js';
export { CONFIG_ENV_VARS, CONFIG_FLAGS, CONFIG_SETTINGS, type ConfigSetting } from './settings-list.js';

/** Raised by loadConfig; `problems` holds one line per problem, all of them also in `message`. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    const plural = problems.length === 1 ? '' : 's';
    super(`invalid configuration (${problems.length} problem${plural}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * A flat summary for a start-up log line: the declared settings, read one by one off the
 * schema, rather than spreading the config, so that a field that is not a declared setting
 * (a credential, say) is never logged by accident; plus the computed values.
 */
export function describeConfig(cfg: AgentConfig): Readonly<Record<string, LogValue>> {
  const summary: Record<string, LogValue> = {};
  for (const leaf of LEAVES) {
    const value = getPath(cfg, leaf.path);
    const shown = leaf.meta.log === undefined ? (value as LogValue | undefined) : leaf.meta.log(value, cfg);
    if (shown !== undefined) summary[leaf.path] = shown;
    if (leaf.path === 'heartbeat.intervalSeconds') summary['heartbeat.cron'] = heartbeatCron(cfg.heartbeat.intervalSeconds);
  }
  for (const path of COMPUTED_PATHS.keys()) summary[path] = getPath(cfg, path) as LogValue;
  return summary;
}

// ---------------------------------------------------------------------------------------------
// Flags

type FlagSpec = Leaf | 'config';

const FLAG_SPECS: ReadonlyMap<string, FlagSpec> = new Map<string, FlagSpec>([
  [CONFIG_FILE_OPTION.flag, 'config'],
  ...LEAVES.flatMap((leaf): [string, FlagSpec][] => (leaf.meta.flag === undefined ? [] : [[leaf.meta.flag, leaf]])),
]);

interface FlagResult {
  readonly settings: Map<string, Setting>;
  configPath?: string;
  readonly problems: string[];
}

/** One flag's value into `result`: a string as typed, true for a bare boolean flag, false for `--no-x`. */
function takeFlag(result: FlagResult, name: string, value: string | boolean): void {
  const spec = FLAG_SPECS.get(name);
  if (spec === undefined) {
    result.problems.push(`flag --${name}: unknown flag${suggest(name, [...FLAG_SPECS.keys()], '--')} (known: ${[...FLAG_SPECS.keys()].map((f) => `--${f}`).join(', ')})`);
    return;
  }
  const source: Source = { kind: 'flag', name };
  if (spec !== 'config' && spec.kind === 'boolean' && typeof value === 'boolean') {
    result.settings.set(spec.path, { value, source });
    return;
  }
  if (typeof value === 'boolean') {
    result.problems.push(value ? `flag --${name}: requires a value` : `flag --no-${name}: --${name} takes a value and cannot be negated`);
    return;
  }
  if (spec === 'config') {
    result.configPath = value;
    return;
  }
  const parsed = parseText(spec.kind, value);
  if (parsed.ok) result.settings.set(spec.path, { value: parsed.value, source });
  else result.problems.push(`${spec.path}=${show(value)} (from flag --${name}): ${parsed.reason}`);
}

// ---------------------------------------------------------------------------------------------
// Loading

export interface LoadConfigOptions {
  /**
   * Flags the command-line parser split (src/cli/config-flags.ts), by name without `--` (see
   * CONFIG_SETTINGS): the value as typed, true for a bare boolean flag, false for `--no-<name>`.
   */
  readonly flags?: Readonly<Record<string, string | boolean>>;
  /** Usually `process.env`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Reads the config file as UTF-8. Defaults to fs.readFileSync; tests pass a fake. */
  readonly readFile?: (path: string) => string;
}

/**
 * Builds the agent configuration from defaults, the YAML file (`--config` or CSA_CONFIG), the
 * environment and flags, in increasing precedence. Returns a deeply frozen object, or throws
 * one ConfigError listing every problem found.
 */
export function loadConfig(options: LoadConfigOptions): AgentConfig {
  const env = (name: string): string | undefined => {
    const value = options.env[name];
    return value === undefined || value === '' ? undefined : value;
  };

  const flags: FlagResult = { settings: new Map(), problems: [] };
  for (const [name, value] of Object.entries(options.flags ?? {})) takeFlag(flags, name, value);
  const problems: string[] = [...flags.problems];

  const envSettings = new Map<string, Setting>();
  for (const leaf of LEAVES) {
    const text = env(leaf.meta.env);
    if (text === undefined) continue;
    const parsed = parseText(leaf.kind, text);
    if (parsed.ok) envSettings.set(leaf.path, { value: parsed.value, source: { kind: 'env', name: leaf.meta.env } });
    else problems.push(`${leaf.path}=${show(text)} (from env ${leaf.meta.env}): ${parsed.reason}`);
  }

  let fileSettings = new Map<string, Setting>();
  const configPath = flags.configPath ?? env(CONFIG_FILE_OPTION.env);
  if (configPath !== undefined) {
    const origin = flags.configPath !== undefined ? `flag --${CONFIG_FILE_OPTION.flag}` : `env ${CONFIG_FILE_OPTION.env}`;
    let text: string | undefined;
    try {
      text = (options.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(configPath);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      problems.push(`config file ${configPath} (from ${origin}): cannot be read: ${reason}`);
    }
    if (text !== undefined) {
      const file = readConfigFile(text, configPath, origin);
      fileSettings = file.settings;
      problems.push(...file.problems);
    }
  }

  const merged = new Map<string, Setting>();
  for (const leaf of LEAVES) {
    if (leaf.hasDefault) merged.set(leaf.path, { value: leaf.default, source: { kind: 'default' } });
    const fallback = leaf.meta.fallbackEnv === undefined ? undefined : env(leaf.meta.fallbackEnv);
    if (leaf.meta.fallbackEnv !== undefined && fallback !== undefined) {
      const parsed = parseText(leaf.kind, fallback);
      if (parsed.ok) merged.set(leaf.path, { value: parsed.value, source: { kind: 'env', name: leaf.meta.fallbackEnv } });
      else problems.push(`${leaf.path}=${show(fallback)} (from env ${leaf.meta.fallbackEnv}): ${parsed.reason}`);
    }
  }
  for (const layer of [fileSettings, envSettings, flags.settings]) {
    for (const [path, setting] of layer) merged.set(path, setting);
  }

  for (const leaf of LEAVES) {
    const setting = merged.get(leaf.path);
    if (setting === undefined) continue;
    for (const message of leafProblems(leaf, setting.value)) problems.push(`${origin(merged, leaf.path)}: ${message}`);
  }
  checkRelations(merged, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  const input: Record<string, unknown> = {};
  for (const [path, setting] of merged) setPath(input, path, setting.value);
  return deepFreeze(CONFIG_SCHEMA.parse(input));
}

function getPath(root: unknown, path: string): unknown {
  let node = root;
  for (const segment of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const segments = path.split('.');
  let node = root;
  for (const segment of segments.slice(0, -1)) {
    node[segment] ??= {};
    node = node[segment] as Record<string, unknown>;
  }
  node[segments[segments.length - 1] ?? path] = value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The configuration used when nothing is set: the schema's defaults, through the same loader. */
export const DEFAULT_CONFIG: AgentConfig = loadConfig({ env: {} });
