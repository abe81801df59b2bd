// The agent's configuration schema: every setting is declared here once, with its type,
// constraints, default, environment variable, flag and documentation. Everything else is
// derived from it:
//
// - the TypeScript type AgentConfig (z.output of CONFIG_SCHEMA, deeply readonly);
// - loading and validation in config.ts (defaults < file < environment < flags);
// - the command line's flags and their --help text (src/cli/main.ts);
// - the README's configuration table and the `config` section of the chart's
//   values.schema.json (docs.ts, written by `npm run config:docs`; a unit test fails when
//   they are stale).
//
// Relations between settings (a timeout below an interval, a namespace both allowed and
// denied, ...) are checked in config.ts, where the message can name where each value came from.
import { z } from 'zod';
import { LOG_LEVELS } from '../log/logger.js';
import { cidrProblem, parseBindAddress } from './addresses.js';
import { DEFAULT_LEADER_NAMESPACE } from '../api/names.js';

/** Kinds a leader may publish that this agent knows how to import. */
export const IMPORTABLE_KINDS = [
  'ServiceImport',
  'Endpoints',
  'ClusterInfo',
  'AntreaClusterNetworkPolicy',
  'LabelIdentity',
] as const;
export type ImportableKind = (typeof IMPORTABLE_KINDS)[number];

/** Imported unless imports.allowedKinds says otherwise (plus LabelIdentity with imports.enableLabelIdentity). */
export const DEFAULT_ALLOWED_KINDS: readonly ImportableKind[] = ['ServiceImport', 'Endpoints', 'ClusterInfo'];

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

const MAX_DEFAULT_REQUEST_TIMEOUT_SECONDS = 10;

/** heartbeat.requestTimeoutSeconds when unset: half the interval, at most 10 s. */
export function defaultRequestTimeout(intervalSeconds: number): number {
  return Math.min(intervalSeconds / 2, MAX_DEFAULT_REQUEST_TIMEOUT_SECONDS);
}

/** imports/exports.alwaysDeniedNamespaces: the system namespaces and the agent's own. */
export function alwaysDenied(namespace: string): string[] {
  return [...new Set<string>([...SYSTEM_DENIED_NAMESPACES, namespace])];
}

/** imports.allowedKinds when unset. */
export function defaultAllowedKinds(enableLabelIdentity: boolean): ImportableKind[] {
  return enableLabelIdentity ? [...DEFAULT_ALLOWED_KINDS, 'LabelIdentity'] : [...DEFAULT_ALLOWED_KINDS];
}

/** A value as the start-up log line shows it. */
export type LogValue = string | number | boolean | readonly string[];

/** What a setting is besides its type: where it is read from and how it is documented. */
export interface FieldMeta {
  /** Environment variable. An empty value counts as unset (Helm renders unset values as ""). */
  readonly env: string;
  /** A variable ranking just above the default and below the config file. */
  readonly fallbackEnv?: string;
  /** Command-line flag, without the leading `--`. */
  readonly flag?: string;
  /** What the flag's value is called in --help. Default: from the type. */
  readonly flagValue?: string;
  /** One sentence, for --help and the chart's values.schema.json. */
  readonly description: string;
  /** The README table's notes column. Default: the description. */
  readonly notes?: string;
  /** The default in words, where it is derived or reads better in words. */
  readonly defaultText?: string;
  /** Why the Helm chart's `config` values do not take this setting (the chart renders it itself). */
  readonly notInChart?: string;
  /** Rewrites a value read from the YAML file before its type is checked. */
  readonly fromYaml?: (value: unknown) => unknown;
  /** One problem for all the bad items of a list, e.g. `"a.b", "-x" are not valid namespace names`. */
  readonly badItems?: (items: readonly unknown[]) => string;
  /** How the start-up log line shows the value (absent when the setting is unset). */
  readonly log?: (value: unknown, config: { readonly namespace: string }) => LogValue;
}

