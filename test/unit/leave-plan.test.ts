// leave's plan: the leader context proven before anything is deleted, the account join recorded
// (not a flag), only what join labelled deleted, and a RoleBinding join did not create kept
// with only the member's subject removed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1RoleBinding, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import type { ClusterSet } from '../../src/common/api/antrea.js';
import {
  CLUSTER_ID_ANNOTATION, LEADER_CLUSTERSET_UID_ANNOTATION, LEADER_CLUSTERSET_UIDS_ANNOTATION, LEADER_SERVICE_ACCOUNT_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE,
} from '../../src/common/api/names.js';
import {
  accessRefusals, describeStep, isOwnAnnounce, leaderToLeave, leaveTarget, planLeave, recordedLeaderUid, removeLeaderPatch, tokenSecretsOf, withRecordedUid,
  type LeaveObservation,
} from '../../src/cli/join/leave-plan.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const OTHER_CA = '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n';
const SERVER = 'https://10.0.0.1:6443';
const managed = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };

const memberCS = (annotations: Record<string, string> = { [LEADER_CLUSTERSET_UID_ANNOTATION]: 'uid-prod', [LEADER_SERVICE_ACCOUNT_ANNOTATION]: 'east-sa' }): ClusterSet => ({
  metadata: { name: 'prod', namespace: 'clusterset-agent', uid: 'uid-member-cs', annotations },
  spec: { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [{ clusterID: 'leader', server: SERVER, secret: 'leader-token' }] },
});
const leaderCS = (uid = 'uid-prod', id = 'leader'): ClusterSet => ({ metadata: { name: 'prod', namespace: 'antrea-multicluster', uid }, spec: { clusterID: id, leaders: [{ clusterID: id }] } });
const observation = (over: Partial<LeaveObservation> = {}, leader: Partial<LeaveObservation['leader']> = {}): LeaveObservation => ({
  memberNamespace: 'clusterset-agent',
  clusterSet: memberCS(),
  secret: { uid: 'uid-secret', labels: managed, annotations: {}, caPem: CA, token: undefined },
  secretSharedWith: [],
  serviceAccountFlag: undefined,
  leader: { server: SERVER, caPem: CA, clusterSet: leaderCS(), ...leader },
  ...over,
});
const sa = (name: string, labels: Record<string, string> = managed, id = 'east'): V1ServiceAccount => ({ metadata: { name, uid: `uid-${name}`, labels, annotations: { [CLUSTER_ID_ANNOTATION]: id } } });
const binding = (name: string, subjects: string[], labels: Record<string, string> = managed): V1RoleBinding => ({
  metadata: { name, uid: `uid-rb-${name}`, resourceVersion: '7', labels },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'antrea-mc-member-cluster-role' },
  subjects: subjects.map((s) => ({ kind: 'ServiceAccount', name: s, namespace: 'antrea-multicluster' })),
});
const tokenSecret = (name: string, account: string, ownerUid: string, labels: Record<string, string> = managed): V1Secret => ({
  metadata: { name, uid: `uid-${name}`, labels, annotations: { [LEADER_SERVICE_ACCOUNT_ANNOTATION]: account }, ownerReferences: [{ apiVersion: 'v1', kind: 'ServiceAccount', name: account, uid: ownerUid }] },
});
/** A token whose `sub` names a ServiceAccount (unsigned: only the claim is read). */
const tokenFor = (name: string) => `x.${Buffer.from(JSON.stringify({ sub: `system:serviceaccount:antrea-multicluster:${name}` })).toString('base64url')}.y`;

