// The agent's Prometheus metrics, on a private prom-client Registry (never the global one), so
// two agents in one process, or two tests, never share series.
//
// | metric                                           | type      | labels                      |
// |--------------------------------------------------|-----------|-----------------------------|
// | clusterset_agent_heartbeat_duration_seconds      | histogram | clusterset, leader          |
// | clusterset_agent_heartbeat_failures_total        | counter   | clusterset, leader, reason  |
// | clusterset_agent_leader_connected                | gauge     | clusterset, leader (1 / 0)  |
// | clusterset_agent_seconds_since_last_heartbeat    | gauge     | clusterset, leader          |
// | clusterset_agent_leader_token_expiry_seconds     | gauge     | clusterset, leader          |
// | clusterset_agent_imports_total                   | counter   | clusterset, kind, outcome   |
// | clusterset_agent_import_rejections_total         | counter   | clusterset, rule            |
// | clusterset_agent_is_leader                       | gauge     | (none)                      |
// | clusterset_agent_apiserver_connections_opened_total | counter | (none)                      |
// | clusterset_agent_apiserver_throttled_requests_total | counter | (none)                      |
// | clusterset_agent_apiserver_throttled_seconds_total  | counter | (none)                      |
// | clusterset_agent_leader_members                  | gauge     | clusterset, state (leader)  |
// | clusterset_agent_leader_duplicate_cluster_ids    | gauge     | clusterset (leader)         |
// | clusterset_agent_leader_exports                  | gauge     | verdict (leader)            |
// | clusterset_agent_leader_aggregation_errors_total | counter   | reason (leader)             |
// | clusterset_agent_leader_writes_total             | counter   | resource, verb (leader)     |
//
// plus prom-client's default process and Node.js metrics (CPU, memory, event loop lag, GC, ...).
//
// `seconds_since_last_heartbeat` counts from the last *successful* beat and is computed when
// scraped, so an agent whose heartbeat loop has stalled still shows a growing value; a series
// appears with the first successful beat. Alert on it rather than on `leader_connected`, which
// only turns 0 after the failure threshold.
//
// `forget(clusterSet)` drops every series of a deleted ClusterSet, so label cardinality follows
// the ClusterSets that exist rather than every one that ever did.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ConnectionStats } from '../kube/shared-connections.js';

/** What happened to one imported object. */
export const IMPORT_OUTCOMES = ['created', 'updated', 'deleted', 'unchanged', 'rejected', 'conflict', 'failed'] as const;
export type ImportOutcome = (typeof IMPORT_OUTCOMES)[number];

export interface AgentMetricsOptions {
  /** Epoch milliseconds; injectable so `seconds_since_last_heartbeat` can be tested. Default Date.now. */
  readonly now?: () => number;
  /** Include prom-client's process_* and nodejs_* metrics. Default true. */
  readonly defaultMetrics?: boolean;
}

/** leader run: ResourceExports by the leader's verdict. */
export interface LeaderExportCounts {
  readonly accepted: number;
  readonly refused: number;
  readonly pending: number;
}

/** Reason used when a failed beat is reported without one. */
export const UNKNOWN_REASON = 'Unknown';

const PREFIX = 'clusterset_agent_';

type LeaderLabel = 'clusterset' | 'leader';

