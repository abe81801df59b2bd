// `clusterset-agent leader run` on real control planes: a leader and two members (east, west)
// running this project's member agent. The leader controller runs with the token of the
// chart's own ServiceAccount (its Role, nothing else), behind the chart's admission policies.
// Liveness from touch-ts (also across a leader restart), announce admission, aggregation of
// exports into imports (merge, port conflict, un-export), a restart that rewrites nothing,
// a second member cluster configured with east's cluster ID (a third member control plane),
// and a member leaving.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { SERVICE_EXPORT, type ServiceExport } from '../../src/common/api/mcs.js';
import {
  CLUSTERSET,
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ClusterSet,
  type MemberClusterAnnounce,
  type ResourceExport,
  type ResourceImport,
} from '../../src/common/api/antrea.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { LeaderController } from '../../src/leader/controller.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { parseMetrics, readAuditEvents, sampleValue, type AuditEvent } from '../harness/agent-process.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret,
  installCrds,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace, issueToken, kubectlApply, tokenConfig } from '../harness/kube.js';
import { maybe } from '../harness/imports.js';
import { CHART, helmTemplate } from '../harness/leader-admission.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const INTERVAL_S = 2;
const MEMBER_TIMEOUT_MS = 3 * INTERVAL_S * 1000;
const RELEASE_NS = 'csa-leader';
const LEADER_SA = 'csa-leader-clusterset-agent';
const converge = { timeoutMs: 20_000, intervalMs: 100 };

/** The `jti` of a ServiceAccount token: the apiserver's audit log names the credential of each request by it. */
function tokenId(token: string): string {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti?: string };
  return payload.jti ?? assert.fail('the token has no jti');
}

function credentialOf(e: AuditEvent): string | undefined {
  const extra = (e.user as { extra?: Record<string, string[]> }).extra;
  return extra?.['authentication.kubernetes.io/credential-id']?.[0];
}

interface Member {
  readonly id: string;
  readonly cp: ControlPlane;
  agent: Agent | undefined;
  log: ReturnType<typeof capturedLogger>;
  token: string;
}

