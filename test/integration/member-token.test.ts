// `leader create-member-token` against a real leader: the Secret it prints works as member
// credentials (announce in the leader namespace, nothing outside it), re-runs are idempotent,
// conflicting cluster IDs are refused, and the CLI's stdout is nothing but the Secret YAML.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { CLUSTER_ID_ANNOTATION, TIMESTAMP_ANNOTATION } from '../../src/common/api/names.js';
import { httpStatus } from '../../src/common/kube/errors.js';
import { ANTREA_MEMBER_ROLE_RULES, MEMBER_ROLE_NAME } from '../../src/leader/decisions/member-role.js';
import { createMemberToken, MemberTokenError } from '../../src/leader/member-token.js';
import { k8sBins, repoRoot } from '../harness/bins.js';
import { CLUSTERSET_ID, LEADER_NS, setupLeader } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace, tokenConfig, waitForAccess } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';

interface PrintedSecret {
  apiVersion: string;
  kind: string;
  type: string;
  metadata: { name: string; namespace: string };
  data: Record<string, string>;
}

function decode(secret: PrintedSecret): { caPem: string; token: string } {
  const ca = secret.data['ca.crt'];
  const token = secret.data.token;
  assert.ok(ca !== undefined && token !== undefined);
  return { caPem: Buffer.from(ca, 'base64').toString('utf8'), token: Buffer.from(token, 'base64').toString('utf8') };
}

function jwtClaims(token: string): { exp: number; iat: number; sub: string } {
  const payload = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp: number; iat: number; sub: string };
}

function run(command: string, args: readonly string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    child.once('error', reject);
    child.once('close', (code) => { resolve({ code, stdout, stderr }); });
    child.stdin.end(input ?? '');
  });
}