/** Settings' metadata, keyed by the (outermost) zod schema of each setting. */
export const FIELDS = z.registry<FieldMeta>();

function field<T extends z.ZodType>(schema: T, meta: FieldMeta): T {
  FIELDS.add(schema, meta);
  return schema;
}

// Kubernetes name rules as patterns, so that the chart's JSON schema checks exactly what the
// agent checks (apimachinery's IsDNS1123Label / IsDNS1123Subdomain; a test holds them to
// src/common/api/names.ts). The length check aborts first: it also bounds the regex on hostile input.
const DNS_LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL_MESSAGE = 'must be a DNS-1123 label (lower-case letters, digits and -, at most 63 characters)';

function dnsLabel(error = DNS_LABEL_MESSAGE) {
  return z.string().max(63, { error, abort: true }).regex(DNS_LABEL_PATTERN, { error });
}

function dnsSubdomain(error: string) {
  return z.string().max(253, { error, abort: true }).regex(DNS_SUBDOMAIN_PATTERN, { error });
}

// A loose pattern for JSON schema (the chart), then the agent's full check.
const CIDR_PATTERN = /^[0-9A-Fa-f:.]+\/[0-9]{1,3}$/;
function cidr(base = z.string()) {
  const error = (issue: { readonly input?: unknown }): string => cidrProblem(String(issue.input)) ?? 'must be a CIDR';
  return base.regex(CIDR_PATTERN, { error, abort: true }).refine((text) => cidrProblem(text) === undefined, { error });
}

function duplicates(items: readonly unknown[]): unknown[] {
  return [...new Set(items.filter((item, i) => items.indexOf(item) !== i))];
}

/** A list without repeats, `uniqueItems` in JSON schema. */
function uniqueList<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .refine((items) => duplicates(items).length === 0, {
      error: (issue) => `lists ${duplicates(issue.input as unknown[]).map((d) => JSON.stringify(d)).join(', ')} more than once`,
    })
    .meta({ uniqueItems: true });
}

function badNamespaces(items: readonly unknown[]): string {
  const one = items.length === 1;
  return `${items.map((item) => JSON.stringify(item)).join(', ')} ${one ? 'is not a' : 'are not'} valid namespace name${one ? '' : 's'}`;
}

const allIfEmpty = (value: unknown): LogValue => ((value as readonly string[]).length === 0 ? ['(all)'] : (value as readonly string[]));

const heartbeat = z.strictObject({
  // Default 10: Antrea's member agent also reports every 10 s, so leaders see the cadence they expect.
  intervalSeconds: field(
    z
      .literal([...HEARTBEAT_INTERVALS], {
        error: `must be one of ${HEARTBEAT_INTERVALS.join(',')} (the heartbeat is a node-cron schedule, which only repeats evenly at these intervals)`,
      })
      .default(10),
    {
      env: 'CSA_HEARTBEAT_INTERVAL',
      flag: 'heartbeat-interval',
      flagValue: 'seconds',
      description: 'Seconds between heartbeats (MemberClusterAnnounce writes) to the leader; a divisor of 60, or whole minutes dividing an hour, that node-cron can schedule evenly.',
      notes: 'must divide 60 (or be whole minutes dividing an hour)',
    },
  ),
  // Default 3, so one dropped request or API-server restart does not flap Ready.
  failureThreshold: field(z.int().min(1).default(3), {
    env: 'CSA_FAILURE_THRESHOLD',
    flag: 'failure-threshold',
    flagValue: 'n',
    description: "Consecutive failed heartbeats before the ClusterSet's Ready condition turns False.",
    notes: 'failed beats before Ready=False',
  }),
  // Finishing within half the interval means a timed-out beat has ended, and the status write
  // after it has had time to run, before the next tick, so node-cron never skips a tick as an
  // overlap and N failures really take N intervals. A healthy API server answers in
  // milliseconds, so waiting longer than 10 s only delays detection. Must be less than
  // intervalSeconds × failureThreshold, or one hung request would outlast the whole window.
  requestTimeoutSeconds: field(z.number().positive().exactOptional(), {
    env: 'CSA_HEARTBEAT_TIMEOUT',
    description: 'Timeout of one heartbeat request in seconds (fractions allowed); below intervalSeconds × failureThreshold.',
    defaultText: 'interval/2, ≤ 10',
    notes: 'one leader request',
  }),
});

