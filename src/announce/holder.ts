// Who holds a cluster ID's announce when two member clusters are configured with the same ID.
// Pure: fed the announce as the leader stores it, this cluster's identity and the time.
//
// The announce's name depends only on the cluster ID, so two clusters with one ID write the same
// object: each beat would take it over from the other, and each one's full export sync would
// delete the other's exports as leftovers. Every write of ours stamps the cluster's identity
// (CLUSTER_UID_ANNOTATION); an announce stamped by ANOTHER identity that beat within the takeover
// window is that cluster's: we are not the holder and write nothing. Once its beats are older than
// the window it is taken over, so a rebuilt cluster (new identity, same ID) can rejoin.
// An announce without the annotation (Antrea's member, an older agent) is nobody's in particular:
// it is adopted as before.
import { lastSignOfLife } from '../common/api/announce-times.js';
import type { MemberClusterAnnounce } from '../common/api/antrea.js';
import { CLUSTER_UID_ANNOTATION } from '../common/api/names.js';

/** Takeover window in heartbeat intervals: the leader's default member timeout (30 s) is three beats of 10 s. */
export const TAKEOVER_BEATS = 3;

/** How long another cluster's last beat keeps the announce its own. */
export function takeoverWindowMs(intervalMs: number): number {
  return TAKEOVER_BEATS * intervalMs;
}

export type HolderVerdict =
  /** Unstamped, stamped by us, or we cannot tell: write it. */
  | { readonly op: 'ours' }
  /** Stamped by another cluster whose beats stopped longer than the window ago: take it over. */
  | { readonly op: 'take-over'; readonly previous: string; readonly lastBeatMs: number | undefined }
  /** Stamped by another cluster that beat within the window: it holds the ID; write nothing. */
  | { readonly op: 'held-elsewhere'; readonly holder: string; readonly lastBeatMs: number };

/**
 * Whether `announce` may be written by the cluster whose identity is `ours` (undefined: this
 * cluster's identity could not be read, so any stamped announce counts as another's).
 */
export function judgeHolder(announce: MemberClusterAnnounce, ours: string | undefined, nowMs: number, windowMs: number): HolderVerdict {
  const stamped = announce.metadata?.annotations?.[CLUSTER_UID_ANNOTATION];
  if (stamped === undefined || stamped === '' || stamped === ours) return { op: 'ours' };
  const lastBeatMs = lastSignOfLife(announce);
  // A beat stamped in our future (clock skew) is as fresh as one stamped now.
  if (lastBeatMs !== undefined && nowMs - lastBeatMs < windowMs) return { op: 'held-elsewhere', holder: stamped, lastBeatMs };
  return { op: 'take-over', previous: stamped, lastBeatMs };
}

/** The member's Ready message: both identities and the holder's last beat; what to do. */
// No timestamp in it: the message goes to the ClusterSet's Ready condition, which must not be
// rewritten at every heartbeat while the duplicate lasts (the holder's beats are in the log and Event).
export function duplicateMessage(clusterID: string, ours: string | undefined, holder: string, windowMs: number): string {
  return `cluster ID ${clusterID} is also used by another member cluster: its announce member-announce-from-${clusterID} is held by cluster ${holder} ` +
    `(its heartbeats are live), this cluster is ${ours ?? '(identity unknown)'}. ` +
    'This cluster writes nothing to the leader (no heartbeat, no exports; imports paused) so that neither deletes the other\'s exports. ' +
    `Give one of the two clusters another cluster ID; this one takes over ${String(Math.round(windowMs / 1000))} s after the other's last heartbeat`;
}

/** Repeat the Event to the leader this often while the duplicate lasts: the leader clears its report after a few missed repeats. */
export const DUPLICATE_EVENT_REPEAT_MS = 5 * 60_000;

/** Whether to record the Event now: at detection (or a new holder), then at most every `repeatMs`. */
export function shouldReportDuplicate(last: { readonly atMs: number; readonly holder: string } | undefined, holder: string, nowMs: number, repeatMs = DUPLICATE_EVENT_REPEAT_MS): boolean {
  return last === undefined || last.holder !== holder || nowMs - last.atMs >= repeatMs;
}
