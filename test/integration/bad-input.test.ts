// Every bad input gets its own reason on its own ClusterSet within two intervals, the agent
// keeps running, a healthy ClusterSet beside them is untouched, and no token is logged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { CLUSTER_ID_ANNOTATION } from '../../src/common/api/names.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import {
  AGENT_NS, ANTREA_MEMBER_ROLE_RULES, capturedLogger, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS,
  readyCondition, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace, createServiceAccountWithRole, issueToken, tokenConfig, waitForAccess } from '../harness/kube.js';
import { startFaultProxy } from '../harness/fault-proxy.js';
import { maybe } from '../harness/imports.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;

interface Case {
  readonly name: string;
  readonly reason: string;
  readonly message: RegExp;
  readonly prepare: () => Promise<{ server?: string; secret: string; leaderNamespace?: string }>;
}

describe('bad input', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let bare: ControlPlane;
  let agent: Agent | undefined;
  const log = capturedLogger();
  const tokens: string[] = [];

  before(async () => {
    [leader, member, bare] = await Promise.all([startControlPlane('leader'), startControlPlane('member'), startControlPlane('bare')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    await createNamespace(member.adminConfig(), AGENT_NS);
    const healthy = await createMemberAccess(leader, 'healthy');
    tokens.push(healthy.token);
    await writeLeaderSecret(member, 'healthy-token', { caPem: leader.caPem, token: healthy.token });
    await createClusterSet(member, { name: 'healthy', clusterID: 'healthy', server: leader.server, secret: 'healthy-token' });
    agent = await startAgent(loadConfig({ flags: parseConfigFlags(['--namespace', AGENT_NS, '--heartbeat-interval', String(INTERVAL_S)]), env: {} }), log.logger, member.adminConfig());
    await waitForReady(member, 'healthy', 'True', 'Connected', 2 * INTERVAL_S * 1000);
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop(), bare.stop()]);
  });
  onFailureShowLogs(() => [leader, member, bare], () => `--- agent log ---\n${log.text()}`);

  const secretWith = async (name: string, data: { caPem?: string; token?: string }) => {
    if (data.token) tokens.push(data.token);
    await writeLeaderSecret(member, name, data);
    return name;
  };

  const cases: Case[] = [
    {
      name: 'missing Secret', reason: 'SecretNotFound', message: /Secret clusterset-agent\/absent not found/,
      prepare: () => Promise.resolve({ secret: 'absent' }),
    },
    {
      name: 'Secret without token', reason: 'SecretInvalid', message: /no "token" key/,
      prepare: async () => ({ secret: await secretWith('no-token', { caPem: leader.caPem }) }),
    },
    {
      name: 'wrong CA', reason: 'TLSVerificationFailed', message: /TLS verification of https:\/\/127\.0\.0\.1:\d+ failed/,
      prepare: async () => {
        const { token } = await createMemberAccess(leader, 'wrong-ca');
        return { secret: await secretWith('wrong-ca', { caPem: member.caPem, token }) };
      },
    },
    {
      name: 'malformed URL', reason: 'InvalidServerURL', message: /must use https:\/\//,
      prepare: async () => ({ server: 'http://127.0.0.1:6443', secret: await secretWith('bad-url', { caPem: leader.caPem, token: 'never-sent-token-0123456789abcdef' }) }),
    },
    {
      name: 'revoked token (ServiceAccount deleted)', reason: 'Unauthorized', message: /rejected the token \(401/,
      prepare: async () => {
        const { token, serviceAccount } = await createMemberAccess(leader, 'revoked');
        await leader.adminConfig().makeApiClient(CoreV1Api).deleteNamespacedServiceAccount({ namespace: LEADER_NS, name: serviceAccount });
        // The apiserver looks ServiceAccounts up through its cache: wait until the token is really dead.
        await waitFor('the deleted ServiceAccount\'s token to be rejected', async () => {
          try {
            await tokenConfig(leader, token).makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace: LEADER_NS });
            return false;
          } catch (err) {
            return (err as { code?: number }).code === 401;
          }
        }, { timeoutMs: 30_000, intervalMs: 100 }); // the apiserver caches successful token reviews for 10 s
        return { secret: await secretWith('revoked', { caPem: leader.caPem, token }) };
      },
    },
    {
      name: 'Role missing a verb', reason: 'Forbidden', message: /forbids create memberclusterannounces\.multicluster\.crd\.antrea\.io in namespace antrea-multicluster: grant verb "create"/,
      prepare: async () => {
        const rules = ANTREA_MEMBER_ROLE_RULES.map((r) => r.resources?.includes('memberclusterannounces') ? { apiGroups: ['multicluster.crd.antrea.io'], resources: ['memberclusterannounces'], verbs: ['get', 'list', 'watch'] } : r);
        const { token } = await createMemberAccess(leader, 'no-create', { rules });
        return { secret: await secretWith('no-create', { caPem: leader.caPem, token }) };
      },
    },
    {
      name: 'leader namespace missing', reason: 'LeaderNamespaceNotFound', message: /leader namespace no-such-ns does not exist/,
      prepare: async () => {
        // A token allowed in every namespace, so the apiserver answers 404 instead of 403.
        const kc = leader.adminConfig();
        await createServiceAccountWithRole(kc, { namespace: LEADER_NS, serviceAccount: 'wide', rules: [], annotations: { [CLUSTER_ID_ANNOTATION]: 'ns-missing' } });
        const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
        await rbac.createClusterRole({ body: { metadata: { name: 'wide-member' }, rules: [...ANTREA_MEMBER_ROLE_RULES] } });
        await rbac.createClusterRoleBinding({ body: { metadata: { name: 'wide-member' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'wide-member' },
          subjects: [{ kind: 'ServiceAccount', name: 'wide', namespace: LEADER_NS }] } });
        const token = await issueToken(kc, LEADER_NS, 'wide');
        await waitForAccess(leader, token, { verb: 'create', resource: 'memberclusterannounces', group: 'multicluster.crd.antrea.io', namespace: 'no-such-ns' });
        return { secret: await secretWith('ns-missing', { caPem: leader.caPem, token }), leaderNamespace: 'no-such-ns' };
      },
    },
    {
      name: 'leader CRDs not installed', reason: 'CRDNotInstalled', message: /does not serve memberclusterannounces\.multicluster\.crd\.antrea\.io: install the leader CRDs/,
      prepare: async () => {
        const kc = bare.adminConfig();
        await createServiceAccountWithRole(kc, { namespace: LEADER_NS, serviceAccount: 'member-no-crd', rules: ANTREA_MEMBER_ROLE_RULES });
        const token = await issueToken(kc, LEADER_NS, 'member-no-crd');
        await waitForAccess(bare, token, { verb: 'create', resource: 'memberclusterannounces', group: 'multicluster.crd.antrea.io', namespace: LEADER_NS });
        return { server: bare.server, secret: await secretWith('no-crd', { caPem: bare.caPem, token }) };
      },
    },
    {
      name: 'leader admission refuses the announce (Antrea >=2.7 identity binding, as a ValidatingAdmissionPolicy)',
      reason: 'AdmissionDenied', message: /leader refused to create memberclusterannounces.* ValidatingAdmissionPolicy 'member-identity'.*denied request: .*may only announce its own cluster ID/,
      prepare: async () => {
        // Like Antrea's webhook: a member ServiceAccount may only announce the cluster ID it was issued for
        // (here: its name is member-<clusterID>), and every announce must carry touch-ts from creation on.
        const admission = leader.adminConfig().makeApiClient(AdmissionregistrationV1Api);
        await admission.createValidatingAdmissionPolicy({ body: {
          metadata: { name: 'member-identity' },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: { resourceRules: [{ apiGroups: ['multicluster.crd.antrea.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['memberclusterannounces'] }] },
            validations: [
              { expression: `!request.userInfo.username.startsWith('system:serviceaccount:${LEADER_NS}:member-') || request.userInfo.username == 'system:serviceaccount:${LEADER_NS}:member-' + object.clusterID`,
                message: 'a member ServiceAccount may only announce its own cluster ID' },
              { expression: "has(object.metadata.annotations) && 'touch-ts' in object.metadata.annotations", message: 'touch-ts is required' },
            ],
          },
        } });
        await admission.createValidatingAdmissionPolicyBinding({ body: {
          metadata: { name: 'member-identity' },
          spec: { policyName: 'member-identity', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': LEADER_NS } } } },
        } });
        const { token } = await createMemberAccess(leader, 'impostor-src', { serviceAccount: 'member-someone-else' });
        // Policies take effect asynchronously: probe with a dry-run create until one is denied.
        const asImpostor = tokenConfig(leader, token).makeApiClient(CustomObjectsApi);
        await waitFor('the admission policy to be in force', async () => {
          try {
            await asImpostor.createNamespacedCustomObject({ group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'memberclusterannounces', namespace: LEADER_NS, dryRun: 'All',
              body: { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'MemberClusterAnnounce', metadata: { name: 'member-announce-from-probe', annotations: { 'touch-ts': 'x' } }, clusterID: 'probe' } });
            return false;
          } catch (err) {
            return (err as { code?: number }).code === 403 || (err as { code?: number }).code === 422;
          }
        }, { timeoutMs: 20_000, intervalMs: 200 });
        return { secret: await secretWith('impostor', { caPem: leader.caPem, token }) };
      },
    },
  ];

  for (const [index, c] of cases.entries()) {
    it(`${c.name} → ${c.reason}`, async () => {
      const input = await c.prepare();
      const name = `bad-${String(index)}`;
      await createClusterSet(member, { name, clusterID: `member-${String(index)}`, server: input.server ?? leader.server, secret: input.secret,
        ...(input.leaderNamespace ? { leaderNamespace: input.leaderNamespace } : {}) });
      const cs = await waitForReady(member, name, 'False', c.reason, 2 * INTERVAL_S * 1000);
      assert.match(readyCondition(cs)?.message ?? '', c.message);
      assert.equal(cs.status?.clusterStatuses?.[0]?.conditions?.find((x) => x.type === 'Ready')?.reason, c.reason);
    });
  }

  it('an invalid spec is reported as InvalidSpec naming the field', async () => {
    await createClusterSet(member, { name: 'bad-spec', clusterID: 'Bad_ID', server: leader.server, secret: 'healthy-token' });
    const cs = await waitForReady(member, 'bad-spec', 'False', 'InvalidSpec', 2 * INTERVAL_S * 1000);
    assert.match(readyCondition(cs)?.message ?? '', /spec\.clusterID: cluster ID "Bad_ID" is not valid: a cluster ID is a DNS-1123 label/);
  });

  // The one cluster-ID grammar (issue 21): the member spec refuses a dotted ID in the words
  // the token helper and the leader use, before anything is written to the leader.
  it('a dotted cluster ID is InvalidSpec in the shared cluster-ID words, and no announce is written', async () => {
    await createClusterSet(member, { name: 'dotted-id', clusterID: 'east.example', server: leader.server, secret: 'healthy-token' });
    const cs = await waitForReady(member, 'dotted-id', 'False', 'InvalidSpec', 2 * INTERVAL_S * 1000);
    assert.match(readyCondition(cs)?.message ?? '', /spec\.clusterID: cluster ID "east\.example" is not valid: a cluster ID is a DNS-1123 label.*\(no dots\)/);
    const announces = (await leader.adminConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS,
    })) as { items: MemberClusterAnnounce[] };
    assert.deepEqual(announces.items.filter((a) => a.clusterID === 'east.example' || (a.metadata?.name ?? '').includes('east.example')).map((a) => a.metadata?.name), []);
  });

  it('leaves the healthy ClusterSet untouched and the agent running', async () => {
    const cs = await clusterSetApi(member.adminConfig()).get('healthy');
    const ready = readyCondition(cs);
    assert.equal(ready?.status, 'True');
    assert.equal(agent?.controller.leaderStatus('healthy')?.consecutiveFailures, 0);
    // Still beating: the announce's touch-ts on the leader (the status field advances once a minute).
    const announce = (await leader.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS, name: 'member-announce-from-healthy',
    })) as MemberClusterAnnounce;
    assert.ok(Date.parse(announce.metadata?.annotations?.['touch-ts'] ?? '') > Date.now() - 2 * INTERVAL_S * 1000, 'still beating');
    assert.ok(cs.status?.clusterStatuses?.[0]?.lastHeartbeatTime, 'the status says when the link was last confirmed');
    assert.ok(agent);
    assert.ok(agent.controller.synced);
  });

  it('a leader that accepts connections and never answers delays no other ClusterSet: joins and leaves go on beside it', async () => {
    const proxy = await startFaultProxy({ upstream: leader.server, upstreamCaPem: leader.caPem, seed: 3 });
    const members = leader.adminConfig().makeApiClient(CustomObjectsApi);
    const clusterSets = clusterSetApi(member.adminConfig());
    const announce = (id: string) => maybe(() => members.getNamespacedCustomObject({
      group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS, name: `member-announce-from-${id}`,
    }));
    /** The announce is deleted on the leader and the ClusterSet is gone. */
    const left = async (name: string) => (await announce(name)) === undefined && (await maybe(() => clusterSets.get(name))) === undefined;
    try {
      const [stalled, prompt] = await Promise.all([createMemberAccess(leader, 'stalled'), createMemberAccess(leader, 'prompt')]);
      await secretWith('stalled-token', { caPem: proxy.caPem, token: stalled.token });
      await secretWith('prompt-token', { caPem: leader.caPem, token: prompt.token });
      // Joined through the proxy first, so its announce exists; then the proxy swallows every connection.
      await createClusterSet(member, { name: 'stalled', clusterID: 'stalled', server: proxy.url, secret: 'stalled-token' });
      await waitForReady(member, 'stalled', 'True', 'Connected', 2 * INTERVAL_S * 1000);
      proxy.partition(true, 'blackhole');

      await createClusterSet(member, { name: 'prompt', clusterID: 'prompt', server: leader.server, secret: 'prompt-token' });
      await waitForReady(member, 'prompt', 'True', 'Connected', 2 * INTERVAL_S * 1000);

      await clusterSets.delete('stalled');
      await clusterSets.delete('prompt');
      await waitFor('ClusterSet prompt to leave (announce deleted) and go', () => left('prompt'), { timeoutMs: 2 * INTERVAL_S * 1000, intervalMs: 100 });
      // The stalled leave really was waiting on the dead leader all along.
      assert.ok(await announce('stalled'), 'the black-holed leader never saw the leave');
      assert.ok((await clusterSets.get('stalled')).metadata?.deletionTimestamp, 'stalled waits to leave');

      proxy.partition(false);
      await waitFor('ClusterSet stalled to leave once its leader answers', () => left('stalled'), { timeoutMs: 30_000, intervalMs: 200 });
      assert.equal(readyCondition(await clusterSets.get('healthy'))?.status, 'True', 'the healthy ClusterSet stayed Ready');
    } finally {
      await proxy.close();
    }
  });

  it('never logs a token', () => {
    const all = log.lines.join('\n');
    assert.ok(log.lines.length > 10, 'the agent logged');
    for (const token of tokens) assert.ok(!all.includes(token), 'a token reached the log');
  });
});
