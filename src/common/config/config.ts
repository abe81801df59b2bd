// Agent configuration: defaults < YAML config file < environment < command-line flags.
//
// The settings, their types, defaults, environment variables and flags are declared once, in
// schema.ts; this module reads them from those sources and validates them. Everything is
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
import { validate as validateCron } from 'node-cron';
import { isAlias, isMap, isScalar, LineCounter, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import {
  alwaysDenied,
  COMPUTED_PATHS,
  CONFIG_FILE_OPTION,
  CONFIG_SCHEMA,
  defaultAllowedKinds,
  HEARTBEAT_INTERVALS,
  LEAVES,
  type AgentConfig,
  type Leaf,
  type LeafKind,
  type LogValue,
} from './schema.js';

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
 * The node-cron expression (with a seconds field) that fires every `intervalSeconds`,
 * aligned to the wall clock and shifted by `offsetSeconds` (0 ≤ offset < interval):
 * `*\/10 * * * * *`, `3-59/10 * * * * *`, `0 *\/2 * * * *`, `7 1-59/2 * * * *`, `0 0 * * * *`.
 * Throws RangeError for an interval outside HEARTBEAT_INTERVALS or an offset out of range.
 */
export function heartbeatCron(intervalSeconds: number, offsetSeconds = 0): string {
  if (!HEARTBEAT_INTERVALS.includes(intervalSeconds)) {
    throw new RangeError(`heartbeat interval ${intervalSeconds}s is not one of ${HEARTBEAT_INTERVALS.join(',')}`);
  }
  if (!Number.isInteger(offsetSeconds) || offsetSeconds < 0 || offsetSeconds >= intervalSeconds) {
    throw new RangeError(`heartbeat offset ${offsetSeconds}s must be a whole number of seconds below the interval ${intervalSeconds}s`);
  }
  const second = offsetSeconds % 60;
  const minute = Math.floor(offsetSeconds / 60);
  let expression: string;
  if (intervalSeconds < 60) expression = offsetSeconds === 0 ? `*/${intervalSeconds} * * * * *` : `${offsetSeconds}-59/${intervalSeconds} * * * * *`;
  else if (intervalSeconds < 3600) {
    expression = offsetSeconds === 0 ? `0 */${intervalSeconds / 60} * * * *` : `${second} ${minute}-59/${intervalSeconds / 60} * * * *`;
  } else expression = `${second} ${minute} * * * *`;
  // A guard against this function and node-cron's grammar drifting apart, not against input.
  if (!validateCron(expression)) throw new Error(`node-cron rejected generated expression ${expression}`);
  return expression;
}

/**
 * A member's stable place in the heartbeat interval, from its cluster ID (FNV-1a), so that a
 * fleet of members spreads its writes over the interval instead of all writing to the leader
 * at the same second; the same ID always gets the same offset, across restarts.
 */
export function heartbeatOffsetSeconds(clusterID: string, intervalSeconds: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(clusterID, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % intervalSeconds;
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
// The settings' sources, read off the schema

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

type Source =
  | { readonly kind: 'default' }
  | { readonly kind: 'file'; readonly path: string; readonly line: number }
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'flag'; readonly name: string };

function describeSource(source: Source): string {
  switch (source.kind) {
    case 'default':
      return 'default';
    case 'file':
      return `file ${source.path} line ${source.line}`;
    case 'env':
      return `env ${source.name}`;
    case 'flag':
      return `flag --${source.name}`;
  }
}

interface Setting {
  readonly value: unknown;
  readonly source: Source;
}

function show(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

// ---------------------------------------------------------------------------------------------
// Parsing text (env and flags) and typed YAML values into a setting's kind; the schema checks
// the rest.

type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

function parseText(kind: LeafKind, text: string): Parsed {
  switch (kind) {
    case 'string':
      return { ok: true, value: text };
    case 'integer': {
      const value = Number(text);
      return /^[+-]?[0-9]+$/.test(text.trim()) && Number.isSafeInteger(value)
        ? { ok: true, value }
        : { ok: false, reason: 'must be an integer' };
    }
    case 'number': {
      const value = Number(text);
      return /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text.trim()) && Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, reason: 'must be a number' };
    }
    case 'boolean': {
      const lower = text.trim().toLowerCase();
      if (lower === 'true') return { ok: true, value: true };
      if (lower === 'false') return { ok: true, value: false };
      return { ok: false, reason: 'must be true or false' };
    }
    case 'stringList':
      return {
        ok: true,
        value: text
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== ''),
      };
  }
}

