// The leader's report of two member clusters under one cluster ID, from the members'
// DuplicateClusterID Events: when it holds, when it clears, and the condition it puts on the
// leader ClusterSet (after Ready, only while it holds, transition time kept).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { ClusterSet, MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { compactDuplicateEvent, DUPLICATE_CLEAR_MS, duplicateCondition, duplicateReports, reportMessage } from '../../src/leader/decisions/duplicates.js';
import { leaderClusterSetStatus } from '../../src/leader/decisions/liveness.js';

const T0 = Date.parse('2026-12-03T10:00:00Z');
const UID = 'multicluster.clusterset-agent.io/cluster-uid';
const HOLDER = 'multicluster.clusterset-agent.io/holder-cluster-uid';

function announce(clusterID: string, uid: string | undefined): MemberClusterAnnounce {
  return { metadata: { name: `member-announce-from-${clusterID}`, ...(uid === undefined ? {} : { annotations: { [UID]: uid } }) }, clusterID, clusterSetID: 'cs', leaderClusterID: 'leader' };
}

function event(clusterID: string, reporter: string, holder: string, atMs: number, extra: Partial<CoreV1Event> = {}): CoreV1Event {
  return {
    metadata: { name: `member-announce-from-${clusterID}.${atMs.toString(16)}`, annotations: { [UID]: reporter, [HOLDER]: holder } },
    involvedObject: { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'MemberClusterAnnounce', name: `member-announce-from-${clusterID}`, namespace: 'ns' },
    reason: 'DuplicateClusterID', type: 'Warning', message: 'm', lastTimestamp: new Date(atMs).toISOString() as unknown as Date, ...extra,
  };
}

