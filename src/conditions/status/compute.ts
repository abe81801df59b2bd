// ClusterSet status from the leaders' conditions, in Antrea's shape so `antctl` and
// `kubectl get clustersets` read it as they read Antrea's. Pure: the writer decides when.
import type { Condition } from '../leader-conditions.js';
import type { LeaderStatus } from '../../commonarea/remote-common-area.js';
import { rfc3339 } from '../../common/kube/time.js';

export interface ClusterStatusEntry {
  readonly clusterID: string;
  readonly conditions: readonly Condition[];
  readonly lastHeartbeatTime?: string;
}

export interface ImportCounts {
  readonly total: number;
  readonly rejected: number;
  readonly conflicts: number;
  /** With several leaders: imports whose copies on the connected leaders differ (the source's is kept). */
  readonly divergent?: number;
}

/** The import watcher's health: `False` while it cannot list or watch ResourceImports (imports frozen). */
export interface ImportsSynced {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  /** When it started failing (ms since epoch), while False. */
  readonly sinceMs?: number;
}

export const IMPORTS_SYNCED = 'ImportsSynced';
/** With several leaders: True while every leader is connected, False naming those that are not. */
export const ALL_LEADERS_CONNECTED = 'AllLeadersConnected';

export interface ComputedStatus {
  readonly observedGeneration?: number;
  readonly totalClusters: number;
  readonly readyClusters: number;
  readonly conditions: readonly Condition[];
  readonly clusterStatuses: readonly ClusterStatusEntry[];
  readonly imports?: ImportCounts;
  /** With several leaders, "<connected>/<listed>" for the LEADERS printer column. */
  readonly leaders?: string;
}

export interface StatusInput {
  readonly generation: number | undefined;
  readonly leaders: readonly LeaderStatus[];
  /** A problem with the ClusterSet itself (e.g. an invalid spec), which outranks leader state. */
  readonly specProblem?: { readonly reason: string; readonly message: string };
  readonly imports?: ImportCounts;
  /** Present while the importer watches a leader: the ImportsSynced condition after Ready. */
  readonly importsSynced?: ImportsSynced;
  /**
   * Our own fields the installed ClusterSet CRD cannot store (Antrea's CRD has neither), found
   * by {@link prunedStatusFields}: leaving them out keeps a write that the API server would
   * prune from looking like a change forever.
   */
  readonly omit?: ReadonlySet<ExtensionField>;
  /** The status currently stored, so unchanged conditions keep their transition times. */
  readonly previous?: { readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly lastTransitionTime?: string }[] | undefined } | undefined;
  readonly now: Date;
}

export function computeStatus(input: StatusInput): ComputedStatus {
  const readyClusters = input.leaders.filter((l) => l.ready.status === 'True').length;
  const overall = overallReady(input);
  const previous = input.previous?.conditions?.find((c) => c.type === 'Ready');
  const lastTransitionTime = previous?.status === overall.status && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(input.now);
  return {
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    totalClusters: input.leaders.length,
    readyClusters,
    conditions: [
      { type: 'Ready', status: overall.status, lastTransitionTime, reason: overall.reason, message: overall.message },
      ...(input.importsSynced === undefined ? [] : [importsSyncedCondition(input.importsSynced, input)]),
      ...(input.leaders.length > 1 && !input.specProblem ? [allLeadersCondition(input)] : []),
    ],
    clusterStatuses: input.leaders.map((l) => ({
      clusterID: l.leaderClusterID,
      conditions: [l.ready, l.isLeader],
      ...(l.lastHeartbeatTime !== undefined && !input.omit?.has('lastHeartbeatTime') ? { lastHeartbeatTime: l.lastHeartbeatTime } : {}),
    })),
    ...(input.imports && !input.omit?.has('imports') ? { imports: input.imports } : {}),
    ...(input.leaders.length > 1 ? { leaders: `${String(input.leaders.filter(connected).length)}/${String(input.leaders.length)}` } : {}),
  };
}

/** Connected as the ClusterSet's Ready counts it: the beat accepted and the leader confirmed. */
function connected(leader: LeaderStatus): boolean {
  return leader.ready.status === 'True' && leader.isLeader.status === 'True';
}

