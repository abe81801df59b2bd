// `clusterset-agent leave --leader` on real control planes (issue 30 item 4): two leaders running
// this project's leader controller, east joined to both with `join` (the second join adds a
// leader), west listing both and exporting a Service east imports. `leave --leader leader-a`
// takes only leader-a out: east's ClusterSet keeps leader-b and stays Ready with the import
// untouched, nothing of east's on leader-b changes, and east's announce, exports and access on
// leader-a are gone, as is the Secret join made for leader-a.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { CLUSTERSET, MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, type ClusterSet } from '../../src/common/api/antrea.js';
import { SERVICE_IMPORT } from '../../src/common/api/mcs.js';
import { MEMBER_TOKEN_LABEL } from '../../src/common/api/names.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { LeaderController } from '../../src/leader/controller.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { MEMBER_ROLE_NAME } from '../../src/leader/decisions/member-role.js';
import { agentConfig, prepareMemberOfLeaders } from '../harness/agents.js';
import { runCli } from '../harness/cli.js';
import { AGENT_NS, ANTREA_MEMBER_ROLE_RULES, capturedLogger, CLUSTERSET_ID, clusterSetApi, installCrds, LEADER_NS, setupLeader } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { exportService } from '../harness/service-export.js';
import { waitFor } from '../harness/wait.js';

const LEADERS = ['leader-a', 'leader-b'] as const;
type LeaderID = typeof LEADERS[number];
const converge = { timeoutMs: 60_000, intervalMs: 200 };

const condition = (cs: ClusterSet, type: string) => cs.status?.conditions?.find((c) => c.type === type);
type Meta = { metadata?: { name?: string; uid?: string; resourceVersion?: string; generation?: number } };
const versions = (kind: string, items: readonly Meta[]) => items.map((o) => [`${kind}/${o.metadata?.name ?? ''}`, `${o.metadata?.uid ?? ''}@${o.metadata?.resourceVersion ?? ''}`] as const);