describe('duplicateReports', () => {
  it('believes a report only while the leader sees what it says: a report naming another holder than the announce\'s is ignored', () => {
    // A member forging a report on east's announce names a holder east's announce does not carry.
    assert.deepEqual(duplicateReports([event('east', 'uid-forger', 'uid-made-up', T0)], [announce('east', 'uid-b')], T0 + 1000), []);
    assert.equal(duplicateReports([event('east', 'uid-a', 'uid-b', T0)], [announce('east', 'uid-b')], T0 + 1000).length, 1);
  });

  it('reads only the newest maxEvents reports, and caches only the fields it reads', () => {
    // 5,000 stale-holder reports about west, then one live duplicate of east: only the newest 10 are read.
    const flood = Array.from({ length: 5000 }, (_, i) => event('west', `uid-${String(i)}`, 'uid-w', T0 + i));
    const real = event('east', 'uid-a', 'uid-b', T0 + 10_000);
    const reports = duplicateReports([...flood, real], [announce('east', 'uid-b'), announce('west', 'uid-w')], T0 + 20_000, DUPLICATE_CLEAR_MS, 10);
    assert.deepEqual(reports.map((r) => [r.clusterID, r.claimants.length]), [['east', 1], ['west', 9]]);
    const big = event('east', 'x'.repeat(100_000), 'uid-b', T0, { message: 'y'.repeat(100_000), metadata: { name: 'e', annotations: { [UID]: 'x'.repeat(100_000), [HOLDER]: 'uid-b', other: 'z'.repeat(100_000) }, managedFields: [{ manager: 'm'.repeat(10_000) }] } });
    const cached = compactDuplicateEvent(big);
    assert.ok(JSON.stringify(cached).length < 1000, `cached ${String(JSON.stringify(cached).length)} characters`);
    assert.deepEqual(duplicateReports([cached], [announce('east', 'uid-b')], T0 + 1000).map((r) => r.clusterID), ['east'], 'what is read survives the compaction');
  });

  it('reports a cluster ID a member said is held by another identity, naming the holder from the announce', () => {
    const reports = duplicateReports([event('east', 'uid-a', 'uid-b', T0)], [announce('east', 'uid-b'), announce('west', 'uid-w')], T0 + 1000);
    assert.deepEqual(reports, [{ clusterID: 'east', holder: 'uid-b', claimants: ['uid-a'], expiresAt: T0 + DUPLICATE_CLEAR_MS }]);
    assert.equal(reportMessage(reports[0] ?? assert.fail()), 'cluster ID east is used by 2 member clusters: uid-b holds its announce; uid-a reported DuplicateClusterID and writes nothing to the leader. ' +
      'Give each member cluster its own cluster ID');
  });

  it('clears after the window without a repeat, when the reporter took the announce over, or when the announce is gone', () => {
    const e = event('east', 'uid-a', 'uid-b', T0);
    assert.deepEqual(duplicateReports([e], [announce('east', 'uid-b')], T0 + DUPLICATE_CLEAR_MS), []);
    assert.equal(duplicateReports([e], [announce('east', 'uid-b')], T0 + DUPLICATE_CLEAR_MS - 1).length, 1);
    assert.deepEqual(duplicateReports([e], [announce('east', 'uid-a')], T0 + 1000), []);
    assert.deepEqual(duplicateReports([e], [], T0 + 1000), []);
  });

  it('merges the reports of one cluster ID, keeps the latest expiry, and ignores other reasons, kinds and names', () => {
    const reports = duplicateReports([
      event('east', 'uid-a', 'uid-b', T0), event('east', 'uid-c', 'uid-b', T0 + 5000), event('east', 'uid-a', 'uid-b', T0 + 2000),
      event('west', 'uid-x', 'uid-w', T0, { reason: 'Other' }),
      event('west', 'uid-x', 'uid-w', T0, { involvedObject: { kind: 'ResourceExport', name: 'member-announce-from-west' } }),
      event('west', 'uid-x', 'uid-w', T0, { involvedObject: { kind: 'MemberClusterAnnounce', name: 'west' } }),
    ], [announce('east', 'uid-b'), announce('west', 'uid-w')], T0 + 6000);
    assert.deepEqual(reports, [{ clusterID: 'east', holder: 'uid-b', claimants: ['uid-a', 'uid-c'], expiresAt: T0 + 5000 + DUPLICATE_CLEAR_MS }]);
  });

  it('takes the time from eventTime or firstTimestamp when lastTimestamp is missing, and Date objects as well as strings', () => {
    const { lastTimestamp: _dropped, ...untimed } = event('east', 'uid-a', 'uid-b', T0);
    const e: CoreV1Event = { ...untimed, eventTime: new Date(T0) };
    assert.equal(duplicateReports([e], [announce('east', 'uid-b')], T0).length, 1);
    const none: CoreV1Event = untimed;
    assert.deepEqual(duplicateReports([none], [announce('east', 'uid-b')], T0), [], 'no time at all: not reported');
  });
});

describe('the leader ClusterSet\'s DuplicateClusterID condition', () => {
  const cs = (status?: ClusterSet['status']): ClusterSet => ({ metadata: { name: 'cs', generation: 1 }, spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] }, ...(status ? { status } : {}) });

  it('follows Ready while reported, keeps its transition time, and is gone once cleared', () => {
    const reports = duplicateReports([event('east', 'uid-a', 'uid-b', T0)], [announce('east', 'uid-b')], T0);
    const condition = duplicateCondition(reports) ?? assert.fail('a condition');
    const first = leaderClusterSetStatus(cs(), [], T0, [condition]);
    assert.deepEqual(first.conditions?.map((c) => [c.type, c.status, c.reason]), [['Ready', 'True', undefined], ['DuplicateClusterID', 'True', 'DuplicateClusterID']]);
    assert.match(first.conditions?.[1]?.message ?? '', /cluster ID east is used by 2 member clusters: uid-b holds its announce; uid-a reported/);
    const later = leaderClusterSetStatus(cs(first), [], T0 + 60_000, [condition]);
    assert.equal(later.conditions?.[1]?.lastTransitionTime, first.conditions?.[1]?.lastTransitionTime);
    assert.deepEqual(leaderClusterSetStatus(cs(later), [], T0 + 120_000, []).conditions?.map((c) => c.type), ['Ready']);
    assert.equal(duplicateCondition([]), undefined);
  });
});
