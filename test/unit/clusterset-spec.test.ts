import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSet } from '../../src/common/api/antrea.js';
import { leaderTarget, sameLeader } from '../../src/clusterset/spec.js';

function cs(spec: NonNullable<ClusterSet['spec']>): ClusterSet {
  return { apiVersion: 'multicluster.crd.antrea.io/v1alpha2', kind: 'ClusterSet', metadata: { name: 'set-1', namespace: 'agents' }, spec };
}
const good = { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [{ clusterID: 'leader', server: 'https://l:6443', secret: 's' }] };

describe('leaderTarget()', () => {
  it('extracts the leader relationship', () => {
    const r = leaderTarget(cs(good));
    assert.ok(r.ok);
    assert.deepEqual(r.target, { localClusterID: 'east', clusterSetID: 'set-1', leaderClusterID: 'leader', server: 'https://l:6443', secretName: 's', leaderNamespace: 'antrea-multicluster' });
  });

  it('lists every problem with the field to fix', () => {
    const r = leaderTarget(cs({ clusterID: '', namespace: '', leaders: [] }));
    assert.ok(!r.ok);
    assert.match(r.message, /spec\.clusterID is empty/);
    assert.match(r.message, /at least one leader, found 0/);
    assert.match(r.message, /spec\.namespace is empty/);
  });

  it('rejects IDs that cannot be part of an object name', () => {
    const r = leaderTarget(cs({ ...good, clusterID: 'East_1' }));
    assert.ok(!r.ok);
    assert.match(r.message, /cluster ID "East_1" is not valid: a cluster ID is a DNS-1123 label/);
    const dotted = leaderTarget(cs({ ...good, clusterID: 'east.example' }));
    assert.ok(!dotted.ok);
    assert.match(dotted.message, /spec\.clusterID: cluster ID "east\.example" is not valid: a cluster ID is a DNS-1123 label.*\(no dots\)/);
  });

  it('accepts several leaders, in spec order, each its own target', () => {
    const r = leaderTarget(cs({ ...good, leaders: [...good.leaders, { clusterID: 'leader-b', server: 'https://b:6443', secret: 'sb' }] }));
    assert.ok(r.ok);
    assert.deepEqual(r.targets.map((t) => [t.leaderClusterID, t.server, t.secretName]), [['leader', 'https://l:6443', 's'], ['leader-b', 'https://b:6443', 'sb']]);
    assert.equal(r.target.leaderClusterID, 'leader');
  });

  it('refuses a leader listed twice (by ID or by server), naming the entry', () => {
    const byId = leaderTarget(cs({ ...good, leaders: [...good.leaders, { clusterID: 'leader', server: 'https://b:6443', secret: 'sb' }] }));
    assert.ok(!byId.ok);
    assert.match(byId.message, /spec\.leaders\[1\]\.clusterID "leader" is listed twice/);
    const byServer = leaderTarget(cs({ ...good, leaders: [...good.leaders, { clusterID: 'b', server: 'https://l:6443', secret: 'sb' }] }));
    assert.ok(!byServer.ok);
    assert.match(byServer.message, /spec\.leaders\[1\]\.server "https:\/\/l:6443" is listed twice/);
    const empty = leaderTarget(cs({ ...good, leaders: [...good.leaders, { clusterID: 'b', server: '', secret: 'sb' }] }));
    assert.ok(!empty.ok);
    assert.match(empty.message, /spec\.leaders\[1\]\.server is empty/);
  });

  it('treats a new server URL or Secret as the same leader (a rotation), a new leader ID as a change', () => {
    const a = leaderTarget(cs(good));
    const b = leaderTarget(cs({ ...good, leaders: [{ clusterID: 'leader', server: 'https://moved:6443', secret: 's2' }] }));
    const c = leaderTarget(cs({ ...good, leaders: [{ clusterID: 'other', server: 'https://l:6443', secret: 's' }] }));
    assert.ok(a.ok && b.ok && c.ok);
    assert.ok(sameLeader(a.target, b.target));
    assert.ok(!sameLeader(a.target, c.target));
  });
});
