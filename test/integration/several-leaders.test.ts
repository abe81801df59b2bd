// Several leader clusters in one ClusterSet (issue 30), on real control planes: two leaders
// running this project's leader controller and two members (east exports, west imports)
// whose ClusterSet lists both. Each member announces itself and exports to both leaders;
// with one leader cluster stopped entirely (kube-apiserver and etcd), both members stay Ready
// with AllLeadersConnected=False naming it, and an export created during the outage is
// imported through the other leader; the imports held by both leaders are neither written
// nor deleted (the lost leader's retention, short here, passes and removes nothing).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { SERVICE_EXPORT, SERVICE_IMPORT } from '../../src/common/api/mcs.js';
import { CLUSTERSET, MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, type ClusterSet, type ResourceExportList } from '../../src/common/api/antrea.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/common/config/config.js';
import { LeaderController } from '../../src/leader/controller.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createMemberAccess, installCrds, LEADER_NS, setupLeader, writeLeaderSecret } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import { createNamespace, kubectl } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const INTERVAL_S = 2;
/** Short, so that the lost leader's retention passes during the test. */
const RETENTION_S = 3;
/** Exports created during the outage, each timed from the ServiceExport to the import in west. */
const FAILOVER_EXPORTS = 20;
const converge = { timeoutMs: 30_000, intervalMs: 200 };
const LEADERS = ['leader-a', 'leader-b'] as const;
const MEMBERS = ['east', 'west'] as const;
type LeaderID = typeof LEADERS[number];
type MemberID = typeof MEMBERS[number];

function condition(cs: ClusterSet, type: string) {
  return cs.status?.conditions?.find((c) => c.type === type);
}