const status = z.strictObject({
  // Default 500: enough to merge the bursts of condition changes a reconnect produces into one
  // write, short enough that `kubectl get` looks live.
  minWriteIntervalMs: field(z.int().min(0).default(500), {
    env: 'CSA_STATUS_MIN_WRITE_INTERVAL_MS',
    description: 'Minimum milliseconds between two status writes to the same ClusterSet; 0 disables the limit.',
    notes: 'per ClusterSet',
  }),
});

const health = z.strictObject({
  // An empty host means every interface, port 0 an ephemeral port.
  bindAddress: field(
    z.string().refine((address) => parseBindAddress(address) !== undefined, { error: 'must be [host]:port, e.g. :8080, 127.0.0.1:8080 or [::1]:8080' }).default(':8080'),
    {
      env: 'CSA_HEALTH_BIND_ADDRESS',
      flag: 'health-bind-address',
      flagValue: 'address',
      description: '[host]:port of the health server (GET /healthz, GET /readyz).',
      notes: '`/healthz`, `/readyz`',
      notInChart: 'rendered from health.port',
    },
  ),
});

const metrics = z.strictObject({
  bindAddress: field(
    z.string().refine((address) => address === '0' || parseBindAddress(address) !== undefined, { error: 'must be [host]:port, e.g. :9090, or 0 to disable metrics' }).default(':9090'),
    {
      env: 'CSA_METRICS_BIND_ADDRESS',
      flag: 'metrics-bind-address',
      flagValue: 'address',
      description: '[host]:port of the Prometheus metrics server (GET /metrics); 0 disables it.',
      notes: '`0` disables',
      notInChart: 'rendered from metrics.port and metrics.enabled',
      // YAML reads a bare `0` as a number; it is the documented way to disable metrics.
      fromYaml: (value) => (value === 0 ? '0' : value),
      log: (value) => (value === '0' ? '0 (disabled)' : (value as string)),
    },
  ),
});

const leaderElection = z.strictObject({
  // Default false: the chart runs one replica, and election adds Lease writes every retry period for nothing.
  enabled: field(z.boolean().default(false), {
    env: 'CSA_LEADER_ELECT',
    flag: 'leader-elect',
    description: 'Elect one active replica through a Lease.',
    notes: 'one active replica; the others wait',
  }),
  leaseName: field(dnsSubdomain('must be a DNS-1123 subdomain (a valid Lease name)').default('clusterset-agent'), {
    env: 'CSA_LEADER_ELECT_LEASE_NAME',
    description: 'Name of the Lease in the agent namespace.',
  }),
  // Defaults are controller-runtime's.
  leaseDurationSeconds: field(z.int().min(1).default(15), {
    env: 'CSA_LEADER_ELECT_LEASE_DURATION',
    description: 'Seconds a lease that is not renewed stays valid.',
  }),
  renewDeadlineSeconds: field(z.int().min(1).default(10), {
    env: 'CSA_LEADER_ELECT_RENEW_DEADLINE',
    description: 'Seconds the leader keeps trying to renew before giving up; below leaseDurationSeconds.',
  }),
  retryPeriodSeconds: field(z.int().min(1).default(2), {
    env: 'CSA_LEADER_ELECT_RETRY_PERIOD',
    description: 'Seconds between acquire and renew attempts; below renewDeadlineSeconds.',
  }),
});

