// Several leader clusters in one ClusterSet (issue 30), on real control planes: two leaders
// running this project's leader controller and three members (east exports; every member,
// east included, imports) whose ClusterSet lists both. Each member announces itself and
// exports to both leaders. Then one leader cluster is lost entirely (kube-apiserver and etcd
// killed, data kept) for an outage window: the members stay Ready with
// AllLeadersConnected=False naming it, write nothing to the imports they held before (their
// audit logs), and import every export created during the outage through the other leader
// (export -> import timed in every member). The lost cluster comes back (same etcd data, same
// address, a new leader controller): the members reconnect and converge with no write to any
// unchanged import. The window is CSA_OUTAGE_SECONDS (30 s here; `npm run soak:leader-outage`
// runs 300 s).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { SERVICE_IMPORT } from '../../src/common/api/mcs.js';
import { MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, type ClusterSet, type ResourceExportList } from '../../src/common/api/antrea.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { LeaderController } from '../../src/leader/controller.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { readAuditEvents } from '../harness/agent-process.js';
import { agentConfig, prepareMemberOfLeaders } from '../harness/agents.js';
import { AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, LEADER_NS, setupLeader } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import { kubectl } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { exportService as exportServiceFrom } from '../harness/service-export.js';
import { waitFor } from '../harness/wait.js';

const INTERVAL_S = 2;
/** Short, so that the lost leader's retention passes during the outage. */
const RETENTION_S = 3;
/** Exports created during the outage, each timed from the ServiceExport to the import in every member. */
const FAILOVER_EXPORTS = 20;
/** How long leader-a's cluster stays down, at least (longer when the exports take longer). */
const OUTAGE_S = Number(process.env['CSA_OUTAGE_SECONDS'] ?? '30');
const converge = { timeoutMs: 30_000, intervalMs: 200 };
const LEADERS = ['leader-a', 'leader-b'] as const;
const MEMBERS = ['east', 'west', 'north'] as const;
type LeaderID = typeof LEADERS[number];
type MemberID = typeof MEMBERS[number];
/** The kinds of object an import writes in a member, as the audit log names their resources. */
const IMPORT_RESOURCES: Readonly<Record<string, string>> = { Service: 'services', Endpoints: 'endpoints', EndpointSlice: 'endpointslices', ServiceImport: 'serviceimports' };
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

function condition(cs: ClusterSet, type: string) {
  return cs.status?.conditions?.find((c) => c.type === type);
}

/** p50, p99, max of `values` (nearest rank), in the unit given. */
function percentiles(values: readonly number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}