export class AgentMetrics {
  readonly #registry = new Registry();
  readonly #now: () => number;
  readonly #heartbeatDuration: Histogram<LeaderLabel>;
  readonly #heartbeatFailures: Counter<LeaderLabel | 'reason'>;
  readonly #leaderConnected: Gauge<LeaderLabel>;
  readonly #imports: Counter<'clusterset' | 'kind' | 'outcome'>;
  readonly #rejections: Counter<'clusterset' | 'rule'>;
  readonly #isLeader: Gauge;
  readonly #leaderMembers: Gauge<'clusterset' | 'state'>;
  readonly #leaderDuplicates: Gauge<'clusterset'>;
  readonly #leaderWrites: Counter<'resource' | 'verb'>;
  #leaderExportsSource: (() => LeaderExportCounts) | undefined;
  readonly #aggregationErrors: Counter<'reason'>;
  #connectionStats: ConnectionStats | undefined;
  /** clusterSet -> leader -> epoch ms when its leader token expires. */
  readonly #tokenExpiry = new Map<string, Map<string, number>>();
  /** clusterSet -> leader -> epoch ms of the last successful beat. */
  readonly #lastBeat = new Map<string, Map<string, number>>();
  /**
   * clusterSet -> label sets written for it, per metric. prom-client can only remove a series by
   * its exact labels, so forget() needs to know which ones exist.
   */
  readonly #series = new Map<string, Map<{ remove(labels: Record<string, string>): void }, Map<string, Record<string, string>>>>();