const imports = z.strictObject({
  // Listing a namespace that is always denied is an error, not a silent no-op.
  allowedNamespaces: field(uniqueList(dnsLabel()).default([]), {
    env: 'CSA_IMPORT_ALLOWED_NAMESPACES',
    description: 'Namespaces imports may land in; empty: every existing namespace except the denied ones.',
    defaultText: 'all existing but denied',
    badItems: badNamespaces,
    log: allIfEmpty,
  }),
  deniedNamespaces: field(uniqueList(dnsLabel()).default([]), {
    env: 'CSA_IMPORT_DENIED_NAMESPACES',
    description: "Namespaces imports may not land in, on top of kube-system, kube-public, kube-node-lease and the agent's own.",
    notes: 'on top of the system ones',
    badItems: badNamespaces,
  }),
  // Empty is rejected because "empty means all" and "empty means none" would both be plausible readings.
  allowedKinds: field(uniqueList(z.enum(IMPORTABLE_KINDS)).min(1, { error: `must list at least one of ${IMPORTABLE_KINDS.join(', ')}` }).exactOptional(), {
    env: 'CSA_IMPORT_ALLOWED_KINDS',
    description: `Kinds accepted from a leader, of ${IMPORTABLE_KINDS.join(', ')}.`,
    defaultText: `${DEFAULT_ALLOWED_KINDS.join(', ')} (+ LabelIdentity with enableLabelIdentity)`,
    badItems: (items) => `unknown kind ${items.join(', ')}; allowed: ${IMPORTABLE_KINDS.join(', ')}`,
  }),
  // Bounds memory and API load.
  maxObjectsPerLeader: field(z.int().min(1).default(5000), {
    env: 'CSA_IMPORT_MAX_OBJECTS_PER_LEADER',
    description: 'Objects kept per leader before further imports are refused.',
  }),
  // 256 KiB, far above any sane ServiceImport.
  maxObjectBytes: field(z.int().min(1).default(262144), {
    env: 'CSA_IMPORT_MAX_OBJECT_BYTES',
    description: 'Largest serialised imported object, in bytes.',
  }),
  // Default 600, so a leader upgrade or a short network partition does not delete Services the member relies on.
  lostLeaderRetentionSeconds: field(z.int().min(0).default(600), {
    env: 'CSA_IMPORT_LOST_LEADER_RETENTION_SECONDS',
    description: 'Seconds imported objects are kept after the leader becomes unreachable; 0 deletes them as soon as it is declared lost.',
  }),
  // The agent re-lists what it owns in the member and re-checks every ResourceImport, so an
  // imported object deleted or edited by hand is repaired even when the leader sends nothing.
  resyncSeconds: field(z.int().min(5).default(600), {
    env: 'CSA_IMPORT_RESYNC_SECONDS',
    description: 'Seconds between full resyncs that repair imported objects edited or deleted in the member.',
    notes: 'full resync: repairs imported objects edited or deleted in the member',
  }),
  // Off by default: only useful with Antrea's stretched policy feature, and they can be numerous.
  enableLabelIdentity: field(z.boolean().default(false), {
    env: 'CSA_IMPORT_ENABLE_LABEL_IDENTITY',
    description: 'Import LabelIdentity objects (Antrea stretched network policy).',
    notInChart: 'rendered from importLabelIdentity',
  }),
});

