// When a MemberClusterAnnounce last showed life. The member (deciding whether another cluster
// holds its cluster ID, announce/holder.ts) and the leader (deciding when to reap a silent
// member, leader/announce-plan.ts) read it with the same rule, so that they agree on who is
// alive; the leader's liveness (leader/liveness.ts) reads the beat alone.
import type { MemberClusterAnnounce } from './antrea.js';
import { TIMESTAMP_ANNOTATION } from './names.js';
import { parseTimestamp } from '../kube/time.js';

/** The last heartbeat (ms since epoch): the `touch-ts` annotation; undefined when missing or malformed. */
export function lastBeatOf(announce: MemberClusterAnnounce): number | undefined {
  return parseTimestamp(announce.metadata?.annotations?.[TIMESTAMP_ANNOTATION]);
}

/**
 * The last sign of life (ms since epoch): the last heartbeat, else the announce's creation,
 * since Antrea's member creates its announce without a touch-ts; undefined when neither parses.
 * A malformed touch-ts counts as none here, unlike in the leader's liveness, which reports it.
 * `firstSeenMs`, where the reader knows it (the leader: leader/observed-beats.ts), is when it
 * first saw that touch-ts: the beat counts no later than that, so a member clock running ahead
 * cannot postpone its reaping.
 */
export function lastSignOfLife(announce: MemberClusterAnnounce, firstSeenMs?: number): number | undefined {
  const beat = lastBeatOf(announce);
  if (beat !== undefined) return firstSeenMs === undefined ? beat : Math.min(beat, firstSeenMs);
  return parseTimestamp(announce.metadata?.creationTimestamp);
}
