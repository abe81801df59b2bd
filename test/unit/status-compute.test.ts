import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LeaderStatus } from '../../src/commonarea/remote-common-area.js';
import { computeStatus, prunedStatusFields, sameStatus } from '../../src/conditions/status/compute.js';

const T0 = '2026-12-02T10:00:00Z';
function leader(ready: 'True' | 'False' | 'Unknown', reason = 'Connected'): LeaderStatus {
  return {
    leaderClusterID: 'l1',
    ready: { type: 'Ready', status: ready, lastTransitionTime: T0, reason, message: `m-${reason}` },
    isLeader: { type: 'IsLeader', status: ready === 'True' ? 'True' : 'Unknown', lastTransitionTime: T0, reason: 'x', message: 'y' },
    consecutiveFailures: 0,
    lastHeartbeatTime: T0,
  };
}
const now = new Date('2026-12-02T11:00:00Z');

describe('computeStatus()', () => {
  it('builds Antrea\'s shape for a connected leader', () => {
    const s = computeStatus({ generation: 4, leaders: [leader('True')], now });
    assert.equal(s.observedGeneration, 4);
    assert.equal(s.totalClusters, 1);
    assert.equal(s.readyClusters, 1);
    assert.equal(s.conditions[0]?.status, 'True');
    assert.equal(s.clusterStatuses[0]?.clusterID, 'l1');
    assert.deepEqual(s.clusterStatuses[0].conditions.map((c) => c.type), ['Ready', 'IsLeader']);
    assert.equal(s.clusterStatuses[0].lastHeartbeatTime, T0);
  });

  it('ImportsSynced after Ready: False since the watcher began failing, True keeping its transition time', () => {
    const failingSince = Date.parse('2026-12-02T10:30:00Z');
    const failing = computeStatus({ generation: 1, leaders: [leader('True')], importsSynced: { status: 'False', reason: 'Forbidden', message: 'cannot watch', sinceMs: failingSince }, now });
    assert.deepEqual(failing.conditions.map((c) => [c.type, c.status]), [['Ready', 'True'], ['ImportsSynced', 'False']]);
    assert.deepEqual(failing.conditions[1], { type: 'ImportsSynced', status: 'False', lastTransitionTime: '2026-12-02T10:30:00Z', reason: 'Forbidden', message: 'cannot watch' });
    const previous = { conditions: [{ type: 'ImportsSynced', status: 'True', lastTransitionTime: T0 }] };
    const fine = computeStatus({ generation: 1, leaders: [leader('True')], importsSynced: { status: 'True', reason: 'Synced', message: 'ok' }, previous, now });
    assert.equal(fine.conditions[1]?.lastTransitionTime, T0);
    assert.deepEqual(computeStatus({ generation: 1, leaders: [leader('True')], now }).conditions.map((c) => c.type), ['Ready'], 'no importer: no condition');
  });

  it('surfaces the leader\'s failure reason on the ClusterSet', () => {
    const s = computeStatus({ generation: 1, leaders: [leader('False', 'Unauthorized')], now });
    assert.equal(s.readyClusters, 0);
    assert.equal(s.conditions[0]?.status, 'False');
    assert.equal(s.conditions[0].reason, 'Unauthorized');
    assert.equal(s.conditions[0].message, 'm-Unauthorized');
  });

  it('keeps lastTransitionTime when the overall status did not change', () => {
    const previous = { conditions: [{ type: 'Ready', status: 'True' as const, lastTransitionTime: '2020-01-01T00:00:00Z' }] };
    assert.equal(computeStatus({ generation: 1, leaders: [leader('True')], previous, now }).conditions[0]?.lastTransitionTime, '2020-01-01T00:00:00Z');
    assert.equal(computeStatus({ generation: 1, leaders: [leader('False')], previous, now }).conditions[0]?.lastTransitionTime, '2026-12-02T11:00:00Z');
  });

  it('a spec problem outranks leader state', () => {
    const s = computeStatus({ generation: 2, leaders: [], specProblem: { reason: 'InvalidSpec', message: 'spec.namespace is empty' }, now });
    assert.equal(s.conditions[0]?.reason, 'InvalidSpec');
    assert.equal(s.totalClusters, 0);
  });
});

