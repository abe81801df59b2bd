// Liveness and the leader ClusterSet's status: each member's Ready from its touch-ts, written
// only when it changes; plus what only a history of beats shows: a timeout too short for a
// member's beat period (said once per member, with the fix), and a member that flaps (said once,
// not at every beat).
import { lastBeatOf } from '../common/api/announce-times.js';
import {
  CLUSTERSET,
  MEMBER_CLUSTER_ANNOUNCE,
  type ClusterSet,
  type ClusterStatus,
  type MemberClusterAnnounce,
} from '../common/api/antrea.js';
import { sameCanonical } from '../common/kube/canonical.js';
import { isNotFound } from '../common/kube/errors.js';
import { isDeleting } from './decisions/aggregate.js';
import { BeatPeriods, FlapTracker, timeoutProblem, TimeoutReports } from './decisions/beats.js';
import { eventTarget, nameOf, refOf, type LeaderContext } from './context.js';
import { leaderClusterSetStatus, memberLiveness, readyOf, shownKey, type MemberLiveness } from './decisions/liveness.js';
import { EXPIRY_SLACK_MS } from './announces.js';
import { DEFAULT_MAX_DUPLICATE_EVENTS, DUPLICATE_CLEAR_MS, duplicateCondition, duplicateReports, reportMessage, type DuplicateReport } from './decisions/duplicates.js';
import { clockAheadMs, clockAheadProblem, type BeatSightings } from './decisions/observed-beats.js';
import { TIMESTAMP_ANNOTATION } from '../common/api/names.js';
import { behindOwnWrite, OWN_WRITE_ECHO_GRACE_MS, type WrittenOver } from './decisions/deadlines.js';
import { changeUrgency, coalescingBounds, StatusCoalescer, type CoalescingBounds } from './decisions/status-coalescing.js';

/** A member's Ready verdict the written status does not show yet, and when a run first saw it. */
interface UnwrittenVerdict {
  readonly ready: boolean;
  readonly sinceMs: number;
}

/**
 * The member's verdict with since when it holds: one the written status (`shownReady`, by
 * cluster ID) does not show yet holds since the first run that saw it (`before`, the last run's
 * records; kept in `verdicts` for the next), so a write held back to coalesce a burst does not
 * move the member's transition time.
 */
function withSince(m: MemberLiveness, shownReady: ReadonlyMap<string, string | undefined>, before: ReadonlyMap<string, UnwrittenVerdict> | undefined, verdicts: Map<string, UnwrittenVerdict>, now: number): MemberLiveness {
  if (shownReady.get(m.clusterID) === (m.ready ? 'True' : 'False')) return m;
  const seen = before?.get(m.clusterID);
  const verdict = seen?.ready === m.ready ? seen : { ready: m.ready, sinceMs: m.since ?? now };
  verdicts.set(m.clusterID, verdict);
  return m.since === undefined ? { ...m, since: verdict.sinceMs } : m;
}

export const REASON_TIMEOUT_TOO_SHORT = 'MemberTimeoutTooShort';
export const REASON_MEMBER_FLAPPING = 'MemberFlapping';
export const REASON_DUPLICATE_CLUSTER_ID = 'DuplicateClusterID';
export const REASON_MEMBER_CLOCK_AHEAD = 'MemberClockAhead';

export class StatusReconciler {
  readonly #ctx: LeaderContext;
  readonly #timeoutMs: number;
  readonly #periods = new BeatPeriods();
  readonly #flaps: FlapTracker;
  /** Members whose timeout problem was said (once each while it lasts). */
  readonly #reported = new TimeoutReports();
  /** `<ClusterSet>/<message>` of each duplicate cluster ID reported now: each is said (log, Event) once. */
  #duplicates = new Set<string>();
  readonly #sightings: BeatSightings;
  /** Members whose clock was reported running ahead: said once, again only after it was right in between. */
  readonly #clockAhead = new Set<string>();

