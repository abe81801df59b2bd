// A leader floods the member with twice as many imports as the per-leader cap allows, on real
// control planes: whole services are admitted up to the cap (never above it, sampled during
// the flood), the rest are refused whole, the ClusterSet status and Events say so without
// drowning the member, and the heartbeat never misses a beat. Before the flood: an import
// refused for a missing namespace lands (Endpoints last) within seconds of the namespace
// appearing, and Endpoints never land next to a refused ServiceImport.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { CoreV1Api, CustomObjectsApi, type CoreV1Event } from '@kubernetes/client-node';
import type { ResourceImport } from '../../src/common/api/antrea.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { AGENT_SELECTOR } from '../../src/importer/ownership.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS, readyCondition, setupLeader,
  waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { endpointsRI, leaderImports, memberReads, serviceImportRI } from '../harness/imports.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;
const MEMBER_ID = 'east';
const CAP = 300;
const SERVICES = 200;
const BATCH = 25;
/** Once Events are aggregated and rate-limited per ClusterSet like client-go's recorder. */
const MAX_FLOOD_EVENTS = 40;
const FLOOD_NS = 'flood';
const converge = { timeoutMs: 15_000, intervalMs: 100 };

describe('a leader flooding the member with imports', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  const log = capturedLogger();
  const ri = () => leaderImports(leader.adminConfig());
  const local = () => memberReads(member.adminConfig());
  const counts = () => agent?.imports.counts(CLUSTERSET_ID);

  /** Objects the agent owns in the member right now (every kind the flood produces). */
  const ownedInMember = async (): Promise<{ total: number; names: Map<string, number> }> => {
    const kc = member.adminConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const [services, endpoints, serviceImports] = await Promise.all([
      core.listServiceForAllNamespaces({ labelSelector: AGENT_SELECTOR }),
      core.listEndpointsForAllNamespaces({ labelSelector: AGENT_SELECTOR }),
      custom.listCustomObjectForAllNamespaces({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', resourcePlural: 'serviceimports', labelSelector: AGENT_SELECTOR }) as Promise<{ items: { metadata?: { name?: string } }[] }>,
    ]);
    // Objects per exported service name (antrea-mc-<name> for the Service and Endpoints).
    const names = new Map<string, number>();
    const bump = (name: string) => names.set(name, (names.get(name) ?? 0) + 1);
    for (const s of services.items) bump((s.metadata?.name ?? '').replace(/^antrea-mc-/, ''));
    for (const e of endpoints.items) bump((e.metadata?.name ?? '').replace(/^antrea-mc-/, ''));
    for (const si of serviceImports.items) bump(si.metadata?.name ?? '');
    return { total: services.items.length + endpoints.items.length + serviceImports.items.length, names };
  };

  const clusterSetEvents = async (): Promise<CoreV1Event[]> =>
    (await member.adminConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: AGENT_NS })).items.filter((e) => e.involvedObject.name === CLUSTERSET_ID);

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader'), startControlPlane('member')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    for (const ns of [AGENT_NS, FLOOD_NS]) await createNamespace(member.adminConfig(), ns);
    const access = await createMemberAccess(leader, MEMBER_ID);
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    await createClusterSet(member, { clusterID: MEMBER_ID, server: leader.server, secret: 'leader-token' });
    const config = loadConfig({
      flags: parseConfigFlags(['--namespace', AGENT_NS, '--heartbeat-interval', String(INTERVAL_S)]),
      env: { CSA_IMPORT_MAX_OBJECTS_PER_LEADER: String(CAP) },
    });
    agent = await startAgent(config, log.logger, member.adminConfig());
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 5 * INTERVAL_S * 1000);
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('never lands Endpoints next to a refused ServiceImport, and lands them once it is accepted', async () => {
    const broken = serviceImportRI(FLOOD_NS, 'broken', [{ name: 'http', port: 80 }]);
    const badPort = { ...broken, spec: { ...broken.spec, serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ name: 'http', port: 0, protocol: 'TCP' }] } } } } as ResourceImport;
    await ri().create(badPort);
    await ri().create(endpointsRI(FLOOD_NS, 'broken', ['10.60.0.1']));
    const held = await waitFor('the Endpoints held back with a reason naming the ServiceImport', async () =>
      (await clusterSetEvents()).find((e) => e.reason === 'ImportRejectedServiceNotImported' && e.message?.includes(`${LEADER_NS}/${FLOOD_NS}-broken-endpoints`)), converge);
    assert.match(held.message ?? '', new RegExp(`Endpoints for ${FLOOD_NS}/broken are held back: ResourceImport ${LEADER_NS}/${FLOOD_NS}-broken-service was refused \\(InvalidPayload: `));
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    assert.equal(await local().endpoints(FLOOD_NS, 'antrea-mc-broken'), undefined);
    assert.equal(await local().service(FLOOD_NS, 'antrea-mc-broken'), undefined);
    assert.equal(counts()?.rejected, 2);

    const current = await ri().get(`${FLOOD_NS}-broken-service`);
    await ri().replace({ ...current, spec: broken.spec } as ResourceImport);
    await waitFor('the whole service imported', async () => (await local().endpoints(FLOOD_NS, 'antrea-mc-broken')) !== undefined, converge);
    assert.ok(await local().serviceImport(FLOOD_NS, 'broken'));
    await ri().delete(`${FLOOD_NS}-broken-service`);
    await ri().delete(`${FLOOD_NS}-broken-endpoints`);
    await waitFor('withdrawn', () => counts()?.total === 0 && counts()?.rejected === 0, converge);
  });

  it('imports a service refused for a missing namespace, Endpoints last, within seconds of the namespace appearing', async () => {
    await ri().create(serviceImportRI('late-ns', 'web', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI('late-ns', 'web', ['10.70.0.1']));
    await waitFor('both refused', () => counts()?.rejected === 2, converge);
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    assert.equal(counts()?.total, 0, 'nothing imported while the namespace is missing');
    const events = await clusterSetEvents();
    assert.ok(events.some((e) => e.reason === 'ImportRejectedNamespaceNotFound' && e.message?.includes(`${LEADER_NS}/late-ns-web-service`)));

    const createdAt = Date.now();
    await createNamespace(member.adminConfig(), 'late-ns');
    await waitFor('Service, ServiceImport and Endpoints', async () => (await local().endpoints('late-ns', 'antrea-mc-web')) !== undefined
      && (await local().service('late-ns', 'antrea-mc-web')) !== undefined && (await local().serviceImport('late-ns', 'web')) !== undefined, { timeoutMs: 5_000, intervalMs: 50 });
    const seconds = (Date.now() - createdAt) / 1000;
    assert.ok(seconds < 5, `landed ${String(seconds)} s after the namespace appeared`);
    // etcd revisions are global: the Endpoints were written after the Service and the ServiceImport.
    const rv = async () => ({
      service: Number((await local().service('late-ns', 'antrea-mc-web'))?.metadata?.resourceVersion),
      serviceImport: Number((await local().serviceImport('late-ns', 'web'))?.metadata?.resourceVersion),
      endpoints: Number((await local().endpoints('late-ns', 'antrea-mc-web'))?.metadata?.resourceVersion),
    });
    const written = await rv();
    assert.ok(written.endpoints > written.service && written.endpoints > written.serviceImport, JSON.stringify(written));
    await waitFor('nothing refused any more', () => counts()?.rejected === 0 && counts()?.total === 4, converge);

    await ri().delete('late-ns-web-service');
    await ri().delete('late-ns-web-endpoints');
    await waitFor('withdrawn', () => counts()?.total === 0, converge);
  });

  describe('twice the cap', () => {
    // A service is 4 objects: Service, ServiceImport, Endpoints and one EndpointSlice.
    const admittedTotal = Math.floor(CAP / 4) * 4;
    const admittedServices = admittedTotal / 4;
    let maxSeen = 0;
    let notReady: string[] = [];
    let floodEvents: CoreV1Event[] = [];
    let floodSeconds = 0;

    before(async () => {
      const eventsBefore = new Set((await clusterSetEvents()).map((e) => e.metadata?.name));
      const logLinesBefore = log.lines.length;
      // Sample the member and the ClusterSet all along the flood.
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          try {
            maxSeen = Math.max(maxSeen, (await ownedInMember()).total);
            const ready = readyCondition(await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID));
            if (ready?.status !== 'True') notReady.push(`${new Date().toISOString()} ${JSON.stringify(ready)}`);
          } catch (err) {
            notReady.push(`sampling failed: ${String(err)}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      const started = Date.now();
      const flood: ResourceImport[] = [];
      for (let i = 0; i < SERVICES; i++) {
        const name = `svc-${String(i)}`;
        const pair = [serviceImportRI(FLOOD_NS, name, [{ name: 'http', port: 80 }]), endpointsRI(FLOOD_NS, name, [`10.80.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`])];
        flood.push(...(i % 2 === 0 ? pair : pair.reverse()));
      }
      for (let i = 0; i < flood.length; i += BATCH) await Promise.all(flood.slice(i, i + BATCH).map((r) => ri().create(r)));
      await waitFor('every import judged', () => counts()?.total === admittedTotal && counts()?.rejected === 2 * (SERVICES - admittedServices),
        { timeoutMs: 180_000, intervalMs: 200 });
      await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
      floodSeconds = (Date.now() - started) / 1000;
      // Two more beats under the settled load.
      await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_S * 1000));
      sampling = false;
      await sampler;
      floodEvents = (await clusterSetEvents()).filter((e) => !eventsBefore.has(e.metadata?.name));
      // node-cron logs a missed execution when the event loop was too busy to beat on time.
      notReady = [...notReady, ...log.lines.slice(logLinesBefore).filter((l) => l.includes('heartbeat failed') || l.includes('missed execution'))];
      const reasons = new Map<string, number>();
      for (const e of floodEvents) reasons.set(e.reason ?? '', (reasons.get(e.reason ?? '') ?? 0) + 1);
      process.stderr.write(`import flood: ${String(flood.length)} RIs judged in ${floodSeconds.toFixed(1)} s; at most ${String(maxSeen)} objects seen; `
        + `${String(floodEvents.length)} new Events (${JSON.stringify(Object.fromEntries(reasons))}), counts ${JSON.stringify(counts())}\n`);
    });

    it('keeps the agent-owned objects within the cap, admitting whole services only', async () => {
      const { total, names } = await ownedInMember();
      assert.equal(total, admittedServices * 3, 'Services, ServiceImports and Endpoints (the slices are the fourth object)');
      assert.ok(maxSeen <= CAP, `sampled at most ${String(maxSeen)} objects, the cap is ${String(CAP)}`);
      const perService = [...names.values()];
      assert.equal(perService.filter((n) => n === 3).length, admittedServices, 'every admitted service has its Service, ServiceImport and Endpoints');
      assert.deepEqual(perService.filter((n) => n !== 3), [], 'no half-imported service');
    });

    it('counts the refused imports in the ClusterSet status', async () => {
      const expected = { total: admittedTotal, rejected: 2 * (SERVICES - admittedServices), conflicts: 0 };
      const cs = await waitFor('status imports', async () => {
        const found = await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID);
        if (isDeepStrictEqual(found.status?.imports, expected)) return found;
        throw new Error(`status.imports is ${JSON.stringify(found.status?.imports)}, the importer counts ${JSON.stringify(counts())}`);
      }, converge);
      assert.deepEqual(cs.status?.imports, expected);
      assert.ok(expected.rejected > 0);
    });

    it('never misses a heartbeat', () => {
      assert.deepEqual(notReady, []);
    });

    it(`records few Events for the flood (at most ${String(MAX_FLOOD_EVENTS)})`, () => {
      assert.ok(floodEvents.length > 0, 'the refusals are visible');
      assert.ok(floodEvents.length <= MAX_FLOOD_EVENTS, `${String(floodEvents.length)} Events for the ClusterSet during the flood`);
    });
  });
});