describe('leader run: this project as the leader', () => {
  let leader: ControlPlane;
  const members: Record<'east' | 'west', Member> = {} as never;
  let controller: LeaderController | undefined;
  let leaderLog = capturedLogger();
  let leaderToken = '';
  let leaderMetrics = new AgentMetrics({ defaultMetrics: false });
  let eastReadySince = '';
  let twin: Member | undefined;

  const leaderCustom = () => leader.adminConfig().makeApiClient(CustomObjectsApi);
  const ref = (d: { group: string; version: string; plural: string }) => ({ group: d.group, version: d.version, plural: d.plural, namespace: LEADER_NS });
  const getRI = (name: string) => maybe(async () => (await leaderCustom().getNamespacedCustomObject({ ...ref(RESOURCE_IMPORT), name })) as ResourceImport);
  const getRE = (name: string) => maybe(async () => (await leaderCustom().getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name })) as ResourceExport);
  const announceGone = async (name: string) => (await maybe(() => leaderCustom().getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name }))) === undefined;
  const leaderClusterSet = async () => (await leaderCustom().getNamespacedCustomObject({ ...ref(CLUSTERSET), name: CLUSTERSET_ID })) as ClusterSet;
  const memberReady = (cs: ClusterSet, id: string) => cs.status?.clusterStatuses?.find((s) => s.clusterID === id)?.conditions?.[0];

  const startLeader = async (staleMemberMs = 86_400_000) => {
    leaderLog = capturedLogger();
    leaderMetrics = new AgentMetrics({ defaultMetrics: false });
    controller = new LeaderController({
      kubeConfig: tokenConfig(leader, leaderToken, LEADER_SA), namespace: LEADER_NS,
      memberTimeoutMs: MEMBER_TIMEOUT_MS, staleMemberMs, logger: leaderLog.logger, metrics: leaderMetrics,
    });
    await controller.start();
  };
  const stopLeader = async () => {
    await controller?.stop();
    controller = undefined;
  };
  const startMember = async (m: Member) => {
    m.log = capturedLogger();
    const config = loadConfig({ env: {}, readFile: () => '' });
    m.agent = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: INTERVAL_S, requestTimeoutSeconds: 1 } }, m.log.logger, m.cp.adminConfig());
  };
  const exportService = async (m: Member, name: string, port: number) => {
    const core = m.cp.adminConfig().makeApiClient(CoreV1Api);
    const svc = await core.createNamespacedService({ namespace: 'team-a', body: { metadata: { name }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port, protocol: 'TCP', targetPort: 8080 }] } } });
    await m.cp.adminConfig().makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace: 'team-a',
      body: {
        metadata: { name: `${name}-abc`, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4',
        endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    });
    await m.cp.adminConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a',
      body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name } },
    });
    return svc.spec?.clusterIP ?? '';
  };
  /** Writes by the leader controller's ServiceAccount, from the leader's audit log. */
  const leaderWrites = () => readAuditEvents(leader.auditLogPath, (e) =>
    ['create', 'update', 'patch', 'delete'].includes(e.verb) && e.user.username === `system:serviceaccount:${RELEASE_NS}:${LEADER_SA}`)
    .map((e) => `${e.verb} ${e.objectRef?.resource ?? ''} ${e.objectRef?.name ?? ''} ${String(e.responseStatus?.code)}`);

  before(async () => {
    const [l, east, west] = await Promise.all([startControlPlane('leader', { auditLog: true }), startControlPlane('east'), startControlPlane('west')]);
    leader = l;
    await setupLeader(leader);
    // The chart in mode=leader, as an operator installs it: Role, policies, the leader's RBAC.
    await createNamespace(leader.adminConfig(), RELEASE_NS);
    const rendered = await helmTemplate(['csa-leader', CHART, '--namespace', RELEASE_NS, '--set', 'mode=leader', '--set', 'leader.createNamespace=false']);
    await kubectlApply(leader, rendered);
    leaderToken = await issueToken(leader.adminConfig(), RELEASE_NS, LEADER_SA);
    await startLeader();
    for (const [id, cp] of [['east', east], ['west', west]] as const) {
      await installCrds(cp);
      for (const ns of [AGENT_NS, 'team-a']) await createNamespace(cp.adminConfig(), ns);
      const access = await createMemberAccess(leader, id);
      members[id] = { id, cp, agent: undefined, log: capturedLogger(), token: access.token };
      await writeLeaderSecret(cp, 'leader-token', { caPem: leader.caPem, token: access.token });
      await createClusterSet(cp, { clusterID: id, server: leader.server, secret: 'leader-token' });
    }
    // The policies need the parameter the leader controller writes: members join once it is there.
    await Promise.all(Object.values(members).map((m) => startMember(m)));
    await Promise.all(Object.values(members).map((m) => waitForReady(m.cp, CLUSTERSET_ID, 'True', 'Connected', 30_000)));
  });
  after(async () => {
    await Promise.all([...Object.values(members), ...(twin ? [twin] : [])].map(async (m) => { await m.agent?.stop(); }));
    await stopLeader();
    await Promise.all([leader.stop(), ...Object.values(members).map((m) => m.cp.stop()), twin?.cp.stop()]);
  });
  onFailureShowLogs(() => [leader, members.east.cp, members.west.cp, ...(twin ? [twin.cp] : [])], () =>
    `--- leader log ---\n${leaderLog.text()}\n--- east log ---\n${members.east.log.text()}\n--- west log ---\n${members.west.log.text()}` +
    (twin ? `\n--- east twin log ---\n${twin.log.text()}` : ''));

  it('admits both members, finalizes their announces and reports them Ready in Antrea\'s status shape', async () => {
    const cs = await waitFor('leader ClusterSet with two ready members', async () => {
      const c = await leaderClusterSet();
      return c.status?.readyClusters === 2 ? c : undefined;
    }, converge);
    assert.equal(cs.status?.totalClusters, 2);
    assert.equal(cs.status?.conditions?.[0]?.type, 'Ready');
    assert.equal(cs.status?.conditions?.[0]?.status, 'True');
    assert.deepEqual(cs.status?.clusterStatuses?.map((s) => s.clusterID), ['east', 'west']);
    for (const id of ['east', 'west']) {
      const c = memberReady(cs, id);
      assert.deepEqual({ type: c?.type, status: c?.status, reason: c?.reason, message: c?.message }, { type: 'Ready', status: 'True', reason: 'Connected', message: 'Member Connected' });
    }
    eastReadySince = memberReady(cs, 'east')?.lastTransitionTime ?? '';
    const mca = (await leaderCustom().getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-east' })) as MemberClusterAnnounce;
    assert.deepEqual(mca.metadata?.finalizers, ['memberclusterannounce.finalizer.antrea.io/east']);
    const samples = parseMetrics(await leaderMetrics.metrics());
    assert.equal(sampleValue(samples, 'clusterset_agent_leader_members', { clusterset: CLUSTERSET_ID, state: 'ready' }), 2);
    assert.equal(sampleValue(samples, 'clusterset_agent_leader_members', { clusterset: CLUSTERSET_ID, state: 'disconnected' }), 0);
    const params = await leader.adminConfig().makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: LEADER_NS, name: 'clusterset-member-ids' });
    assert.deepEqual(params.data, { ClusterSetID: CLUSTERSET_ID, LeaderClusterID: 'leader', DashPrefixPairsRefused: 'true', 'member-east': 'east', 'member-west': 'west' });
  });

  it('two Connected members beating: status runs at the liveness expiries, not at every beat', async (t) => {
    // Every status run sets the members gauge once per ClusterSet: counted here.
    const live = leaderMetrics;
    let runs = 0;
    const setMembers = live.setLeaderMembers.bind(live);
    live.setLeaderMembers = (...args) => { runs += 1; setMembers(...args); };
    try {
      // From right after a run, so that no run asked for before the window (the echo of the
      // first test's status write, say) falls into it.
      await waitFor('a status run', () => runs > 0, { timeoutMs: MEMBER_TIMEOUT_MS + 5_000, intervalMs: 20 });
      runs = 0;
      const window = 5 * INTERVAL_S * 1000;
      const until = Date.now() + window;
      await waitFor('five beat intervals to pass', () => Date.now() >= until, { timeoutMs: window + 5_000, intervalMs: 100 });
      // Ten beats came (two members, every 2 s); each asked for a run before, paced to one a
      // second: 5 or more. Now a run comes at the earliest expiry, one timeout (6 s) after the
      // oldest last beat, so at least 4 s after the one before: 2, or 3 with a run asked for
      // before the one the window starts after.
      t.diagnostic(`${String(runs)} status runs in ${String(window)} ms of beats`);
      assert.ok(runs <= 3, `${String(runs)} status runs in ${String(window)} ms of beats`);
      assert.equal((await leaderClusterSet()).status?.readyClusters, 2);
    } finally {
      live.setLeaderMembers = setMembers;
    }
  });

  it('a leader wall clock stepped back a minute holds no status run back: the pacing is timed on the monotonic clock', async () => {
    const live = leaderMetrics;
    let runs = 0;
    const setMembers = live.setLeaderMembers.bind(live);
    live.setLeaderMembers = (...args) => { runs += 1; setMembers(...args); };
    const realNow = Date.now.bind(Date);
    try {
      await waitFor('a status run', () => runs > 0, { timeoutMs: MEMBER_TIMEOUT_MS + 5_000, intervalMs: 20 });
      // The process's wall clock (the leader runs in it), as NTP stepping it back would.
      Date.now = () => realNow() - 60_000;
      runs = 0;
      // A ClusterSet event asks for a run; paced on the wall clock, it waited for the minute.
      const cs = await leaderClusterSet();
      await leaderCustom().replaceNamespacedCustomObject({ ...ref(CLUSTERSET), name: CLUSTERSET_ID,
        body: { ...cs, metadata: { ...cs.metadata, annotations: { ...cs.metadata?.annotations, 'test/touched': 'clock-step' } } } });
      await waitFor('a status run after the step', () => runs > 0, { timeoutMs: 5_000, intervalMs: 20 });
    } finally {
      live.setLeaderMembers = setMembers;
      Date.now = realNow;
    }
    // Beats first seen on the stepped clock look a minute old once it is set right: the members'
    // next beats count again, before the next tests.
    await waitFor('both members Ready again', async () => (await leaderClusterSet()).status?.readyClusters === 2, { timeoutMs: 4 * MEMBER_TIMEOUT_MS, intervalMs: 200 });
  });

  it('aggregates one Service exported by both members: one ServiceImport, endpoints merged, imported in both', async () => {
    const eastIP = await exportService(members.east, 'web', 80);
    const westIP = await exportService(members.west, 'web', 80);
    const endpoints = await waitFor('endpoints import with both clusters', async () => {
      const ri = await getRI('team-a-web-endpoints');
      return (ri?.spec?.endpoints?.subsets?.length ?? 0) === 2 ? ri : undefined;
    }, converge);
    assert.deepEqual(endpoints.spec?.endpoints?.subsets?.map((s) => s.addresses?.[0]?.ip), [eastIP, westIP], 'ordered by export name, east first');
    const service = await getRI('team-a-web-service');
    assert.deepEqual(service?.spec, {
      name: 'web', namespace: 'team-a', kind: 'ServiceImport',
      serviceImport: { spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], type: 'ClusterSetIP', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' } },
    });
    // Which cluster each run of subsets came from: the members label their EndpointSlices with it.
    assert.equal(endpoints.metadata?.annotations?.['multicluster.clusterset-agent.io/endpoint-sources'], 'east=1,west=1');
    for (const name of ['east-team-a-web-service', 'west-team-a-web-service', 'east-team-a-web-endpoints', 'west-team-a-web-endpoints']) {
      const re = await waitFor(`${name} Succeeded`, async () => {
        const r = await getRE(name);
        return r?.status?.conditions?.[0]?.type === 'Succeeded' ? r : undefined;
      }, converge);
      assert.equal(re.status?.conditions?.[0]?.status, 'True');
    }
    for (const m of Object.values(members)) {
      await waitFor(`antrea-mc-web in ${m.id} with both endpoints`, async () => {
        try {
          const ep = await m.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedEndpoints({ namespace: 'team-a', name: 'antrea-mc-web' });
          const ips = (ep.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
          return JSON.stringify(ips) === JSON.stringify([eastIP, westIP].sort());
        } catch {
          return false;
        }
      }, converge);
    }
  });

  it('resolves a port conflict the KEP way: the oldest export\'s port, Conflict on EACH exporter, every exporter\'s endpoints kept', async () => {
    await exportService(members.east, 'api', 80);
    await waitFor('api ServiceImport', () => getRI('team-a-api-service'), converge);
    await exportService(members.west, 'api', 81);
    for (const name of ['east-team-a-api-service', 'west-team-a-api-service']) {
      const re = await waitFor(`${name} Failure`, async () => {
        const r = await getRE(name);
        return r?.status?.conditions?.[0]?.type === 'Failure' ? r : undefined;
      }, converge);
      assert.equal(re.status?.conditions?.[0]?.reason, 'ConvergeFailure');
      assert.match(re.status?.conditions?.[0]?.message ?? '', /the oldest \(cluster east, east-team-a-api-service\) wins: ports differ \(cluster east: http:80\/TCP; cluster west: http:81\/TCP\)/);
    }
    assert.deepEqual((await getRI('team-a-api-service'))?.spec?.serviceImport?.spec?.ports, [{ name: 'http', port: 80, protocol: 'TCP' }]);
    await waitFor('api endpoints import with both exporters', async () => (await getRI('team-a-api-endpoints'))?.spec?.endpoints?.subsets?.length === 2, converge);
    for (const m of [members.east, members.west]) {
      const conflict = await waitFor(`${m.id} ServiceExport Conflict=True`, async () => {
        const se = (await m.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a', name: 'api',
        })) as ServiceExport;
        return se.status?.conditions?.find((c) => c.type === 'Conflict' && c.status === 'True');
      }, { timeoutMs: 40_000, intervalMs: 200 });
      assert.match(conflict.message, /conflict/);
    }
  });

  it('un-export: the leader releases the withdrawn exports and keeps only the remaining exporter\'s endpoints', async () => {
    await members.west.cp.adminConfig().makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a', name: 'web',
    });
    await waitFor('west web exports gone (finalizers released)', async () => !(await getRE('west-team-a-web-service')) && !(await getRE('west-team-a-web-endpoints')), converge);
    const ri = await waitFor('endpoints import with east only', async () => {
      const r = await getRI('team-a-web-endpoints');
      return r?.spec?.endpoints?.subsets?.length === 1 ? r : undefined;
    }, converge);
    assert.ok(ri.spec?.endpoints?.subsets?.[0]?.addresses?.[0]?.ip);
    assert.ok(await getRI('team-a-web-service'), 'east still exports the Service');
  });

  it('a restarted leader rewrites nothing', async () => {
    await controller?.idle();
    await stopLeader();
    const before = leaderWrites().length;
    await startLeader();
    await controller?.idle();
    // Through two member beats and the status recompute after them.
    const until = Date.now() + 2 * INTERVAL_S * 1000;
    await waitFor('two beats to pass', () => Date.now() >= until, { timeoutMs: 10_000, intervalMs: 100 });
    await controller?.idle();
    assert.deepEqual(leaderWrites().slice(before), []);
  });

  it('liveness comes from touch-ts: a silent member turns Disconnected in time, and a restarted leader does not resurrect it', async () => {
    await members.west.agent?.stop();
    members.west.agent = undefined;
    const stoppedAt = Date.now();
    const cs = await waitFor('west Disconnected', async () => {
      const c = await leaderClusterSet();
      return memberReady(c, 'west')?.status === 'False' ? c : undefined;
    }, { timeoutMs: MEMBER_TIMEOUT_MS + 3 * INTERVAL_S * 1000, intervalMs: 100 });
    const took = Date.now() - stoppedAt;
    assert.ok(took <= MEMBER_TIMEOUT_MS + INTERVAL_S * 1000 + 500, `Disconnected after ${String(took)} ms (bound: timeout + one interval)`);
    assert.equal(memberReady(cs, 'west')?.reason, 'Disconnected');
    assert.match(memberReady(cs, 'west')?.message ?? '', /^No MemberClusterAnnounce update after \d{4}-/);
    assert.equal(cs.status?.readyClusters, 1);
    assert.equal(cs.status?.conditions?.[0]?.status, 'False');
    assert.equal(cs.status?.conditions?.[0]?.reason, 'NoReadyCluster');

    await stopLeader();
    await startLeader();
    const until = Date.now() + 2 * INTERVAL_S * 1000;
    await waitFor('west to stay Disconnected after the restart', async () => {
      const status = memberReady(await leaderClusterSet(), 'west')?.status;
      assert.equal(status, 'False', 'a restarted leader must not count a dead member as connected');
      return Date.now() >= until;
    }, { timeoutMs: 10_000, intervalMs: 100 });
    const east = memberReady(await leaderClusterSet(), 'east');
    assert.equal(east?.status, 'True');
    assert.equal(east.lastTransitionTime, eastReadySince, 'the live member never left Ready, across both restarts');
  });

  it('announce admission: identity, name, immutable IDs and non-ServiceAccount callers are denied with clear messages', async () => {
    const west = tokenConfig(leader, members.west.token).makeApiClient(CustomObjectsApi);
    const body = (name: string, clusterID: string, extra: Record<string, unknown> = {}) => ({
      apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind, metadata: { name, annotations: { 'touch-ts': new Date().toISOString() } },
      clusterID, clusterSetID: CLUSTERSET_ID, leaderClusterID: 'leader', ...extra,
    });
    const denied = async (call: () => Promise<unknown>, pattern: RegExp) => {
      await assert.rejects(call, (err: { code?: number; body?: unknown }) => {
        assert.equal(err.code, 403);
        const text = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
        assert.match((JSON.parse(text) as { message?: string }).message ?? text, pattern);
        return true;
      });
    };
    await denied(() => west.createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: body('member-announce-from-east', 'east'), dryRun: 'All' }),
      /ClusterID "east" is not permitted for ServiceAccount "member-west" \(expected multicluster.antrea.io\/cluster-id annotation to match, it is "west"\)/);
    await denied(() => west.createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: body('renamed', 'west'), dryRun: 'All' }),
      /the name "renamed" must be "member-announce-from-west"/);
    await denied(() => west.createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: body('member-announce-from-west', 'west', { clusterSetID: 'other' }), dryRun: 'All' }),
      /Unknown ClusterSet ID "other"|already exists/);
    const current = (await leaderCustom().getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-west' })) as MemberClusterAnnounce;
    await denied(() => west.replaceNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-west', body: { ...current, leaderClusterID: 'elsewhere' }, dryRun: 'All' }),
      /clusterID, clusterSetID and leaderClusterID are immutable \(west\/test-clusterset\/leader -> west\/test-clusterset\/elsewhere\)/);
    await denied(() => leaderCustom().createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: body('member-announce-from-admin', 'admin'), dryRun: 'All' }),
      /may not create MemberClusterAnnounces: only ServiceAccounts of namespace antrea-multicluster \(members\) may/);
  });

  it('a member whose token carries another cluster ID is refused, and its ClusterSet says AdmissionDenied', async () => {
    const liar = await createMemberAccess(leader, 'liar', { serviceAccount: 'member-liar' });
    await writeLeaderSecret(members.west.cp, 'leader-token', { caPem: leader.caPem, token: liar.token });
    await startMember(members.west);
    const cs = await waitForReady(members.west.cp, CLUSTERSET_ID, 'False', 'AdmissionDenied', 30_000);
    assert.match(JSON.stringify(cs.status), /ClusterID \\"west\\" is not permitted for ServiceAccount \\"member-liar\\"/);
    await writeLeaderSecret(members.west.cp, 'leader-token', { caPem: leader.caPem, token: members.west.token });
    await waitForReady(members.west.cp, CLUSTERSET_ID, 'True', 'Connected', 30_000);
    await waitFor('west Ready again on the leader', async () => memberReady(await leaderClusterSet(), 'west')?.status === 'True', converge);
  });

  it('a second member cluster with east\'s cluster ID: DuplicateClusterID, 0 writes to east\'s announce and exports, reported by the leader; it takes over once east stops', async () => {
    const east = members.east;
    const kubeSystemUid = async (cp: ControlPlane) => (await cp.adminConfig().makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' })).metadata?.uid ?? assert.fail('kube-system uid');
    const eastUid = await kubeSystemUid(east.cp);
    const eastAnnounce = async () => (await leaderCustom().getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-east' })) as MemberClusterAnnounce;
    const duplicateCondition = async () => (await leaderClusterSet()).status?.conditions?.find((c) => c.type === 'DuplicateClusterID');
    const duplicateMetric = async () => sampleValue(parseMetrics(await leaderMetrics.metrics()), 'clusterset_agent_leader_duplicate_cluster_ids', { clusterset: CLUSTERSET_ID });
    const eastExports = ((await leaderCustom().listNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), labelSelector: 'sourceClusterID=east' })) as { items: ResourceExport[] }).items
      .map((re) => re.metadata?.name ?? '').sort();
    assert.ok(eastExports.length >= 2, `east exports (${eastExports.join(', ')})`);
    await waitFor('east\'s announce stamped with its identity', async () => (await eastAnnounce()).metadata?.annotations?.['multicluster.clusterset-agent.io/cluster-uid'] === eastUid, converge);

    // Another cluster, configured with cluster ID east and a copy of east's credentials (the same ServiceAccount).
    const cp = await startControlPlane('east-twin');
    await installCrds(cp);
    await createNamespace(cp.adminConfig(), AGENT_NS);
    const token = await issueToken(leader.adminConfig(), LEADER_NS, 'member-east');
    const twinCredential = `JTI=${tokenId(token)}`;
    await writeLeaderSecret(cp, 'leader-token', { caPem: leader.caPem, token });
    await createClusterSet(cp, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
    const twinUid = await kubeSystemUid(cp);
    const joined: Member = { id: 'east', cp, agent: undefined, log: capturedLogger(), token };
    twin = joined;
    await startMember(joined);
    const refused = await waitForReady(cp, CLUSTERSET_ID, 'False', 'DuplicateClusterID', 30_000);
    const message = refused.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    assert.match(message, new RegExp(`held by cluster ${eastUid} \\(its heartbeats are live\\), this cluster is ${twinUid}\\. This cluster writes nothing to the leader`));
    const reported = await waitFor('the leader reports the duplicate', duplicateCondition, converge);
    assert.equal(reported.status, 'True');
    assert.equal(reported.message, `cluster ID east is used by 2 member clusters: ${eastUid} holds its announce; ${twinUid} reported DuplicateClusterID and writes nothing to the leader. Give each member cluster its own cluster ID`);
    assert.equal(await duplicateMetric(), 1);
    assert.match(leaderLog.text(), /two member clusters use one cluster ID/);

    // Through three more of the twin's beats: east stays the holder, Ready, with all its exports.
    const until = Date.now() + 3 * INTERVAL_S * 1000;
    await waitFor('three beats to pass', () => Date.now() >= until, { timeoutMs: 10_000, intervalMs: 100 });
    await waitForReady(east.cp, CLUSTERSET_ID, 'True', 'Connected', 1_000);
    assert.equal(memberReady(await leaderClusterSet(), 'east')?.status, 'True');
    assert.equal((await eastAnnounce()).metadata?.annotations?.['multicluster.clusterset-agent.io/cluster-uid'], eastUid);
    for (const name of eastExports) assert.ok(await getRE(name), `${name} kept`);
    const twinRequests = readAuditEvents(leader.auditLogPath, (e) => credentialOf(e) === twinCredential);
    assert.ok(twinRequests.length > 0, 'the audit log names the twin\'s credential (user.extra credential-id)');
    const writes = twinRequests.filter((e) => ['create', 'update', 'patch', 'delete', 'deletecollection'].includes(e.verb)).map((e) => `${e.verb} ${e.objectRef?.resource ?? ''}`);
    assert.deepEqual(writes, ['create events'], 'the twin wrote one Event and nothing else: no announce write, no export write or delete');
    assert.ok(twinRequests.filter((e) => e.verb === 'get' && e.objectRef?.resource === 'memberclusterannounces').length >= 3, 'a GET of the announce per beat');

    // East stops: one takeover window (3 beats) after its last beat the twin holds the ID.
    await east.agent?.stop();
    east.agent = undefined;
    const stoppedAt = Date.now();
    await waitForReady(cp, CLUSTERSET_ID, 'True', 'Connected', 30_000);
    const took = Date.now() - stoppedAt;
    assert.ok(took >= 2 * INTERVAL_S * 1000 && took <= 5 * INTERVAL_S * 1000 + 2_000, `took over after ${String(took)} ms (window ${String(3 * INTERVAL_S)} s after east's last beat)`);
    assert.equal((await eastAnnounce()).metadata?.annotations?.['multicluster.clusterset-agent.io/cluster-uid'], twinUid);
    await waitFor('the leader\'s report cleared (the reporter holds the ID now)', async () => (await duplicateCondition()) === undefined, converge);
    assert.equal(await duplicateMetric(), 0);

    // Back as it was: the twin goes, east takes the ID back after the window and exports again.
    await joined.agent?.stop();
    joined.agent = undefined;
    await startMember(east);
    await waitForReady(east.cp, CLUSTERSET_ID, 'True', 'Connected', 30_000);
    await waitFor('east\'s exports back', async () => (await Promise.all(eastExports.map((n) => getRE(n)))).every((re) => re !== undefined), converge);
    await waitFor('east Ready again on the leader', async () => memberReady(await leaderClusterSet(), 'east')?.status === 'True', converge);
    await cp.stop();
    twin = undefined;
  });

  it('a member that leaves takes its exports with it, and the other member un-imports them', async () => {
    await clusterSetApi(members.east.cp.adminConfig()).delete(CLUSTERSET_ID);
    await waitFor('east announce gone (leader finalizer released)', () => announceGone('member-announce-from-east'), converge);
    await waitFor('east exports and their imports gone', async () =>
      !(await getRE('east-team-a-web-service')) && !(await getRI('team-a-web-service')) && !(await getRI('team-a-web-endpoints')), converge);
    await waitFor('antrea-mc-web gone from west', async () =>
      (await maybe(() => members.west.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: 'team-a', name: 'antrea-mc-web' }))) === undefined, converge);
    const cs = await waitFor('leader ClusterSet with west only', async () => {
      const c = await leaderClusterSet();
      return c.status?.totalClusters === 1 ? c : undefined;
    }, converge);
    assert.deepEqual(cs.status?.clusterStatuses?.map((s) => s.clusterID), ['west']);
    assert.ok(eastReadySince !== '', 'east was seen Ready');
  });

  it('a member silent for longer than the stale period loses its announce and exports, and the imports they fed', async () => {
    // With east gone, west is the only (so the first) exporter of api: its ports are imported now.
    await waitFor('api imported with west\'s ports', async () => (await getRI('team-a-api-service'))?.spec?.serviceImport?.spec?.ports?.[0]?.port === 81, converge);
    await members.west.agent?.stop();
    members.west.agent = undefined;
    await stopLeader();
    const staleMs = MEMBER_TIMEOUT_MS + 2_000;
    await startLeader(staleMs);
    await waitFor('west announce reaped', () => announceGone('member-announce-from-west'), { timeoutMs: staleMs + 10_000, intervalMs: 100 });
    await waitFor('west exports and the api imports gone', async () =>
      !(await getRE('west-team-a-api-service')) && !(await getRI('team-a-api-service')) && !(await getRI('team-a-api-endpoints')), converge);
    const cs = await waitFor('no members left', async () => {
      const c = await leaderClusterSet();
      return c.status?.totalClusters === 0 ? c : undefined;
    }, converge);
    assert.equal(cs.status?.conditions?.[0]?.status, 'True', 'Ready with no members, as Antrea');
    assert.match(leaderLog.text(), /stale member removed/);
  });
});
