// What the leader does with one member's announce, decided from the caches alone. Pure.
//   deleting announce      → delete the member's exports (bounded-parallel), then release its finalizer
//   silent past staleMs    → reap the announce (its deletion brings the step above)
//   live, no finalizer     → add the leader's finalizer
// Re-run at every event and after a crash, it picks up wherever the last run stopped.
import { lastSignOfLife } from '../../common/api/announce-times.js';
import type { MemberClusterAnnounce, ResourceExport } from '../../common/api/antrea.js';
import { MEMBER_ANNOUNCE_FINALIZER_PREFIX } from '../../common/api/names.js';
import { isDeleting } from './aggregate.js';

export function announceFinalizer(clusterID: string): string {
  return `${MEMBER_ANNOUNCE_FINALIZER_PREFIX}${clusterID}`;
}

export type AnnounceAction =
  | { readonly op: 'collect'; readonly exports: readonly string[]; readonly releaseFinalizer: boolean }
  | { readonly op: 'reap'; readonly lastBeat: number | undefined }
  | { readonly op: 'finalize'; readonly recheckAt: number }
  | { readonly op: 'none'; readonly recheckAt: number | undefined };

export function decideAnnounce(announce: MemberClusterAnnounce, exports: readonly ResourceExport[], nowMs: number, staleMs: number, firstSeenMs?: number): AnnounceAction {
  const clusterID = announce.clusterID ?? '';
  const finalizer = announceFinalizer(clusterID);
  const finalizers = announce.metadata?.finalizers ?? [];
  if (isDeleting(announce)) {
    const theirs = exports.filter((re) => re.spec?.clusterID === clusterID && !isDeleting(re)).map((re) => re.metadata?.name ?? '').sort();
    return { op: 'collect', exports: theirs, releaseFinalizer: finalizers.includes(finalizer) };
  }
  const lastBeat = lastSignOfLife(announce, firstSeenMs);
  const staleAt = (lastBeat ?? nowMs) + staleMs;
  if (nowMs >= staleAt) return { op: 'reap', lastBeat };
  if (clusterID !== '' && !finalizers.includes(finalizer)) return { op: 'finalize', recheckAt: staleAt };
  return { op: 'none', recheckAt: staleAt };
}
