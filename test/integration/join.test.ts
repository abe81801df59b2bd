// `clusterset-agent join` and `leave` on real control planes: a leader (CRDs, namespace, its
// ClusterSet and the member Role, as the chart in mode=leader leaves it) and a member running
// the agent. The commands run as a cluster-admin ServiceAccount of their own on each side, so
// the audit logs tell their writes from the agent's.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { CLUSTERSET, MEMBER_CLUSTER_ANNOUNCE, type ClusterSet } from '../../src/common/api/antrea.js';
import { CLUSTER_ID_ANNOTATION } from '../../src/common/api/names.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/common/config/config.js';
import { MEMBER_ROLE_NAME } from '../../src/leader/decisions/member-role.js';
import { readAuditEvents } from '../harness/agent-process.js';
import { runCli } from '../harness/cli.js';
import { ANTREA_MEMBER_ROLE_RULES, AGENT_NS, capturedLogger, installCrds, LEADER_NS, setupLeader } from '../harness/clusterset.js';
import { freePort, startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace, issueToken, tokenConfig } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const CS = 'prod';
const JOINER = 'joiner';
const JOINER_USER = `system:serviceaccount:kube-system:${JOINER}`;

/** A kubeconfig file for a cluster-admin ServiceAccount `joiner`, so its requests stand apart in the audit log. */
async function joinerKubeconfig(cp: ControlPlane, file: string): Promise<string> {
  const kc = cp.adminConfig();
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace: 'kube-system', body: { metadata: { name: JOINER } } });
  await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: { metadata: { name: JOINER }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'ServiceAccount', name: JOINER, namespace: 'kube-system' }] },
  });
  const token = await issueToken(kc, 'kube-system', JOINER);
  writeFileSync(file, `apiVersion: v1
kind: Config
clusters:
- name: ${cp.name}
  cluster:
    server: ${cp.server}
    certificate-authority-data: ${Buffer.from(cp.caPem).toString('base64')}
users:
- name: ${JOINER}
  user:
    token: ${token}
contexts:
- name: ${cp.name}
  context: {cluster: ${cp.name}, user: ${JOINER}}
current-context: ${cp.name}
`);
  return file;
}

