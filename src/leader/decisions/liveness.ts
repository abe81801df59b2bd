// Member liveness and the leader's ClusterSet status, in Antrea's shape (antrea-wire.md §3.2,
// §3.3). Pure.
//
// Unlike Antrea, liveness is read from the announce's stored `touch-ts`, not from when this
// process last saw an event: a restarted leader neither resurrects a dead member (Antrea
// counts every announce as fresh for 30 s after a restart) nor forgets a live one. A touch-ts
// from the future is not trusted: a beat counts no later than when the leader first saw it
// (observed-beats.ts), and the member's status entry says its clock runs ahead.
import { lastBeatOf } from '../../common/api/announce-times.js';
import type { Condition } from '../../common/api/meta.js';
import {
  CONDITION_TYPE,
  REASON_DISCONNECTED,
  type ClusterSet,
  type ClusterSetStatus,
  type ClusterStatus,
  type MemberClusterAnnounce,
} from '../../common/api/antrea.js';
import { CLUSTER_UID_ANNOTATION, TIMESTAMP_ANNOTATION } from '../../common/api/names.js';
import { parseTimestamp, rfc3339 } from '../../common/kube/time.js';
import { CLOCK_AHEAD_NOTE, clockAheadMs, countedBeat } from './observed-beats.js';
import { compareNames } from '../../common/text/order.js';

export const REASON_CONNECTED = 'Connected';
export const MESSAGE_CONNECTED = 'Member Connected';
export const REASON_NO_READY_CLUSTER = 'NoReadyCluster';
export const REASON_NOT_LEADER = 'NotLeader';

export interface MemberLiveness {
  readonly clusterID: string;
  readonly ready: boolean;
  readonly message: string;
  /** When the member's state changes unless it beats again (ms since epoch); undefined if never. */
  readonly expiresAt: number | undefined;
  /** The last beat (ms since epoch), undefined when touch-ts is missing or unparseable. */
  readonly lastBeat: number | undefined;
  /**
   * Since when this verdict holds, where the announce tells (ms since epoch): Disconnected since
   * its last beat's timeout ran out. Undefined otherwise: whoever judges it says since when (the
   * status reconciler: the first run that saw it), or the run's time stands in. A status written
   * after a burst was coalesced (status-coalescing.ts) still says when each member changed, not
   * when the write went out.
   */
  readonly since: number | undefined;
}

/**
 * `firstSeenMs`: when this leader first saw the announce's current touch-ts (observed-beats.ts);
 * a beat counts from the earlier of the two, so a member's clock running ahead cannot keep it
 * Ready. Without it the stamp alone counts.
 */
export function memberLiveness(announce: MemberClusterAnnounce, nowMs: number, timeoutMs: number, firstSeenMs?: number): MemberLiveness {
  const clusterID = announce.clusterID ?? '';
  // No touch-ts at all: a fresh announce (Antrea's member creates it without one), counted from
  // its creation as Antrea's leader does. A malformed one is the member's mistake and said so.
  const stamp = announce.metadata?.annotations?.[TIMESTAMP_ANNOTATION];
  const stampMs = lastBeatOf(announce);
  const sighting = stampMs === undefined || firstSeenMs === undefined ? undefined : { stampMs, firstSeenMs };
  const ahead = sighting === undefined ? undefined : clockAheadMs(sighting);
  const lastBeat = stamp === undefined ? parseTimestamp(announce.metadata?.creationTimestamp) : sighting === undefined ? stampMs : countedBeat(sighting);
  const clockNote = ahead === undefined ? '' : `; ${CLOCK_AHEAD_NOTE}`;
  if (lastBeat === undefined) {
    return {
      clusterID, ready: false, expiresAt: undefined, lastBeat, since: undefined,
      message: `MemberClusterAnnounce ${announce.metadata?.name ?? ''} has no valid ${TIMESTAMP_ANNOTATION} annotation (RFC 3339 time of the member's last heartbeat)`,
    };
  }
  const expiresAt = lastBeat + timeoutMs;
  if (nowMs <= expiresAt) return { clusterID, ready: true, message: MESSAGE_CONNECTED + clockNote, expiresAt, lastBeat, since: undefined };
  return {
    clusterID, ready: false, expiresAt: undefined, lastBeat, since: expiresAt,
    // Antrea's wording, with the time in RFC 3339 rather than Go's UnixDate.
    message: `No MemberClusterAnnounce update after ${new Date(lastBeat).toISOString()}${clockNote}`,
  };
}

/**
 * What the leader ClusterSet's status shows of one announce, as a key: its ClusterSet, cluster
 * ID, whether it is being deleted, the cluster UID of its writer (duplicate reports read it) and
 * its Ready verdict and message. A new version with the same key, a Connected member's beat,
 * cannot change the status.
 */
export function shownKey(announce: MemberClusterAnnounce, liveness: MemberLiveness): string {
  return JSON.stringify([
    announce.clusterSetID ?? '', liveness.clusterID, announce.metadata?.deletionTimestamp !== undefined,
    announce.metadata?.annotations?.[CLUSTER_UID_ANNOTATION] ?? '', liveness.ready, liveness.message,
  ]);
}

