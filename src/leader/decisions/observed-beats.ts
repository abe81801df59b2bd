// When the leader itself saw each member's touch-ts change. A member's touch-ts is its own
// clock's word: one a day fast would keep a dead member Ready, and unreaped, for a day (a day
// of black-holed endpoints). So a beat counts at `min(touch-ts, first seen)`: an honest stamp
// (earlier than the leader saw it, by the write's latency) counts as itself, exactly as before,
// so a restarted leader still neither resurrects a dead member nor forgets a live one; a stamp
// from the future counts from when the leader first saw it. After a restart the leader has seen
// nothing yet: its first sight of the stored touch-ts is that first-seen time. Pure: fed times.

/** A stamp further ahead of the leader's clock than this is reported (ordinary NTP skew is far below). */
export const CLOCK_AHEAD_TOLERANCE_MS = 5_000;

export interface BeatSighting {
  /** The member's touch-ts (ms since epoch), as parsed. */
  readonly stampMs: number;
  /** When this leader first saw that touch-ts value (its own clock). */
  readonly firstSeenMs: number;
}

/** The time a beat counts from: the member's stamp, never later than when the leader first saw it. */
export function countedBeat(sighting: BeatSighting): number {
  return Math.min(sighting.stampMs, sighting.firstSeenMs);
}

/** How far the stamp was ahead of the leader's clock when first seen, when beyond the tolerance; else undefined. */
export function clockAheadMs(sighting: BeatSighting): number | undefined {
  const ahead = sighting.stampMs - sighting.firstSeenMs;
  return ahead > CLOCK_AHEAD_TOLERANCE_MS ? ahead : undefined;
}

/** Why a member's touch-ts cannot be trusted, for its status entry, the log and an Event (bounded: IDs and numbers only). */
export function clockAheadProblem(clusterID: string, stamp: string, aheadMs: number): string {
  return `member ${clusterID} stamps touch-ts ${stamp}, ${describeDuration(aheadMs)} ahead of the leader's clock: ` +
    'the leader counts each heartbeat from when it saw the new touch-ts instead; set the member cluster\'s clock right (NTP)';
}

/** The same, without running numbers, for the member's status entry: a stable sentence is not rewritten at every beat. */
export const CLOCK_AHEAD_NOTE = 'its touch-ts runs ahead of the leader\'s clock: each heartbeat counts from when the leader saw it; set the member cluster\'s clock right (NTP)';

function describeDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${String(s)} s`;
  if (s < 7200) return `${String(Math.round(s / 60))} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** First sightings of each announce's current touch-ts, by announce name. */
export class BeatSightings {
  readonly #byAnnounce = new Map<string, BeatSighting>();

  /**
   * Records that `announce` carries `stampMs` at `nowMs`; the first time the value is seen it
   * becomes the sighting, a repeated value keeps the earlier one. Returns the sighting, and
   * whether it is new; undefined when there is no stamp (nothing to count).
   */
  see(announce: string, stampMs: number | undefined, nowMs: number): { readonly sighting: BeatSighting; readonly fresh: boolean } | undefined {
    if (stampMs === undefined) {
      this.#byAnnounce.delete(announce);
      return undefined;
    }
    const known = this.#byAnnounce.get(announce);
    if (known?.stampMs === stampMs) return { sighting: known, fresh: false };
    const sighting = { stampMs, firstSeenMs: nowMs };
    this.#byAnnounce.set(announce, sighting);
    return { sighting, fresh: true };
  }

  forget(announce: string): void {
    this.#byAnnounce.delete(announce);
  }
}