describe('several leaders per ClusterSet: each live, one lost without the member noticing more than a degraded condition', () => {
  const leaders: Partial<Record<LeaderID, ControlPlane>> = {};
  const members: Partial<Record<MemberID, ControlPlane>> = {};
  const controllers: Partial<Record<LeaderID, LeaderController>> = {};
  const agents: Partial<Record<MemberID, Agent>> = {};
  const logs = { 'leader-a': capturedLogger(), 'leader-b': capturedLogger(), east: capturedLogger(), west: capturedLogger(), north: capturedLogger() };
  const member = (id: MemberID): ControlPlane => members[id] ?? assert.fail(`member ${id} not started`);
  const leader = (id: LeaderID): ControlPlane => leaders[id] ?? assert.fail(`leader ${id} not started`);
  /** Every member's imported objects at the end of leader-a's outage. */
  const snapshots: { afterOutage?: Record<MemberID, Record<string, string>> } = {};

  const startLeaderController = async (id: LeaderID) => {
    const controller = new LeaderController({
      kubeConfig: leader(id).adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 3 * INTERVAL_S * 1000, staleMemberMs: 86_400_000,
      logger: logs[id].logger, metrics: new AgentMetrics({ defaultMetrics: false }),
    });
    controllers[id] = controller;
    await controller.start();
  };
  /** A Service with its EndpointSlice in east, then its ServiceExport: resolves with when the ServiceExport was sent (the export's start). */
  const exportService = async (name: string, port: number, ip: string): Promise<number> => (await exportServiceFrom(member('east').adminConfig(), 'team-a', name, {
    spec: { type: 'ClusterIP', ports: [{ name: 'http', port, protocol: 'TCP', targetPort: 8080 }] },
    endpoints: { addresses: [ip], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
  })).exportedAt;
  /** uid and resourceVersion of every object a member imported, by `Kind/name`: any write or delete changes it. */
  const importedObjects = async (id: MemberID): Promise<Record<string, string>> => {
    const kc = member(id).adminConfig();
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
  const everyMember = async (): Promise<Record<MemberID, Record<string, string>>> =>
    Object.fromEntries(await Promise.all(MEMBERS.map(async (id) => [id, await importedObjects(id)] as const))) as Record<MemberID, Record<string, string>>;
  /**
   * The agent's writes (create, update, patch, delete) to the kinds an import writes in team-a, from the
   * member's audit log, as `resource/name verb code`; only those to `objects` (`Kind/name` keys) when given.
   */
  const importWrites = (id: MemberID, from: string, to: string, objects?: Readonly<Record<string, string>>): string[] => {
    const named = objects && new Set(Object.keys(objects).map((key) => {
      const [kind = '', ...name] = key.split('/');
      return `${IMPORT_RESOURCES[kind] ?? kind}/${name.join('/')}`;
    }));
    return readAuditEvents(member(id).auditLogPath, (e) => e.userAgent === 'clusterset-agent' && WRITE_VERBS.has(e.verb)
      && Object.values(IMPORT_RESOURCES).includes(e.objectRef?.resource ?? '') && e.objectRef?.namespace === 'team-a'
      && e.requestReceivedTimestamp >= from && e.requestReceivedTimestamp < to
      && (named === undefined || named.has(`${e.objectRef.resource ?? ''}/${e.objectRef.name ?? ''}`)))
      .map((e) => `${e.objectRef?.resource ?? ''}/${e.objectRef?.name ?? ''} ${e.verb} ${String(e.responseStatus?.code)}`);
  };
  const conflictEvents = async (id: MemberID) => (await member(id).adminConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: AGENT_NS })).items
    .filter((e) => e.reason === 'ImportConflict' || e.reason === 'ImportSourcesDiffer').map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
  const importedServiceImport = (id: MemberID, name: string) => maybe(() => member(id).adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespace: 'team-a', name,
  }));
  /** The number of objects each leader's importer in member `id` is the source of. */
  const sourced = (id: MemberID) => Object.fromEntries(LEADERS.map((l) => [l, agents[id]?.imports.importerFor(CLUSTERSET_ID, l)?.counts().total]));

  before(async () => {
    const started = await Promise.all([...LEADERS.map((id) => startControlPlane(id)), ...MEMBERS.map((id) => startControlPlane(id, { auditLog: true }))]);
    for (const cp of started) {
      if ((LEADERS as readonly string[]).includes(cp.name)) leaders[cp.name as LeaderID] = cp;
      else members[cp.name as MemberID] = cp;
    }
    for (const id of LEADERS) {
      await setupLeader(leader(id), id);
      await startLeaderController(id);
    }
    for (const id of MEMBERS) {
      const cp = member(id);
      await prepareMemberOfLeaders(cp, id, LEADERS.map((l) => [l, leader(l)] as const), 'team-a');
      agents[id] = await startAgent(agentConfig({ heartbeat: { intervalSeconds: INTERVAL_S, requestTimeoutSeconds: 1 }, imports: { lostLeaderRetentionSeconds: RETENTION_S } }),
        logs[id].logger, cp.adminConfig());
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
      assert.deepEqual(announces.items.map((a) => [a.clusterID, a.leaderClusterID]).sort(), [['east', l], ['north', l], ['west', l]]);
    }
  });

  it('an export goes to both leaders, and is imported once in every member', async () => {
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
    for (const id of MEMBERS) {
      await waitFor(`${id} imports team-a/api`, () => importedServiceImport(id, 'api'), converge);
      // Both leaders hold it: one set of objects, from leader-a (first in spec.leaders), and no conflict between them.
      const imported = await waitFor(`${id} imports api whole (Service, ServiceImport, Endpoints, EndpointSlice)`, async () => {
        const found = await importedObjects(id);
        if (Object.keys(found).length !== 4) throw new Error(`imported: ${Object.keys(found).join(', ')}`);
        return found;
      }, converge);
      assert.deepEqual(Object.keys(imported).sort(), ['EndpointSlice/antrea-mc-api.east.ipv4', 'Endpoints/antrea-mc-api', 'Service/antrea-mc-api', 'ServiceImport/api']);
      // leader-a, listed first, is the source once it holds the import (whichever leader wrote the
      // objects first: taking them over with the same content writes nothing, so their leader
      // label names the one that wrote them).
      await waitFor(`${id}: leader-a the source of api`, () => {
        const got = sourced(id);
        if (got['leader-a'] !== 4 || got['leader-b'] !== 0) throw new Error(`objects sourced: ${JSON.stringify(got)}`);
        return true;
      }, converge);
      assert.deepEqual(await conflictEvents(id), []);
    }
  });

  it(`one leader cluster lost entirely for ${String(OUTAGE_S)} s: the members stay Ready, say which leader is missing, write nothing to what they imported, and import new exports through the other`, async () => {
    for (const id of MEMBERS) await agents[id]?.imports.importerFor(CLUSTERSET_ID, 'leader-a')?.onIdle();
    const beforeOutage = await everyMember();
    const readySince = Object.fromEntries(await Promise.all(MEMBERS.map(async (id) =>
      [id, condition(await clusterSetApi(member(id).adminConfig()).get(CLUSTERSET_ID), 'Ready')?.lastTransitionTime] as const)));
    // The whole cluster at once, as a lost data centre: kube-apiserver and etcd killed, no
    // graceful close of the members' watches. The leader controller goes with it.
    const outageStart = new Date().toISOString();
    const outageEnd = Date.now() + OUTAGE_S * 1000;
    await leader('leader-a').kill();
    await controllers['leader-a']?.stop();
    delete controllers['leader-a'];
    for (const id of MEMBERS) {
      const cs = await waitFor(`${id}: leader-a missing`, async () => {
        const got = await clusterSetApi(member(id).adminConfig()).get(CLUSTERSET_ID);
        return condition(got, 'AllLeadersConnected')?.status === 'False' ? got : undefined;
      }, converge);
      assert.equal(condition(cs, 'Ready')?.status, 'True', `${id} stays Ready: ${JSON.stringify(cs.status)}`);
      assert.match(condition(cs, 'AllLeadersConnected')?.message ?? '', /1\/2 leaders connected; not connected: leader-a/);
      assert.equal(cs.status?.leaders, '1/2');
    }
    // Exports made during the outage, one after the other: each timed from its ServiceExport
    // (the Service and its endpoints already there) until it is imported in every member (east
    // too) through leader-b.
    const latencies: Record<MemberID | 'every member', number[]> = { east: [], west: [], north: [], 'every member': [] };
    for (let i = 0; i < FAILOVER_EXPORTS; i += 1) {
      const name = `web-${String(i)}`;
      const exported = await exportService(name, 8081, `10.244.2.${String(i + 1)}`);
      await Promise.all(MEMBERS.map(async (id) => {
        await waitFor(`${id} imports team-a/${name} through leader-b`, () => importedServiceImport(id, name), { timeoutMs: converge.timeoutMs, intervalMs: 20 });
        latencies[id].push(Date.now() - exported);
      }));
      latencies['every member'].push(Date.now() - exported);
    }
    for (const [who, values] of Object.entries(latencies)) {
      const { p50, p99, max } = percentiles(values);
      process.stderr.write(`# failover: export -> import through leader-b in ${who}, ${String(values.length)} exports: p50 ${String(p50)} ms, p99 ${String(p99)} ms, max ${String(max)} ms\n`);
    }
    // leader-a's retention passes: what leader-b holds stays, untouched.
    for (const id of MEMBERS) {
      await waitFor(`${id}: leader-a's retention over`, () => logs[id].lines.some((l) => l.includes('"removing imports') && l.includes('"leader":"leader-a"')), converge);
    }
    // The rest of the window, the members' ClusterSets looked at every second: Ready throughout
    // (its lastTransitionTime unchanged: no flap between two looks), leader-a missing throughout.
    const seen: string[] = [];
    await waitFor(`the end of the ${String(OUTAGE_S)} s outage`, async () => {
      for (const id of MEMBERS) {
        const cs = await clusterSetApi(member(id).adminConfig()).get(CLUSTERSET_ID);
        const ready = condition(cs, 'Ready');
        if (ready?.status !== 'True' || ready.lastTransitionTime !== readySince[id]) seen.push(`${id}: Ready ${JSON.stringify(ready)}`);
        if (condition(cs, 'AllLeadersConnected')?.status !== 'False') seen.push(`${id}: ${JSON.stringify(condition(cs, 'AllLeadersConnected'))}`);
      }
      return Date.now() >= outageEnd;
    }, { timeoutMs: OUTAGE_S * 1000 + 60_000, intervalMs: 1000 });
    assert.deepEqual(seen, [], 'every member Ready and degraded through the outage');
    const outageOver = new Date().toISOString();
    for (const id of MEMBERS) await agents[id]?.imports.importerFor(CLUSTERSET_ID, 'leader-b')?.onIdle();
    const afterOutage = await everyMember();
    snapshots.afterOutage = afterOutage;
    const seconds = ((Date.parse(outageOver) - Date.parse(outageStart)) / 1000).toFixed(0);
    for (const id of MEMBERS) {
      const held = importWrites(id, outageStart, outageOver, beforeOutage[id]);
      const all = importWrites(id, outageStart, outageOver);
      process.stderr.write(`# outage ${seconds} s, ${id}: ${String(held.length)} writes to the ${String(Object.keys(beforeOutage[id]).length)} objects imported before it; ${String(all.length)} import writes in all (${String(Object.keys(afterOutage[id]).length - Object.keys(beforeOutage[id]).length)} objects imported during it)\n`);
      assert.deepEqual(held, [], `${id}: no write to what it imported before the outage (audit log)`);
      for (const [name, version] of Object.entries(beforeOutage[id])) assert.equal(afterOutage[id][name], version, `${id}: ${name} neither written nor deleted`);
      assert.equal(Object.keys(afterOutage[id]).length, 4 * (1 + FAILOVER_EXPORTS), `${id}: every export imported whole`);
      assert.deepEqual(await conflictEvents(id), []);
    }
  });

  it('the lost leader cluster comes back: the members reconnect and converge with no write to an unchanged import', async () => {
    const afterOutage = snapshots.afterOutage ?? assert.fail('the outage test did not finish');
    const back = new Date().toISOString();
    const restarted = Date.now();
    await leader('leader-a').restart();
    await startLeaderController('leader-a');
    for (const id of MEMBERS) {
      await waitFor(`${id}: both leaders connected again`, async () =>
        condition(await clusterSetApi(member(id).adminConfig()).get(CLUSTERSET_ID), 'AllLeadersConnected')?.status === 'True', { timeoutMs: 120_000, intervalMs: 200 });
    }
    const connectedMs = Date.now() - restarted;
    // leader-a holds every import again (east's exporter re-sent what it exported meanwhile) and,
    // first in spec.leaders, is the source of all of them once more.
    for (const id of MEMBERS) {
      await waitFor(`${id}: leader-a the source of every import again`, () => {
        const got = sourced(id);
        if (got['leader-a'] !== 4 * (1 + FAILOVER_EXPORTS) || got['leader-b'] !== 0) throw new Error(`objects sourced: ${JSON.stringify(got)}`);
        return true;
      }, { timeoutMs: 120_000, intervalMs: 200 });
      for (const l of LEADERS) await agents[id]?.imports.importerFor(CLUSTERSET_ID, l)?.onIdle();
    }
    const convergedMs = Date.now() - restarted;
    const until = new Date().toISOString();
    for (const id of MEMBERS) {
      const writes = importWrites(id, back, until);
      process.stderr.write(`# leader-a back, ${id}: AllLeadersConnected after ${String(connectedMs)} ms, leader-a the source of all ${String(Object.keys(afterOutage[id]).length)} objects after ${String(convergedMs)} ms; ${String(writes.length)} import writes\n`);
      assert.deepEqual(writes, [], `${id}: no import write after leader-a came back (audit log)`);
      assert.deepEqual(await importedObjects(id), afterOutage[id], `${id}: every imported object as it was (uid@resourceVersion)`);
      assert.deepEqual(await conflictEvents(id), []);
    }
  });
});