describe('leave: the leader context', () => {
  it('the leader join recorded (same ClusterSet uid, same leader ID): no refusal, even at another URL', () => {
    assert.deepEqual(leaveTarget(observation({}, { server: 'https://leader.example:443', caPem: OTHER_CA })).refusals, []);
  });

  it("another ClusterSet's leader is refused: no such ClusterSet, another leader ID, or another uid", () => {
    assert.match(leaveTarget(observation({}, { clusterSet: undefined })).refusals.join('\n'), /the leader context \(https:\/\/10\.0\.0\.1:6443\) has no ClusterSet antrea-multicluster\/prod: it is not the leader of this ClusterSet/);
    assert.match(leaveTarget(observation({}, { clusterSet: leaderCS('uid-prod', 'other-leader') })).refusals.join('\n'), /says the leader is "other-leader", the member's names "leader": it is another ClusterSet's leader/);
    assert.match(leaveTarget(observation({}, { clusterSet: leaderCS('uid-elsewhere') })).refusals.join('\n'), /is not the one this member joined \(uid uid-elsewhere, join recorded uid-prod\)/);
  });

  it('without a record (a ClusterSet made by hand): the same server and CA are required', () => {
    const byHand = memberCS({});
    assert.deepEqual(leaveTarget(observation({ clusterSet: byHand })).refusals, []);
    assert.match(leaveTarget(observation({ clusterSet: byHand }, { server: 'https://10.9.9.9:6443' })).refusals.join('\n'), /the leader context's server is https:\/\/10\.9\.9\.9:6443, the ClusterSet's leader is https:\/\/10\.0\.0\.1:6443/);
    assert.match(leaveTarget(observation({ clusterSet: byHand }, { caPem: OTHER_CA })).refusals.join('\n'), /the leader context's CA is not the CA in Secret clusterset-agent\/leader-token/);
  });
});

describe('leave: the account join made', () => {
  it('is read from what join recorded, not from a flag the user must repeat', () => {
    const target = leaveTarget(observation());
    assert.equal(target.serviceAccount, 'east-sa');
    assert.equal(target.serviceAccountFrom, 'the ClusterSet join wrote');
  });

  it("falls back to the Secret's annotation, then the token's subject, then the flag, then member-<id>", () => {
    const noRecord = memberCS({ [LEADER_CLUSTERSET_UID_ANNOTATION]: 'uid-prod' });
    const secret = { uid: 's', labels: managed, annotations: { [LEADER_SERVICE_ACCOUNT_ANNOTATION]: 'from-secret' }, caPem: CA, token: tokenFor('from-token') };
    assert.equal(leaveTarget(observation({ clusterSet: noRecord, secret })).serviceAccount, 'from-secret');
    assert.equal(leaveTarget(observation({ clusterSet: noRecord, secret: { ...secret, annotations: {} } })).serviceAccount, 'from-token');
    assert.equal(leaveTarget(observation({ clusterSet: noRecord, secret: undefined, serviceAccountFlag: 'flagged' })).serviceAccount, 'flagged');
    assert.equal(leaveTarget(observation({ clusterSet: noRecord, secret: undefined })).serviceAccount, 'member-east');
  });

  it('a flag that contradicts the record is refused', () => {
    assert.match(leaveTarget(observation({ serviceAccountFlag: 'member-east' })).refusals.join('\n'), /--service-account is "member-east", but the ClusterSet join wrote names ServiceAccount antrea-multicluster\/east-sa/);
  });

  it("an account annotated for another cluster ID is refused", () => {
    const target = leaveTarget(observation());
    assert.match(accessRefusals(target, { serviceAccount: sa('east-sa', managed, 'west'), roleBinding: undefined, tokenSecrets: [] }).join('\n'), /annotated multicluster\.antrea\.io\/cluster-id="west", not this member's "east"/);
  });
});

describe('leave: what is deleted', () => {
  it("what join created goes, each under its uid, in order", () => {
    const o = observation();
    const tokenSecrets = [
      tokenSecret('east-sa-token-abc', 'east-sa', 'uid-east-sa'),
      tokenSecret('east-sa-token-old', 'east-sa', 'uid-an-earlier-east-sa'),
      tokenSecret('east-sa-token-hand', 'east-sa', 'uid-east-sa', {}),
      tokenSecret('other-token-x', 'other', 'uid-east-sa'),
    ];
    const plan = planLeave(o, leaveTarget(o), { serviceAccount: sa('east-sa'), roleBinding: binding('east-sa', ['east-sa']), tokenSecrets });
    assert.deepEqual(plan.steps.map((s) => `${s.side}: ${s.action} ${s.kind} ${s.name} ${s.uid ?? ''}`), [
      'member: delete ClusterSet prod uid-member-cs', 'member: delete Secret leader-token uid-secret', 'leader: delete RoleBinding east-sa uid-rb-east-sa',
      'leader: delete Secret east-sa-token-abc uid-east-sa-token-abc', 'leader: delete ServiceAccount east-sa uid-east-sa',
    ]);
    assert.deepEqual(plan.kept, []);
  });

  it('a RoleBinding join did not create, or that binds others too, only loses the member subject', () => {
    const o = observation();
    for (const rb of [binding('east-sa', ['east-sa'], {}), binding('east-sa', ['east-sa', 'someone'])]) {
      const step = planLeave(o, leaveTarget(o), { serviceAccount: sa('east-sa'), roleBinding: rb, tokenSecrets: [] }).steps.find((s) => s.kind === 'RoleBinding');
      assert.equal(step?.action, 'remove-subject');
      assert.equal(step?.subject, 'east-sa');
      assert.ok(step !== undefined);
      assert.match(describeStep(step), /leader: remove the subject ServiceAccount east-sa from RoleBinding antrea-multicluster\/east-sa/);
    }
  });

  it('a Secret and a ServiceAccount without the label stay, named; a shared Secret stays, said', () => {
    const o = observation({ secret: { uid: 's', labels: {}, annotations: {}, caPem: CA, token: undefined } });
    const plan = planLeave(o, leaveTarget(o), { serviceAccount: sa('east-sa', {}), roleBinding: undefined, tokenSecrets: [] });
    assert.deepEqual(plan.steps.map((s) => s.kind), ['ClusterSet']);
    assert.equal(plan.kept.length, 2);
    assert.match(plan.kept[0] ?? '', /Secret clusterset-agent\/leader-token in the member: join did not create it/);
    assert.match(plan.kept[1] ?? '', /ServiceAccount antrea-multicluster\/east-sa on the leader: not created by join .* its tokens stay valid/);
    const shared = observation({ secretSharedWith: ['staging'] });
    const sharedPlan = planLeave(shared, leaveTarget(shared), { serviceAccount: undefined, roleBinding: undefined, tokenSecrets: [] });
    assert.deepEqual(sharedPlan.kept, []);
    assert.match(sharedPlan.notes.join(), /keeping Secret clusterset-agent\/leader-token: ClusterSet staging uses it/);
  });

  it("only this member's announce in this ClusterSet is its own", () => {
    const target = leaveTarget(observation());
    assert.equal(isOwnAnnounce({ clusterID: 'east', clusterSetID: 'prod', leaderClusterID: 'leader' }, target, 'prod'), true);
    assert.equal(isOwnAnnounce({ clusterID: 'east', clusterSetID: 'staging', leaderClusterID: 'leader' }, target, 'prod'), false);
    assert.equal(isOwnAnnounce({ clusterID: 'east', clusterSetID: 'prod', leaderClusterID: 'other' }, target, 'prod'), false);
  });
});

describe('join: the token Secrets a rotation revokes', () => {
  it("every earlier one join made for the account, never the current one, never one without join's label", () => {
    const secrets = [tokenSecret('a-token-1', 'a', 'sa'), tokenSecret('a-token-2', 'a', 'sa'), tokenSecret('a-token-3', 'a', 'sa', {}), tokenSecret('b-token-1', 'b', 'sa')];
    assert.deepEqual(tokenSecretsOf(secrets, 'a', 'uid-a-token-2').map((x) => x.name), ['a-token-1']);
  });
});

describe('leave --leader: one leader of several', () => {
  const SERVER_B = 'https://10.0.0.2:6443';
  /** The member ClusterSet after join created it with `leader` and then added `leader-b`. */
  const twoLeaders = (): ClusterSet => {
    const first = memberCS();
    const withB: ClusterSet = { ...first, spec: { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [...(first.spec?.leaders ?? []), { clusterID: 'leader-b', server: SERVER_B, secret: 'leader-b-token' }] } };
    return { ...withB, metadata: { ...withB.metadata, annotations: { ...withB.metadata?.annotations, [LEADER_CLUSTERSET_UIDS_ANNOTATION]: withRecordedUid(first, 'leader-b', 'uid-prod-b') } } };
  };
  const onB = (over: Partial<LeaveObservation> = {}, leader: Partial<LeaveObservation['leader']> = {}) => observation({
    clusterSet: twoLeaders(), leaderIndex: 1,
    secret: { uid: 'uid-secret-b', labels: managed, annotations: { [LEADER_SERVICE_ACCOUNT_ANNOTATION]: 'member-east' }, caPem: OTHER_CA, token: undefined }, ...over,
  }, { server: SERVER_B, caPem: OTHER_CA, clusterSet: leaderCS('uid-prod-b', 'leader-b'), ...leader });

  it('names the leader: the only one without the flag, the one --leader names, else a usage error listing the leaders', () => {
    assert.deepEqual(leaderToLeave(memberCS(), undefined, 'clusterset-agent'), { index: 0, last: true });
    assert.deepEqual(leaderToLeave(memberCS(), 'leader', 'clusterset-agent'), { index: 0, last: true });
    assert.deepEqual(leaderToLeave(twoLeaders(), 'leader-b', 'clusterset-agent'), { index: 1, last: false });
    assert.deepEqual(leaderToLeave(twoLeaders(), 'nope', 'clusterset-agent'), { problem: 'ClusterSet clusterset-agent/prod lists no leader "nope"; its leaders: leader, leader-b' });
    assert.match((leaderToLeave(twoLeaders(), undefined, 'clusterset-agent') as { problem: string }).problem, /lists 2 leaders \(leader, leader-b\): pass --leader <id>/);
  });

  it("proves the leader context by that leader's own record, and refuses the other leader's context", () => {
    assert.equal(recordedLeaderUid(twoLeaders(), 0), 'uid-prod');
    assert.equal(recordedLeaderUid(twoLeaders(), 1), 'uid-prod-b');
    assert.deepEqual(leaveTarget(onB()).refusals, []);
    // The first leader's context given for leader-b: its ClusterSet names another leader.
    assert.match(leaveTarget(onB({}, { server: SERVER, caPem: CA, clusterSet: leaderCS() })).refusals.join('\n'), /says the leader is "leader", the member's names "leader-b"/);
    // A leader-b of another ClusterSet (another uid) is refused.
    assert.match(leaveTarget(onB({}, { clusterSet: leaderCS('uid-elsewhere', 'leader-b') })).refusals.join('\n'), /join recorded uid-prod-b/);
    // The account: the ClusterSet's record is the first leader's, so leader-b's comes from its Secret.
    assert.equal(leaveTarget(onB()).serviceAccount, 'member-east');
    assert.equal(leaveTarget(onB()).serviceAccountFrom, 'the Secret join wrote');
  });

  it("takes out only that leader's entry, its Secret and its access: the ClusterSet stays", () => {
    const o = onB();
    const plan = planLeave(o, leaveTarget(o), { serviceAccount: sa('member-east'), roleBinding: binding('member-east', ['member-east']), tokenSecrets: [tokenSecret('member-east-token-1', 'member-east', 'uid-member-east')] });
    assert.deepEqual(plan.steps.map((s) => `${s.side}: ${s.action} ${s.kind} ${s.name} ${s.uid ?? ''}`), [
      'member: remove-leader ClusterSet prod uid-member-cs', 'member: delete Secret leader-b-token uid-secret-b', 'leader: delete RoleBinding member-east uid-rb-member-east',
      'leader: delete Secret member-east-token-1 uid-member-east-token-1', 'leader: delete ServiceAccount member-east uid-member-east',
    ]);
    const step = plan.steps[0];
    assert.ok(step !== undefined);
    assert.match(describeStep(step), /member: remove leader leader-b from spec\.leaders of ClusterSet clusterset-agent\/prod .*the other leaders stay/);
    assert.deepEqual(step.patch, [
      { op: 'test', path: '/metadata/uid', value: 'uid-member-cs' },
      { op: 'test', path: '/spec/leaders/1', value: { clusterID: 'leader-b', server: SERVER_B, secret: 'leader-b-token' } },
      { op: 'remove', path: '/spec/leaders/1' },
      { op: 'test', path: '/metadata/annotations/multicluster.clusterset-agent.io~1leader-clusterset-uids', value: '{"leader":"uid-prod","leader-b":"uid-prod-b"}' },
      { op: 'replace', path: '/metadata/annotations/multicluster.clusterset-agent.io~1leader-clusterset-uids', value: '{"leader":"uid-prod"}' },
    ]);
  });

  it("the first leader's removal hands the single records to the next leader", () => {
    const patch = removeLeaderPatch(twoLeaders(), 0);
    const uidKey = '/metadata/annotations/multicluster.clusterset-agent.io~1leader-clusterset-uid';
    assert.deepEqual(patch.filter((p) => p.path === uidKey), [{ op: 'test', path: uidKey, value: 'uid-prod' }, { op: 'replace', path: uidKey, value: 'uid-prod-b' }]);
    assert.deepEqual(patch.filter((p) => p.path.endsWith('leader-service-account')).map((p) => p.op), ['test', 'remove']);
    assert.ok(patch.some((p) => p.op === 'remove' && p.path === '/spec/leaders/0'));
  });

  it("a Secret another leader of the same ClusterSet names stays; the last leader's leave deletes the ClusterSet", () => {
    const shared = onB({ secretSharedWith: ['prod (leader leader)'] });
    const plan = planLeave(shared, leaveTarget(shared), { serviceAccount: undefined, roleBinding: undefined, tokenSecrets: [] });
    assert.deepEqual(plan.steps.map((s) => s.action), ['remove-leader']);
    assert.match(plan.notes.join(), /keeping Secret clusterset-agent\/leader-b-token: ClusterSet prod \(leader leader\) uses it/);
    const last = observation();
    assert.deepEqual(planLeave(last, leaveTarget(last), { serviceAccount: undefined, roleBinding: undefined, tokenSecrets: [] }).steps.map((s) => `${s.action} ${s.kind}`), ['delete ClusterSet', 'delete Secret']);
  });
});
