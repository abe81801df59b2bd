// When the leader ClusterSet's status is written: at once after a quiet spell, otherwise once
// for a whole burst of member changes, each change within its own bound. Pure: fed statuses
// and times.
//
// Written at every change (paced to one run a second), a fleet whose members come and go in a
// burst (a rollout joining 50 clusters, a partition taking 500 away) rewrote a ClusterSet
// status as large as the fleet up to once a second: bench:antrea --mode leader at 200 members
// measured 29.5-33.2 status writes a minute while 10 joined and 10 left, where Antrea's leader
// writes every 30 s whatever happens. Here a change after a quiet spell (nothing pending, no
// write for a member timeout) is still written within the run's pacing, and inside a burst:
// - a member no longer Ready, a ClusterSet condition that appears or goes, a spec change
//   (urgent) is written within a fifth of the member timeout (6 s of the default 30 s), so a
//   member is shown Disconnected within the timeout and 6 s of its last beat;
// - a member joining, leaving or coming back (routine) within half of it (15 s), so a member
//   that joins is shown Ready before its first beat could time out, and faster than Antrea's
//   leader shows either (it writes every 30 s).
// Each write carries every change pending at that moment, whatever its bound.
import { CONDITION_TYPE, type ClusterSetStatus } from '../../common/api/antrea.js';
import { readyOf, REASON_NOT_LEADER } from './liveness.js';

export type ChangeUrgency = 'urgent' | 'routine';

export interface CoalescingBounds {
  /** No status write for this long: the next change is written at once (ms). */
  readonly quietMs: number;
  /** A change that hides trouble (a member no longer Ready, a condition, a spec change) is written within this (ms). */
  readonly urgentMs: number;
  /** A member joining, leaving or coming back is written within this (ms). */
  readonly routineMs: number;
}

/** The bounds for a leader whose members are Disconnected `memberTimeoutMs` after their last beat. */
export function coalescingBounds(memberTimeoutMs: number): CoalescingBounds {
  return { quietMs: memberTimeoutMs, urgentMs: memberTimeoutMs / 5, routineMs: memberTimeoutMs / 2 };
}

/** The ClusterSet's own conditions but Ready, which follows its members: as comparable text. */
function otherConditions(status: ClusterSetStatus | undefined): string {
  return JSON.stringify((status?.conditions ?? []).filter((c) => c.type !== CONDITION_TYPE.Ready).map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '']));
}

/**
 * How urgent the difference from the `written` status to the `next` one is: urgent when a member
 * still listed is no longer Ready, a condition other than Ready changed (a duplicate cluster ID,
 * the leader's own spec problem shown in Ready's reason), or the spec's generation moved;
 * routine otherwise (members joining, leaving, coming back, messages). Only called for statuses
 * that differ.
 */
export function changeUrgency(written: ClusterSetStatus | undefined, next: ClusterSetStatus): ChangeUrgency {
  if (written === undefined) return 'urgent';
  if (written.observedGeneration !== next.observedGeneration) return 'urgent';
  if (otherConditions(written) !== otherConditions(next)) return 'urgent';
  const notLeader = (s: ClusterSetStatus) => readyOf(s.conditions)?.reason === REASON_NOT_LEADER;
  if (notLeader(written) !== notLeader(next)) return 'urgent';
  const before = new Map((written.clusterStatuses ?? []).map((s) => [s.clusterID ?? '', readyOf(s.conditions)?.status]));
  for (const s of next.clusterStatuses ?? []) {
    if (before.get(s.clusterID ?? '') === 'True' && readyOf(s.conditions)?.status !== 'True') return 'urgent';
  }
  return 'routine';
}

export type CoalescingDecision = { readonly write: true } | { readonly write: false; readonly dueAtMs: number };

/**
 * One ClusterSet's pending changes: when each kind was first seen unwritten, and when the status
 * was last written. Feed it every status run's verdict; it says whether to write now.
 */
export class StatusCoalescer {
  readonly #bounds: CoalescingBounds;
  #lastWriteMs: number | undefined;
  /** When a change of each urgency was first computed and not written. */
  readonly #pendingSince = new Map<ChangeUrgency, number>();

  constructor(bounds: CoalescingBounds) {
    this.#bounds = bounds;
  }

  /** A run found the status as written: nothing is pending any more (a member came back before its write, say). */
  unchanged(): void {
    this.#pendingSince.clear();
  }

  /** A run found a difference of this urgency at `nowMs`: write now, or by when. */
  changed(urgency: ChangeUrgency, nowMs: number): CoalescingDecision {
    // The first change after a quiet spell (nothing pending, nothing written for a while).
    const quiet = this.#pendingSince.size === 0 && (this.#lastWriteMs === undefined || nowMs - this.#lastWriteMs >= this.#bounds.quietMs);
    // An urgent difference may hold routine changes too (counted from now if none was pending);
    // a routine one no longer has the urgent part (the member came back before its write).
    if (urgency === 'routine') this.#pendingSince.delete('urgent');
    for (const u of urgency === 'urgent' ? ['urgent', 'routine'] as const : ['routine'] as const) {
      if (!this.#pendingSince.has(u)) this.#pendingSince.set(u, nowMs);
    }
    if (quiet) return { write: true };
    const dueAtMs = Math.min(...[...this.#pendingSince].map(([u, since]) => since + (u === 'urgent' ? this.#bounds.urgentMs : this.#bounds.routineMs)));
    return dueAtMs <= nowMs ? { write: true } : { write: false, dueAtMs };
  }

  /** The status was written at `nowMs`, with every pending change. */
  written(nowMs: number): void {
    this.#lastWriteMs = nowMs;
    this.#pendingSince.clear();
  }
}