const exports = z.strictObject({
  // Default true, as in Antrea, whose member always exports. false: the agent only announces itself and imports.
  enabled: field(z.boolean().default(true), {
    env: 'CSA_EXPORT_ENABLED',
    description: "Publish this member's ServiceExports and its Gateway (ClusterInfo) to the leader as ResourceExports.",
    notes: 'publish ServiceExports and the Gateway',
  }),
  allowedNamespaces: field(uniqueList(dnsLabel()).default([]), {
    env: 'CSA_EXPORT_ALLOWED_NAMESPACES',
    description: 'Namespaces whose ServiceExports are published; empty: every namespace except the denied ones.',
    defaultText: 'all but denied',
    badItems: badNamespaces,
    log: allIfEmpty,
  }),
  // Cluster internals (the API server, DNS) and the agent's own objects are never offered to the other members.
  deniedNamespaces: field(uniqueList(dnsLabel()).default([]), {
    env: 'CSA_EXPORT_DENIED_NAMESPACES',
    description: "Namespaces whose ServiceExports are never published, on top of kube-system, kube-public, kube-node-lease and the agent's own.",
    notes: "on top of the system ones and the agent's",
    badItems: badNamespaces,
  }),
  // ClusterIP (Antrea's default) is reachable through the Multi-cluster Gateway; PodIP is for
  // networks where Pods of different clusters reach each other directly.
  endpointIPType: field(z.enum(EXPORT_ENDPOINT_IP_TYPES).default('ClusterIP'), {
    env: 'CSA_EXPORT_ENDPOINT_IP_TYPE',
    description: "What an exported Service's Endpoints export lists: its ClusterIP, or its ready Pod IPs (PodIP).",
    notes: 'or PodIP',
  }),
  // Absent: the exporter finds it itself (the Gateway's serviceCIDR, or the cluster's ServiceCIDR objects).
  serviceCIDR: field(cidr(z.string().min(1, { error: 'must not be empty; leave it unset to have the Service CIDR discovered', abort: true })).exactOptional(), {
    env: 'CSA_EXPORT_SERVICE_CIDR',
    description: "Service CIDR published in this member's ClusterInfo, e.g. 10.96.0.0/12, without host bits.",
    defaultText: 'from the Gateway',
    notes: 'for the ClusterInfo export',
    log: (value) => (value === undefined ? '(discovered)' : (value as string)),
  }),
  // Deleted or edited exports are repaired at once through the watch of our exports on the
  // leader; the full sync is the safety net behind it (and re-reads every verdict).
  resyncSeconds: field(z.int().min(5).default(600), {
    env: 'CSA_EXPORT_RESYNC_SECONDS',
    description: "Seconds between full syncs that re-list this member's ResourceExports on the leader and reconcile every export.",
    notes: 'full sync with the leader: safety net behind the watch of our exports',
  }),
  // Needed by other members with endpointIPType PodIP to route to this member's Pods.
  podCIDRs: field(uniqueList(cidr()).default([]), {
    env: 'CSA_EXPORT_POD_CIDRS',
    description: "Pod CIDRs published in this member's ClusterInfo (for members using PodIP endpoints), without host bits.",
    badItems: (items) => items.map((item) => `${JSON.stringify(item)} ${cidrProblem(String(item)) ?? 'is repeated'}`).join('; '),
  }),
});

// client-go's budget is QPS 5, burst 10 (controller-runtime raises it to 20/30), sized for
// controllers that mostly read caches. The importer writes one object per request, and an
// initial sync of 10,000 imports peaked at ~600 writes/s against a 2-core test API server, so
// the member budget is a guard against runaway loops, not a brake on normal work; API
// Priority and Fairness is what shares the API server fairly.
const apiClient = z.strictObject({
  qps: field(z.number().min(0).default(1000), {
    env: 'CSA_KUBE_API_QPS',
    description: "Average requests per second to the agent's own API server (the member; the leader for leader run), all ClusterSets together; 0: no limit.",
    notes: 'client-side budget, all ClusterSets together; 0: no limit',
  }),
  burst: field(z.int().min(1).default(2000), {
    env: 'CSA_KUBE_API_BURST',
    description: "Requests that may start at once to the agent's own API server after a quiet spell.",
  }),
  // A member beats once per interval and publishes its exports: 50/s is ample, and a leader
  // serves many members.
  leaderQPS: field(z.number().min(0).default(50), {
    env: 'CSA_LEADER_API_QPS',
    description: "Average requests per second to each ClusterSet's leader API server; 0: no limit.",
    notes: 'per ClusterSet; 0: no limit',
  }),
  leaderBurst: field(z.int().min(1).default(100), {
    env: 'CSA_LEADER_API_BURST',
    description: "Requests that may start at once to each ClusterSet's leader API server after a quiet spell.",
  }),
  // client-go's reflector asks for 5 to 10 minutes; with bookmarks a watch that times out is
  // reopened from where it was, so this only sets how often a quiet watch costs a request.
  watchTimeoutSeconds: field(z.int().min(1).default(300), {
    env: 'CSA_WATCH_TIMEOUT_SECONDS',
    description: 'Server-side timeout of every watch (member and leader API servers): each asks for between this and twice this, at random, and is then reopened from its last bookmark, without a list.',
    notes: 'each watch: this to twice this, at random',
  }),
});