describe('leader create-member-token', () => {
  let leader: ControlPlane;
  let admin: KubeConfig;
  const progress: string[] = [];
  const log = (message: string) => { progress.push(message); };
  const mcaRef = { group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural };
  const announce = (clusterID: string, touch: string): MemberClusterAnnounce => ({
    apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion,
    kind: MEMBER_CLUSTER_ANNOUNCE.kind,
    metadata: { name: `member-announce-from-${clusterID}`, annotations: { [TIMESTAMP_ANNOTATION]: touch } },
    clusterID,
    clusterSetID: CLUSTERSET_ID,
    leaderClusterID: 'leader',
  });

  before(async () => {
    leader = await startControlPlane('leader');
    await setupLeader(leader);
    admin = leader.adminConfig();
  });
  after(async () => {
    await leader.stop();
  });
  onFailureShowLogs(() => [leader], () => `--- progress ---\n${progress.join('\n')}`);

  let firstToken = '';
  let firstUid = '';

  it('creates the ServiceAccount, Role and RoleBinding, and prints a Secret whose token can announce in the leader namespace only', async () => {
    const before = Date.now();
    const result = await createMemberToken(admin, { memberId: 'east', log });
    assert.equal(result.serviceAccount, 'member-east');
    const secret = parse(result.secretYaml) as PrintedSecret;
    assert.deepEqual({ ...secret, data: Object.keys(secret.data).sort() }, {
      apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'leader-token', namespace: 'clusterset-agent' }, data: ['ca.crt', 'token'],
    });
    const { caPem, token } = decode(secret);
    assert.equal(caPem, leader.caPem, 'ca.crt is the leader CA from the kubeconfig');
    firstToken = token;
    const claims = jwtClaims(token);
    assert.equal(claims.sub, `system:serviceaccount:${LEADER_NS}:member-east`);
    assert.ok(Math.abs(claims.exp - claims.iat - 8760 * 3600) <= 60, 'one year by default');
    assert.ok(result.expiresAt !== undefined && Math.abs(result.expiresAt.getTime() - (before + 8760 * 3600 * 1000)) < 120_000);

    const sa = await admin.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
    assert.equal(sa.metadata?.annotations?.[CLUSTER_ID_ANNOTATION], 'east');
    firstUid = sa.metadata.uid ?? '';
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const role = await rbac.readNamespacedRole({ namespace: LEADER_NS, name: MEMBER_ROLE_NAME });
    assert.deepEqual(JSON.parse(JSON.stringify(role.rules)), JSON.parse(JSON.stringify(ANTREA_MEMBER_ROLE_RULES)), "exactly Antrea's member rules");
    const binding = await rbac.readNamespacedRoleBinding({ namespace: LEADER_NS, name: 'member-east' });
    assert.equal(binding.roleRef.name, MEMBER_ROLE_NAME);
    assert.deepEqual(binding.subjects?.map((s) => [s.kind, s.name, s.namespace]), [['ServiceAccount', 'member-east', LEADER_NS]]);

    // The member's view: server URL + the printed CA + the printed token, nothing else.
    await waitForAccess(leader, token, { verb: 'update', resource: 'memberclusterannounces', group: MEMBER_CLUSTER_ANNOUNCE.group, namespace: LEADER_NS });
    const member = tokenConfig(leader, token, 'member-east', caPem).makeApiClient(CustomObjectsApi);
    const created = (await member.createNamespacedCustomObject({ ...mcaRef, namespace: LEADER_NS, body: announce('east', '1') })) as MemberClusterAnnounce;
    const updated = (await member.replaceNamespacedCustomObject({
      ...mcaRef, namespace: LEADER_NS, name: 'member-announce-from-east',
      body: { ...announce('east', '2'), metadata: { ...announce('east', '2').metadata, resourceVersion: created.metadata?.resourceVersion } },
    })) as MemberClusterAnnounce;
    assert.equal(updated.metadata?.annotations?.[TIMESTAMP_ANNOTATION], '2');
    await assert.rejects(member.createNamespacedCustomObject({ ...mcaRef, namespace: 'default', body: announce('east', '1') }),
      (err: unknown) => httpStatus(err) === 403, 'no announce outside the leader namespace');
    await assert.rejects(member.listClusterCustomObject(mcaRef), (err: unknown) => httpStatus(err) === 403, 'no cluster-wide list');
    await assert.rejects(tokenConfig(leader, token, 'member-east', caPem).makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: LEADER_NS }),
      (err: unknown) => httpStatus(err) === 403, 'no Secrets in the leader namespace');
  });

  it('is idempotent: a second run keeps the ServiceAccount and issues a new token', async () => {
    progress.length = 0;
    const result = await createMemberToken(admin, { memberId: 'east', durationSeconds: 3600, secretName: 'east-token', memberNamespace: 'kube-system', log });
    const secret = parse(result.secretYaml) as PrintedSecret;
    assert.deepEqual(secret.metadata, { name: 'east-token', namespace: 'kube-system' });
    const { token } = decode(secret);
    assert.notEqual(token, firstToken);
    const claims = jwtClaims(token);
    assert.ok(Math.abs(claims.exp - claims.iat - 3600) <= 60);
    const sa = await admin.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
    assert.equal(sa.metadata?.uid, firstUid);
    assert.ok(progress.some((line) => /ServiceAccount .*member-east already exists/.test(line)), progress.join('\n'));
    assert.ok(progress.some((line) => /Role .* already grants/.test(line)), progress.join('\n'));
  });

  it("completes a Role that lacks member permissions, keeping the Role's other rules", async () => {
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const extra = { apiGroups: ['multicluster.crd.antrea.io'], resources: ['gateways'], verbs: ['get'] };
    const current = await rbac.readNamespacedRole({ namespace: LEADER_NS, name: MEMBER_ROLE_NAME });
    await rbac.replaceNamespacedRole({ namespace: LEADER_NS, name: MEMBER_ROLE_NAME, body: Object.assign({}, current, {
      rules: [...ANTREA_MEMBER_ROLE_RULES.filter((r) => !r.resources?.includes('resourceimports')), extra],
    }) });
    progress.length = 0;
    await createMemberToken(admin, { memberId: 'east', log });
    assert.ok(progress.some((line) => /lacked get multicluster\.crd\.antrea\.io\/resourceimports, list .*: added/.test(line)), progress.join('\n'));
    const repaired = await rbac.readNamespacedRole({ namespace: LEADER_NS, name: MEMBER_ROLE_NAME });
    const resources = repaired.rules?.map((r) => r.resources?.join(','));
    assert.deepEqual(resources, ['events', 'memberclusterannounces', 'memberclusterannounces/status', 'resourceexports', 'resourceexports/status',
      'resourceimports/status', 'gateways', 'resourceimports']);
  });

  it('refuses conflicting cluster IDs before writing anything', async () => {
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: LEADER_NS, body: { metadata: { name: 'member-west', annotations: { [CLUSTER_ID_ANNOTATION]: 'someone-else' } } } });
    await core.createNamespacedServiceAccount({ namespace: LEADER_NS, body: { metadata: { name: 'plain' } } });
    const refused = async (options: Parameters<typeof createMemberToken>[1], message: RegExp) => {
      await assert.rejects(createMemberToken(admin, options), (err: unknown) => {
        assert.ok(err instanceof MemberTokenError, String(err));
        assert.match(err.message, message);
        return true;
      });
    };
    await refused({ memberId: 'west' }, /ServiceAccount antrea-multicluster\/member-west belongs to member "someone-else" \(multicluster\.antrea\.io\/cluster-id\); refusing to reuse it for member "west"/);
    await refused({ memberId: 'east', serviceAccount: 'east-again' }, /member "east" already has ServiceAccount antrea-multicluster\/member-east .*--service-account member-east/);
    await refused({ memberId: 'north', serviceAccount: 'plain' }, /plain already exists without the multicluster\.antrea\.io\/cluster-id annotation/);
    await refused({ memberId: 'east-1' }, /"east-1" and member "east" .* differ only by a dash suffix/);
    await refused({ memberId: 'x', namespace: 'no-such-ns' }, /namespace no-such-ns does not exist/);
    const names = (await core.listNamespacedServiceAccount({ namespace: LEADER_NS })).items.map((sa) => sa.metadata?.name).sort();
    assert.deepEqual(names, ['member-east', 'member-west', 'plain'], 'no ServiceAccount was created by a refused run');
  });

  it('CLI: stdout is only the Secret YAML (kubectl applies it), progress goes to stderr', async () => {
    const cli = ['--import', 'tsx', 'src/cli/main.ts', 'leader', 'create-member-token'];
    const res = await run(process.execPath, [...cli, '--member-id', 'south', '--kubeconfig', leader.kubeconfigPath, '--duration', '2h',
      '--secret-name', 'leader-south', '--member-namespace', 'csa-member']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /created ServiceAccount antrea-multicluster\/member-south/);
    const secret = parse(res.stdout) as PrintedSecret;
    assert.equal(secret.kind, 'Secret');
    assert.deepEqual(secret.metadata, { name: 'leader-south', namespace: 'csa-member' });
    const { caPem, token } = decode(secret);
    assert.equal(caPem, leader.caPem, 'the CA came from the kubeconfig file (certificate-authority path)');
    const claims = jwtClaims(token);
    assert.ok(Math.abs(claims.exp - claims.iat - 7200) <= 60);

    // `| kubectl apply -f -` (here into the leader itself, standing in for a member cluster).
    await createNamespace(admin, 'csa-member');
    const applied = await run(k8sBins().kubectl, ['--kubeconfig', leader.kubeconfigPath, 'apply', '-f', '-'], res.stdout);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /secret\/leader-south created/);
    const stored: V1Secret = await admin.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: 'csa-member', name: 'leader-south' });
    assert.equal(stored.type, 'Opaque');
    assert.deepEqual(stored.data, secret.data);

    const bad = await run(process.execPath, [...cli, '--member-id', 'west', '--kubeconfig', leader.kubeconfigPath]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, '', 'nothing on stdout when refused');
    assert.match(bad.stderr, /^error: ServiceAccount antrea-multicluster\/member-west belongs to member "someone-else"/m);
  });
});
