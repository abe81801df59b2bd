// Which announce events ask the leader for a status run (issue 31): a Connected member's beat
// does not; a change of what the status shows does, and so does any event while a run is in
// flight (that run may have read the version before it). And when a changed status is written:
// at once after a quiet spell, inside a burst once within each change's bound (status-coalescing.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSet, ClusterSetStatus, MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import type { LeaderContext } from '../../src/leader/context.js';
import { BeatSightings } from '../../src/leader/decisions/observed-beats.js';
import type { CoalescingBounds } from '../../src/leader/decisions/status-coalescing.js';
import { StatusReconciler } from '../../src/leader/status.js';

const T0 = Date.parse('2026-12-02T10:00:00Z');
const TIMEOUT = 30_000;

function announce(clusterSetID: string, touch: string, clusterID = 'east'): MemberClusterAnnounce {
  return { metadata: { name: `member-announce-from-${clusterID}`, annotations: { 'touch-ts': touch } }, clusterID, clusterSetID, leaderClusterID: 'leader' };
}

/** Every change written at once: the runs' own behaviour, without coalescing. */
const AT_ONCE: CoalescingBounds = { quietMs: 0, urgentMs: 0, routineMs: 0 };

/** A StatusReconciler over in-memory lists; each status write waits for `hold` when set. */
function setup(bounds: CoalescingBounds | 'default' = AT_ONCE) {
  let now = T0 + 1000;
  let announces = [announce('cs', '2026-12-02T10:00:00Z')];
  let clusterSet: ClusterSet = { metadata: { name: 'cs', resourceVersion: '1' }, spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] } };
  let hold: Promise<void> | undefined;
  let writes = 0;
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined };
  const ctx = {
    ns: 'ns', log: quiet, events: undefined, metrics: undefined, now: () => now,
    announces: { list: () => announces },
    clusterSets: { list: () => [clusterSet] },
    duplicateEvents: { list: () => [] },
    objects: {
      replaceNamespacedCustomObjectStatus: async ({ body }: { body: { status: ClusterSetStatus } }) => {
        writes += 1;
        if (hold !== undefined) await hold;
        // The cache shows the write at once: a new object with a new resourceVersion, as an
        // informer's (the run's copy keeps the version it replaced), so no wait for the echo.
        clusterSet = { ...clusterSet, status: body.status, metadata: { ...clusterSet.metadata, resourceVersion: String(writes + 1) } };
      },
    },
  } as unknown as LeaderContext;
  const reconciler = new StatusReconciler(ctx, TIMEOUT, new BeatSightings(), undefined, bounds === 'default' ? undefined : bounds);
  return {
    reconciler,
    set: (a: MemberClusterAnnounce, atMs: number) => { announces = [a]; now = atMs; reconciler.observe(a, false); },
    members: (list: MemberClusterAnnounce[], atMs: number) => { announces = list; now = atMs; for (const a of list) reconciler.observe(a, false); },
    status: () => clusterSet.status,
    hold: () => {
      let open: () => void = () => undefined;
      hold = new Promise<void>((resolve) => { open = resolve; });
      return () => { hold = undefined; open(); };
    },
    writes: () => writes,
  };
}

describe('StatusReconciler.changesStatus (which announce events ask for a status run)', () => {
  it("asks for none at a Connected member's beat, and for one when what the status shows changes", async () => {
    const s = setup();
    assert.equal(s.reconciler.changesStatus(announce('cs', '2026-12-02T10:00:00Z')), true, 'nothing shown yet');
    await s.reconciler.reconcile();
    assert.equal(s.writes(), 1);
    const beat = announce('cs', '2026-12-02T10:00:10Z');
    s.set(beat, T0 + 11_000);
    assert.equal(s.reconciler.changesStatus(beat), false, 'a beat of a member shown Connected');
    const moved = announce('other', '2026-12-02T10:00:20Z');
    s.set(moved, T0 + 21_000);
    assert.equal(s.reconciler.changesStatus(moved), true, 'a member that moved to another ClusterSet');
  });

  it('asks for one at any event while a run is in flight: that run may have read the version before', async () => {
    const s = setup();
    await s.reconciler.reconcile();
    // east moves away; the run that shows it gone is writing when east moves back.
    s.set(announce('other', '2026-12-02T10:00:10Z'), T0 + 11_000);
    const open = s.hold();
    const run = s.reconciler.reconcile();
    const back = announce('cs', '2026-12-02T10:00:20Z');
    s.set(back, T0 + 21_000);
    // The same as the last completed run showed, but not what the run in flight will show.
    assert.equal(s.reconciler.changesStatus(back), true);
    open();
    await run;
    assert.equal(s.writes(), 2);
    assert.equal(s.reconciler.changesStatus(back), true, 'the run showed east gone: its return is a change');
    await s.reconciler.reconcile();
    const beat = announce('cs', '2026-12-02T10:00:30Z');
    s.set(beat, T0 + 31_000);
    assert.equal(s.reconciler.changesStatus(beat), false);
  });
});