describe('clusterset-agent join and leave', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  const log = capturedLogger();
  const files = { leader: '', member: '' };
  let before_: { leader: string[]; member: string[] } = { leader: [], member: [] };

  const joinerWrites = (cp: ControlPlane, sinceMs: number) => readAuditEvents(cp.auditLogPath, (e) =>
    e.user.username === JOINER_USER && ['create', 'update', 'patch', 'delete', 'deletecollection'].includes(e.verb) && Date.parse(e.requestReceivedTimestamp) >= sinceMs)
    .map((e) => `${e.verb} ${e.objectRef?.resource ?? ''} ${e.objectRef?.name ?? ''}`);
  const sides = (extra: readonly string[] = []) => ['--leader-kubeconfig', files.leader, '--member-kubeconfig', files.member, ...extra];
  // The control planes are on loopback, where the members do reach the leader: said explicitly.
  const joinArgs = (extra: readonly string[] = []) => sides(['--cluster-id', 'east', '--clusterset', CS, '--wait', '60', '--leader-server', leader.server, ...extra]);

  /** What join and leave touch, as `kind ns/name` lines, sorted. */
  async function objects(cp: ControlPlane, side: 'leader' | 'member'): Promise<string[]> {
    const kc = cp.adminConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ns = side === 'leader' ? LEADER_NS : AGENT_NS;
    const names = (kind: string, items: readonly { metadata?: { namespace?: string; name?: string } }[]) => items.map((o) => `${kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`);
    const crs = async (d: { group: string; version: string; plural: string }) =>
      ((await custom.listNamespacedCustomObject({ group: d.group, version: d.version, plural: d.plural, namespace: ns })) as { items: ClusterSet[] }).items;
    const list = [
      ...names('ServiceAccount', (await core.listNamespacedServiceAccount({ namespace: ns })).items),
      ...names('Secret', (await core.listNamespacedSecret({ namespace: ns })).items),
      ...names('RoleBinding', (await kc.makeApiClient(RbacAuthorizationV1Api).listNamespacedRoleBinding({ namespace: ns })).items),
      ...names('Role', (await kc.makeApiClient(RbacAuthorizationV1Api).listNamespacedRole({ namespace: ns })).items),
      ...names('ClusterSet', await crs(CLUSTERSET)),
      ...(side === 'leader' ? names('MemberClusterAnnounce', await crs(MEMBER_CLUSTER_ANNOUNCE)) : []),
    ];
    return list.sort();
  }

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader', { auditLog: true }), startControlPlane('east', { auditLog: true })]);
    // The leader as the chart in mode=leader leaves it: CRDs, namespace, ClusterSet, member Role.
    await setupLeader(leader, 'leader');
    const leaderCustom = leader.adminConfig().makeApiClient(CustomObjectsApi);
    // setupLeader names the leader's ClusterSet after the tests' default; this test's is `prod`.
    await leaderCustom.createNamespacedCustomObject({
      group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: LEADER_NS,
      body: { apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: CS }, spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] } },
    });
    await leader.adminConfig().makeApiClient(RbacAuthorizationV1Api).createNamespacedRole({ namespace: LEADER_NS, body: { metadata: { name: MEMBER_ROLE_NAME }, rules: [...ANTREA_MEMBER_ROLE_RULES] } });
    // The member as the chart leaves it: CRDs, the agent's namespace, the agent running.
    await installCrds(member);
    await createNamespace(member.adminConfig(), AGENT_NS);
    const config = loadConfig({ env: {}, readFile: () => '' });
    agent = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: 2, requestTimeoutSeconds: 1 } }, log.logger, member.adminConfig());
    files.leader = await joinerKubeconfig(leader, path.join(path.dirname(leader.kubeconfigPath), 'joiner.kubeconfig'));
    files.member = await joinerKubeconfig(member, path.join(path.dirname(member.kubeconfigPath), 'joiner.kubeconfig'));
    before_ = { leader: await objects(leader, 'leader'), member: await objects(member, 'member') };
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('--dry-run checks and prints what join would write, and writes nothing', async () => {
    const since = Date.now();
    const res = await runCli('join', joinArgs(['--dry-run']));
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /kind: ClusterSet[\s\S]*clusterID: east[\s\S]*server: https:\/\/127\.0\.0\.1:\d+/);
    assert.match(res.stdout, /kind: Secret[\s\S]*token: <token issued by join>/);
    assert.match(res.stdout, /ServiceAccount antrea-multicluster\/member-east/);
    assert.deepEqual([...joinerWrites(leader, since), ...joinerWrites(member, since)], []);
  });

  it('joins from nothing: access on the leader, Secret and ClusterSet in the member, Ready', async () => {
    const res = await runCli('join', joinArgs());
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /^member east joined ClusterSet prod \(leader leader\): Ready \(Connected\); 6 object\(s\) written\n$/);
    for (const line of ['leader: created ServiceAccount antrea-multicluster/member-east', 'leader: created RoleBinding antrea-multicluster/member-east', 'leader: created Secret antrea-multicluster/member-east-token-', 'leader: issued a token for antrea-multicluster/member-east', 'member: created Secret clusterset-agent/leader-token', 'member: created ClusterSet clusterset-agent/prod']) {
      assert.ok(res.stderr.includes(line), `${line}\n${res.stderr}`);
    }
    assert.match(res.stderr, /waiting for ClusterSet clusterset-agent\/prod: Ready=True \(Connected\)/);
    const sa = await leader.adminConfig().makeApiClient(CoreV1Api).readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
    assert.equal(sa.metadata?.annotations?.[CLUSTER_ID_ANNOTATION], 'east');
    const cs = (await member.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS, name: CS,
    })) as ClusterSet;
    assert.deepEqual(cs.spec, { clusterID: 'east', namespace: LEADER_NS, leaders: [{ clusterID: 'leader', server: leader.server, secret: 'leader-token' }] });
  });

  it('a second join changes nothing: no write on either cluster', async () => {
    const since = Date.now();
    const res = await runCli('join', joinArgs());
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /nothing written, all in place/);
    assert.deepEqual({ leader: joinerWrites(leader, since), member: joinerWrites(member, since) }, { leader: [], member: [] });
  });

  it('refuses, before writing anything in the member, a wrong cluster ID for an existing ServiceAccount, a wrong CA and an unreachable leader', async () => {
    const core = leader.adminConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: LEADER_NS, body: { metadata: { name: 'member-west', annotations: { [CLUSTER_ID_ANNOTATION]: 'south' } } } });
    const otherCa = path.join(path.dirname(member.kubeconfigPath), 'member-ca.crt');
    writeFileSync(otherCa, member.caPem);
    const closed = await freePort();
    const cases: [string, string[], RegExp][] = [
      ['wrong cluster ID', sides(['--cluster-id', 'west', '--clusterset', 'west-cs', '--secret-name', 'west-token', '--leader-cluster-id', 'leader', '--wait', '5', '--leader-server', leader.server]), /ServiceAccount antrea-multicluster\/member-west belongs to member "south"/],
      ['another membership\'s Secret', sides(['--cluster-id', 'north', '--clusterset', 'north-cs', '--leader-cluster-id', 'leader', '--leader-server', leader.server]), /Secret clusterset-agent\/leader-token in the member holds the token of ServiceAccount antrea-multicluster\/member-east, not antrea-multicluster\/member-north: it serves another membership/],
      ['wrong CA', sides(['--cluster-id', 'west', '--clusterset', CS, '--service-account', 'member-w', '--leader-ca-file', otherCa, '--leader-server', leader.server]), /the leader CA does not verify https:\/\/127\.0\.0\.1:\d+/],
      ['a loopback leader URL taken from the kubeconfig', sides(['--cluster-id', 'west', '--clusterset', CS, '--service-account', 'member-w']),
        /the leader kubeconfig's server https:\/\/127\.0\.0\.1:\d+ is a loopback address.*Pass --leader-server.*get endpoints kubernetes/],
      ['unreachable leader', sides(['--cluster-id', 'west', '--clusterset', CS, '--service-account', 'member-w', '--leader-server', `https://127.0.0.1:${String(closed)}`]), /the leader at https:\/\/127\.0\.0\.1:\d+ is unreachable from here \(ECONNREFUSED\)/],
    ];
    for (const [what, args, message] of cases) {
      const since = Date.now();
      const res = await runCli('join', args);
      assert.equal(res.code, 4, `${what}: ${res.stdout}${res.stderr}`);
      assert.match(res.stderr, /^refused, nothing written:\n/, what);
      assert.match(res.stderr, message, what);
      assert.deepEqual(joinerWrites(member, since), [], `${what}: no write in the member`);
      assert.deepEqual(joinerWrites(leader, since), [], `${what}: no write on the leader either`);
    }
    // The existing membership is named precisely when a join contradicts it.
    // (Each case above but the loopback one passes --leader-server: a loopback default is refused
    // before join's later checks, such as the ServiceAccount's, would run.)
    const res = await runCli('join', sides(['--cluster-id', 'east2', '--clusterset', CS, '--leader-server', leader.server]));
    assert.equal(res.code, 4);
    assert.match(res.stderr, /the member already has ClusterSet clusterset-agent\/prod for another membership: spec\.clusterID is "east", join needs "east2"/);
    await core.deleteNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-west' });
  });

  it("leave refuses a leader context that is another ClusterSet's leader, before its first delete", async () => {
    // Another cluster (the member's own control plane stands in for it) leading another
    // ClusterSet of the same name and leader ID, holding an announce and an account for east.
    const other = member.adminConfig();
    await createNamespace(other, LEADER_NS);
    const otherCustom = other.makeApiClient(CustomObjectsApi);
    const cs = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: LEADER_NS };
    await otherCustom.createNamespacedCustomObject({ ...cs, body: { apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: CS }, spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] } } });
    const mca = { group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS };
    await otherCustom.createNamespacedCustomObject({ ...mca, body: { apiVersion: `${MEMBER_CLUSTER_ANNOUNCE.group}/${MEMBER_CLUSTER_ANNOUNCE.version}`, kind: MEMBER_CLUSTER_ANNOUNCE.kind, metadata: { name: 'member-announce-from-east' }, clusterID: 'east', clusterSetID: CS, leaderClusterID: 'leader' } });
    await other.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: LEADER_NS, body: { metadata: { name: 'member-east', labels: { 'app.kubernetes.io/managed-by': 'clusterset-agent' }, annotations: { [CLUSTER_ID_ANNOTATION]: 'east' } } } });
    const since = Date.now();
    const res = await runCli('leave', ['--leader-kubeconfig', files.member, '--member-kubeconfig', files.member, '--clusterset', CS, '--wait', '5']);
    assert.equal(res.code, 4, res.stdout + res.stderr);
    assert.match(res.stderr, /^refused, nothing written:\n/);
    assert.match(res.stderr, /the leader context's ClusterSet antrea-multicluster\/prod is not the one this member joined \(uid [0-9a-f-]+, join recorded [0-9a-f-]+\)/);
    assert.deepEqual({ leader: joinerWrites(leader, since), member: joinerWrites(member, since) }, { leader: [], member: [] });
    await otherCustom.getNamespacedCustomObject({ ...mca, name: 'member-announce-from-east' });
    await other.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
    // The right leader, dry: what leave would delete, and nothing written.
    const dry = await runCli('leave', sides(['--clusterset', CS, '--dry-run']));
    assert.equal(dry.code, 0, dry.stdout + dry.stderr);
    assert.match(dry.stdout, new RegExp('^leave would, in order:\n  member: delete ClusterSet clusterset-agent/prod\n  member: delete Secret clusterset-agent/leader-token\n' +
      '  leader: delete RoleBinding antrea-multicluster/member-east\n  leader: delete Secret antrea-multicluster/member-east-token-[a-z0-9]{5}\n  leader: delete ServiceAccount antrea-multicluster/member-east\n$'));
    assert.deepEqual({ leader: joinerWrites(leader, since), member: joinerWrites(member, since) }, { leader: [], member: [] });
  });

  it('leave leaves both clusters as before join, and the old token is refused', async () => {
    const secret = await member.adminConfig().makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: AGENT_NS, name: 'leader-token' });
    const token = Buffer.from(secret.data?.['token'] ?? '', 'base64').toString('utf8');
    const res = await runCli('leave', sides(['--clusterset', CS, '--wait', '60']));
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stderr, /leader: deleted ServiceAccount antrea-multicluster\/member-east; every token issued for it is void/);
    assert.deepEqual({ leader: await objects(leader, 'leader'), member: await objects(member, 'member') }, before_);
    // The apiserver caches a token's authentication for a few seconds: refused within seconds.
    const api = tokenConfig(leader, token).makeApiClient(CustomObjectsApi);
    await waitFor('the old token refused (401)', async () => {
      try {
        await api.listNamespacedCustomObject({ group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS });
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 401;
      }
    }, { timeoutMs: 30_000, intervalMs: 250 });
    const again = await runCli('leave', sides(['--clusterset', CS]));
    assert.equal(again.code, 4);
    assert.match(again.stderr, /the member has no ClusterSet clusterset-agent\/prod: nothing to leave/);
  });

  it('join with --service-account and a RoleBinding it did not create; leave without the flag removes the account, and only its subject from the RoleBinding', async () => {
    const rbac = leader.adminConfig().makeApiClient(RbacAuthorizationV1Api);
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: MEMBER_ROLE_NAME };
    await rbac.createNamespacedRoleBinding({ namespace: LEADER_NS, body: { metadata: { name: 'east-sa' }, roleRef, subjects: [{ kind: 'ServiceAccount', name: 'auditor', namespace: LEADER_NS }] } });
    const joined = await runCli('join', joinArgs(['--service-account', 'east-sa']));
    assert.equal(joined.code, 0, joined.stdout + joined.stderr);
    assert.match(joined.stderr, /leader: added ServiceAccount east-sa to RoleBinding antrea-multicluster\/east-sa/);
    const res = await runCli('leave', sides(['--clusterset', CS, '--wait', '60']));
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stderr, /the member's ServiceAccount on the leader is antrea-multicluster\/east-sa \(from the ClusterSet join wrote\)/);
    assert.match(res.stderr, /leader: removed ServiceAccount east-sa from RoleBinding antrea-multicluster\/east-sa \(join did not create it; it stays\)/);
    assert.match(res.stderr, /leader: deleted ServiceAccount antrea-multicluster\/east-sa; every token issued for it is void/);
    const kept = await rbac.readNamespacedRoleBinding({ namespace: LEADER_NS, name: 'east-sa' });
    assert.deepEqual((kept.subjects ?? []).map((x) => `${x.kind} ${x.namespace ?? ''}/${x.name}`), [`ServiceAccount ${LEADER_NS}/auditor`]);
    await assert.rejects(leader.adminConfig().makeApiClient(CoreV1Api).readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'east-sa' }), (err: { code?: number }) => err.code === 404);
    await rbac.deleteNamespacedRoleBinding({ namespace: LEADER_NS, name: 'east-sa' });
  });

  it('leave names what it did not create and exits 5: a ServiceAccount made by hand stays', async () => {
    const core = leader.adminConfig().makeApiClient(CoreV1Api);
    const joined = await runCli('join', joinArgs());
    assert.equal(joined.code, 0, joined.stdout + joined.stderr);
    // The account's managed-by label removed: as if an administrator had made it by hand.
    const account = await core.readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
    await core.replaceNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east', body: Object.assign({}, account, { metadata: Object.assign({}, account.metadata, { labels: {} }) }) });
    const res = await runCli('leave', sides(['--clusterset', CS, '--wait', '60']));
    assert.equal(res.code, 5, res.stdout + res.stderr);
    assert.match(res.stderr, /not removed, still in place:\n {2}- ServiceAccount antrea-multicluster\/member-east on the leader: not created by join or create-member-token .* its tokens stay valid until you delete it/);
    await core.readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
    await core.deleteNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
  });

  it('a token rotated through join revokes the one before: its Secret on the leader is deleted, the old token refused', async () => {
    const readToken = async () => Buffer.from((await member.adminConfig().makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: AGENT_NS, name: 'leader-token' })).data?.['token'] ?? '', 'base64').toString('utf8');
    const announces = (token: string) => tokenConfig(leader, token).makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS });
    // A token of ten minutes: the next join renews it (it expires within 7 days).
    const first = await runCli('join', joinArgs(['--duration', '10m']));
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const old = await readToken();
    const second = await runCli('join', joinArgs());
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.match(second.stderr, /needs a new token: its token expires at \S+, within 7 days/);
    assert.match(second.stderr, /leader: deleted Secret antrea-multicluster\/member-east-token-[a-z0-9]{5}: the token bound to it is revoked/);
    const current = await readToken();
    assert.notEqual(current, old);
    await waitFor('the rotated-out token refused (401)', async () => {
      try {
        await announces(old);
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 401;
      }
    }, { timeoutMs: 30_000, intervalMs: 250 });
    await announces(current);
    const res = await runCli('leave', sides(['--clusterset', CS, '--wait', '60']));
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.deepEqual({ leader: await objects(leader, 'leader'), member: await objects(member, 'member') }, before_);
  });
});
