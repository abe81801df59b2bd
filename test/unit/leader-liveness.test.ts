import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSet, MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { leaderClusterSetStatus, memberLiveness, shownKey } from '../../src/leader/decisions/liveness.js';
import { memberIdsData } from '../../src/leader/decisions/member-ids.js';
import { BeatSightings, clockAheadMs, clockAheadProblem, countedBeat } from '../../src/leader/decisions/observed-beats.js';

const T0 = Date.parse('2026-12-02T10:00:00Z');
const TIMEOUT = 30_000;

function announce(clusterID: string, touch: string | undefined): MemberClusterAnnounce {
  return {
    metadata: { name: `member-announce-from-${clusterID}`, ...(touch === undefined ? {} : { annotations: { 'touch-ts': touch } }) },
    clusterID, clusterSetID: 'cs', leaderClusterID: 'leader',
  };
}

const leaderCS = (status?: ClusterSet['status']): ClusterSet => ({
  metadata: { name: 'cs', generation: 3 },
  spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] },
  ...(status === undefined ? {} : { status }),
});

describe('memberLiveness', () => {
  it('is ready until touch-ts + timeout inclusive, then Disconnected with Antrea\'s message', () => {
    const a = announce('east', '2026-12-02T10:00:00Z');
    assert.deepEqual(memberLiveness(a, T0 + TIMEOUT, TIMEOUT), { clusterID: 'east', ready: true, message: 'Member Connected', expiresAt: T0 + TIMEOUT, lastBeat: T0, since: undefined });
    const late = memberLiveness(a, T0 + TIMEOUT + 1, TIMEOUT);
    assert.equal(late.ready, false);
    assert.equal(late.message, 'No MemberClusterAnnounce update after 2026-12-02T10:00:00.000Z');
    assert.equal(late.expiresAt, undefined);
    assert.equal(late.since, T0 + TIMEOUT, 'Disconnected since its timeout ran out, whenever a run judges it');
  });

  it('depends on the stored touch-ts only, so a restarted leader gives the same answer', () => {
    const a = announce('east', '2026-12-02T10:00:00Z');
    assert.deepEqual(memberLiveness(a, T0 + 60_000, TIMEOUT), memberLiveness(structuredClone(a), T0 + 60_000, TIMEOUT));
  });

  it('a missing or malformed touch-ts is not ready, and says so', () => {
    for (const touch of [undefined, 'yesterday', '2026-12-02 10:00:00']) {
      const l = memberLiveness(announce('east', touch), T0, TIMEOUT);
      assert.equal(l.ready, false, String(touch));
      assert.match(l.message, /has no valid touch-ts annotation/);
    }
  });
});

describe('shownKey (whether a new version of an announce can change the leader ClusterSet status)', () => {
  const key = (a: MemberClusterAnnounce, nowMs: number) => shownKey(a, memberLiveness(a, nowMs, TIMEOUT));
  const shown = key(announce('east', '2026-12-02T10:00:00Z'), T0 + 1000);

  it("is the same for a Connected member's next beat: no status run for it", () => {
    assert.equal(key(announce('east', '2026-12-02T10:00:10Z'), T0 + 11_000), shown);
  });

  it('differs when the member comes back, moves, is deleted or is written by another cluster', () => {
    const disconnected = key(announce('east', '2026-12-02T10:00:00Z'), T0 + TIMEOUT + 1);
    assert.notEqual(disconnected, shown);
    assert.notEqual(key(announce('east', '2026-12-02T10:01:00Z'), T0 + 61_000), disconnected, 'a Disconnected member beating again');
    assert.notEqual(key({ ...announce('east', '2026-12-02T10:00:10Z'), clusterSetID: 'other' }, T0 + 11_000), shown);
    const deleting = announce('east', '2026-12-02T10:00:10Z');
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: new Date('2026-12-02T10:00:11Z') };
    assert.notEqual(key(deleting, T0 + 11_000), shown);
    const twin = announce('east', '2026-12-02T10:00:10Z');
    twin.metadata = { ...twin.metadata, annotations: { ...twin.metadata?.annotations, 'multicluster.clusterset-agent.io/cluster-uid': 'u-2' } };
    assert.notEqual(key(twin, T0 + 11_000), shown);
  });
});