function allLeadersCondition(input: StatusInput): Condition {
  const missing = input.leaders.filter((l) => !connected(l));
  const status = missing.length === 0 ? 'True' : 'False';
  const previous = input.previous?.conditions?.find((c) => c.type === ALL_LEADERS_CONNECTED);
  const lastTransitionTime = previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(input.now);
  return missing.length === 0
    ? { type: ALL_LEADERS_CONNECTED, status, lastTransitionTime, reason: 'AllConnected', message: `Connected to all ${String(input.leaders.length)} leader clusters` }
    : {
      type: ALL_LEADERS_CONNECTED, status, lastTransitionTime, reason: 'LeadersDisconnected',
      message: `${String(input.leaders.length - missing.length)}/${String(input.leaders.length)} leaders connected; not connected: ` +
        missing.map((l) => `${l.leaderClusterID} (${l.ready.reason ?? 'Unknown'})`).join(', '),
    };
}

/** Status fields this agent adds to Antrea's ClusterSet shape. */
export type ExtensionField = 'imports' | 'lastHeartbeatTime';

export const EXTENSION_FIELD_PATHS: Readonly<Record<ExtensionField, string>> = {
  imports: 'status.imports',
  lastHeartbeatTime: 'status.clusterStatuses[].lastHeartbeatTime',
};

/** Our extension fields that were sent but are missing from what the API server stored: its CRD prunes them. */
export function prunedStatusFields(sent: ComputedStatus, stored: unknown): ExtensionField[] {
  const status = (stored !== null && typeof stored === 'object' ? (stored as { status?: unknown }).status : undefined) as
    { imports?: unknown; clusterStatuses?: { lastHeartbeatTime?: unknown }[] } | undefined;
  const pruned: ExtensionField[] = [];
  if (sent.imports !== undefined && status?.imports === undefined) pruned.push('imports');
  const sentBeat = sent.clusterStatuses.some((c) => c.lastHeartbeatTime !== undefined);
  if (sentBeat && !(status?.clusterStatuses ?? []).some((c) => c.lastHeartbeatTime !== undefined)) pruned.push('lastHeartbeatTime');
  return pruned;
}

function overallReady(input: StatusInput): Pick<Condition, 'status'> & { reason: string; message: string } {
  if (input.specProblem) return { status: 'False', ...input.specProblem };
  const leader = input.leaders[0];
  if (!leader) return { status: 'Unknown', reason: 'NoLeader', message: 'No leader configured yet' };
  if (input.leaders.length > 1) return severalReady(input.leaders);
  if (leader.ready.status === 'True' && leader.isLeader.status === 'True') {
    return { status: 'True', reason: 'Connected', message: `Connected to leader cluster ${leader.leaderClusterID}` };
  }
  return {
    status: leader.ready.status === 'True' ? 'Unknown' : leader.ready.status,
    reason: leader.ready.reason ?? 'Unknown',
    message: leader.ready.message ?? '',
  };
}

/**
 * Several leaders: Ready while at least one is connected (each is a full path to the
 * ClusterSet); otherwise the first leader's state, as with one leader, naming every leader.
 */
function severalReady(leaders: readonly LeaderStatus[]): Pick<Condition, 'status'> & { reason: string; message: string } {
  const up = leaders.filter(connected);
  if (up.length > 0) {
    return { status: 'True', reason: 'Connected', message: `Connected to leader cluster${up.length > 1 ? 's' : ''} ${up.map((l) => l.leaderClusterID).join(', ')} (${String(up.length)}/${String(leaders.length)})` };
  }
  const first = leaders[0];
  const anyFalse = leaders.some((l) => l.ready.status === 'False');
  return {
    status: anyFalse ? 'False' : 'Unknown',
    reason: first?.ready.reason ?? 'Unknown',
    message: `No leader connected: ${leaders.map((l) => `${l.leaderClusterID}: ${l.ready.reason ?? 'Unknown'}${l.ready.message ? ` (${l.ready.message})` : ''}`).join('; ')}`,
  };
}

/** Structural equality, so the writer skips writes that would change nothing. */
export function sameStatus(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalise(a)) === JSON.stringify(normalise(b));
}

function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined && v !== '') out[key] = normalise(v);
    }
    return out;
  }
  return value;
}

/** Since when the watcher fails (not when the status was written); an unchanged status keeps its time. */
function importsSyncedCondition(synced: ImportsSynced, input: StatusInput): Condition {
  const previous = input.previous?.conditions?.find((c) => c.type === IMPORTS_SYNCED);
  const lastTransitionTime = synced.status === 'False' && synced.sinceMs !== undefined
    ? rfc3339(new Date(synced.sinceMs))
    : previous?.status === synced.status && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(input.now);
  return { type: IMPORTS_SYNCED, status: synced.status, lastTransitionTime, reason: synced.reason, message: synced.message };
}