const LEADER_ONLY = 'leader run only: the chart runs the member agent';
/** `clusterset-agent leader run` only: the leader's controllers. */
const leader = z.strictObject({
  // Antrea's leader namespace, the one `join`, `leave` and `create-member-token` default to
  // too: one default everywhere (it was the agent namespace, which no other command used).
  namespace: field(dnsLabel('must be a DNS-1123 label').default(DEFAULT_LEADER_NAMESPACE), {
    env: 'CSA_LEADER_NAMESPACE',
    description: "The leader namespace (the ClusterSet's common area) the leader controllers work in.",
    notes: '`leader run` only: the leader namespace (common area)',
    notInChart: LEADER_ONLY,
  }),
  // Three beats of a member beating every 10 s (Antrea's too).
  memberTimeoutSeconds: field(z.int().min(2).default(30), {
    env: 'CSA_LEADER_MEMBER_TIMEOUT',
    description: "Seconds after a member's last heartbeat (touch-ts of its MemberClusterAnnounce) before it is Disconnected.",
    notes: '`leader run` only: a member is Disconnected this long after its last `touch-ts`; inside a burst of member changes the ClusterSet status is written within a fifth of it (a member no longer Ready) or half of it (a join, leave or return)',
    notInChart: LEADER_ONLY,
  }),
  // 24 h, as Antrea's stale sweep.
  staleMemberSeconds: field(z.int().default(86400), {
    env: 'CSA_LEADER_STALE_MEMBER_SECONDS',
    description: 'Seconds a member may stay Disconnected before its announce, and every export it made, is deleted.',
    notes: "`leader run` only: a Disconnected member's announce and exports are deleted after this",
    notInChart: LEADER_ONLY,
  }),
  // Five minutes: orphans left by a crash or a stripped finalizer are gone well before anyone looks.
  sweepIntervalSeconds: field(z.int().min(1).default(300), {
    env: 'CSA_LEADER_SWEEP_INTERVAL_SECONDS',
    description: 'Seconds between sweeps (also one at start) of leader-labelled ResourceImports that no export feeds and of ResourceExports whose member has no announce.',
    notes: '`leader run` only: how often orphaned imports and exports are swept',
    notInChart: LEADER_ONLY,
  }),
  // Far above any real member (a few exports per Service, one per LabelIdentity), far below what
  // would make the leader's caches and sweeps the bottleneck.
  maxExportsPerMember: field(z.int().min(1).default(10_000), {
    env: 'CSA_LEADER_MAX_EXPORTS_PER_MEMBER',
    description: "ResourceExports of one member the leader takes in, oldest first; the newer ones get a Failure verdict TooManyExports and feed no import.",
    notes: '`leader run` only: what one member can make the leader hold',
    notInChart: LEADER_ONLY,
  }),
  // 1 MiB: below etcd's ~1.5 MiB request limit with room for the import's metadata.
  maxImportBytes: field(z.int().min(1024).default(1_048_576), {
    env: 'CSA_LEADER_MAX_IMPORT_BYTES',
    description: "Largest ResourceImport spec (JSON bytes) the leader writes; over it, the newest contributing exports get a Failure verdict ImportTooLarge and are left out.",
    notes: '`leader run` only: keeps one member from freezing a shared import',
    notInChart: LEADER_ONLY,
  }),
  // Members repeat a DuplicateClusterID Event every 5 minutes: a few per duplicate are live.
  maxDuplicateEvents: field(z.int().min(1).default(1000), {
    env: 'CSA_LEADER_MAX_DUPLICATE_EVENTS',
    description: 'DuplicateClusterID Events (member-written) the leader keeps and reads, the newest; older ones beyond it are ignored.',
    notes: '`leader run` only: bounds what members can make the leader cache',
    notInChart: LEADER_ONLY,
  }),
});