describe('leaderClusterSetStatus', () => {
  const now = T0 + 5_000;
  it('counts members, sorts them by ID and is Ready=True when all are ready (also with none)', () => {
    const members = [memberLiveness(announce('west', '2026-12-02T10:00:00Z'), now, TIMEOUT), memberLiveness(announce('east', '2026-12-02T10:00:00Z'), now, TIMEOUT)];
    const status = leaderClusterSetStatus(leaderCS(), members, now);
    assert.equal(status.totalClusters, 2);
    assert.equal(status.readyClusters, 2);
    assert.equal(status.observedGeneration, 3);
    assert.deepEqual(status.clusterStatuses?.map((s) => s.clusterID), ['east', 'west']);
    assert.deepEqual(status.conditions, [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-02T10:00:05Z' }]);
    assert.deepEqual(status.clusterStatuses?.[0]?.conditions, [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-02T10:00:05Z', message: 'Member Connected', reason: 'Connected' }]);
    const since = leaderClusterSetStatus(leaderCS(), members.map((m) => ({ ...m, since: T0 + 2_000 })), now);
    assert.equal(since.clusterStatuses?.[0]?.conditions?.[0]?.lastTransitionTime, '2026-12-02T10:00:02Z', 'a member\'s own since, where it is known');
    assert.equal(leaderClusterSetStatus(leaderCS(), [], now).conditions?.[0]?.status, 'True');
  });

  it('is False NoReadyCluster when any member is not ready', () => {
    const members = [memberLiveness(announce('east', '2026-12-02T10:00:00Z'), now, TIMEOUT), memberLiveness(announce('west', '2026-12-02T09:00:00Z'), now, TIMEOUT)];
    const status = leaderClusterSetStatus(leaderCS(), members, now);
    assert.equal(status.readyClusters, 1);
    assert.equal(status.conditions?.[0]?.status, 'False');
    assert.equal(status.conditions?.[0]?.reason, 'NoReadyCluster');
    assert.equal(status.clusterStatuses?.[1]?.conditions?.[0]?.reason, 'Disconnected');
  });

  it('keeps transition times while nothing changes, so an unchanged world yields an identical status (no write)', () => {
    const first = leaderClusterSetStatus(leaderCS(), [memberLiveness(announce('east', '2026-12-02T10:00:00Z'), now, TIMEOUT)], now);
    const later = now + 20_000;
    const again = leaderClusterSetStatus(leaderCS(first), [memberLiveness(announce('east', '2026-12-02T10:00:20Z'), later, TIMEOUT)], later);
    assert.deepEqual(again, first);
    const gone = later + 60_000;
    const flipped = leaderClusterSetStatus(leaderCS(first), [memberLiveness(announce('east', '2026-12-02T10:00:20Z'), gone, TIMEOUT)], gone);
    // Judged at 10:01:25, Disconnected since its timeout ran out: 10:00:20 + 30 s.
    assert.equal(flipped.clusterStatuses?.[0]?.conditions?.[0]?.lastTransitionTime, '2026-12-02T10:00:50Z');
    assert.equal(flipped.conditions?.[0]?.lastTransitionTime, '2026-12-02T10:00:50Z');
  });

  it('is False NotLeader when the ClusterSet does not name its own cluster ID among its leaders', () => {
    const cs = leaderCS();
    const status = leaderClusterSetStatus({ ...cs, spec: { clusterID: 'leader', leaders: [{ clusterID: 'other' }] } }, [], now);
    assert.equal(status.conditions?.[0]?.reason, 'NotLeader');
    assert.match(status.conditions?.[0]?.message ?? '', /local cluster leader is not defined as leader in ClusterSet/);
  });
});

describe('memberIdsData', () => {
  const sa = (name: string, id?: string) => ({ metadata: { name, ...(id === undefined ? {} : { annotations: { 'multicluster.antrea.io/cluster-id': id } }) } });
  it('maps annotated ServiceAccounts to their cluster IDs, plus the leader ClusterSet\'s IDs under reserved keys', () => {
    const plan = memberIdsData([sa('member-west', 'west'), sa('member-east', 'east'), sa('default')], [leaderCS()]);
    assert.deepEqual(plan.data, { 'member-east': 'east', 'member-west': 'west', ClusterSetID: 'cs', LeaderClusterID: 'leader', DashPrefixPairsRefused: 'true' });
    assert.deepEqual(plan.problems, []);
  });

  it('fails closed: two ServiceAccounts claiming one ID, an invalid ID, or no single valid ClusterSet are left out and reported', () => {
    const plan = memberIdsData([sa('a', 'east'), sa('b', 'east'), sa('c', 'Not_Valid'), sa('d', 'west')], [leaderCS(), { ...leaderCS(), metadata: { name: 'cs2' } }]);
    assert.deepEqual(plan.data, { d: 'west', DashPrefixPairsRefused: 'true' });
    assert.equal(plan.problems.length, 3);
    assert.match(plan.problems.join('\n'), /ServiceAccounts a, b all claim cluster ID east/);
    assert.match(plan.problems.join('\n'), /2 leader ClusterSets in the namespace \(cs, cs2\)/);
  });

  it('fails closed on a dash-prefix pair, naming both, and on a dotted ID, in the shared cluster-ID words', () => {
    const plan = memberIdsData([sa('member-east', 'east'), sa('member-east-1', 'east-1'), sa('member-eastern', 'eastern'), sa('dotted', 'a.b')], [leaderCS()]);
    assert.deepEqual(plan.data, { 'member-eastern': 'eastern', ClusterSetID: 'cs', LeaderClusterID: 'leader', DashPrefixPairsRefused: 'true' });
    assert.match(plan.problems.join('\n'), /cluster IDs east \(ServiceAccount member-east\) and east-1 \(ServiceAccount member-east-1\) form a dash-prefix pair/);
    assert.match(plan.problems.join('\n'), /ServiceAccount dotted: annotation multicluster.antrea.io\/cluster-id: cluster ID "a\.b" is not valid: a cluster ID is a DNS-1123 label/);
  });
});

describe('a touch-ts from the future (the member\'s clock runs ahead)', () => {
  const DAY = 86_400_000;
  const ahead = announce('east', new Date(T0 + DAY).toISOString());

  it('counts from when the leader first saw it: Ready for one timeout after that, then Disconnected, saying why', () => {
    const fresh = memberLiveness(ahead, T0 + TIMEOUT, TIMEOUT, T0);
    assert.equal(fresh.ready, true);
    assert.equal(fresh.expiresAt, T0 + TIMEOUT);
    assert.match(fresh.message, /^Member Connected; its touch-ts runs ahead of the leader's clock: each heartbeat counts from when the leader saw it; set the member cluster's clock right \(NTP\)$/);
    const stopped = memberLiveness(ahead, T0 + TIMEOUT + 1, TIMEOUT, T0);
    assert.equal(stopped.ready, false);
    assert.match(stopped.message, /^No MemberClusterAnnounce update after 2026-12-02T10:00:00.000Z; its touch-ts runs ahead/);
  });

  it('an honest stamp (earlier than the leader saw it) counts as itself, as before: a restarted leader answers the same', () => {
    const honest = announce('east', '2026-12-02T10:00:00Z');
    for (const firstSeen of [T0 + 200, T0 + 45_000]) {
      assert.deepEqual(memberLiveness(honest, T0 + 40_000, TIMEOUT, firstSeen), memberLiveness(honest, T0 + 40_000, TIMEOUT));
    }
  });

  it('a stamp a little ahead (ordinary skew, under 5 s) is counted from the sighting but not reported', () => {
    const l = memberLiveness(announce('east', new Date(T0 + 3_000).toISOString()), T0, TIMEOUT, T0);
    assert.equal(l.message, 'Member Connected');
    assert.equal(l.lastBeat, T0);
  });
});

describe('BeatSightings', () => {
  it('keeps the first sighting of a value, takes a new one for a new value, forgets a deleted announce', () => {
    const s = new BeatSightings();
    assert.deepEqual(s.see('a', T0 + 100, T0), { sighting: { stampMs: T0 + 100, firstSeenMs: T0 }, fresh: true });
    assert.deepEqual(s.see('a', T0 + 100, T0 + 50_000), { sighting: { stampMs: T0 + 100, firstSeenMs: T0 }, fresh: false });
    assert.deepEqual(s.see('a', T0 + 10_100, T0 + 60_000), { sighting: { stampMs: T0 + 10_100, firstSeenMs: T0 + 60_000 }, fresh: true });
    s.forget('a');
    assert.equal(s.see('a', T0 + 10_100, T0 + 70_000)?.sighting.firstSeenMs, T0 + 70_000);
    assert.equal(s.see('a', undefined, T0 + 80_000), undefined);
  });

  it('the counted beat is min(touch-ts, first seen); ahead is reported past 5 s, in a bounded message', () => {
    assert.equal(countedBeat({ stampMs: T0 + 86_400_000, firstSeenMs: T0 }), T0);
    assert.equal(countedBeat({ stampMs: T0 - 700, firstSeenMs: T0 }), T0 - 700);
    assert.equal(clockAheadMs({ stampMs: T0 + 5_000, firstSeenMs: T0 }), undefined);
    assert.equal(clockAheadMs({ stampMs: T0 + 86_400_000, firstSeenMs: T0 }), 86_400_000);
    assert.equal(clockAheadProblem('east', '2026-12-03T10:00:00Z', 86_400_000),
      'member east stamps touch-ts 2026-12-03T10:00:00Z, 24.0 h ahead of the leader\'s clock: the leader counts each heartbeat from when it saw the new touch-ts instead; set the member cluster\'s clock right (NTP)');
  });
});