describe('StatusReconciler: when a changed status is written (the default bounds of a 30 s member timeout)', () => {
  const ready = (st: ClusterSetStatus | undefined, id: string) => st?.clusterStatuses?.find((c) => c.clusterID === id)?.conditions?.[0];

  it('writes a change after a quiet spell at once, holds a burst back to one write within its bound, and keeps each member\'s own transition time', async () => {
    const s = setup('default');
    assert.notEqual(await s.reconciler.reconcile(), undefined);
    assert.equal(s.writes(), 1, 'the first status: nothing written for a member timeout');
    assert.equal(s.reconciler.heldBack, false);
    // west joins 5 s later: routine, within 15 s of the run that first saw it.
    s.members([announce('cs', '2026-12-02T10:00:00Z'), announce('cs', '2026-12-02T10:00:05Z', 'west')], T0 + 6_000);
    const held = await s.reconciler.reconcile();
    assert.equal(s.writes(), 1, 'a join inside the burst is held back');
    assert.equal(s.reconciler.heldBack, true);
    assert.ok(held !== undefined && Math.abs(held.requeueAfterMs - 15_000) <= 100, `the run at the join's due time: ${JSON.stringify(held)}`);
    s.members([announce('cs', '2026-12-02T10:00:00Z'), announce('cs', '2026-12-02T10:00:20Z', 'west')], T0 + 21_000);
    await s.reconciler.reconcile();
    assert.equal(s.writes(), 2, 'written at its due time');
    assert.equal(ready(s.status(), 'west')?.lastTransitionTime, '2026-12-02T10:00:06Z', 'Ready since the run that first saw it, not since the write (10:00:21)');
    // east's timeout ran out at 10:00:30: urgent, within 6 s of the run that sees it; north joins meanwhile.
    s.members([announce('cs', '2026-12-02T10:00:00Z'), announce('cs', '2026-12-02T10:00:20Z', 'west')], T0 + 31_000);
    const urgent = await s.reconciler.reconcile();
    assert.equal(s.writes(), 2);
    assert.ok(urgent !== undefined && urgent.requeueAfterMs <= 6_100, `held back at most 6 s: ${JSON.stringify(urgent)}`);
    s.members([announce('cs', '2026-12-02T10:00:00Z'), announce('cs', '2026-12-02T10:00:20Z', 'west'), announce('cs', '2026-12-02T10:00:33Z', 'north')], T0 + 34_000);
    await s.reconciler.reconcile();
    assert.equal(s.writes(), 2, 'north waits with east');
    s.members([announce('cs', '2026-12-02T10:00:00Z'), announce('cs', '2026-12-02T10:00:35Z', 'west'), announce('cs', '2026-12-02T10:00:33Z', 'north')], T0 + 37_000);
    await s.reconciler.reconcile();
    assert.equal(s.writes(), 3, 'one write for the Disconnected verdict and the join');
    assert.equal(s.reconciler.heldBack, false);
    assert.equal(ready(s.status(), 'north')?.status, 'True');
    assert.equal(ready(s.status(), 'east')?.status, 'False');
    assert.equal(ready(s.status(), 'east')?.lastTransitionTime, '2026-12-02T10:00:30Z', 'Disconnected when its timeout ran out');
    assert.equal(s.status()?.conditions?.[0]?.lastTransitionTime, '2026-12-02T10:00:30Z', 'the ClusterSet\'s Ready turned False with east');
  });

  it('drops a held-back change that undid itself: a member back before the write costs no write', async () => {
    const s = setup('default');
    await s.reconciler.reconcile();
    s.members([announce('cs', '2026-12-02T10:00:00Z'), announce('cs', '2026-12-02T10:00:05Z', 'west')], T0 + 6_000);
    await s.reconciler.reconcile();
    assert.equal(s.reconciler.heldBack, true);
    s.members([announce('cs', '2026-12-02T10:00:10Z')], T0 + 11_000);
    assert.equal(await s.reconciler.reconcile() !== undefined, true);
    assert.equal(s.reconciler.heldBack, false, 'west left before its join was written: nothing to write');
    assert.equal(s.writes(), 1);
  });
});