  constructor(options: AgentMetricsOptions = {}) {
    this.#now = options.now ?? Date.now;
    const registers = [this.#registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.#registry });
    this.#heartbeatDuration = new Histogram({
      name: `${PREFIX}heartbeat_duration_seconds`,
      help: 'Duration of one heartbeat (MemberClusterAnnounce write) to a leader, successful or not.',
      labelNames: ['clusterset', 'leader'] as const,
      // From a healthy loopback answer (ms) to the 10 s request timeout ceiling.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#heartbeatFailures = new Counter({
      name: `${PREFIX}heartbeat_failures_total`,
      help: 'Heartbeats to a leader that failed, by failure reason.',
      labelNames: ['clusterset', 'leader', 'reason'] as const,
      registers,
    });
    this.#leaderConnected = new Gauge({
      name: `${PREFIX}leader_connected`,
      help: '1 while the ClusterSet reports the leader as connected (Ready=True), else 0.',
      labelNames: ['clusterset', 'leader'] as const,
      registers,
    });
    const lastBeat = this.#lastBeat;
    const now = this.#now;
    const tokenExpiry = this.#tokenExpiry;
    // Computed at scrape time, like seconds_since_last_heartbeat: an alert needs no other clock.
    new Gauge<LeaderLabel>({
      name: `${PREFIX}leader_token_expiry_seconds`,
      help: 'Seconds until the leader token (the ClusterSet Secret\'s token, its JWT exp claim) expires; negative once expired; absent for a token without expiry.',
      labelNames: ['clusterset', 'leader'] as const,
      registers,
      collect() {
        const at = now();
        this.reset();
        for (const [clusterset, leaders] of tokenExpiry) {
          for (const [leader, when] of leaders) this.set({ clusterset, leader }, (when - at) / 1000);
        }
      },
    });
    // Registered and read only through the registry: its value is computed in collect().
    new Gauge<LeaderLabel>({
      name: `${PREFIX}seconds_since_last_heartbeat`,
      help: 'Seconds since the last successful heartbeat to the leader, computed at scrape time.',
      labelNames: ['clusterset', 'leader'] as const,
      registers,
      collect() {
        const at = now();
        this.reset();
        for (const [clusterset, leaders] of lastBeat) {
          for (const [leader, when] of leaders) this.set({ clusterset, leader }, Math.max(0, at - when) / 1000);
        }
      },
    });
    this.#imports = new Counter({
      name: `${PREFIX}imports_total`,
      help: `Objects handled by the importer, by kind and outcome (${IMPORT_OUTCOMES.join('|')}).`,
      labelNames: ['clusterset', 'kind', 'outcome'] as const,
      registers,
    });
    this.#rejections = new Counter({
      name: `${PREFIX}import_rejections_total`,
      help: 'Imports refused by the import policy, by the rule that refused them.',
      labelNames: ['clusterset', 'rule'] as const,
      registers,
    });
    this.#isLeader = new Gauge({
      name: `${PREFIX}is_leader`,
      help: '1 while this replica holds the leader-election Lease (or runs without election), else 0.',
      registers,
    });
    this.#isLeader.set(0);
    this.#leaderMembers = new Gauge({
      name: `${PREFIX}leader_members`,
      help: 'leader run: member clusters of a leader ClusterSet, by liveness state (ready|disconnected).',
      labelNames: ['clusterset', 'state'] as const,
      registers,
    });
    this.#leaderDuplicates = new Gauge({
      name: `${PREFIX}leader_duplicate_cluster_ids`,
      help: 'leader run: cluster IDs of a leader ClusterSet that two or more member clusters use (reported by a member as DuplicateClusterID).',
      labelNames: ['clusterset'] as const,
      registers,
    });
    const leaderExports = () => this.#leaderExportsSource?.();
    // Counted from the leader's cache when scraped: no bookkeeping on every verdict.
    new Gauge({
      name: `${PREFIX}leader_exports`,
      help: 'leader run: ResourceExports in the leader namespace by the leader\'s verdict (accepted|refused|pending).',
      labelNames: ['verdict'] as const,
      registers,
      collect() {
        const counts = leaderExports();
        if (counts === undefined) return;
        for (const verdict of ['accepted', 'refused', 'pending'] as const) this.set({ verdict }, counts[verdict]);
      },
    });
    this.#aggregationErrors = new Counter({
      name: `${PREFIX}leader_aggregation_errors_total`,
      help: 'leader run: failures to aggregate exports into a ResourceImport (the write failed), by reason.',
      labelNames: ['reason'] as const,
      registers,
    });
    const connectionStats = () => this.#connectionStats;
    new Counter({
      name: `${PREFIX}apiserver_connections_opened_total`,
      help: 'TCP connections opened to this cluster\'s API server (requests and watches share keep-alive connections).',
      registers,
      collect() {
        this.reset();
        this.inc(connectionStats()?.opened ?? 0);
      },
    });
    new Counter({
      name: `${PREFIX}apiserver_throttled_requests_total`,
      help: "Requests to this cluster's API server that waited for the client-side budget (apiClient.qps/burst).",
      registers,
      collect() {
        this.reset();
        this.inc(connectionStats()?.budget?.stats.throttled ?? 0);
      },
    });
    new Counter({
      name: `${PREFIX}apiserver_throttled_seconds_total`,
      help: "Seconds requests to this cluster's API server waited for the client-side budget, summed.",
      registers,
      collect() {
        this.reset();
        this.inc((connectionStats()?.budget?.stats.waitedMs ?? 0) / 1000);
      },
    });
    this.#leaderWrites = new Counter({
      name: `${PREFIX}leader_writes_total`,
      help: 'leader run: writes to the leader API server, by resource and verb (create|update|delete|status).',
      labelNames: ['resource', 'verb'] as const,
      registers,
    });
  }

  /** Value for the Content-Type header of a scrape response. */
  get contentType(): string {
    return this.#registry.contentType;
  }

  /** The exposition text, for a /metrics handler. */
  metrics(): Promise<string> {
    return this.#registry.metrics();
  }

  /**
   * One heartbeat finished after `seconds`. A success restarts `seconds_since_last_heartbeat`; a
   * failure counts under `reason` (a FailureReason, e.g. `Unauthorized`; `Unknown` if absent).
   */
  observeBeat(clusterSet: string, leader: string, seconds: number, ok: boolean, reason?: string): void {
    const labels = { clusterset: clusterSet, leader };
    this.#heartbeatDuration.observe(labels, Math.max(0, seconds));
    this.#track(clusterSet, this.#heartbeatDuration, labels);
    if (ok) {
      let leaders = this.#lastBeat.get(clusterSet);
      if (leaders === undefined) {
        leaders = new Map();
        this.#lastBeat.set(clusterSet, leaders);
      }
      leaders.set(leader, this.#now());
    } else {
      const failure = { ...labels, reason: reason === undefined || reason === '' ? UNKNOWN_REASON : reason };
      this.#heartbeatFailures.inc(failure);
      this.#track(clusterSet, this.#heartbeatFailures, failure);
    }
  }

  setConnected(clusterSet: string, leader: string, connected: boolean): void {
    const labels = { clusterset: clusterSet, leader };
    this.#leaderConnected.set(labels, connected ? 1 : 0);
    this.#track(clusterSet, this.#leaderConnected, labels);
  }

  recordImport(clusterSet: string, kind: string, outcome: ImportOutcome): void {
    const labels = { clusterset: clusterSet, kind, outcome };
    this.#imports.inc(labels);
    this.#track(clusterSet, this.#imports, labels);
  }

  /** An import refused by the policy; `rule` names the rule (e.g. `deniedNamespace`, `maxObjectBytes`). */
  recordRejection(clusterSet: string, rule: string): void {
    const labels = { clusterset: clusterSet, rule };
    this.#rejections.inc(labels);
    this.#track(clusterSet, this.#rejections, labels);
  }

  /** Whether this replica currently holds the Lease. */
  setElected(elected: boolean): void {
    this.#isLeader.set(elected ? 1 : 0);
  }

  /** Counts the API server connections and throttled requests `stats` reports (read at scrape time). */
  observeConnections(stats: ConnectionStats): void {
    this.#connectionStats = stats;
  }

  /** leader run: the members of a leader ClusterSet, counted by liveness. */
  setLeaderMembers(clusterSet: string, ready: number, total: number): void {
    for (const [state, value] of [['ready', ready], ['disconnected', total - ready]] as const) {
      const labels = { clusterset: clusterSet, state };
      this.#leaderMembers.set(labels, value);
      this.#track(clusterSet, this.#leaderMembers, labels);
    }
  }

  setLeaderDuplicates(clusterSet: string, clusterIDs: number): void {
    const labels = { clusterset: clusterSet };
    this.#leaderDuplicates.set(labels, clusterIDs);
    this.#track(clusterSet, this.#leaderDuplicates, labels);
  }

  /** leader run: where to read, when scraped, how many ResourceExports the leader accepted, refused, or has not judged yet. */
  leaderExportsFrom(source: () => LeaderExportCounts): void {
    this.#leaderExportsSource = source;
  }

  /** leader run: an import could not be written (API error); `reason` as the error classifier names it. */
  recordAggregationError(reason: string): void {
    this.#aggregationErrors.inc({ reason });
  }

  /** leader run: one write to the leader API server. */
  recordLeaderWrite(resource: string, verb: 'create' | 'update' | 'delete' | 'status'): void {
    this.#leaderWrites.inc({ resource, verb });
  }

  /** The ClusterSet's leader token expires at `expiresAtMs` (undefined: no expiry known). */
  setTokenExpiry(clusterSet: string, leader: string, expiresAtMs: number | undefined): void {
    let leaders = this.#tokenExpiry.get(clusterSet);
    if (expiresAtMs === undefined) {
      leaders?.delete(leader);
      return;
    }
    if (leaders === undefined) {
      leaders = new Map();
      this.#tokenExpiry.set(clusterSet, leaders);
    }
    leaders.set(leader, expiresAtMs);
  }

  /** Drops every series labelled with `clusterSet` (the ClusterSet was deleted). */
  forget(clusterSet: string): void {
    this.#lastBeat.delete(clusterSet);
    this.#tokenExpiry.delete(clusterSet);
    const metrics = this.#series.get(clusterSet);
    if (metrics === undefined) return;
    for (const [metric, labelSets] of metrics) {
      for (const labels of labelSets.values()) metric.remove(labels);
    }
    this.#series.delete(clusterSet);
  }

  #track(clusterSet: string, metric: { remove(labels: Record<string, string>): void }, labels: Record<string, string>): void {
    let metrics = this.#series.get(clusterSet);
    if (metrics === undefined) {
      metrics = new Map();
      this.#series.set(clusterSet, metrics);
    }
    let labelSets = metrics.get(metric);
    if (labelSets === undefined) {
      labelSets = new Map();
      metrics.set(metric, labelSets);
    }
    // Keys are built from the values in label-name order, which every call site keeps fixed.
    labelSets.set(JSON.stringify(Object.values(labels)), labels);
  }
}