/**
 * The whole configuration. Its input is what the file, environment and flags may set; its
 * output adds what is derived (the default request timeout and kinds) and computed (the
 * always-denied namespaces).
 */
export const CONFIG_SCHEMA = z
  .strictObject({
    // The chart always injects POD_NAMESPACE through the downward API, so it is a better
    // default, not a user choice: it ranks below the file, whose `namespace` would otherwise be
    // impossible to use.
    namespace: field(dnsLabel().default('clusterset-agent'), {
      env: 'CSA_NAMESPACE',
      fallbackEnv: 'POD_NAMESPACE',
      flag: 'namespace',
      flagValue: 'ns',
      description: 'Namespace the agent watches for ClusterSets and their Secrets.',
      notes: 'where ClusterSets and their Secrets live',
      notInChart: 'the agent takes its own from POD_NAMESPACE',
    }),
    kubeconfig: field(z.string().min(1, { error: 'must not be empty; leave it unset to use the in-cluster configuration' }).exactOptional(), {
      env: 'KUBECONFIG',
      flag: 'kubeconfig',
      flagValue: 'file',
      description: 'Kubeconfig of the cluster to work in: the member (the leader for leader run).',
      defaultText: 'in-cluster',
      notes: 'the member cluster',
      notInChart: 'the agent runs with its ServiceAccount, in-cluster',
      log: (value) => (value === undefined ? '(in-cluster)' : (value as string)),
    }),
    heartbeat,
    status,
    logLevel: field(z.enum(LOG_LEVELS).default('info'), {
      env: 'CSA_LOG_LEVEL',
      flag: 'log-level',
      flagValue: 'level',
      description: `Log level: ${LOG_LEVELS.join(', ')}.`,
      notes: LOG_LEVELS.join(', '),
    }),
    health,
    metrics,
    apiClient,
    leaderElection,
    imports,
    exports,
    leader,
  })
  .transform((c) => ({
    ...c,
    heartbeat: { ...c.heartbeat, requestTimeoutSeconds: c.heartbeat.requestTimeoutSeconds ?? defaultRequestTimeout(c.heartbeat.intervalSeconds) },
    imports: {
      ...c.imports,
      allowedKinds: c.imports.allowedKinds ?? defaultAllowedKinds(c.imports.enableLabelIdentity),
      // A leader must never be able to write into system namespaces or over the agent's own Secrets.
      alwaysDeniedNamespaces: alwaysDenied(c.namespace),
    },
    exports: { ...c.exports, alwaysDeniedNamespaces: alwaysDenied(c.namespace) },
  }));

/** Paths the output has but no source may set, with what to do instead. */
export const COMPUTED_PATHS: ReadonlyMap<string, string> = new Map([
  ['imports.alwaysDeniedNamespaces', `computed (${SYSTEM_DENIED_NAMESPACES.join(', ')} and the agent namespace), not configurable; use imports.deniedNamespaces`],
  ['exports.alwaysDeniedNamespaces', `computed (${SYSTEM_DENIED_NAMESPACES.join(', ')} and the agent namespace), not configurable; use exports.deniedNamespaces`],
]);

/** The config file's path is the one setting outside the file. */
export const CONFIG_FILE_OPTION = {
  env: 'CSA_CONFIG',
  flag: 'config',
  flagValue: 'file',
  description: 'YAML config file; its keys nest along the setting paths, e.g. heartbeat: {intervalSeconds: 10}.',
} as const;

