// Agent configuration: defaults < YAML config file < environment < command-line flags.
//
// Everything is validated up front and reported as one ConfigError listing every problem with
// where its value came from, so a misconfigured Deployment fails once, at start, with the
// whole story, instead of one crash-loop per typo.
//
// Flags and environment variables (an empty environment variable counts as unset, because Helm
// templates render unset values as empty strings):
//
// | field                               | flag                   | environment variable                       |
// |-------------------------------------|------------------------|--------------------------------------------|
// | (config file path)                  | --config               | CSA_CONFIG                                 |
// | namespace                           | --namespace            | CSA_NAMESPACE, else POD_NAMESPACE (*)      |
// | kubeconfig                          | --kubeconfig           | KUBECONFIG                                 |
// | heartbeat.intervalSeconds           | --heartbeat-interval   | CSA_HEARTBEAT_INTERVAL                     |
// | heartbeat.failureThreshold          | --failure-threshold    | CSA_FAILURE_THRESHOLD                      |
// | heartbeat.requestTimeoutSeconds     |                        | CSA_HEARTBEAT_TIMEOUT                      |
// | status.minWriteIntervalMs           |                        | CSA_STATUS_MIN_WRITE_INTERVAL_MS           |
// | logLevel                            | --log-level            | CSA_LOG_LEVEL                              |
// | health.bindAddress                  | --health-bind-address  | CSA_HEALTH_BIND_ADDRESS                    |
// | metrics.bindAddress                 | --metrics-bind-address | CSA_METRICS_BIND_ADDRESS                   |
// | leaderElection.enabled              | --leader-elect (**)    | CSA_LEADER_ELECT                           |
// | leaderElection.leaseName            |                        | CSA_LEADER_ELECT_LEASE_NAME                |
// | leaderElection.leaseDurationSeconds |                        | CSA_LEADER_ELECT_LEASE_DURATION            |
// | leaderElection.renewDeadlineSeconds |                        | CSA_LEADER_ELECT_RENEW_DEADLINE            |
// | leaderElection.retryPeriodSeconds   |                        | CSA_LEADER_ELECT_RETRY_PERIOD              |
// | imports.allowedNamespaces           |                        | CSA_IMPORT_ALLOWED_NAMESPACES (comma list) |
// | imports.deniedNamespaces            |                        | CSA_IMPORT_DENIED_NAMESPACES (comma list)  |
// | imports.allowedKinds                |                        | CSA_IMPORT_ALLOWED_KINDS (comma list)      |
// | imports.maxObjectsPerLeader         |                        | CSA_IMPORT_MAX_OBJECTS_PER_LEADER          |
// | imports.maxObjectBytes              |                        | CSA_IMPORT_MAX_OBJECT_BYTES                |
// | imports.lostLeaderRetentionSeconds  |                        | CSA_IMPORT_LOST_LEADER_RETENTION_SECONDS   |
// | imports.resyncSeconds               |                        | CSA_IMPORT_RESYNC_SECONDS                  |
// | imports.enableLabelIdentity         |                        | CSA_IMPORT_ENABLE_LABEL_IDENTITY           |
// | exports.enabled                     |                        | CSA_EXPORT_ENABLED                         |
// | exports.allowedNamespaces           |                        | CSA_EXPORT_ALLOWED_NAMESPACES (comma list) |
// | exports.deniedNamespaces            |                        | CSA_EXPORT_DENIED_NAMESPACES (comma list)  |
// | exports.endpointIPType              |                        | CSA_EXPORT_ENDPOINT_IP_TYPE                |
// | exports.serviceCIDR                 |                        | CSA_EXPORT_SERVICE_CIDR                    |
// | exports.podCIDRs                    |                        | CSA_EXPORT_POD_CIDRS (comma list)          |
// | leader.namespace                    |                        | CSA_LEADER_NAMESPACE                       |
// | leader.memberTimeoutSeconds         |                        | CSA_LEADER_MEMBER_TIMEOUT                  |
// | leader.staleMemberSeconds           |                        | CSA_LEADER_STALE_MEMBER_SECONDS            |
//
// (*) POD_NAMESPACE ranks just above the built-in default and below the config file. The chart
//     always injects it through the downward API, so it is a better default, not a user choice;
//     ranking it above the file would make the file's `namespace` impossible to use.
// (**) --leader-elect, --leader-elect=true|false and --no-leader-elect are all accepted.
//
// The YAML file nests keys along the field paths (`heartbeat:\n  intervalSeconds: 10`); `key:` or
// `key: null` counts as unset, which is how Helm renders an empty value.
//
// Booleans are `true`/`false` (any case). Unknown CSA_* variables are NOT rejected: Kubernetes
// injects `<SERVICE>_PORT`-style variables for every Service in the namespace, so a Service named
// `csa` would otherwise crash-loop the agent. Unknown flags and unknown file keys are rejected.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { validate as validateCron } from 'node-cron';
import { isAlias, isMap, isScalar, LineCounter, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import { isDnsLabel, isDnsSubdomain } from '../api/names.js';
import { LOG_LEVELS, type LogLevel } from '../log/logger.js';
import { cidrProblem, parseBindAddress } from './addresses.js';

export { cidrProblem, parseBindAddress };

/** Kinds a leader may publish that this agent knows how to import. */
export const IMPORTABLE_KINDS = [
  'ServiceImport',
  'Endpoints',
  'ClusterInfo',
  'AntreaClusterNetworkPolicy',
  'LabelIdentity',
] as const;
export type ImportableKind = (typeof IMPORTABLE_KINDS)[number];

/**
 * Heartbeat intervals node-cron can schedule evenly. A `*\/n` seconds step restarts at every
 * minute, so `*\/7` fires at :56 and again at :00, four seconds later; only divisors of 60 give
 * even spacing. The same holds one field up for whole minutes, which must divide an hour.
 */
export const HEARTBEAT_INTERVALS: readonly number[] = [
  1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60, 120, 180, 240, 300, 360, 600, 720, 900, 1200, 1800, 3600,
];

/** Namespaces never imported into nor exported from, whatever the policies say: the agent's own is added at load time. */
export const SYSTEM_DENIED_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

/**
 * What an exported Service's Endpoints ResourceExport lists, as in Antrea's `endpointIPType`:
 * the Service's ClusterIP, or the ready Pod IPs behind it (from its EndpointSlices).
 */
export const EXPORT_ENDPOINT_IP_TYPES = ['ClusterIP', 'PodIP'] as const;
export type ExportEndpointIPType = (typeof EXPORT_ENDPOINT_IP_TYPES)[number];

export interface HeartbeatConfig {
  /**
   * Seconds between heartbeats to the leader. Default 10: Antrea's member agent also reports
   * every 10 s, so leaders see the cadence they expect. Must be one of HEARTBEAT_INTERVALS.
   */
  readonly intervalSeconds: number;
  /**
   * Consecutive failed beats before the ClusterSet's Ready condition turns False. Default 3,
   * so one dropped request or API-server restart does not flap Ready. At least 1.
   */
  readonly failureThreshold: number;
  /**
   * Timeout of one heartbeat request, in seconds (fractions allowed). Default: half the
   * interval, at most 10. Finishing within half the interval means a timed-out beat has ended,
   * and the status write after it has had time to run, before the next tick, so node-cron never
   * skips a tick as an overlap and N failures really take N intervals. A healthy API server
   * answers in milliseconds, so waiting longer than 10 s only delays detection. Must be less
   * than intervalSeconds × failureThreshold, or one hung request would outlast the whole window.
   */
  readonly requestTimeoutSeconds: number;
}

export interface StatusConfig {
  /**
   * Minimum milliseconds between two status writes to the same ClusterSet. Default 500: enough
   * to merge the bursts of condition changes a reconnect produces into one write, short enough
   * that `kubectl get` looks live. 0 disables the limit.
   */
  readonly minWriteIntervalMs: number;
}

export interface BindConfig {
  /**
   * `[host]:port` to listen on; an empty host means every interface, port 0 an ephemeral port.
   * Health default `:8080`, metrics default `:9090`. For metrics only, `0` disables the server.
   */
  readonly bindAddress: string;
}

export interface LeaderElectionConfig {
  /**
   * Elect one active replica through a Lease. Default false: the chart runs one replica, and
   * election adds Lease writes every retry period for nothing.
   */
  readonly enabled: boolean;
  /** Name of the Lease in `namespace`. Default `clusterset-agent`. A DNS-1123 subdomain. */
  readonly leaseName: string;
  /** Seconds a non-renewed lease stays valid. Default 15 (controller-runtime's). */
  readonly leaseDurationSeconds: number;
  /** Seconds the leader keeps trying to renew before giving up. Default 10; below leaseDurationSeconds. */
  readonly renewDeadlineSeconds: number;
  /** Seconds between acquire/renew attempts. Default 2; below renewDeadlineSeconds. */
  readonly retryPeriodSeconds: number;
}

export interface ImportPolicyConfig {
  /**
   * Namespaces imports may land in. Default empty, meaning every existing namespace except the
   * denied ones. Listing a namespace that is always denied is an error, not a silent no-op.
   */
  readonly allowedNamespaces: readonly string[];
  /** Namespaces imports may not land in, on top of alwaysDeniedNamespaces. Default empty. */
  readonly deniedNamespaces: readonly string[];
  /**
   * Computed, not configurable: kube-system, kube-public, kube-node-lease and `namespace`.
   * A leader must never be able to write into system namespaces or over the agent's own Secrets.
   */
  readonly alwaysDeniedNamespaces: readonly string[];
  /**
   * Kinds accepted from a leader. Default ServiceImport, Endpoints, ClusterInfo (plus
   * LabelIdentity when enableLabelIdentity is on and this is not set). Empty is rejected because
   * "empty means all" and "empty means none" would both be plausible readings.
   */
  readonly allowedKinds: readonly ImportableKind[];
  /** Objects kept per leader before further imports are refused. Default 5000; bounds memory and API load. */
  readonly maxObjectsPerLeader: number;
  /** Largest serialised object accepted, in bytes. Default 262144 (256 KiB), far above any sane ServiceImport. */
  readonly maxObjectBytes: number;
  /**
   * Seconds imported objects are kept after the leader becomes unreachable. Default 600, so a
   * leader upgrade or a short network partition does not delete Services the member relies on.
   * 0 deletes them as soon as the leader is declared lost.
   */
  readonly lostLeaderRetentionSeconds: number;
  /**
   * Seconds between full resyncs: the agent re-lists what it owns in the member and re-checks
   * every ResourceImport, so an imported object deleted or edited by hand is repaired even
   * when the leader sends nothing. Default 600; at least 5.
   */
  readonly resyncSeconds: number;
  /**
   * Import LabelIdentity objects (stretched network policy). Default false: they are only useful
   * with Antrea's stretched policy feature and can be numerous.
   */
  readonly enableLabelIdentity: boolean;
}

export interface ExportPolicyConfig {
  /**
   * Publish this member's ServiceExports (as Service + Endpoints ResourceExports) and its
   * Gateway (as a ClusterInfo ResourceExport) to the leader. Default true, as in Antrea,
   * whose member always exports. false: the agent only announces itself and imports.
   */
  readonly enabled: boolean;
  /**
   * Namespaces whose ServiceExports are published. Default empty, meaning every namespace
   * except the denied ones. Listing a namespace that is always denied is an error, not a
   * silent no-op.
   */
  readonly allowedNamespaces: readonly string[];
  /** Namespaces whose ServiceExports are never published, on top of alwaysDeniedNamespaces. Default empty. */
  readonly deniedNamespaces: readonly string[];
  /**
   * Computed, not configurable: kube-system, kube-public, kube-node-lease and `namespace`.
   * Cluster internals (the API server, DNS) and the agent's own objects are not offered to
   * the other members by a stray ServiceExport.
   */
  readonly alwaysDeniedNamespaces: readonly string[];
  /**
   * What the Endpoints ResourceExport of an exported Service lists: `ClusterIP` (default,
   * Antrea's default) the Service's IPv4 ClusterIP, reachable through the Multi-cluster
   * Gateway; `PodIP` the Service's ready IPv4 Pod IPs, for networks where Pods of different
   * clusters reach each other directly.
   */
  readonly endpointIPType: ExportEndpointIPType;
  /**
   * The Service CIDR published in this member's ClusterInfo. Absent (default): the exporter
   * finds it itself (the Gateway's serviceCIDR, or the cluster's ServiceCIDR objects). A
   * CIDR without host bits, e.g. `10.96.0.0/12` or `fd00:10:96::/108`.
   */
  readonly serviceCIDR?: string;
  /**
   * Pod CIDRs published in this member's ClusterInfo (needed by other members with
   * endpointIPType PodIP to route to this member's Pods). Default empty. CIDRs without host bits.
   */
  readonly podCIDRs: readonly string[];
}

/** `clusterset-agent leader run` only: the leader's controllers. */
export interface LeaderModeConfig {
  /**
   * The leader namespace (the ClusterSet's common area) the leader controllers work in.
   * Absent: the agent's own namespace (as Antrea runs its leader controller there).
   */
  readonly namespace?: string;
  /**
   * Seconds after a member's last heartbeat (`touch-ts` of its MemberClusterAnnounce) before
   * it is Disconnected. Default 30: three beats of a member beating every 10 s (Antrea's too).
   */
  readonly memberTimeoutSeconds: number;
  /**
   * Seconds a member may stay Disconnected before its announce, and with it every export it
   * made, is deleted. Default 86400 (24 h, as Antrea's stale sweep).
   */
  readonly staleMemberSeconds: number;
}

export interface AgentConfig {
  /**
   * Namespace the agent watches for ClusterSets and their Secrets. Default `clusterset-agent`,
   * or POD_NAMESPACE when set. A DNS-1123 label.
   */
  readonly namespace: string;
  /** Path to a kubeconfig for the member cluster. Absent: in-cluster service-account config. */
  readonly kubeconfig?: string;
  readonly heartbeat: HeartbeatConfig;
  readonly status: StatusConfig;
  /** One of error, warn, info, debug. Default info. */
  readonly logLevel: LogLevel;
  readonly health: BindConfig;
  readonly metrics: BindConfig;
  readonly leaderElection: LeaderElectionConfig;
  readonly imports: ImportPolicyConfig;
  readonly exports: ExportPolicyConfig;
  readonly leader: LeaderModeConfig;
}

const DEFAULT_NAMESPACE = 'clusterset-agent';
const DEFAULT_ALLOWED_KINDS: readonly ImportableKind[] = ['ServiceImport', 'Endpoints', 'ClusterInfo'];
const MAX_DEFAULT_REQUEST_TIMEOUT_SECONDS = 10;

function defaultRequestTimeout(intervalSeconds: number): number {
  return Math.min(intervalSeconds / 2, MAX_DEFAULT_REQUEST_TIMEOUT_SECONDS);
}

function alwaysDenied(namespace: string): readonly string[] {
  return [...new Set<string>([...SYSTEM_DENIED_NAMESPACES, namespace])];
}

/** The configuration used when nothing is set. */
export const DEFAULT_CONFIG: AgentConfig = deepFreeze({
  namespace: DEFAULT_NAMESPACE,
  heartbeat: { intervalSeconds: 10, failureThreshold: 3, requestTimeoutSeconds: defaultRequestTimeout(10) },
  status: { minWriteIntervalMs: 500 },
  logLevel: 'info',
  health: { bindAddress: ':8080' },
  metrics: { bindAddress: ':9090' },
  leaderElection: {
    enabled: false,
    leaseName: 'clusterset-agent',
    leaseDurationSeconds: 15,
    renewDeadlineSeconds: 10,
    retryPeriodSeconds: 2,
  },
  imports: {
    allowedNamespaces: [],
    deniedNamespaces: [],
    alwaysDeniedNamespaces: alwaysDenied(DEFAULT_NAMESPACE),
    allowedKinds: DEFAULT_ALLOWED_KINDS,
    maxObjectsPerLeader: 5000,
    maxObjectBytes: 262144,
    lostLeaderRetentionSeconds: 600,
    resyncSeconds: 600,
    enableLabelIdentity: false,
  },
  exports: {
    enabled: true,
    allowedNamespaces: [],
    deniedNamespaces: [],
    alwaysDeniedNamespaces: alwaysDenied(DEFAULT_NAMESPACE),
    endpointIPType: 'ClusterIP',
    podCIDRs: [],
  },
  leader: { memberTimeoutSeconds: 30, staleMemberSeconds: 86400 },
});

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
 * aligned to the wall clock: `*\/10 * * * * *`, `0 *\/2 * * * *`, `0 0 * * * *`.
 * Throws RangeError for an interval outside HEARTBEAT_INTERVALS.
 */
export function heartbeatCron(intervalSeconds: number): string {
  if (!HEARTBEAT_INTERVALS.includes(intervalSeconds)) {
    throw new RangeError(`heartbeat interval ${intervalSeconds}s is not one of ${HEARTBEAT_INTERVALS.join(',')}`);
  }
  let expression: string;
  if (intervalSeconds < 60) expression = `*/${intervalSeconds} * * * * *`;
  else if (intervalSeconds < 3600) expression = `0 */${intervalSeconds / 60} * * * *`;
  else expression = '0 0 * * * *';
  // A guard against this function and node-cron's grammar drifting apart, not against input.
  if (!validateCron(expression)) throw new Error(`node-cron rejected generated expression ${expression}`);
  return expression;
}

/**
 * A flat, explicitly enumerated summary for a start-up log line. Fields are listed one by one,
 * rather than spreading the config, so that a credential-bearing field added later is not
 * logged by accident.
 */
export function describeConfig(cfg: AgentConfig): Readonly<Record<string, string | number | boolean | readonly string[]>> {
  return {
    namespace: cfg.namespace,
    kubeconfig: cfg.kubeconfig ?? '(in-cluster)',
    'heartbeat.intervalSeconds': cfg.heartbeat.intervalSeconds,
    'heartbeat.cron': heartbeatCron(cfg.heartbeat.intervalSeconds),
    'heartbeat.failureThreshold': cfg.heartbeat.failureThreshold,
    'heartbeat.requestTimeoutSeconds': cfg.heartbeat.requestTimeoutSeconds,
    'status.minWriteIntervalMs': cfg.status.minWriteIntervalMs,
    logLevel: cfg.logLevel,
    'health.bindAddress': cfg.health.bindAddress,
    'metrics.bindAddress': cfg.metrics.bindAddress === '0' ? '0 (disabled)' : cfg.metrics.bindAddress,
    'leaderElection.enabled': cfg.leaderElection.enabled,
    'leaderElection.leaseName': cfg.leaderElection.leaseName,
    'leaderElection.leaseDurationSeconds': cfg.leaderElection.leaseDurationSeconds,
    'leaderElection.renewDeadlineSeconds': cfg.leaderElection.renewDeadlineSeconds,
    'leaderElection.retryPeriodSeconds': cfg.leaderElection.retryPeriodSeconds,
    'imports.allowedNamespaces': cfg.imports.allowedNamespaces.length === 0 ? ['(all)'] : cfg.imports.allowedNamespaces,
    'imports.deniedNamespaces': cfg.imports.deniedNamespaces,
    'imports.alwaysDeniedNamespaces': cfg.imports.alwaysDeniedNamespaces,
    'imports.allowedKinds': cfg.imports.allowedKinds,
    'imports.maxObjectsPerLeader': cfg.imports.maxObjectsPerLeader,
    'imports.maxObjectBytes': cfg.imports.maxObjectBytes,
    'imports.lostLeaderRetentionSeconds': cfg.imports.lostLeaderRetentionSeconds,
    'imports.resyncSeconds': cfg.imports.resyncSeconds,
    'imports.enableLabelIdentity': cfg.imports.enableLabelIdentity,
    'exports.enabled': cfg.exports.enabled,
    'exports.allowedNamespaces': cfg.exports.allowedNamespaces.length === 0 ? ['(all)'] : cfg.exports.allowedNamespaces,
    'exports.deniedNamespaces': cfg.exports.deniedNamespaces,
    'exports.alwaysDeniedNamespaces': cfg.exports.alwaysDeniedNamespaces,
    'exports.endpointIPType': cfg.exports.endpointIPType,
    'exports.serviceCIDR': cfg.exports.serviceCIDR ?? '(discovered)',
    'exports.podCIDRs': cfg.exports.podCIDRs,
    'leader.namespace': cfg.leader.namespace ?? `(agent namespace ${cfg.namespace})`,
    'leader.memberTimeoutSeconds': cfg.leader.memberTimeoutSeconds,
    'leader.staleMemberSeconds': cfg.leader.staleMemberSeconds,
  };
}

// ---------------------------------------------------------------------------------------------
// Sources and leaves

type LeafType = 'string' | 'integer' | 'number' | 'boolean' | 'stringList';

interface LeafSpec {
  readonly path: string;
  readonly type: LeafType;
  readonly env?: string;
  readonly flag?: string;
}

const LEAVES: readonly LeafSpec[] = [
  { path: 'namespace', type: 'string', env: 'CSA_NAMESPACE', flag: 'namespace' },
  { path: 'kubeconfig', type: 'string', env: 'KUBECONFIG', flag: 'kubeconfig' },
  { path: 'heartbeat.intervalSeconds', type: 'integer', env: 'CSA_HEARTBEAT_INTERVAL', flag: 'heartbeat-interval' },
  { path: 'heartbeat.failureThreshold', type: 'integer', env: 'CSA_FAILURE_THRESHOLD', flag: 'failure-threshold' },
  { path: 'heartbeat.requestTimeoutSeconds', type: 'number', env: 'CSA_HEARTBEAT_TIMEOUT' },
  { path: 'status.minWriteIntervalMs', type: 'integer', env: 'CSA_STATUS_MIN_WRITE_INTERVAL_MS' },
  { path: 'logLevel', type: 'string', env: 'CSA_LOG_LEVEL', flag: 'log-level' },
  { path: 'health.bindAddress', type: 'string', env: 'CSA_HEALTH_BIND_ADDRESS', flag: 'health-bind-address' },
  { path: 'metrics.bindAddress', type: 'string', env: 'CSA_METRICS_BIND_ADDRESS', flag: 'metrics-bind-address' },
  { path: 'leaderElection.enabled', type: 'boolean', env: 'CSA_LEADER_ELECT', flag: 'leader-elect' },
  { path: 'leaderElection.leaseName', type: 'string', env: 'CSA_LEADER_ELECT_LEASE_NAME' },
  { path: 'leaderElection.leaseDurationSeconds', type: 'integer', env: 'CSA_LEADER_ELECT_LEASE_DURATION' },
  { path: 'leaderElection.renewDeadlineSeconds', type: 'integer', env: 'CSA_LEADER_ELECT_RENEW_DEADLINE' },
  { path: 'leaderElection.retryPeriodSeconds', type: 'integer', env: 'CSA_LEADER_ELECT_RETRY_PERIOD' },
  { path: 'imports.allowedNamespaces', type: 'stringList', env: 'CSA_IMPORT_ALLOWED_NAMESPACES' },
  { path: 'imports.deniedNamespaces', type: 'stringList', env: 'CSA_IMPORT_DENIED_NAMESPACES' },
  { path: 'imports.allowedKinds', type: 'stringList', env: 'CSA_IMPORT_ALLOWED_KINDS' },
  { path: 'imports.maxObjectsPerLeader', type: 'integer', env: 'CSA_IMPORT_MAX_OBJECTS_PER_LEADER' },
  { path: 'imports.maxObjectBytes', type: 'integer', env: 'CSA_IMPORT_MAX_OBJECT_BYTES' },
  { path: 'imports.lostLeaderRetentionSeconds', type: 'integer', env: 'CSA_IMPORT_LOST_LEADER_RETENTION_SECONDS' },
  { path: 'imports.resyncSeconds', type: 'integer', env: 'CSA_IMPORT_RESYNC_SECONDS' },
  { path: 'imports.enableLabelIdentity', type: 'boolean', env: 'CSA_IMPORT_ENABLE_LABEL_IDENTITY' },
  { path: 'exports.enabled', type: 'boolean', env: 'CSA_EXPORT_ENABLED' },
  { path: 'exports.allowedNamespaces', type: 'stringList', env: 'CSA_EXPORT_ALLOWED_NAMESPACES' },
  { path: 'exports.deniedNamespaces', type: 'stringList', env: 'CSA_EXPORT_DENIED_NAMESPACES' },
  { path: 'exports.endpointIPType', type: 'string', env: 'CSA_EXPORT_ENDPOINT_IP_TYPE' },
  { path: 'exports.serviceCIDR', type: 'string', env: 'CSA_EXPORT_SERVICE_CIDR' },
  { path: 'exports.podCIDRs', type: 'stringList', env: 'CSA_EXPORT_POD_CIDRS' },
  { path: 'leader.namespace', type: 'string', env: 'CSA_LEADER_NAMESPACE' },
  { path: 'leader.memberTimeoutSeconds', type: 'integer', env: 'CSA_LEADER_MEMBER_TIMEOUT' },
  { path: 'leader.staleMemberSeconds', type: 'integer', env: 'CSA_LEADER_STALE_MEMBER_SECONDS' },
];

/** Environment variables loadConfig reads, in the order of the table above. */
export const CONFIG_ENV_VARS: readonly string[] = [
  'CSA_CONFIG',
  'POD_NAMESPACE',
  ...LEAVES.flatMap((leaf) => (leaf.env === undefined ? [] : [leaf.env])),
];

/** Flags loadConfig accepts, without the leading `--`. */
export const CONFIG_FLAGS: readonly string[] = [
  'config',
  ...LEAVES.flatMap((leaf) => (leaf.flag === undefined ? [] : [leaf.flag])),
];

// Paths whose value is computed, so the file gets a precise error instead of "unknown key".
const COMPUTED_PATHS = new Map<string, string>([
  ['imports.alwaysDeniedNamespaces', `computed (${SYSTEM_DENIED_NAMESPACES.join(', ')} and the agent namespace), not configurable; use imports.deniedNamespaces`],
  ['exports.alwaysDeniedNamespaces', `computed (${SYSTEM_DENIED_NAMESPACES.join(', ')} and the agent namespace), not configurable; use exports.deniedNamespaces`],
]);

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
// Parsing text (env and flags) and typed YAML values

type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

function parseText(type: LeafType, text: string): Parsed {
  switch (type) {
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

function checkYamlType(spec: LeafSpec, value: unknown): Parsed {
  // YAML reads a bare `0` as a number; it is the documented way to disable metrics.
  if (spec.path === 'metrics.bindAddress' && value === 0) return { ok: true, value: '0' };
  switch (spec.type) {
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
  readonly [key: string]: SchemaTree | LeafSpec;
}

function isLeaf(node: SchemaTree | LeafSpec): node is LeafSpec {
  return typeof (node as { path?: unknown }).path === 'string';
}

const SCHEMA: SchemaTree = buildSchema();

function buildSchema(): SchemaTree {
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
  walk(root, SCHEMA, [], lineOf(root));
  return { settings, problems };

  function walk(node: unknown, schema: SchemaTree, prefix: readonly string[], line: number): void {
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
      const spec = Object.hasOwn(schema, key) ? schema[key] : undefined;
      if (spec === undefined) {
        const known = Object.keys(schema);
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
      const checked = checkYamlType(spec, value);
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

interface FlagResult {
  readonly settings: Map<string, Setting>;
  readonly configPath?: string;
  readonly problems: string[];
}

function readFlags(argv: readonly string[]): FlagResult {
  const specs = new Map<string, LeafSpec | 'config'>([['config', 'config']]);
  for (const leaf of LEAVES) if (leaf.flag !== undefined) specs.set(leaf.flag, leaf);
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const [name, spec] of specs) options[name] = { type: spec !== 'config' && spec.type === 'boolean' ? 'boolean' : 'string' };

  // Non-strict mode with tokens, so that every bad flag is reported instead of only the first.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, allowNegative: true, tokens: true });
  const settings = new Map<string, Setting>();
  const problems: string[] = [];
  let configPath: string | undefined;
  for (const token of tokens) {
    if (token.kind === 'positional') {
      problems.push(`argument ${JSON.stringify(token.value)}: unexpected positional argument (flags take the form --name=value)`);
      continue;
    }
    if (token.kind !== 'option') continue;
    const spec = specs.get(token.name);
    if (spec === undefined) {
      problems.push(`flag ${token.rawName}: unknown flag${suggest(token.name, [...specs.keys()], '--')} (known: ${[...specs.keys()].map((f) => `--${f}`).join(', ')})`);
      continue;
    }
    const negated = token.rawName.startsWith('--no-');
    if (spec !== 'config' && spec.type === 'boolean') {
      if (negated) settings.set(spec.path, { value: false, source: { kind: 'flag', name: token.name } });
      else if (token.value === undefined) settings.set(spec.path, { value: true, source: { kind: 'flag', name: token.name } });
      else {
        const parsed = parseText('boolean', token.value);
        if (parsed.ok) settings.set(spec.path, { value: parsed.value, source: { kind: 'flag', name: token.name } });
        else problems.push(`${spec.path}=${show(token.value)} (from flag --${token.name}): ${parsed.reason}`);
      }
      continue;
    }
    if (negated) {
      problems.push(`flag ${token.rawName}: --${token.name} takes a value and cannot be negated`);
      continue;
    }
    // parseArgs would take the next flag as this one's value (`--namespace --kubeconfig x`).
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      const got = token.value === undefined ? '' : ` (got ${JSON.stringify(token.value)}; write --${token.name}=${token.value} if that is meant)`;
      problems.push(`flag --${token.name}: requires a value${got}`);
      continue;
    }
    if (spec === 'config') {
      configPath = token.value;
      continue;
    }
    const parsed = parseText(spec.type, token.value);
    if (parsed.ok) settings.set(spec.path, { value: parsed.value, source: { kind: 'flag', name: token.name } });
    else problems.push(`${spec.path}=${show(token.value)} (from flag --${token.name}): ${parsed.reason}`);
  }
  return configPath === undefined ? { settings, problems } : { settings, problems, configPath };
}

// ---------------------------------------------------------------------------------------------
// Loading

export interface LoadConfigOptions {
  /** Command-line arguments without the node binary and script, i.e. `process.argv.slice(2)`. */
  readonly argv: readonly string[];
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
  const problems: string[] = [];
  const env = (name: string): string | undefined => {
    const value = options.env[name];
    return value === undefined || value === '' ? undefined : value;
  };

  const flags = readFlags(options.argv);
  problems.push(...flags.problems);

  const envSettings = new Map<string, Setting>();
  for (const leaf of LEAVES) {
    if (leaf.env === undefined) continue;
    const text = env(leaf.env);
    if (text === undefined) continue;
    const parsed = parseText(leaf.type, text);
    if (parsed.ok) envSettings.set(leaf.path, { value: parsed.value, source: { kind: 'env', name: leaf.env } });
    else problems.push(`${leaf.path}=${show(text)} (from env ${leaf.env}): ${parsed.reason}`);
  }

  let fileSettings = new Map<string, Setting>();
  const envConfigPath = env('CSA_CONFIG');
  const configPath = flags.configPath ?? envConfigPath;
  if (configPath !== undefined) {
    const origin = flags.configPath !== undefined ? 'flag --config' : 'env CSA_CONFIG';
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
    const value = getPath(DEFAULT_CONFIG, leaf.path);
    if (value !== undefined) merged.set(leaf.path, { value, source: { kind: 'default' } });
  }
  // The default request timeout follows the interval actually chosen, so it is derived below.
  merged.delete('heartbeat.requestTimeoutSeconds');
  const podNamespace = env('POD_NAMESPACE');
  if (podNamespace !== undefined) merged.set('namespace', { value: podNamespace, source: { kind: 'env', name: 'POD_NAMESPACE' } });
  for (const layer of [fileSettings, envSettings, flags.settings]) {
    for (const [path, setting] of layer) merged.set(path, setting);
  }

  const result = validate(merged, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(result);
}

function getPath(root: unknown, path: string): unknown {
  let node = root;
  for (const segment of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

// ---------------------------------------------------------------------------------------------
// Validation

function validate(merged: ReadonlyMap<string, Setting>, problems: string[]): AgentConfig {
  const setting = (path: string): Setting => {
    const found = merged.get(path);
    if (found === undefined) throw new Error(`internal: no value for ${path}`);
    return found;
  };
  const origin = (path: string): string => `${path}=${show(setting(path).value)} (from ${describeSource(setting(path).source)})`;
  const fail = (path: string, message: string): void => {
    problems.push(`${origin(path)}: ${message}`);
  };
  const str = (path: string): string => setting(path).value as string;
  const num = (path: string): number => setting(path).value as number;
  const bool = (path: string): boolean => setting(path).value as boolean;
  const list = (path: string): readonly string[] => setting(path).value as readonly string[];
  const atLeast = (path: string, min: number): void => {
    if (num(path) < min) fail(path, `must be at least ${min}`);
  };

  const namespace = str('namespace');
  if (!isDnsLabel(namespace)) fail('namespace', 'must be a DNS-1123 label (lower-case letters, digits and -, at most 63 characters)');

  const kubeconfigSetting = merged.get('kubeconfig');
  if (kubeconfigSetting !== undefined && str('kubeconfig') === '') fail('kubeconfig', 'must not be empty; leave it unset to use the in-cluster configuration');

  const interval = num('heartbeat.intervalSeconds');
  if (!HEARTBEAT_INTERVALS.includes(interval)) {
    fail('heartbeat.intervalSeconds', `must be one of ${HEARTBEAT_INTERVALS.join(',')} (the heartbeat is a node-cron schedule, which only repeats evenly at these intervals)`);
  }
  const threshold = num('heartbeat.failureThreshold');
  atLeast('heartbeat.failureThreshold', 1);
  let requestTimeout: number;
  const timeoutSetting = merged.get('heartbeat.requestTimeoutSeconds');
  if (timeoutSetting === undefined) {
    requestTimeout = defaultRequestTimeout(interval);
  } else {
    requestTimeout = num('heartbeat.requestTimeoutSeconds');
    const window = interval * threshold;
    if (requestTimeout <= 0) fail('heartbeat.requestTimeoutSeconds', 'must be greater than 0');
    else if (requestTimeout >= window) {
      fail(
        'heartbeat.requestTimeoutSeconds',
        `must be less than heartbeat.intervalSeconds × heartbeat.failureThreshold = ${window}, or a single hung request outlasts the failure window` +
          ` (${origin('heartbeat.intervalSeconds')}, ${origin('heartbeat.failureThreshold')})`,
      );
    }
  }

  atLeast('status.minWriteIntervalMs', 0);

  const logLevel = str('logLevel');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) fail('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);

  if (parseBindAddress(str('health.bindAddress')) === undefined) {
    fail('health.bindAddress', 'must be [host]:port, e.g. :8080, 127.0.0.1:8080 or [::1]:8080');
  }
  const metricsAddress = str('metrics.bindAddress');
  if (metricsAddress !== '0' && parseBindAddress(metricsAddress) === undefined) {
    fail('metrics.bindAddress', 'must be [host]:port, e.g. :9090, or 0 to disable metrics');
  }

  // Length first: it also bounds the regex's backtracking on long hostile input.
  const leaseName = str('leaderElection.leaseName');
  if (!isDnsSubdomain(leaseName)) {
    fail('leaderElection.leaseName', 'must be a DNS-1123 subdomain (a valid Lease name)');
  }
  atLeast('leaderElection.leaseDurationSeconds', 1);
  atLeast('leaderElection.renewDeadlineSeconds', 1);
  atLeast('leaderElection.retryPeriodSeconds', 1);
  if (num('leaderElection.renewDeadlineSeconds') >= num('leaderElection.leaseDurationSeconds')) {
    fail(
      'leaderElection.renewDeadlineSeconds',
      `must be less than leaderElection.leaseDurationSeconds, or another replica can take the lease while this one still acts as leader (${origin('leaderElection.leaseDurationSeconds')})`,
    );
  }
  if (num('leaderElection.retryPeriodSeconds') >= num('leaderElection.renewDeadlineSeconds')) {
    fail(
      'leaderElection.retryPeriodSeconds',
      `must be less than leaderElection.renewDeadlineSeconds, or the leader gets no second renewal attempt before its deadline (${origin('leaderElection.renewDeadlineSeconds')})`,
    );
  }

  const deniedAlways = alwaysDenied(namespace);
  // The same namespace policy rules for both directions; `what` completes "can never ...".
  const checkNamespacePolicy = (section: 'imports' | 'exports', what: string): void => {
    const allowedPath = `${section}.allowedNamespaces`;
    const deniedPath = `${section}.deniedNamespaces`;
    for (const path of [allowedPath, deniedPath]) {
      const invalid = list(path).filter((ns) => !isDnsLabel(ns));
      if (invalid.length > 0) fail(path, `${invalid.map((ns) => JSON.stringify(ns)).join(', ')} ${invalid.length === 1 ? 'is not a' : 'are not'} valid namespace name${invalid.length === 1 ? '' : 's'}`);
    }
    const allowedButAlwaysDenied = list(allowedPath).filter((ns) => deniedAlways.includes(ns));
    if (allowedButAlwaysDenied.length > 0) {
      fail(allowedPath, `${allowedButAlwaysDenied.join(', ')} can never ${what} (always denied: ${deniedAlways.join(', ')})`);
    }
    const allowedAndDenied = list(allowedPath).filter((ns) => list(deniedPath).includes(ns));
    if (allowedAndDenied.length > 0) {
      fail(allowedPath, `${allowedAndDenied.join(', ')} also listed in ${deniedPath} (${origin(deniedPath)})`);
    }
  };
  const allowedNamespaces = list('imports.allowedNamespaces');
  const deniedNamespaces = list('imports.deniedNamespaces');
  checkNamespacePolicy('imports', 'receive imports');

  const enableLabelIdentity = bool('imports.enableLabelIdentity');
  const kindsSetting = setting('imports.allowedKinds');
  let allowedKinds = list('imports.allowedKinds');
  if (kindsSetting.source.kind === 'default' && enableLabelIdentity) allowedKinds = [...allowedKinds, 'LabelIdentity'];
  const unknownKinds = allowedKinds.filter((kind) => !(IMPORTABLE_KINDS as readonly string[]).includes(kind));
  if (unknownKinds.length > 0) fail('imports.allowedKinds', `unknown kind ${unknownKinds.join(', ')}; allowed: ${IMPORTABLE_KINDS.join(', ')}`);
  if (allowedKinds.length === 0) fail('imports.allowedKinds', `must list at least one of ${IMPORTABLE_KINDS.join(', ')}`);
  if (allowedKinds.includes('LabelIdentity') && !enableLabelIdentity) {
    fail('imports.allowedKinds', `lists LabelIdentity but imports.enableLabelIdentity is false (${origin('imports.enableLabelIdentity')})`);
  }
  if (enableLabelIdentity && !allowedKinds.includes('LabelIdentity')) {
    fail('imports.enableLabelIdentity', `is true but imports.allowedKinds does not list LabelIdentity (${origin('imports.allowedKinds')})`);
  }
  atLeast('imports.maxObjectsPerLeader', 1);
  atLeast('imports.maxObjectBytes', 1);
  atLeast('imports.lostLeaderRetentionSeconds', 0);
  atLeast('imports.resyncSeconds', 5);

  checkNamespacePolicy('exports', 'be exported from');
  const endpointIPType = str('exports.endpointIPType');
  if (!(EXPORT_ENDPOINT_IP_TYPES as readonly string[]).includes(endpointIPType)) {
    fail('exports.endpointIPType', `must be one of ${EXPORT_ENDPOINT_IP_TYPES.join(', ')}`);
  }
  const serviceCIDRSetting = merged.get('exports.serviceCIDR');
  if (serviceCIDRSetting !== undefined) {
    const serviceCIDR = str('exports.serviceCIDR');
    if (serviceCIDR === '') fail('exports.serviceCIDR', 'must not be empty; leave it unset to have the Service CIDR discovered');
    else {
      const problem = cidrProblem(serviceCIDR);
      if (problem !== undefined) fail('exports.serviceCIDR', problem);
    }
  }
  const podCIDRProblems = list('exports.podCIDRs').flatMap((cidr) => {
    const problem = cidrProblem(cidr);
    return problem === undefined ? [] : [`${JSON.stringify(cidr)} ${problem}`];
  });
  if (podCIDRProblems.length > 0) fail('exports.podCIDRs', podCIDRProblems.join('; '));

  const leaderNamespaceSetting = merged.get('leader.namespace');
  if (leaderNamespaceSetting !== undefined && !isDnsLabel(str('leader.namespace'))) {
    fail('leader.namespace', 'must be a DNS-1123 label; leave it unset to use the agent namespace');
  }
  atLeast('leader.memberTimeoutSeconds', 2);
  if (num('leader.staleMemberSeconds') < num('leader.memberTimeoutSeconds')) {
    fail('leader.staleMemberSeconds', `must be at least leader.memberTimeoutSeconds (${origin('leader.memberTimeoutSeconds')}): a member is only stale once it is Disconnected`);
  }

  return {
    namespace,
    ...(kubeconfigSetting === undefined ? {} : { kubeconfig: str('kubeconfig') }),
    heartbeat: { intervalSeconds: interval, failureThreshold: threshold, requestTimeoutSeconds: requestTimeout },
    status: { minWriteIntervalMs: num('status.minWriteIntervalMs') },
    logLevel: logLevel as LogLevel,
    health: { bindAddress: str('health.bindAddress') },
    metrics: { bindAddress: metricsAddress },
    leaderElection: {
      enabled: bool('leaderElection.enabled'),
      leaseName,
      leaseDurationSeconds: num('leaderElection.leaseDurationSeconds'),
      renewDeadlineSeconds: num('leaderElection.renewDeadlineSeconds'),
      retryPeriodSeconds: num('leaderElection.retryPeriodSeconds'),
    },
    imports: {
      allowedNamespaces: [...allowedNamespaces],
      deniedNamespaces: [...deniedNamespaces],
      alwaysDeniedNamespaces: deniedAlways,
      allowedKinds: allowedKinds as readonly ImportableKind[],
      maxObjectsPerLeader: num('imports.maxObjectsPerLeader'),
      maxObjectBytes: num('imports.maxObjectBytes'),
      lostLeaderRetentionSeconds: num('imports.lostLeaderRetentionSeconds'),
      resyncSeconds: num('imports.resyncSeconds'),
      enableLabelIdentity,
    },
    exports: {
      enabled: bool('exports.enabled'),
      allowedNamespaces: [...list('exports.allowedNamespaces')],
      deniedNamespaces: [...list('exports.deniedNamespaces')],
      alwaysDeniedNamespaces: deniedAlways,
      endpointIPType: endpointIPType as ExportEndpointIPType,
      ...(serviceCIDRSetting === undefined ? {} : { serviceCIDR: str('exports.serviceCIDR') }),
      podCIDRs: [...list('exports.podCIDRs')],
    },
    leader: {
      ...(leaderNamespaceSetting === undefined ? {} : { namespace: str('leader.namespace') }),
      memberTimeoutSeconds: num('leader.memberTimeoutSeconds'),
      staleMemberSeconds: num('leader.staleMemberSeconds'),
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
