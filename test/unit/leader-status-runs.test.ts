// Which announce events ask the leader for a status run (issue 31): a Connected member's beat
// does not; a change of what the status shows does, and so does any event while a run is in
// flight (that run may have read the version before it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSet, ClusterSetStatus, MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import type { LeaderContext } from '../../src/leader/context.js';
import { BeatSightings } from '../../src/leader/decisions/observed-beats.js';
import { StatusReconciler } from '../../src/leader/status.js';

const T0 = Date.parse('2026-12-02T10:00:00Z');
const TIMEOUT = 30_000;

function announce(clusterSetID: string, touch: string): MemberClusterAnnounce {
  return { metadata: { name: 'member-announce-from-east', annotations: { 'touch-ts': touch } }, clusterID: 'east', clusterSetID, leaderClusterID: 'leader' };
}

/** A StatusReconciler over in-memory lists; each status write waits for `hold` when set. */
function setup() {
  let now = T0 + 1000;
  let announces = [announce('cs', '2026-12-02T10:00:00Z')];
  const clusterSet: ClusterSet = { metadata: { name: 'cs', resourceVersion: '1' }, spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] } };
  let hold: Promise<void> | undefined;
  let writes = 0;
  const quiet = { info: () => undefined, warn: () => undefined };
  const ctx = {
    ns: 'ns', log: quiet, events: undefined, metrics: undefined, now: () => now,
    announces: { list: () => announces },
    clusterSets: { list: () => [clusterSet] },
    duplicateEvents: { list: () => [] },
    objects: {
      replaceNamespacedCustomObjectStatus: async ({ body }: { body: { status: ClusterSetStatus } }) => {
        writes += 1;
        if (hold !== undefined) await hold;
        // The cache shows the write at once (a new resourceVersion, so no wait for the echo).
        clusterSet.status = body.status;
        clusterSet.metadata = { ...clusterSet.metadata, resourceVersion: String(writes + 1) };
      },
    },
  } as unknown as LeaderContext;
  const reconciler = new StatusReconciler(ctx, TIMEOUT, new BeatSightings());
  return {
    reconciler,
    set: (a: MemberClusterAnnounce, atMs: number) => { announces = [a]; now = atMs; reconciler.observe(a, false); },
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