type DeepReadonly<T> = T extends readonly (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** The agent configuration, as loadConfig returns it (deeply frozen). */
export type AgentConfig = DeepReadonly<z.output<typeof CONFIG_SCHEMA>>;
export type HeartbeatConfig = AgentConfig['heartbeat'];
export type StatusConfig = AgentConfig['status'];
export type BindConfig = AgentConfig['health'];
export type LeaderElectionConfig = AgentConfig['leaderElection'];
export type ImportPolicyConfig = AgentConfig['imports'];
export type ExportPolicyConfig = AgentConfig['exports'];
/** `clusterset-agent leader run` only: the leader's controllers. */
export type LeaderModeConfig = AgentConfig['leader'];

// ---------------------------------------------------------------------------------------------
// The settings as a flat list, read off the schema.

/** How a setting's value is written in the environment and on the command line. */
export type LeafKind = 'string' | 'integer' | 'number' | 'boolean' | 'stringList';

export interface Leaf {
  /** Dotted path, e.g. `heartbeat.intervalSeconds`. */
  readonly path: string;
  readonly kind: LeafKind;
  readonly meta: FieldMeta;
  /** The declared schema, default included. */
  readonly schema: z.ZodType;
  /** The value's type and constraints, without default or optionality. */
  readonly check: z.ZodType;
  /** Whether a default exists: `default` may legitimately be any value. */
  readonly hasDefault: boolean;
  readonly default?: unknown;
}

function kindOf(schema: z.ZodType, path: string): LeafKind {
  if (schema instanceof z.ZodString || schema instanceof z.ZodEnum) return 'string';
  if (schema instanceof z.ZodNumber) return schema.format?.includes('int') === true ? 'integer' : 'number';
  if (schema instanceof z.ZodBoolean) return 'boolean';
  if (schema instanceof z.ZodLiteral) {
    const values = [...schema.values];
    if (values.every((v) => typeof v === 'number' && Number.isSafeInteger(v))) return 'integer';
    if (values.every((v) => typeof v === 'string')) return 'string';
  }
  if (schema instanceof z.ZodArray && kindOf(schema.element as z.ZodType, `${path}[]`) === 'string') return 'stringList';
  throw new Error(`internal: config setting ${path} has a type (${schema.type}) that cannot be read from the environment`);
}

function collectLeaves(schema: z.ZodType, path: readonly string[]): Leaf[] {
  const meta = FIELDS.get(schema);
  const dotted = path.join('.');
  if (meta !== undefined) {
    let check = schema;
    let hasDefault = false;
    let defaultValue: unknown;
    let optional = false;
    for (;;) {
      if (check instanceof z.ZodDefault) {
        hasDefault = true;
        defaultValue = check.def.defaultValue;
        check = check.def.innerType as z.ZodType;
      } else if (check instanceof z.ZodOptional || check instanceof z.ZodExactOptional) {
        optional = true;
        check = check.def.innerType as z.ZodType;
      } else break;
    }
    if (!hasDefault && !optional) throw new Error(`internal: config setting ${dotted} has neither a default nor .exactOptional()`);
    if (!hasDefault && meta.defaultText === undefined) throw new Error(`internal: config setting ${dotted} has no default, so it needs defaultText`);
    const leaf = { path: dotted, kind: kindOf(check, dotted), meta, schema, check, hasDefault };
    return [hasDefault ? { ...leaf, default: defaultValue } : leaf];
  }
  if (schema instanceof z.ZodPipe) return collectLeaves(schema.in as z.ZodType, path);
  if (schema instanceof z.ZodObject) {
    return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([key, child]) => collectLeaves(child, [...path, key]));
  }
  throw new Error(`internal: config schema node ${dotted || '(root)'} is neither a section nor a setting declared with field()`);
}

/** Every setting, in declaration order. */
export const LEAVES: readonly Leaf[] = collectLeaves(CONFIG_SCHEMA, []);