  /** Members' DuplicateClusterID Events read at most (the newest). */
  readonly #maxDuplicateEvents: number;
  /** ClusterSet name → the copy this leader's last status write replaced, until the cache shows the write. */
  readonly #writtenOver = new Map<string, WrittenOver>();
  /** Announce name → its {@link shownKey} in the last status run that completed for its ClusterSet. */
  #shown = new Map<string, string>();
  /** A run in flight read the announces before this event, and #shown is the run before it's. */
  #running = false;
  readonly #bounds: CoalescingBounds;
  /** ClusterSet name → its changes not written yet, and its last write (status-coalescing.ts). */
  readonly #coalescers = new Map<string, StatusCoalescer>();
  /** The last run held a changed status back: the run asked for at its due time will write it. */
  #heldBack = false;
  /** ClusterSet name → cluster ID → a Ready verdict not written yet, and when a run first saw it. */
  #unwritten = new Map<string, Map<string, UnwrittenVerdict>>();

  constructor(ctx: LeaderContext, memberTimeoutMs: number, sightings: BeatSightings, maxDuplicateEvents?: number, bounds?: CoalescingBounds) {
    this.#ctx = ctx;
    this.#bounds = bounds ?? coalescingBounds(memberTimeoutMs);
    this.#maxDuplicateEvents = maxDuplicateEvents ?? DEFAULT_MAX_DUPLICATE_EVENTS;
    this.#timeoutMs = memberTimeoutMs;
    this.#sightings = sightings;
    // Four transitions within ten timeouts: a member that cannot stay up (or down).
    this.#flaps = new FlapTracker(10 * memberTimeoutMs);
  }

  /** An announce event: its touch-ts goes into the member's beat history. */
  observe(announce: MemberClusterAnnounce, deleted: boolean): void {
    const clusterID = announce.clusterID ?? '';
    if (deleted) {
      this.#shown.delete(nameOf(announce));
      this.#periods.forget(clusterID);
      this.#reported.forget(clusterID);
      this.#sightings.forget(nameOf(announce));
      this.#clockAhead.delete(clusterID);
      return;
    }
    this.#observeClock(announce);
    this.#periods.observe(clusterID, lastBeatOf(announce));
    const problem = this.#reported.next(clusterID, timeoutProblem(clusterID, this.#timeoutMs, this.#periods.periodOf(clusterID)));
    if (problem === undefined) return;
    this.#ctx.log.warn('member timeout too short for a member', { memberClusterID: clusterID, message: problem });
    this.#ctx.events?.record(eventTarget(MEMBER_CLUSTER_ANNOUNCE, announce, this.#ctx.ns), 'Warning', REASON_TIMEOUT_TOO_SHORT, problem);
  }