describe('several leaders per ClusterSet: each live, one lost without the member noticing more than a degraded condition', () => {
  const leaders: Partial<Record<LeaderID, ControlPlane>> = {};
  const members: Partial<Record<MemberID, ControlPlane>> = {};
  const controllers: Partial<Record<LeaderID, LeaderController>> = {};
  const agents: Partial<Record<MemberID, Agent>> = {};
  const logs = { 'leader-a': capturedLogger(), 'leader-b': capturedLogger(), east: capturedLogger(), west: capturedLogger() };
  const member = (id: MemberID): ControlPlane => members[id] ?? assert.fail(`member ${id} not started`);
  const leader = (id: LeaderID): ControlPlane => leaders[id] ?? assert.fail(`leader ${id} not started`);

  const exportService = async (name: string, port: number, ip: string) => {
    const kc = member('east').adminConfig();
    await kc.makeApiClient(CoreV1Api).createNamespacedService({ namespace: 'team-a', body: { metadata: { name }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port, protocol: 'TCP', targetPort: 8080 }] } } });
    await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace: 'team-a',
      body: {
        metadata: { name: `${name}-abc`, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4',
        endpoints: [{ addresses: [ip], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    });
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a',
      body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name } },
    });
  };
  /** uid and resourceVersion of every object west imported: any write or delete changes it. */
  const importedObjects = async (): Promise<Record<string, string>> => {
    const kc = member('west').adminConfig();
    const selector = { labelSelector: 'app.kubernetes.io/managed-by=clusterset-agent' };
    type Meta = { metadata?: { name?: string; uid?: string; resourceVersion?: string } };
    const tagged = (kind: string, items: readonly Meta[]) => items.map((o) => [`${kind}/${o.metadata?.name ?? ''}`, `${o.metadata?.uid ?? ''}@${o.metadata?.resourceVersion ?? ''}`] as const);
    return Object.fromEntries([
      ...tagged('Service', (await kc.makeApiClient(CoreV1Api).listNamespacedService({ namespace: 'team-a', ...selector })).items),
      ...tagged('Endpoints', (await kc.makeApiClient(CoreV1Api).listNamespacedEndpoints({ namespace: 'team-a', ...selector })).items),
      ...tagged('EndpointSlice', (await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: 'team-a', ...selector })).items),
      ...tagged('ServiceImport', ((await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespace: 'team-a', ...selector,
      })) as { items: Meta[] }).items),
    ]);
  };
  const conflictEvents = async () => (await member('west').adminConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: AGENT_NS })).items
    .filter((e) => e.reason === 'ImportConflict' || e.reason === 'ImportSourcesDiffer').map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
  const importedServiceImport = (name: string) => maybe(() => member('west').adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespace: 'team-a', name,
  }));

  before(async () => {
    const started = await Promise.all([...LEADERS, ...MEMBERS].map((id) => startControlPlane(id)));
    for (const cp of started) {
      if ((LEADERS as readonly string[]).includes(cp.name)) leaders[cp.name as LeaderID] = cp;
      else members[cp.name as MemberID] = cp;
    }
    for (const id of LEADERS) {
      await setupLeader(leader(id), id);
      const controller = new LeaderController({
        kubeConfig: leader(id).adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 3 * INTERVAL_S * 1000, staleMemberMs: 86_400_000,
        logger: logs[id].logger, metrics: new AgentMetrics({ defaultMetrics: false }),
      });
      controllers[id] = controller;
      await controller.start();
    }
    for (const id of MEMBERS) {
      const cp = member(id);
      await installCrds(cp);
      for (const ns of [AGENT_NS, 'team-a']) await createNamespace(cp.adminConfig(), ns);
      for (const l of LEADERS) {
        const access = await createMemberAccess(leader(l), id);
        await writeLeaderSecret(cp, `${l}-token`, { caPem: leader(l).caPem, token: access.token });
      }
      await cp.adminConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS,
        body: {
          apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: CLUSTERSET_ID },
          spec: { clusterID: id, namespace: LEADER_NS, leaders: LEADERS.map((l) => ({ clusterID: l, server: leader(l).server, secret: `${l}-token` })) },
        },
      });
      const config = loadConfig({ env: {}, readFile: () => '' });
      agents[id] = await startAgent({
        ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: INTERVAL_S, requestTimeoutSeconds: 1 },
        imports: { ...config.imports, lostLeaderRetentionSeconds: RETENTION_S },
      }, logs[id].logger, cp.adminConfig());
    }
  });
  after(async () => {
    await Promise.all(Object.values(agents).map((a) => a.stop()));
    await Promise.all(Object.values(controllers).map((c) => c.stop()));
    await Promise.all([...Object.values(leaders), ...Object.values(members)].map((cp) => cp.stop()));
  });
  onFailureShowLogs(() => [...Object.values(leaders), ...Object.values(members)], () =>
    Object.entries(logs).map(([id, l]) => `--- ${id} log ---\n${l.text()}`).join('\n'));

  it('each member announces itself to both leaders and shows both in its status: Ready, AllLeadersConnected, 2/2', async () => {
    for (const id of MEMBERS) {
      const cs = await waitFor(`${id}: both leaders connected`, async () => {
        const got = await clusterSetApi(member(id).adminConfig()).get(CLUSTERSET_ID);
        return condition(got, 'AllLeadersConnected')?.status === 'True' ? got : undefined;
      }, converge);
      assert.equal(condition(cs, 'Ready')?.status, 'True');
      assert.equal(cs.status?.leaders, '2/2');
      assert.deepEqual(cs.status?.clusterStatuses?.map((s) => [s.clusterID, s.conditions?.find((c) => c.type === 'Ready')?.status]), [['leader-a', 'True'], ['leader-b', 'True']]);
    }
    const [header, row] = (await kubectl(member('west'), ['get', 'clustersets', '-n', AGENT_NS, '-o', 'wide'])).trim().split('\n');
    assert.match(header ?? '', /\sLEADER\s+LEADERS\s+READY\s/);
    assert.match(row ?? '', /\sleader-a\s+2\/2\s+True\s/);
    for (const l of LEADERS) {
      const announces = (await leader(l).adminConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS,
      })) as { items: { clusterID?: string; leaderClusterID?: string }[] };
      assert.deepEqual(announces.items.map((a) => [a.clusterID, a.leaderClusterID]).sort(), [['east', l], ['west', l]]);
    }
  });

  it('an export goes to both leaders, and is imported once in the other member', async () => {
    await exportService('api', 80, '10.244.1.5');
    for (const l of LEADERS) {
      await waitFor(`east's api exports on ${l}`, async () => {
        const list = (await leader(l).adminConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
          group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS,
        })) as ResourceExportList;
        const names = list.items.map((re) => re.metadata?.name).sort();
        return names.includes('east-team-a-api-service') && names.includes('east-team-a-api-endpoints');
      }, converge);
    }
    await waitFor('west imports team-a/api', () => importedServiceImport('api'), converge);
    // Both leaders hold it: one set of objects, from leader-a (first in spec.leaders), and no conflict between them.
    const imported = await waitFor('west imports api whole (Service, ServiceImport, Endpoints, EndpointSlice)', async () => {
      const found = await importedObjects();
      if (Object.keys(found).length !== 4) throw new Error(`imported: ${Object.keys(found).join(', ')}`);
      return found;
    }, converge);
    assert.deepEqual(Object.keys(imported).sort(), ['EndpointSlice/antrea-mc-api.east.ipv4', 'Endpoints/antrea-mc-api', 'Service/antrea-mc-api', 'ServiceImport/api']);
    // leader-a, listed first, is the source once it holds the import (whichever leader wrote the
    // objects first: taking them over with the same content writes nothing, so their leader
    // label names the one that wrote them).
    await waitFor('leader-a the source of api', () => {
      const a = agents.west?.imports.importerFor(CLUSTERSET_ID, 'leader-a')?.counts().total;
      const b = agents.west?.imports.importerFor(CLUSTERSET_ID, 'leader-b')?.counts().total;
      if (a !== 4 || b !== 0) throw new Error(`objects sourced by leader-a: ${String(a)}, by leader-b: ${String(b)}`);
      return true;
    }, converge);
    assert.deepEqual(await conflictEvents(), []);
  });

  it('one leader cluster stopped entirely: the members stay Ready, say which leader is missing, and import a new export through the other', async () => {
    const before = await importedObjects();
    await controllers['leader-a']?.stop();
    delete controllers['leader-a'];
    await leader('leader-a').stop();
    delete leaders['leader-a'];
    for (const id of MEMBERS) {
      const cs = await waitFor(`${id}: leader-a missing`, async () => {
        const got = await clusterSetApi(member(id).adminConfig()).get(CLUSTERSET_ID);
        return condition(got, 'AllLeadersConnected')?.status === 'False' ? got : undefined;
      }, converge);
      assert.equal(condition(cs, 'Ready')?.status, 'True', `${id} stays Ready: ${JSON.stringify(cs.status)}`);
      assert.match(condition(cs, 'AllLeadersConnected')?.message ?? '', /1\/2 leaders connected; not connected: leader-a/);
      assert.equal(cs.status?.leaders, '1/2');
    }
    // Exports made during the outage, one after the other: each imported in west through leader-b.
    const latencies: number[] = [];
    for (let i = 0; i < FAILOVER_EXPORTS; i += 1) {
      const exported = Date.now();
      await exportService(`web-${String(i)}`, 8081, `10.244.2.${String(i + 1)}`);
      await waitFor(`west imports team-a/web-${String(i)} through leader-b`, () => importedServiceImport(`web-${String(i)}`), { timeoutMs: converge.timeoutMs, intervalMs: 20 });
      latencies.push(Date.now() - exported);
    }
    const sorted = [...latencies].sort((x, y) => x - y);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
    process.stderr.write(`# failover: export -> import through leader-b, ${String(sorted.length)} exports: p50 ${String(at(0.5))} ms, p99 ${String(at(0.99))} ms, max ${String(at(1))} ms\n`);
    // leader-a's retention passes: what leader-b holds stays, untouched.
    await waitFor('leader-a\'s retention over', () => logs.west.lines.some((l) => l.includes('"removing imports') && l.includes('"leader":"leader-a"')), converge);
    await agents.west?.imports.importerFor(CLUSTERSET_ID, 'leader-b')?.onIdle();
    const after = await importedObjects();
    for (const [name, version] of Object.entries(before)) assert.equal(after[name], version, `${name} neither written nor deleted`);
    assert.deepEqual(await conflictEvents(), []);
  });
});