/** The same condition as before, keeping its transition time: status writes only on change. */
export interface ConditionValue {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason?: string;
  readonly message?: string;
}

function keepTransition(previous: Condition | undefined, next: ConditionValue, now: string): Condition {
  const sameStatus = previous?.status === next.status;
  return {
    type: next.type,
    status: next.status,
    lastTransitionTime: sameStatus && previous.lastTransitionTime ? previous.lastTransitionTime : now,
    ...(next.message ? { message: next.message } : {}),
    ...(next.reason ? { reason: next.reason } : {}),
  };
}

/** The Ready condition among `conditions` (a member's entry's, or the ClusterSet's own). */
export function readyOf(conditions: readonly Condition[] | undefined): Condition | undefined {
  return conditions?.find((c) => c.type === CONDITION_TYPE.Ready);
}

/** Whether the leader ClusterSet names `spec.clusterID` among its leaders (Antrea refuses it otherwise). */
export function leaderProblem(clusterSet: ClusterSet): string | undefined {
  const id = clusterSet.spec?.clusterID ?? '';
  if (id === '') return 'spec.clusterID is empty: set it to this leader cluster\'s ID';
  if (!(clusterSet.spec?.leaders ?? []).some((l) => l.clusterID === id)) {
    return `local cluster ${id} is not defined as leader in ClusterSet: add {clusterID: ${id}} to spec.leaders`;
  }
  return undefined;
}

/**
 * The leader ClusterSet's status from the announces of its members: one `clusterStatuses`
 * entry per announce (sorted by cluster ID), `totalClusters`, `readyClusters` and the overall
 * Ready condition (True when every member is ready, also with none; False, reason
 * NoReadyCluster, otherwise). Transition times are carried over from `previous` when a
 * condition's status did not change, so an unchanged world yields an identical status.
 */
export function leaderClusterSetStatus(
  clusterSet: ClusterSet,
  members: readonly MemberLiveness[],
  nowMs: number,
  /** Conditions after Ready, present only while they hold (e.g. DuplicateClusterID). */
  extra: readonly ConditionValue[] = [],
): ClusterSetStatus {
  const previous = clusterSet.status;
  const now = rfc3339(nowMs);
  const previousByID = new Map((previous?.clusterStatuses ?? []).map((s) => [s.clusterID ?? '', s]));
  // Members' transitions in this status (ms): the overall Ready changes with them.
  const toReady: number[] = [];
  const toNotReady: number[] = [];
  const clusterStatuses: ClusterStatus[] = [...members]
    .sort((a, b) => compareNames(a.clusterID, b.clusterID))
    .map((m) => {
      const before = readyOf(previousByID.get(m.clusterID)?.conditions);
      const status = m.ready ? 'True' : 'False';
      const since = m.since === undefined ? nowMs : Math.min(m.since, nowMs);
      if (before?.status !== status) (m.ready ? toReady : toNotReady).push(since);
      return {
        clusterID: m.clusterID,
        conditions: [keepTransition(before, {
          type: CONDITION_TYPE.Ready,
          status,
          reason: m.ready ? REASON_CONNECTED : REASON_DISCONNECTED,
          message: m.message,
        }, rfc3339(since))],
      };
    });
  const readyClusters = members.filter((m) => m.ready).length;
  const problem = leaderProblem(clusterSet);
  // Not ready since the first member that broke it; ready since the last one that came back,
  // or now when a member not ready left.
  const listed = new Set(members.map((m) => m.clusterID));
  const notReadyLeft = (previous?.clusterStatuses ?? []).some((s) => !listed.has(s.clusterID ?? '') && readyOf(s.conditions)?.status !== 'True');
  const overallSince = problem !== undefined ? nowMs
    : readyClusters === members.length ? (notReadyLeft || toReady.length === 0 ? nowMs : Math.max(...toReady))
      : toNotReady.length === 0 ? nowMs : Math.min(...toNotReady);
  const overall = problem !== undefined
    ? { type: CONDITION_TYPE.Ready, status: 'False' as const, reason: REASON_NOT_LEADER, message: problem }
    : readyClusters === members.length
      ? { type: CONDITION_TYPE.Ready, status: 'True' as const }
      : { type: CONDITION_TYPE.Ready, status: 'False' as const, reason: REASON_NO_READY_CLUSTER, message: `${members.length - readyClusters} of ${members.length} member clusters are not ready` };
  return {
    totalClusters: members.length,
    readyClusters,
    ...(clusterSet.metadata?.generation === undefined ? {} : { observedGeneration: clusterSet.metadata.generation }),
    conditions: [
      keepTransition(readyOf(previous?.conditions), overall, rfc3339(overallSince)),
      ...extra.map((c) => keepTransition(previous?.conditions?.find((p) => p.type === c.type), c, now)),
    ],
    clusterStatuses,
  };
}