describe('sameStatus()', () => {
  it('ignores key order, undefined and empty strings, but not values', () => {
    assert.ok(sameStatus({ a: 1, b: { c: '', d: [1] } }, { b: { d: [1] }, a: 1, e: undefined }));
    assert.ok(!sameStatus({ a: 1 }, { a: 2 }));
  });
});

describe('prunedStatusFields() and omit', () => {
  const withBeat: LeaderStatus = { ...leader('True'), lastHeartbeatTime: '2026-12-02T10:59:50Z' };
  const sent = computeStatus({ generation: 1, leaders: [withBeat], imports: { total: 2, rejected: 0, conflicts: 0 }, now });

  it('finds our fields the API server dropped, and only those', () => {
    assert.deepEqual(prunedStatusFields(sent, { status: sent }), []);
    assert.deepEqual(prunedStatusFields(sent, { status: { ...sent, imports: undefined, clusterStatuses: [{ clusterID: 'l1', conditions: [] }] } }),
      ['imports', 'lastHeartbeatTime']);
    const neverBeat: LeaderStatus = { leaderClusterID: 'l1', ready: leader('False').ready, isLeader: leader('False').isLeader, consecutiveFailures: 1 };
    assert.deepEqual(prunedStatusFields(computeStatus({ generation: 1, leaders: [neverBeat], now }), { status: {} }), [], 'nothing sent, nothing pruned');
  });

  it('leaves omitted fields out of the computed status', () => {
    const s = computeStatus({ generation: 1, leaders: [withBeat], imports: { total: 2, rejected: 0, conflicts: 0 }, omit: new Set(['imports', 'lastHeartbeatTime']), now });
    assert.equal(s.imports, undefined);
    assert.equal(s.clusterStatuses[0]?.lastHeartbeatTime, undefined);
    assert.equal(s.readyClusters, 1);
  });
});

describe('computeStatus() with several leaders', () => {
  const named = (id: string, ready: 'True' | 'False' | 'Unknown', reason = 'Connected'): LeaderStatus => ({ ...leader(ready, reason), leaderClusterID: id });

  it('Ready while at least one leader is connected; AllLeadersConnected=False names the missing ones; "1/2"', () => {
    const s = computeStatus({ generation: 1, leaders: [named('a', 'False', 'Disconnected'), named('b', 'True')], now });
    assert.equal(s.totalClusters, 2);
    assert.equal(s.readyClusters, 1);
    assert.equal(s.leaders, '1/2');
    assert.deepEqual(s.conditions.map((c) => [c.type, c.status, c.reason]), [['Ready', 'True', 'Connected'], ['AllLeadersConnected', 'False', 'LeadersDisconnected']]);
    assert.match(s.conditions[0]?.message ?? '', /Connected to leader cluster b \(1\/2\)/);
    assert.match(s.conditions[1]?.message ?? '', /not connected: a \(Disconnected\)/);
    assert.deepEqual(s.clusterStatuses.map((c) => [c.clusterID, c.conditions[0]?.status]), [['a', 'False'], ['b', 'True']]);
  });

  it('every leader connected: AllLeadersConnected=True; none: Ready False naming each leader', () => {
    const all = computeStatus({ generation: 1, leaders: [named('a', 'True'), named('b', 'True')], now });
    assert.deepEqual(all.conditions.map((c) => [c.type, c.status]), [['Ready', 'True'], ['AllLeadersConnected', 'True']]);
    assert.equal(all.leaders, '2/2');
    const none = computeStatus({ generation: 1, leaders: [named('a', 'False', 'Unauthorized'), named('b', 'Unknown', 'Connecting')], now });
    assert.equal(none.conditions[0]?.status, 'False');
    assert.equal(none.conditions[0].reason, 'Unauthorized');
    assert.match(none.conditions[0].message ?? '', /No leader connected: a: Unauthorized.*; b: Connecting/);
  });

  it('one leader: no AllLeadersConnected condition and no leaders field, exactly as before', () => {
    const s = computeStatus({ generation: 1, leaders: [leader('False', 'Disconnected')], now });
    assert.deepEqual(s.conditions.map((c) => c.type), ['Ready']);
    assert.equal(s.leaders, undefined);
    assert.equal('leaders' in s, false);
  });
});