describe('leave --leader: one leader of two taken out, the other untouched', () => {
  const leaders: Partial<Record<LeaderID, ControlPlane>> = {};
  let east: ControlPlane | undefined;
  let west: ControlPlane | undefined;
  const controllers: LeaderController[] = [];
  const agents: Agent[] = [];
  const logs = { 'leader-a': capturedLogger(), 'leader-b': capturedLogger(), east: capturedLogger(), west: capturedLogger() };
  const leader = (id: LeaderID): ControlPlane => leaders[id] ?? assert.fail(`leader ${id} not started`);
  const eastCp = (): ControlPlane => east ?? assert.fail('east not started');
  const sides = (l: LeaderID) => ['--leader-kubeconfig', leader(l).kubeconfigPath, '--member-kubeconfig', eastCp().kubeconfigPath];
  const custom = (cp: ControlPlane) => cp.adminConfig().makeApiClient(CustomObjectsApi);
  const crs = async (cp: ControlPlane, d: { group: string; version: string; plural: string }, namespace: string, labelSelector?: string) =>
    ((await custom(cp).listNamespacedCustomObject({ group: d.group, version: d.version, plural: d.plural, namespace, ...(labelSelector !== undefined && { labelSelector }) })) as { items: (Meta & { clusterID?: string })[] }).items;

  /** What east has on a leader: its access (uid@resourceVersion), the leader ClusterSet (uid@generation), its announce and its exports (uid: heartbeats rewrite the announce). */
  async function eastOn(l: LeaderID): Promise<Record<string, string>> {
    const kc = leader(l).adminConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const found = (await core.listNamespacedServiceAccount({ namespace: LEADER_NS })).items.filter((s) => s.metadata?.name === 'member-east');
    const bindings = (await kc.makeApiClient(RbacAuthorizationV1Api).listNamespacedRoleBinding({ namespace: LEADER_NS })).items.filter((b) => b.metadata?.name === 'member-east');
    const announces = (await crs(leader(l), MEMBER_CLUSTER_ANNOUNCE, LEADER_NS)).filter((a) => a.clusterID === 'east');
    return Object.fromEntries([
      ...versions('ServiceAccount', found),
      ...versions('RoleBinding', bindings),
      ...versions('Secret', (await core.listNamespacedSecret({ namespace: LEADER_NS, labelSelector: `${MEMBER_TOKEN_LABEL}=east` })).items),
      // The leader's own controller writes its ClusterSet's status: uid@generation (spec and metadata untouched by leave).
      ...(await crs(leader(l), CLUSTERSET, LEADER_NS)).map((c) => [`ClusterSet/${c.metadata?.name ?? ''}`, `${c.metadata?.uid ?? ''}@${String(c.metadata?.generation ?? '')}`] as const),
      ...announces.map((a) => [`MemberClusterAnnounce/${a.metadata?.name ?? ''}`, a.metadata?.uid ?? ''] as const),
      ...(await crs(leader(l), RESOURCE_EXPORT, LEADER_NS, 'sourceClusterID=east')).map((re) => [`ResourceExport/${re.metadata?.name ?? ''}`, re.metadata?.uid ?? ''] as const),
    ]);
  }
  /** uid@resourceVersion of every object east imported: any write or delete changes it. */
  async function imported(): Promise<Record<string, string>> {
    const kc = eastCp().adminConfig();
    const selector = { namespace: 'team-a', labelSelector: 'app.kubernetes.io/managed-by=clusterset-agent' };
    return Object.fromEntries([
      ...versions('Service', (await kc.makeApiClient(CoreV1Api).listNamespacedService(selector)).items),
      ...versions('EndpointSlice', (await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice(selector)).items),
      ...versions('ServiceImport', await crs(eastCp(), SERVICE_IMPORT, 'team-a', selector.labelSelector)),
    ]);
  }

  before(async () => {
    const started = await Promise.all([...LEADERS, 'east', 'west'].map((id) => startControlPlane(id)));
    for (const cp of started) {
      if (cp.name === 'east') east = cp;
      else if (cp.name === 'west') west = cp;
      else leaders[cp.name as LeaderID] = cp;
    }
    for (const id of LEADERS) {
      // As the chart in mode=leader leaves it: CRDs, namespace, ClusterSet, member Role; its controller.
      await setupLeader(leader(id), id);
      await leader(id).adminConfig().makeApiClient(RbacAuthorizationV1Api).createNamespacedRole({ namespace: LEADER_NS, body: { metadata: { name: MEMBER_ROLE_NAME }, rules: [...ANTREA_MEMBER_ROLE_RULES] } });
      const controller = new LeaderController({
        kubeConfig: leader(id).adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 30_000, staleMemberMs: 86_400_000,
        logger: logs[id].logger, metrics: new AgentMetrics({ defaultMetrics: false }),
      });
      controllers.push(controller);
      await controller.start();
    }
    const config = agentConfig({ heartbeat: { intervalSeconds: 2, requestTimeoutSeconds: 1 } });
    // west: both leaders by hand, exporting team-a/web.
    const w = west ?? assert.fail('west not started');
    await prepareMemberOfLeaders(w, 'west', LEADERS.map((l) => [l, leader(l)] as const), 'team-a');
    agents.push(await startAgent(config, logs.west.logger, w.adminConfig()));
    await exportService(w.adminConfig(), 'team-a', 'web', {
      spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] },
      endpoints: { addresses: ['10.244.1.5'], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
    });
    // east: the chart's CRDs and namespace, the agent running; join does the rest.
    await installCrds(eastCp());
    for (const ns of [AGENT_NS, 'team-a']) await createNamespace(eastCp().adminConfig(), ns);
    agents.push(await startAgent(config, logs.east.logger, eastCp().adminConfig()));
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await Promise.all(controllers.map((c) => c.stop()));
    await Promise.all([...Object.values(leaders), east, west].map(async (cp) => { await cp?.stop(); }));
  });
  onFailureShowLogs(() => [...Object.values(leaders), east, west], () => Object.entries(logs).map(([id, l]) => `--- ${id} log ---\n${l.text()}`).join('\n'));

  it('join twice adds the second leader; east imports from both', async () => {
    for (const l of LEADERS) {
      const joined = await runCli('join', [...sides(l), '--cluster-id', 'east', '--clusterset', CLUSTERSET_ID, '--leader-server', leader(l).server, '--secret-name', `${l}-token`, '--wait', '60']);
      assert.equal(joined.code, 0, joined.stderr);
    }
    const cs = await waitFor('east connected to both leaders', async () => {
      const got = await clusterSetApi(eastCp().adminConfig()).get(CLUSTERSET_ID);
      return got.status?.leaders === '2/2' ? got : undefined;
    }, converge);
    assert.deepEqual(cs.spec?.leaders.map((l) => l.clusterID), ['leader-a', 'leader-b']);
    await waitFor('east imports team-a/web', async () => Object.keys(await imported()).length === 3, converge);
  });

  it('leave without --leader, or with one not listed, is a usage error naming the leaders; --dry-run writes nothing', async () => {
    const none = await runCli('leave', [...sides('leader-a'), '--clusterset', CLUSTERSET_ID]);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /lists 2 leaders \(leader-a, leader-b\): pass --leader <id>/);
    const unknown = await runCli('leave', [...sides('leader-a'), '--clusterset', CLUSTERSET_ID, '--leader', 'leader-c']);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /lists no leader "leader-c"; its leaders: leader-a, leader-b/);
    // leader-b named with leader-a's context: refused before anything is deleted.
    const wrong = await runCli('leave', [...sides('leader-a'), '--clusterset', CLUSTERSET_ID, '--leader', 'leader-b']);
    assert.equal(wrong.code, 4, wrong.stderr);
    const before = await eastOn('leader-a');
    const dry = await runCli('leave', [...sides('leader-a'), '--clusterset', CLUSTERSET_ID, '--leader', 'leader-a', '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /member: remove leader leader-a from spec\.leaders of ClusterSet clusterset-agent\/test-clusterset/);
    assert.match(dry.stdout, /member: delete Secret clusterset-agent\/leader-a-token/);
    assert.match(dry.stdout, /leader: delete ServiceAccount antrea-multicluster\/member-east/);
    assert.deepEqual(Object.keys(await eastOn('leader-a')).sort(), Object.keys(before).sort());
    assert.deepEqual((await clusterSetApi(eastCp().adminConfig()).get(CLUSTERSET_ID)).spec?.leaders.map((l) => l.clusterID), ['leader-a', 'leader-b']);
  });

  it('leave --leader leader-a: leader-b untouched and the ClusterSet Ready with its imports; east gone from leader-a', async () => {
    const onB = await eastOn('leader-b');
    assert.ok(Object.keys(onB).some((k) => k.startsWith('MemberClusterAnnounce/')), JSON.stringify(onB));
    assert.ok(Object.keys(onB).some((k) => k.startsWith('ServiceAccount/')), JSON.stringify(onB));
    const importedBefore = await imported();
    const left = await runCli('leave', [...sides('leader-a'), '--clusterset', CLUSTERSET_ID, '--leader', 'leader-a', '--wait', '60']);
    assert.equal(left.code, 0, left.stderr);
    assert.match(left.stdout, /left leader leader-a of ClusterSet test-clusterset \(its leaders now: leader-b\)/);

    const cs = await clusterSetApi(eastCp().adminConfig()).get(CLUSTERSET_ID);
    assert.deepEqual(cs.spec?.leaders.map((l) => l.clusterID), ['leader-b']);
    assert.equal(condition(cs, 'Ready')?.status, 'True', JSON.stringify(cs.status));
    assert.deepEqual(cs.status?.clusterStatuses?.map((s) => s.clusterID), ['leader-b']);
    // Nothing join or leave wrote names leader-a any more.
    assert.doesNotMatch(JSON.stringify(cs.metadata?.annotations ?? {}), /leader-a/);
    const eastSecrets = (await eastCp().adminConfig().makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: AGENT_NS })).items.map((s) => s.metadata?.name);
    assert.ok(!eastSecrets.includes('leader-a-token') && eastSecrets.includes('leader-b-token'), eastSecrets.join(', '));
    // leader-a: east's announce, exports and access gone; its own ClusterSet stays.
    assert.deepEqual(Object.keys(await eastOn('leader-a')), ['ClusterSet/test-clusterset']);
    // leader-b: every object of east's as it was (uid and resourceVersion; the announce by uid).
    assert.deepEqual(await eastOn('leader-b'), onB);
    // The import, now held by leader-b alone, neither rewritten nor removed; and the ClusterSet stays Ready.
    await agents[1]?.imports.importerFor(CLUSTERSET_ID, 'leader-b')?.onIdle();
    assert.deepEqual(await imported(), importedBefore);
    assert.ok(await maybe(() => custom(eastCp()).getNamespacedCustomObject({ group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespace: 'team-a', name: 'web' })));

    // The last leader's leave is the whole leave: the ClusterSet goes.
    const last = await runCli('leave', [...sides('leader-b'), '--clusterset', CLUSTERSET_ID, '--leader', 'leader-b', '--wait', '60']);
    assert.equal(last.code, 0, last.stderr);
    assert.match(last.stdout, /^left ClusterSet test-clusterset:/);
    assert.deepEqual(Object.keys(await eastOn('leader-b')), ['ClusterSet/test-clusterset']);
  });
});
