// Members' announces: the leader's finalizer, reaping members silent past the stale period, and
// garbage collection of a departed member's exports; plus the sweep of exports whose member has
// no announce at all (its finalizer was stripped, or the leader died mid-collection).
import { MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, type MemberClusterAnnounce } from '../common/api/antrea.js';
import { isConflict, isNotFound } from '../common/kube/errors.js';
import { announceFinalizer, decideAnnounce } from './decisions/announce-plan.js';
import { forEachBounded, orphanExports } from './decisions/books.js';
import { isDeleting } from './decisions/aggregate.js';
import { eventTarget, nameOf, refOf, type LeaderContext } from './context.js';
import { lastBeatOf } from '../common/api/announce-times.js';
import type { BeatSightings } from './decisions/observed-beats.js';

// A recheck right after the earliest expiry, not before it.
export const EXPIRY_SLACK_MS = 50;

export interface AnnounceOptions {
  readonly staleMemberMs: number;
  /** Deletes in flight at once while collecting one member's exports. */
  readonly gcParallelism: number;
  /** Exports younger than this are not swept for want of an announce. */
  readonly orphanGraceMs: number;
  /** When the leader first saw each announce's touch-ts (shared with liveness): a stamp from the future does not postpone reaping. */
  readonly sightings: BeatSightings;
}

export class AnnounceReconciler {
  readonly #ctx: LeaderContext;
  readonly #options: AnnounceOptions;

  constructor(ctx: LeaderContext, options: AnnounceOptions) {
    this.#ctx = ctx;
    this.#options = options;
  }

  async reconcile(name: string): Promise<undefined | { requeueAfterMs: number }> {
    const ctx = this.#ctx;
    const announce = ctx.announces.get(name, ctx.ns);
    if (announce === undefined) return undefined;
    const clusterID = announce.clusterID ?? '';
    const now = ctx.now();
    const firstSeen = this.#options.sightings.see(name, lastBeatOf(announce), now)?.sighting.firstSeenMs;
    // Only a departing member's exports are read: listing all of them at every beat was a copy
    // of the whole export cache 100 times a second at 1,000 members.
    const action = decideAnnounce(announce, isDeleting(announce) ? ctx.exports.list(ctx.ns) : [], now, this.#options.staleMemberMs, firstSeen);
    switch (action.op) {
      case 'collect': {
        // The member left (or was reaped): its exports go, and with them what they fed.
        await this.#deleteExports(action.exports);
        if (action.exports.length > 0) ctx.log.info('member left: its exports are being deleted', { memberClusterID: clusterID, exports: action.exports.length });
        if (action.releaseFinalizer) {
          await this.#replaceAnnounce(announce, (announce.metadata?.finalizers ?? []).filter((f) => f !== announceFinalizer(clusterID)));
        }
        return undefined;
      }
      case 'reap': {
        const message = `member ${clusterID} sent no heartbeat for ${String(Math.round(this.#options.staleMemberMs / 1000))} s (last ${action.lastBeat === undefined ? 'never' : new Date(action.lastBeat).toISOString()}): ` +
          'its announce and exports are deleted; it joins again with its next heartbeat';
        ctx.log.warn('stale member removed', { memberClusterID: clusterID, message });
        ctx.events?.record(eventTarget(MEMBER_CLUSTER_ANNOUNCE, announce, ctx.ns), 'Warning', 'StaleMember', message);
        try {
          await ctx.objects.deleteNamespacedCustomObject({
            ...refOf(MEMBER_CLUSTER_ANNOUNCE), namespace: ctx.ns, name,
            ...(announce.metadata?.uid ? { body: { preconditions: { uid: announce.metadata.uid } } } : {}),
          });
          ctx.metrics?.recordLeaderWrite('memberclusterannounces', 'delete');
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
        return undefined;
      }
      case 'finalize':
        await this.#replaceAnnounce(announce, [...(announce.metadata?.finalizers ?? []), announceFinalizer(clusterID)]);
        return { requeueAfterMs: action.recheckAt - now + EXPIRY_SLACK_MS };
      case 'none':
        return action.recheckAt === undefined ? undefined : { requeueAfterMs: action.recheckAt - now + EXPIRY_SLACK_MS };
    }
  }

  /** Deletes the exports whose member has no announce; returns how many it deleted. */
  async sweepOrphanExports(): Promise<number> {
    const ctx = this.#ctx;
    const orphans = orphanExports(ctx.exports.list(ctx.ns), ctx.announces.list(ctx.ns), ctx.now(), this.#options.orphanGraceMs);
    if (orphans.length === 0) return 0;
    ctx.log.warn('exports of members without an announce are being deleted', { exports: orphans.length, first: orphans.slice(0, 5) });
    await this.#deleteExports(orphans);
    return orphans.length;
  }

  async #deleteExports(names: readonly string[]): Promise<void> {
    const ctx = this.#ctx;
    await forEachBounded(names, this.#options.gcParallelism, async (name) => {
      try {
        await ctx.objects.deleteNamespacedCustomObject({ ...refOf(RESOURCE_EXPORT), namespace: ctx.ns, name });
        ctx.metrics?.recordLeaderWrite('resourceexports', 'delete');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    });
  }

  async #replaceAnnounce(announce: MemberClusterAnnounce, finalizers: string[]): Promise<void> {
    const ctx = this.#ctx;
    try {
      await ctx.objects.replaceNamespacedCustomObject({
        ...refOf(MEMBER_CLUSTER_ANNOUNCE), namespace: ctx.ns, name: nameOf(announce),
        body: { ...announce, metadata: { ...announce.metadata, finalizers } },
      });
      ctx.metrics?.recordLeaderWrite('memberclusterannounces', 'update');
    } catch (err) {
      // The member's next beat wrote meanwhile: the informer brings it, and another pass.
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}
