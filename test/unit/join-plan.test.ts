// join's plan: what is missing is created, what contradicts is refused with the field and both
// values, and nothing is planned for creation once anything is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSet } from '../../src/common/api/antrea.js';
import { memberClusterSetManifest, planJoin, tokenSubject, type JoinRequest, type LeaderState, type MemberState } from '../../src/cli/join/plan.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const request: JoinRequest = {
  clusterSet: 'prod', clusterID: 'east', leaderServer: 'https://10.0.0.1:6443', leaderNamespace: 'antrea-multicluster',
  memberNamespace: 'clusterset-agent', secretName: 'leader-token',
};
const leaderCS = (id = 'leader'): ClusterSet => ({ metadata: { name: 'prod', namespace: 'antrea-multicluster' }, spec: { clusterID: id, leaders: [{ clusterID: id }] } });
const leader = (over: Partial<LeaderState> = {}): LeaderState => ({ clusterSetsServed: true, namespaceExists: true, clusterSet: leaderCS(), ...over });
const member = (over: Partial<MemberState> = {}): MemberState => ({ clusterSetsServed: true, namespaceExists: true, clusterSet: undefined, secret: undefined, ...over });

describe('join plan', () => {
  it('from nothing: the member ClusterSet to create, naming the leader the leader ClusterSet names', () => {
    const plan = planJoin(request, leader(), member(), CA);
    assert.deepEqual(plan.refusals, []);
    assert.equal(plan.leaderClusterID, 'leader');
    assert.deepEqual(plan.createMemberClusterSet?.spec, { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [{ clusterID: 'leader', server: 'https://10.0.0.1:6443', secret: 'leader-token' }] });
    assert.equal(plan.createLeaderClusterSet, undefined);
    assert.equal(plan.secretExists, false);
  });

  it('an equal member ClusterSet and a Secret with the leader CA: nothing to create', () => {
    const plan = planJoin(request, leader(), member({ clusterSet: memberClusterSetManifest(request, 'leader'), secret: { caPem: CA.trim(), token: 'x' } }), CA);
    assert.deepEqual(plan.refusals, []);
    assert.equal(plan.createMemberClusterSet, undefined);
    assert.equal(plan.secretExists, true);
  });

  it('a member ClusterSet of another membership is refused field by field', () => {
    const other = memberClusterSetManifest({ ...request, clusterID: 'west', leaderServer: 'https://10.0.0.2:6443' }, 'other');
    const plan = planJoin(request, leader(), member({ clusterSet: other }), CA);
    assert.equal(plan.refusals.length, 1);
    assert.match(plan.refusals[0] ?? '', /spec\.clusterID is "west", join needs "east"; spec\.leaders\[0\]\.clusterID is "other", join needs "leader"; spec\.leaders\[0\]\.server is "https:\/\/10\.0\.0\.2:6443", join needs "https:\/\/10\.0\.0\.1:6443"/);
  });

  it('the same membership with another leader cluster: join adds that leader to the member ClusterSet (issue 30)', () => {
    const existing = memberClusterSetManifest(request, 'leader');
    const second = { ...request, leaderServer: 'https://10.0.0.2:6443', secretName: 'leader-b-token' };
    const plan = planJoin(second, leader({ clusterSet: leaderCS('leader-b') }), member({ clusterSet: existing }), CA);
    assert.deepEqual(plan.refusals, []);
    assert.equal(plan.createMemberClusterSet, undefined);
    assert.deepEqual(plan.addMemberLeader, { clusterID: 'leader-b', server: 'https://10.0.0.2:6443', secret: 'leader-b-token' });
    // Joined already: nothing to add; the same Secret as the first leader's: refused.
    const both: ClusterSet = { ...existing, spec: { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [...(existing.spec?.leaders ?? []), { clusterID: 'leader-b', server: 'https://10.0.0.2:6443', secret: 'leader-b-token' }] } };
    const again = planJoin(second, leader({ clusterSet: leaderCS('leader-b') }), member({ clusterSet: both }), CA);
    assert.deepEqual([again.refusals, again.addMemberLeader], [[], undefined]);
    const sameSecret = planJoin({ ...second, secretName: 'leader-token' }, leader({ clusterSet: leaderCS('leader-b') }), member({ clusterSet: existing, secret: { caPem: CA, token: 'x' } }), CA);
    assert.ok(sameSecret.refusals.some((r) => r.includes('is the Secret of leader leader in ClusterSet prod')), sameSecret.refusals.join('\n'));
    assert.equal(sameSecret.addMemberLeader, undefined);
  });

  it('a missing leader ClusterSet: refused unless the leader cluster ID is given, then planned', () => {
    assert.match(planJoin(request, leader({ clusterSet: undefined }), member(), CA).refusals.join('\n'), /the leader has no ClusterSet antrea-multicluster\/prod: pass --leader-cluster-id/);
    const plan = planJoin({ ...request, leaderClusterID: 'hub' }, leader({ clusterSet: undefined }), member(), CA);
    assert.deepEqual(plan.refusals, []);
    assert.deepEqual(plan.createLeaderClusterSet?.spec, { clusterID: 'hub', leaders: [{ clusterID: 'hub' }] });
    assert.equal(plan.createMemberClusterSet?.spec?.leaders[0]?.clusterID, 'hub');
  });

  it('refuses a leader ID that contradicts the leader ClusterSet, and a member ID equal to the leader\'s', () => {
    assert.match(planJoin({ ...request, leaderClusterID: 'hub' }, leader(), member(), CA).refusals.join('\n'), /--leader-cluster-id is "hub", but the leader's ClusterSet antrea-multicluster\/prod says the leader is "leader"/);
    assert.match(planJoin({ ...request, clusterID: 'leader' }, leader(), member(), CA).refusals.join('\n'), /the member's cluster ID "leader" is the leader's own/);
  });

  it('refuses a Secret of another leader, an invalid cluster ID, and clusters without the chart; plans no creation then', () => {
    const plan = planJoin({ ...request, clusterID: 'East_1' }, leader({ clusterSetsServed: false }), member({ namespaceExists: false, secret: { caPem: 'other', token: 'x' } }), CA);
    const text = plan.refusals.join('\n');
    assert.match(text, /the leader cluster serves no clustersets\.multicluster\.crd\.antrea\.io: install the chart there with mode=leader first/);
    assert.match(text, /the agent namespace clusterset-agent does not exist in the member/);
    assert.match(text, /Secret clusterset-agent\/leader-token exists in the member with another ca\.crt than the leader's CA/);
    assert.match(text, /the member ClusterSet join would write is invalid: .*East_1/);
    assert.equal(plan.createLeaderClusterSet, undefined);
  });

  it('reads a token\'s ServiceAccount from its sub claim, and nothing from a non-JWT', () => {
    const jwt = `e30.${Buffer.from(JSON.stringify({ sub: 'system:serviceaccount:antrea-multicluster:member-east' })).toString('base64url')}.sig`;
    assert.deepEqual(tokenSubject(jwt), { namespace: 'antrea-multicluster', name: 'member-east' });
    assert.equal(tokenSubject('opaque'), undefined);
    assert.equal(tokenSubject(`e30.${Buffer.from('{"sub":"alice"}').toString('base64url')}.s`), undefined);
  });
});