  /** Records when this leader first saw the announce's touch-ts; a stamp from the future is said once (log, Event). */
  #observeClock(announce: MemberClusterAnnounce): void {
    const clusterID = announce.clusterID ?? '';
    const seen = this.#sightings.see(nameOf(announce), lastBeatOf(announce), this.#ctx.now());
    if (seen === undefined || !seen.fresh) return;
    const ahead = clockAheadMs(seen.sighting);
    if (ahead === undefined) {
      if (this.#clockAhead.delete(clusterID)) this.#ctx.log.info('member clock no longer ahead of the leader\'s', { memberClusterID: clusterID });
      return;
    }
    if (this.#clockAhead.has(clusterID)) return;
    this.#clockAhead.add(clusterID);
    const message = clockAheadProblem(clusterID, announce.metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '', ahead);
    this.#ctx.log.warn('member clock ahead of the leader\'s', { memberClusterID: clusterID, aheadMs: ahead, message });
    this.#ctx.events?.record(eventTarget(MEMBER_CLUSTER_ANNOUNCE, announce, this.#ctx.ns), 'Warning', REASON_MEMBER_CLOCK_AHEAD, message);
  }

  /**
   * Whether this version of an announce (after {@link observe}) may change the leader
   * ClusterSet's status. A Connected member's beat does not: its ClusterSet, Ready and message
   * stay what the last run showed, and the run every status run schedules at the earliest
   * expiry judges it anew. A fleet at rest then asks for a run at those expiries, not at every
   * beat (at 1,000 members: a recompute over all of them every second).
   */
  changesStatus(announce: MemberClusterAnnounce): boolean {
    // During a run, what it will show is not known yet: it may have read an older version.
    if (this.#running) return true;
    const shown = this.#shown.get(nameOf(announce));
    return shown === undefined || shown !== shownKey(announce, this.#liveness(announce, this.#ctx.now()));
  }

  #liveness(announce: MemberClusterAnnounce, now: number): MemberLiveness {
    return memberLiveness(announce, now, this.#timeoutMs, this.#sightings.see(nameOf(announce), lastBeatOf(announce), now)?.sighting.firstSeenMs);
  }

  /** Whether the last run held a changed status back (written by the run at its due time). */
  get heldBack(): boolean {
    return this.#heldBack;
  }

  async reconcile(): Promise<undefined | { requeueAfterMs: number }> {
    this.#running = true;
    try {
      return await this.#reconcile();
    } finally {
      this.#running = false;
    }
  }

  async #reconcile(): Promise<undefined | { requeueAfterMs: number }> {
    const ctx = this.#ctx;
    const now = ctx.now();
    const announces = ctx.announces.list(ctx.ns).filter((a) => !isDeleting(a));
    let nextExpiry: number | undefined;
    const duplicatesNow = new Set<string>();
    const shown = new Map<string, string>();
    let heldBack = false;
    const unwritten = new Map<string, Map<string, UnwrittenVerdict>>();
    const clusterSets = ctx.clusterSets.list(ctx.ns);
    const names = new Set(clusterSets.map(nameOf));
    for (const name of this.#coalescers.keys()) if (!names.has(name)) this.#coalescers.delete(name);
    for (const clusterSet of clusterSets) {
      const name = nameOf(clusterSet);
      // The cache still holds what our last write replaced: its watch event brings another run.
      const written = this.#writtenOver.get(name);
      if (behindOwnWrite(clusterSet.metadata?.resourceVersion, written, now, OWN_WRITE_ECHO_GRACE_MS)) {
        const kept = this.#unwritten.get(name);
        if (kept !== undefined) unwritten.set(name, kept);
        nextExpiry = Math.min(nextExpiry ?? Infinity, (written?.atMs ?? now) + OWN_WRITE_ECHO_GRACE_MS);
        continue;
      }
      this.#writtenOver.delete(name);
      const own = announces.filter((a) => a.clusterSetID === name);
      const verdicts = new Map<string, UnwrittenVerdict>();
      unwritten.set(name, verdicts);
      const shownReady = new Map((clusterSet.status?.clusterStatuses ?? []).map((s) => [s.clusterID ?? '', readyOf(s.conditions)?.status]));
      const before = this.#unwritten.get(name);
      const members = own.map((a) => withSince(this.#liveness(a, now), shownReady, before, verdicts, now));
      const showing = () => { for (const [i, a] of own.entries()) { const m = members[i]; if (m !== undefined) shown.set(nameOf(a), shownKey(a, m)); } };
      for (const m of members) {
        if (m.expiresAt !== undefined) nextExpiry = Math.min(nextExpiry ?? Infinity, m.expiresAt);
      }
      const duplicates = duplicateReports(ctx.duplicateEvents.list(ctx.ns), own, now, DUPLICATE_CLEAR_MS, this.#maxDuplicateEvents);
      for (const d of duplicates) nextExpiry = Math.min(nextExpiry ?? Infinity, d.expiresAt);
      this.#reportDuplicates(clusterSet, duplicates, duplicatesNow);
      const duplicate = duplicateCondition(duplicates);
      const status = leaderClusterSetStatus(clusterSet, members, now, duplicate === undefined ? [] : [duplicate]);
      ctx.metrics?.setLeaderMembers(name, status.readyClusters ?? 0, status.totalClusters ?? 0);
      ctx.metrics?.setLeaderDuplicates(name, duplicates.length);
      let coalescer = this.#coalescers.get(name);
      if (coalescer === undefined) this.#coalescers.set(name, coalescer = new StatusCoalescer(this.#bounds));
      if (sameCanonical(clusterSet.status, status)) {
        coalescer.unchanged();
        showing();
        continue;
      }
      const decision = coalescer.changed(changeUrgency(clusterSet.status, status), now);
      if (!decision.write) {
        // Shown as far as beats go: a beat that changes nothing more asks for no run; this
        // change is written by the run at its due time, with whatever else is pending then.
        heldBack = true;
        nextExpiry = Math.min(nextExpiry ?? Infinity, decision.dueAtMs);
        ctx.log.debug('leader ClusterSet status change held back to write a burst at once', { clusterSet: name, writeInMs: decision.dueAtMs - now });
        showing();
        continue;
      }
      this.#logTransitions(clusterSet, status.clusterStatuses ?? [], now);
      try {
        await ctx.objects.replaceNamespacedCustomObjectStatus({
          ...refOf(CLUSTERSET), namespace: ctx.ns, name,
          body: { ...clusterSet, status },
        });
        ctx.metrics?.recordLeaderWrite('clustersets', 'status');
        coalescer.written(now);
        const replaced = clusterSet.metadata?.resourceVersion;
        if (replaced !== undefined) this.#writtenOver.set(name, { resourceVersion: replaced, atMs: now });
        showing();
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
    }
    for (const gone of this.#duplicates) {
      if (!duplicatesNow.has(gone)) ctx.log.info('duplicate cluster ID no longer reported', { clusterSet: gone.slice(0, gone.indexOf('/')), message: gone.slice(gone.indexOf('/') + 1) });
    }
    this.#duplicates = duplicatesNow;
    this.#shown = shown;
    this.#heldBack = heldBack;
    this.#unwritten = unwritten;
    return nextExpiry === undefined ? undefined : { requeueAfterMs: Math.max(0, nextExpiry - now) + EXPIRY_SLACK_MS };
  }

  /** Says each newly reported duplicate once: a log line and a Warning Event on the leader ClusterSet. Never deletes anything. */
  #reportDuplicates(clusterSet: ClusterSet, reports: readonly DuplicateReport[], now: Set<string>): void {
    for (const report of reports) {
      const message = reportMessage(report);
      const key = `${nameOf(clusterSet)}/${message}`;
      now.add(key);
      if (this.#duplicates.has(key)) continue;
      this.#ctx.log.warn('two member clusters use one cluster ID', { clusterSet: nameOf(clusterSet), memberClusterID: report.clusterID, holder: report.holder, claimants: report.claimants, message });
      this.#ctx.events?.record(eventTarget(CLUSTERSET, clusterSet, this.#ctx.ns), 'Warning', REASON_DUPLICATE_CLUSTER_ID, message);
    }
  }

  #logTransitions(clusterSet: ClusterSet, next: readonly ClusterStatus[], now: number): void {
    const ctx = this.#ctx;
    const before = new Map((clusterSet.status?.clusterStatuses ?? []).map((s) => [s.clusterID ?? '', s.conditions?.[0]?.status]));
    for (const s of next) {
      const clusterID = s.clusterID ?? '';
      const was = before.get(clusterID);
      const is = s.conditions?.[0]?.status;
      if (was === is) continue;
      const fields = { clusterSet: nameOf(clusterSet), memberClusterID: clusterID, ready: is, message: s.conditions?.[0]?.message };
      // A member's first appearance is not a flap.
      const report = was === undefined ? { logTransition: true, startedFlapping: false } : this.#flaps.transition(clusterID, now);
      if (report.startedFlapping) {
        const period = this.#periods.periodOf(clusterID);
        const message = `member ${clusterID} keeps turning Connected and Disconnected (4 changes within ${String(Math.round(10 * this.#timeoutMs / 1000))} s)` +
          (period === undefined ? '' : `; it beats every ${(period / 1000).toFixed(1)} s against a timeout of ${(this.#timeoutMs / 1000).toFixed(1)} s`) +
          '; further changes are not logged one by one until it is steady';
        ctx.log.warn('member flapping', { ...fields, message });
        const announce = ctx.announces.list(ctx.ns).find((a) => a.clusterID === clusterID);
        if (announce !== undefined) ctx.events?.record(eventTarget(MEMBER_CLUSTER_ANNOUNCE, announce, ctx.ns), 'Warning', REASON_MEMBER_FLAPPING, message);
      }
      if (!report.logTransition) continue;
      if (is === 'True') ctx.log.info('member connected', fields);
      else ctx.log.warn('member disconnected', fields);
    }
  }
}