function checkYamlType(kind: LeafKind, value: unknown): Parsed {
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? { ok: true, value } : { ok: false, reason: `must be a string, got ${typeName(value)}` };
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value)
        ? { ok: true, value }
        : { ok: false, reason: `must be an integer, got ${typeName(value)}` };
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, reason: `must be a number, got ${typeName(value)}` };
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, reason: `must be a boolean, got ${typeName(value)}` };
    case 'stringList': {
      if (!Array.isArray(value)) return { ok: false, reason: `must be a list of strings, got ${typeName(value)}` };
      const bad = value.findIndex((item) => typeof item !== 'string');
      return bad === -1
        ? { ok: true, value }
        : { ok: false, reason: `must be a list of strings, item ${bad} is ${typeName(value[bad])}` };
    }
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? `integer ${value}` : `number ${value}`;
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

// ---------------------------------------------------------------------------------------------
// YAML file

interface SchemaTree {
  readonly [key: string]: SchemaTree | Leaf;
}

function isLeaf(node: SchemaTree | Leaf): node is Leaf {
  return typeof (node as { path?: unknown }).path === 'string';
}

const TREE: SchemaTree = buildTree();

function buildTree(): SchemaTree {
  const root: Record<string, unknown> = {};
  for (const leaf of LEAVES) {
    const segments = leaf.path.split('.');
    let node = root;
    for (const segment of segments.slice(0, -1)) {
      node[segment] ??= {};
      node = node[segment] as Record<string, unknown>;
    }
    node[segments[segments.length - 1] ?? leaf.path] = leaf;
  }
  return root as SchemaTree;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function suggest(name: string, candidates: readonly string[], prefix = ''): string {
  const squash = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const best = candidates
    .map((candidate) => ({ candidate, distance: squash(candidate) === squash(name) ? 0 : levenshtein(name, candidate) }))
    .filter(({ distance }) => distance <= 2)
    .sort((x, y) => x.distance - y.distance)[0];
  return best === undefined ? '' : `; did you mean ${prefix}${best.candidate}?`;
}

interface FileResult {
  readonly settings: Map<string, Setting>;
  readonly problems: string[];
}

function readConfigFile(text: string, filePath: string, origin: string): FileResult {
  const settings = new Map<string, Setting>();
  const problems: string[] = [];
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  const yamlIssues = [...doc.errors, ...doc.warnings];
  if (yamlIssues.length > 0) {
    // The parser recovers from errors with guesses; values from a broken file are not used at all.
    for (const issue of yamlIssues) {
      const pos = issue.linePos?.[0];
      const firstLine =
        issue.code === 'MULTIPLE_DOCS' && pos !== undefined
          ? `the file must hold a single YAML document (found a second one at line ${pos.line}, column ${pos.col})`
          : (issue.message.split('\n')[0] ?? issue.message).replace(/:$/, '');
      problems.push(`config file ${filePath} (from ${origin}): YAML ${issue.code}: ${firstLine}`);
    }
    return { settings, problems };
  }
  const lineOf = (node: { range?: [number, number, number] | null } | null | undefined): number =>
    node?.range ? lineCounter.linePos(node.range[0]).line : 1;
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return { settings, problems };
  walk(root, TREE, [], lineOf(root));
  return { settings, problems };

  function walk(node: unknown, tree: SchemaTree, prefix: readonly string[], line: number): void {
    const resolved = resolveAlias(doc, node);
    const where = prefix.length === 0 ? 'the top level' : prefix.join('.');
    if (!isMap(resolved)) {
      problems.push(`${where} (from file ${filePath} line ${line}): must be a mapping, got ${typeName(toJs(doc, resolved))}`);
      return;
    }
    for (const pair of resolved.items) {
      const keyNode = pair.key as YamlNode | null;
      const keyLine = lineOf(keyNode);
      const key = isScalar(keyNode) ? String(keyNode.value) : JSON.stringify(toJs(doc, keyNode));
      const path = [...prefix, key];
      const dotted = path.join('.');
      const valueNode = resolveAlias(doc, pair.value);
      const value = toJs(doc, valueNode);
      const computed = COMPUTED_PATHS.get(dotted);
      if (computed !== undefined) {
        problems.push(`${dotted} (from file ${filePath} line ${keyLine}): ${computed}`);
        continue;
      }
      const spec = Object.hasOwn(tree, key) ? tree[key] : undefined;
      if (spec === undefined) {
        const known = Object.keys(tree);
        problems.push(`${dotted} (from file ${filePath} line ${keyLine}): unknown key under ${where}${suggest(key, known)} (known: ${known.join(', ')})`);
        continue;
      }
      // `key:` with nothing after it, or `key: null`, leaves the lower layers in charge. Helm
      // renders an unset value that way, and it cannot be a typo of anything.
      if (value === null || value === undefined) continue;
      if (!isLeaf(spec)) {
        walk(valueNode, spec, path, keyLine);
        continue;
      }
      const checked = checkYamlType(spec.kind, spec.meta.fromYaml === undefined ? value : spec.meta.fromYaml(value));
      if (checked.ok) settings.set(spec.path, { value: checked.value, source: { kind: 'file', path: filePath, line: keyLine } });
      else problems.push(`${spec.path}=${show(value)} (from file ${filePath} line ${keyLine}): ${checked.reason}`);
    }
  }
}

function resolveAlias(doc: Document, node: unknown): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

function toJs(doc: Document, node: unknown): unknown {
  if (node === null || node === undefined) return null;
  const withToJs = node as { toJS?: (doc: Document) => unknown };
  return typeof withToJs.toJS === 'function' ? withToJs.toJS(doc) : node;
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

function origin(merged: ReadonlyMap<string, Setting>, path: string): string {
  const setting = merged.get(path);
  if (setting === undefined) throw new Error(`internal: no value for ${path}`);
  return `${path}=${show(setting.value)} (from ${describeSource(setting.source)})`;
}

// The schema's constraint messages where they are not written at the constraint itself.
const defaultMessage = (issue: z.core.$ZodRawIssue): string | undefined => {
  if (issue.code === 'too_small') {
    if (issue.origin === 'array') return `must list at least ${issue.minimum}`;
    return issue.inclusive === true ? `must be at least ${issue.minimum}` : `must be greater than ${issue.minimum}`;
  }
  if (issue.code === 'too_big') {
    if (issue.origin === 'array') return `must list at most ${issue.maximum}`;
    if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
    return issue.inclusive === true ? `must be at most ${issue.maximum}` : `must be less than ${issue.maximum}`;
  }
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map(String).join(', ')}`;
  return undefined;
};

/** What is wrong with one setting's value, one line per distinct problem. */
function leafProblems(leaf: Leaf, value: unknown): string[] {
  const result = leaf.check.safeParse(value, { error: defaultMessage });
  if (result.success) return [];
  const messages: string[] = [];
  const itemIssues = result.error.issues.filter((issue) => issue.path.length > 0);
  if (itemIssues.length > 0) {
    const items = value as readonly unknown[];
    const badIndexes = [...new Set(itemIssues.map((issue) => Number(issue.path[0])))];
    messages.push(
      leaf.meta.badItems === undefined
        ? itemIssues.map((issue) => `item ${String(issue.path[0])} ${show(items[Number(issue.path[0])])}: ${issue.message}`).join('; ')
        : leaf.meta.badItems(badIndexes.map((i) => items[i])),
    );
  }
  messages.push(...result.error.issues.filter((issue) => issue.path.length === 0).map((issue) => issue.message));
  return [...new Set(messages)];
}

/** Checks between settings: each problem names where every value involved came from. */
function checkRelations(merged: ReadonlyMap<string, Setting>, problems: string[]): void {
  const value = (path: string): unknown => {
    const setting = merged.get(path);
    if (setting === undefined) throw new Error(`internal: no value for ${path}`);
    return setting.value;
  };
  const at = (path: string): string => origin(merged, path);
  const fail = (path: string, message: string): void => {
    problems.push(`${at(path)}: ${message}`);
  };
  const num = (path: string): number => value(path) as number;
  const list = (path: string): readonly string[] => value(path) as readonly string[];

  if (merged.has('heartbeat.requestTimeoutSeconds')) {
    const window = num('heartbeat.intervalSeconds') * num('heartbeat.failureThreshold');
    const timeout = num('heartbeat.requestTimeoutSeconds');
    if (timeout > 0 && timeout >= window) {
      fail(
        'heartbeat.requestTimeoutSeconds',
        `must be less than heartbeat.intervalSeconds × heartbeat.failureThreshold = ${window}, or a single hung request outlasts the failure window` +
          ` (${at('heartbeat.intervalSeconds')}, ${at('heartbeat.failureThreshold')})`,
      );
    }
  }

  if (num('leaderElection.renewDeadlineSeconds') >= num('leaderElection.leaseDurationSeconds')) {
    fail(
      'leaderElection.renewDeadlineSeconds',
      `must be less than leaderElection.leaseDurationSeconds, or another replica can take the lease while this one still acts as leader (${at('leaderElection.leaseDurationSeconds')})`,
    );
  }
  if (num('leaderElection.retryPeriodSeconds') >= num('leaderElection.renewDeadlineSeconds')) {
    fail(
      'leaderElection.retryPeriodSeconds',
      `must be less than leaderElection.renewDeadlineSeconds, or the leader gets no second renewal attempt before its deadline (${at('leaderElection.renewDeadlineSeconds')})`,
    );
  }

  // The same namespace policy rules for both directions; `what` completes "can never ...".
  const deniedAlways = alwaysDenied(value('namespace') as string);
  const checkNamespacePolicy = (section: 'imports' | 'exports', what: string): void => {
    const allowedPath = `${section}.allowedNamespaces`;
    const deniedPath = `${section}.deniedNamespaces`;
    const allowedButAlwaysDenied = list(allowedPath).filter((ns) => deniedAlways.includes(ns));
    if (allowedButAlwaysDenied.length > 0) {
      fail(allowedPath, `${allowedButAlwaysDenied.join(', ')} can never ${what} (always denied: ${deniedAlways.join(', ')})`);
    }
    const allowedAndDenied = list(allowedPath).filter((ns) => list(deniedPath).includes(ns));
    if (allowedAndDenied.length > 0) {
      fail(allowedPath, `${allowedAndDenied.join(', ')} also listed in ${deniedPath} (${at(deniedPath)})`);
    }
  };
  checkNamespacePolicy('imports', 'receive imports');

  const enableLabelIdentity = value('imports.enableLabelIdentity') as boolean;
  const allowedKinds: readonly string[] = merged.has('imports.allowedKinds') ? list('imports.allowedKinds') : defaultAllowedKinds(enableLabelIdentity);
  if (allowedKinds.includes('LabelIdentity') && !enableLabelIdentity) {
    fail('imports.allowedKinds', `lists LabelIdentity but imports.enableLabelIdentity is false (${at('imports.enableLabelIdentity')})`);
  }
  if (enableLabelIdentity && !allowedKinds.includes('LabelIdentity') && merged.has('imports.allowedKinds')) {
    fail('imports.enableLabelIdentity', `is true but imports.allowedKinds does not list LabelIdentity (${at('imports.allowedKinds')})`);
  }

  checkNamespacePolicy('exports', 'be exported from');

  if (num('leader.staleMemberSeconds') < num('leader.memberTimeoutSeconds')) {
    fail('leader.staleMemberSeconds', `must be at least leader.memberTimeoutSeconds (${at('leader.memberTimeoutSeconds')}): a member is only stale once it is Disconnected`);
  }
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
