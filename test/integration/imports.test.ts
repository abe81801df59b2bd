// Imports on real control planes: every kind round-trips, targeting, no churn across a
// restart with 200 imports, a leader restart mid-watch, and lost-leader retention.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, RbacAuthorizationV1Api, type V1CustomResourceDefinition, type V1EndpointSlice } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { RESOURCE_IMPORT, type ResourceImport } from '../../src/common/api/antrea.js';
import { ENDPOINT_SOURCES_ANNOTATION, IMPORTED_SERVICE_ANNOTATION } from '../../src/common/api/names.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { CLUSTERSET_LABEL, MANAGED_BY_LABEL, RESOURCE_IMPORT_ANNOTATION } from '../../src/importer/ownership.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { clusterInfoRI, endpointsRI, leaderImports, maybe, memberReads, serviceImportRI } from '../harness/imports.js';
import { applyCrds, createNamespace, tokenConfig } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { runCli } from '../harness/cli.js';
import { readAuditEvents, type AuditEvent } from '../harness/agent-process.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;
// Longer than a leader apiserver restart on 2 busy cores, so the short-outage case stays short.
const RETENTION_S = 20;
const RESYNC_S = 5;
const MEMBER_ID = 'east';
const converge = { timeoutMs: 15_000, intervalMs: 100 };

/** `clusterset-agent status` against one cluster. */
const statusOf = (cp: ControlPlane) => runCli('status', ['--kubeconfig', cp.kubeconfigPath]);

describe('imports from a leader', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  let log = capturedLogger();
  let access: { serviceAccount: string; token: string };
  const config = (extra = '') => loadConfig({
    flags: parseConfigFlags(['--config', 'agent.yaml']), env: {},
    readFile: () => `namespace: ${AGENT_NS}
heartbeat: { intervalSeconds: ${String(INTERVAL_S)}, failureThreshold: 3 }
imports: { lostLeaderRetentionSeconds: ${String(RETENTION_S)}, resyncSeconds: ${String(RESYNC_S)}, allowedKinds: [ServiceImport, Endpoints, ClusterInfo, AntreaClusterNetworkPolicy] }
${extra}`,
  });
  const startMemberAgent = async (extraConfig = '') => {
    log = capturedLogger();
    agent = await startAgent(config(extraConfig), log.logger, member.adminConfig());
  };
  const ri = () => leaderImports(leader.adminConfig());
  const local = () => memberReads(member.adminConfig());

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader', { auditLog: true }), startControlPlane('member', { auditLog: true })]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    for (const ns of [AGENT_NS, 'team-a', 'team-b']) await createNamespace(member.adminConfig(), ns);
    access = await createMemberAccess(leader, MEMBER_ID);
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    await createClusterSet(member, { clusterID: MEMBER_ID, server: leader.server, secret: 'leader-token' });
    await startMemberAgent();
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('ServiceImport: creates, updates and deletes the antrea-mc Service and the ServiceImport', async () => {
    // The claim check's name-only watches synced at once on a member with no ServiceImport yet
    // (an empty PartialObjectMetadataList says items: null): no failed attempt, no GET fallback.
    const namesLines = (what: string) => log.lines.filter((l) => l.includes('(names)') && l.includes(what));
    await waitFor('both name-only watches synced', () => namesLines('informer synced').length === 2, converge);
    assert.deepEqual(namesLines('informer failed'), []);
    await ri().create(serviceImportRI('team-a', 'web', [{ name: 'http', port: 80 }]));
    const svc = await waitFor('Service antrea-mc-web', () => local().service('team-a', 'antrea-mc-web'), converge);
    assert.equal(svc.metadata?.annotations?.[IMPORTED_SERVICE_ANNOTATION], 'true');
    assert.equal(svc.metadata?.labels?.[MANAGED_BY_LABEL], 'clusterset-agent');
    assert.equal(svc.metadata?.labels?.[CLUSTERSET_LABEL], CLUSTERSET_ID);
    assert.equal(svc.spec?.type, 'ClusterIP');
    assert.deepEqual(svc.spec?.ports?.map((p) => [p.name, p.port, p.protocol]), [['http', 80, 'TCP']]);
    assert.equal(svc.spec?.selector, undefined, 'an imported Service selects no local pods');
    const si = await waitFor('ServiceImport web with the ClusterIP', async () => {
      const found = await local().serviceImport('team-a', 'web');
      return found?.spec?.ips?.length ? found : undefined;
    }, converge);
    assert.deepEqual(si.spec?.ips, [svc.spec?.clusterIP]);

    const current = await ri().get('team-a-web-service');
    await ri().replace({ ...current, spec: { ...current.spec, serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] } } } });
    const updated = await waitFor('Service port 8080', async () => {
      const s = await local().service('team-a', 'antrea-mc-web');
      return s?.spec?.ports?.[0]?.port === 8080 ? s : undefined;
    }, converge);
    assert.equal(updated.metadata?.uid, svc.metadata?.uid, 'updated in place, not recreated');
    await waitFor('ServiceImport port 8080', async () => (await local().serviceImport('team-a', 'web'))?.spec?.ports?.[0]?.port === 8080, converge);

    await ri().delete('team-a-web-service');
    await waitFor('Service and ServiceImport gone', async () =>
      (await local().service('team-a', 'antrea-mc-web')) === undefined && (await local().serviceImport('team-a', 'web')) === undefined, converge);
  });

  it('Endpoints: round-trips subsets', async () => {
    // Endpoints land only with their Service: an exported Service is imported whole or not at all.
    await ri().create(serviceImportRI('team-a', 'db', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI('team-a', 'db', ['10.10.0.5']));
    const ep = await waitFor('Endpoints antrea-mc-db', () => local().endpoints('team-a', 'antrea-mc-db'), converge);
    assert.deepEqual(ep.subsets?.[0]?.addresses?.map((a) => a.ip), ['10.10.0.5']);
    const current = await ri().get('team-a-db-endpoints');
    await ri().replace({ ...current, spec: { ...current.spec, endpoints: endpointsRI('team-a', 'db', ['10.10.0.5', '10.10.0.6']).spec?.endpoints } } as typeof current);
    await waitFor('two addresses', async () => (await local().endpoints('team-a', 'antrea-mc-db'))?.subsets?.[0]?.addresses?.length === 2, converge);
    await ri().delete('team-a-db-endpoints');
    await waitFor('Endpoints gone', async () => (await local().endpoints('team-a', 'antrea-mc-db')) === undefined, converge);
    assert.ok(await local().service('team-a', 'antrea-mc-db'), 'the Service stays while its ServiceImport is published');
    await ri().delete('team-a-db-service');
    await waitFor('Service gone', async () => (await local().service('team-a', 'antrea-mc-db')) === undefined, converge);
  });

  describe('EndpointSlices', () => {
    const NS = 'team-c';
    const discovery = () => member.adminConfig().makeApiClient(DiscoveryV1Api);
    const slices = async (service?: string) => (await discovery().listNamespacedEndpointSlice({ namespace: NS, ...(service !== undefined && { labelSelector: `kubernetes.io/service-name=${service}` }) })).items;
    /** An Endpoints RI as our leader writes it: one run of subsets per cluster, named in the sources annotation. */
    const sourcedEndpointsRI = (name: string, runs: { cluster: string; addresses: { ip: string; hostname?: string }[] }[]): ResourceImport => {
      const base = endpointsRI(NS, name, []);
      return {
        ...base,
        metadata: { ...base.metadata, annotations: { [ENDPOINT_SOURCES_ANNOTATION]: runs.map((r) => `${r.cluster}=1`).join(',') } },
        spec: { ...base.spec, endpoints: { subsets: runs.map((r) => ({ addresses: r.addresses, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] })) } },
      };
    };
    const importService = async (name: string, runs: Parameters<typeof sourcedEndpointsRI>[1]) => {
      await ri().create(serviceImportRI(NS, name, [{ name: 'http', port: 80 }]));
      await ri().create(sourcedEndpointsRI(name, runs));
    };
    const withdraw = async (name: string) => {
      await ri().delete(`${NS}-${name}-endpoints`);
      await ri().delete(`${NS}-${name}-service`);
      await waitFor(`${name} withdrawn`, async () => (await local().service(NS, `antrea-mc-${name}`)) === undefined && (await slices(`antrea-mc-${name}`)).length === 0, converge);
    };
    const row = (s: V1EndpointSlice) => `${s.metadata?.name ?? ''} ${(s.endpoints ?? []).map((e) => e.addresses.join('+')).join(',')}`;

    before(async () => { await createNamespace(member.adminConfig(), NS); });

    it('imports web of prod-east and web-prod of east, whose dash-joined slice names collided, side by side, and withdraws each without touching the other\'s', async () => {
      await importService('web', [{ cluster: 'prod-east', addresses: [{ ip: '10.70.0.1' }] }]);
      await importService('web-prod', [{ cluster: 'east', addresses: [{ ip: '10.70.0.2' }] }]);
      await waitFor('both slices', async () => (await slices()).length === 2, converge);
      await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
      assert.deepEqual((await slices('antrea-mc-web')).map(row), ['antrea-mc-web.prod-east.ipv4 10.70.0.1']);
      const [other] = await slices('antrea-mc-web-prod');
      assert.deepEqual(other && row(other), 'antrea-mc-web-prod.east.ipv4 10.70.0.2');
      assert.equal(agent?.imports.counts(CLUSTERSET_ID)?.conflicts, 0);
      await withdraw('web');
      const [kept] = await slices('antrea-mc-web-prod');
      assert.equal(kept?.metadata?.uid, other?.metadata?.uid, 'the other Service\'s slice is the same object');
      assert.equal(kept?.metadata?.resourceVersion, other?.metadata?.resourceVersion, 'and was not written');
      await withdraw('web-prod');
    });

    it('replaces the slices a previous version wrote under dash-joined names at a restart, and leaves a user\'s slice of such a name alone', async () => {
      await importService('web', [{ cluster: 'prod-east', addresses: [{ ip: '10.71.0.1' }] }]);
      await waitFor('the slice', async () => (await slices('antrea-mc-web')).length === 1, converge);
      await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
      const [current] = await slices('antrea-mc-web');
      const ours = current?.metadata?.labels ?? {};
      await agent?.stop();
      // What the previous version left: its slice of web, and the one web-prod of east wrote over
      // it under the same name (annotated with web-prod's import, which the leader withdrew since).
      const oldSlice = (name: string, service: string, importName: string, labels: Record<string, string>) => discovery().createNamespacedEndpointSlice({ namespace: NS, body: {
        metadata: { name, labels: { ...labels, 'kubernetes.io/service-name': service }, annotations: { [RESOURCE_IMPORT_ANNOTATION]: importName } },
        addressType: 'IPv4', endpoints: [{ addresses: ['10.71.9.9'] }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      } });
      await oldSlice('antrea-mc-web-prod-east-ipv4', 'antrea-mc-web-prod', `${NS}-web-prod-endpoints`, ours);
      await oldSlice('antrea-mc-web-ipv4', 'antrea-mc-web', `${NS}-web-endpoints`, ours);
      const users = await oldSlice('antrea-mc-web-east-ipv4', 'antrea-mc-web', `${NS}-web-endpoints`, { 'kubernetes.io/service-name': 'antrea-mc-web' });
      await startMemberAgent();
      await waitFor('exactly the new set and the user\'s slice', async () =>
        JSON.stringify((await slices()).map((s) => s.metadata?.name).sort()) === JSON.stringify(['antrea-mc-web-east-ipv4', 'antrea-mc-web.prod-east.ipv4']), converge);
      const [after] = await slices('antrea-mc-web').then((all) => all.filter((s) => s.metadata?.name === 'antrea-mc-web-east-ipv4'));
      assert.equal(after?.metadata?.resourceVersion, users.metadata?.resourceVersion, 'the user\'s slice was not written');
      await discovery().deleteNamespacedEndpointSlice({ namespace: NS, name: 'antrea-mc-web-east-ipv4' });
      await withdraw('web');
    });

    it('imports 1,200 endpoints of three clusters in slices of at most 100, owned by the ServiceImport, with the Endpoints, keeping hostnames', async () => {
      const ip = (c: number, i: number) => `10.${String(80 + c)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
      const runs = ['a', 'b', 'c'].map((cluster, c) => ({ cluster, addresses: Array.from({ length: 400 }, (_, i) => ({ ip: ip(c, i), ...(i === 0 && { hostname: `db-${cluster}` }) })) }));
      await importService('db', runs);
      const all = await waitFor('1,200 endpoints in slices', async () => {
        const found = await slices('antrea-mc-db');
        return found.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0) === 1200 ? found : undefined;
      }, { timeoutMs: 30_000, intervalMs: 200 });
      assert.equal(all.length, 12);
      assert.ok(all.every((s) => (s.endpoints?.length ?? 0) <= 100), all.map((s) => s.endpoints?.length).join(','));
      assert.equal(new Set(all.flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses[0]))).size, 1200);
      const endpoints = await local().endpoints(NS, 'antrea-mc-db');
      assert.equal(endpoints?.subsets?.reduce((n, s) => n + (s.addresses?.length ?? 0), 0), 1200, 'Antrea\'s Endpoints carry every endpoint');
      assert.equal(endpoints?.metadata?.labels?.['endpointslice.kubernetes.io/skip-mirror'], 'true');
      const si = await local().serviceImport(NS, 'db');
      for (const slice of all) {
        assert.deepEqual(JSON.parse(JSON.stringify(slice.metadata?.ownerReferences ?? null)) as unknown, [{ apiVersion: 'multicluster.x-k8s.io/v1beta1', kind: 'ServiceImport', name: 'db', uid: si?.metadata?.uid, controller: false }], slice.metadata?.name);
      }
      const hostnames = all.flatMap((s) => (s.endpoints ?? []).filter((e) => e.hostname !== undefined).map((e) => `${s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] ?? ''} ${e.hostname ?? ''} ${e.addresses[0] ?? ''}`));
      assert.deepEqual(hostnames.sort(), ['a db-a 10.80.0.1', 'b db-b 10.81.0.1', 'c db-c 10.82.0.1']);
      assert.equal(agent?.imports.counts(CLUSTERSET_ID)?.rejected, 0);
      await withdraw('db');

      // Antrea's leader names no sources: every endpoint of the Service in one run.
      await ri().create(serviceImportRI(NS, 'flat', [{ name: 'http', port: 80 }]));
      await ri().create(endpointsRI(NS, 'flat', Array.from({ length: 1200 }, (_, i) => ip(0, i))));
      const flat = await waitFor('1,200 endpoints of an Antrea leader in slices', async () => {
        const found = await slices('antrea-mc-flat');
        return found.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0) === 1200 ? found : undefined;
      }, { timeoutMs: 30_000, intervalMs: 200 });
      assert.deepEqual(flat.map((s) => s.endpoints?.length), Array.from({ length: 12 }, () => 100));
      assert.ok(await local().endpoints(NS, 'antrea-mc-flat'));
      await withdraw('flat');
    });
  });

  it('ClusterInfo: imports other clusters into the agent namespace and skips our own', async () => {
    await ri().create(clusterInfoRI('west', '10.96.0.0/12'));
    await ri().create(clusterInfoRI(MEMBER_ID, '10.97.0.0/12'));
    const cii = await waitFor('ClusterInfoImport west-clusterinfo', () => local().clusterInfoImport(AGENT_NS, 'west-clusterinfo'), converge);
    assert.equal(cii.spec?.serviceCIDR, '10.96.0.0/12');
    const current = await ri().get('west-clusterinfo');
    await ri().replace({ ...current, spec: { ...current.spec, clusterinfo: { ...current.spec?.clusterinfo, serviceCIDR: '10.98.0.0/16' } } });
    await waitFor('updated serviceCIDR', async () => (await local().clusterInfoImport(AGENT_NS, 'west-clusterinfo'))?.spec?.serviceCIDR === '10.98.0.0/16', converge);
    assert.equal(await local().clusterInfoImport(AGENT_NS, `${MEMBER_ID}-clusterinfo`), undefined, 'our own ClusterInfo is not imported');
    await ri().delete('west-clusterinfo');
    await ri().delete(`${MEMBER_ID}-clusterinfo`);
    await waitFor('ClusterInfoImport gone', async () => (await local().clusterInfoImport(AGENT_NS, 'west-clusterinfo')) === undefined, converge);
  });

  it('AntreaClusterNetworkPolicy: a clear Event while the ACNP CRD is missing, the policy once it exists', async (t) => {
    // Withdrawn even when an assertion fails: a policy left imported changes the next tests' counts.
    t.after(async () => {
      for (const name of ['late-antreaclusternetworkpolicy', 'early-antreaclusternetworkpolicy']) await ri().delete(name).catch(() => undefined);
    });
    const acnp = (name: string) => ({
      apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImport',
      metadata: { name: `${name}-antreaclusternetworkpolicy`, namespace: LEADER_NS },
      spec: { name, namespace: '', kind: 'AntreaClusterNetworkPolicy',
        clusternetworkpolicy: { priority: 5, tier: 'securityops', appliedTo: [{ namespaceSelector: {} }], ingress: [{ action: 'Drop', from: [{ namespaceSelector: {} }] }] } },
    }) as ResourceImport;
    await ri().create(acnp('early'));
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    const event = await waitFor('an ImportTargetMissing event', async () => (await core.listNamespacedEvent({ namespace: AGENT_NS })).items
      .find((e) => e.reason === 'ImportTargetMissing' && e.message?.includes(`${LEADER_NS}/early-antreaclusternetworkpolicy`)), converge);
    assert.match(event.message ?? '', /clusternetworkpolicies\.crd\.antrea\.io\/v1beta1 .* not installed/);
    const acnpCrd = parse(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: clusternetworkpolicies.crd.antrea.io }
spec:
  group: crd.antrea.io
  scope: Cluster
  names: { plural: clusternetworkpolicies, singular: clusternetworkpolicy, kind: ClusterNetworkPolicy, shortNames: [acnp] }
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema: { openAPIV3Schema: { type: object, properties: { spec: { type: object, x-kubernetes-preserve-unknown-fields: true } } } }
`) as V1CustomResourceDefinition;
    await applyCrds(member.adminConfig(), [acnpCrd]);
    await ri().create(acnp('late'));
    const policy = await waitFor('ClusterNetworkPolicy antrea-mc-late', () => maybe(async () => (await member.adminConfig().makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ group: 'crd.antrea.io', version: 'v1beta1', plural: 'clusternetworkpolicies', name: 'antrea-mc-late' })) as { spec?: { priority?: number }; metadata?: { annotations?: Record<string, string> } }), converge);
    assert.equal(policy.spec?.priority, 5);
    assert.equal(policy.metadata?.annotations?.['multicluster.antrea.io/imported-acnp'], 'true');
  });

  it('honours spec.clusterID targeting', async () => {
    await ri().create(serviceImportRI('team-a', 'for-west', [{ name: 'p', port: 81 }], ['west']));
    await ri().create(serviceImportRI('team-a', 'for-us', [{ name: 'p', port: 82 }], ['west', MEMBER_ID]));
    await waitFor('the import targeted at us', () => local().service('team-a', 'antrea-mc-for-us'), converge);
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    assert.equal(await local().service('team-a', 'antrea-mc-for-west'), undefined);
    // Re-targeting away from us withdraws the import.
    const current = await ri().get('team-a-for-us-service');
    await ri().replace({ ...current, spec: { ...current.spec, clusterID: ['west'] } });
    await waitFor('withdrawn after re-targeting', async () => (await local().service('team-a', 'antrea-mc-for-us')) === undefined, converge);
    await ri().delete('team-a-for-west-service');
    await ri().delete('team-a-for-us-service');
  });

  it('restarts with 200 imports in place without deleting or recreating anything, and converges on what changed meanwhile', async () => {
    for (let i = 0; i < 100; i++) {
      await ri().create(serviceImportRI('team-b', `svc-${String(i)}`, [{ name: 'http', port: 80 }]));
      await ri().create(endpointsRI('team-b', `svc-${String(i)}`, [`10.20.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`]));
    }
    await waitFor('400 objects imported (Service, ServiceImport, Endpoints, EndpointSlice each)', () => agent?.imports.counts(CLUSTERSET_ID)?.total === 400, {
      timeoutMs: 60_000, intervalMs: 200,
      explain: async () => ({ counts: agent?.imports.counts(CLUSTERSET_ID), conditions: (await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID))?.status?.conditions }),
    });
    await waitFor('every ServiceImport has its IP', async () => {
      const rows = await local().snapshot();
      return rows.filter((r) => r.startsWith('serviceimports team-b/')).length === 100;
    }, converge);
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    const before = await local().snapshot();
    await agent?.stop();
    // While the agent is down the leader withdraws one import and publishes another.
    await ri().delete('team-b-svc-0-endpoints');
    await ri().create(serviceImportRI('team-b', 'late', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI('team-b', 'late', ['10.30.0.1']));
    await startMemberAgent();
    await waitFor('converged after restart', async () =>
      agent?.imports.counts(CLUSTERSET_ID)?.total === 402 && (await local().endpoints('team-b', 'antrea-mc-svc-0')) === undefined, { timeoutMs: 60_000, intervalMs: 200 });
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    const afterRestart = await local().snapshot();
    const changed = before.filter((row) => !afterRestart.includes(row));
    const added = afterRestart.filter((row) => !before.includes(row));
    assert.deepEqual(changed.map((r) => r.split(' ').slice(0, 2).join(' ')), ['Endpoints team-b/antrea-mc-svc-0'], 'only the withdrawn import changed');
    assert.deepEqual(added.map((r) => r.split(' ').slice(0, 2).join(' ')),
      ['Endpoints team-b/antrea-mc-late', 'Service team-b/antrea-mc-late', 'serviceimports team-b/late']);
  });

  it('keeps imports through a short leader outage and converges after the leader apiserver restarts mid-watch', async () => {
    const before = await local().snapshot();
    await leader.stopApiserver();
    try {
      await waitForReady(member, CLUSTERSET_ID, 'False', 'ConnectionFailed', 5 * INTERVAL_S * 1000);
    } finally {
      await leader.startApiserver();
    }
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    // The watch is back: a change made now reaches the member.
    await ri().create(serviceImportRI('team-a', 'after-restart', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI('team-a', 'after-restart', ['10.40.0.1']));
    await waitFor('import created after the leader restart', () => local().endpoints('team-a', 'antrea-mc-after-restart'), converge);
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    const afterOutage = (await local().snapshot()).filter((r) => !r.includes('after-restart'));
    assert.deepEqual(afterOutage, before, 'a short outage deletes or rewrites nothing');
    await ri().delete('team-a-after-restart-endpoints');
    await ri().delete('team-a-after-restart-service');
  });

  it('removes imports when the leader stays lost beyond the retention period, and restores them when it returns', async () => {
    await leader.stopApiserver();
    try {
      const lostAt = await waitForReady(member, CLUSTERSET_ID, 'False', 'ConnectionFailed', 5 * INTERVAL_S * 1000);
      const since = Date.parse(lostAt.status?.conditions?.[0]?.lastTransitionTime ?? '');
      await waitFor('imports removed after retention', () => agent?.imports.counts(CLUSTERSET_ID)?.total === 0, { timeoutMs: (RETENTION_S + 10) * 1000, intervalMs: 200 });
      assert.ok(Date.now() - since >= (RETENTION_S - 1) * 1000, 'not before the retention period');
      assert.equal(await local().service('team-b', 'antrea-mc-svc-1'), undefined);
    } finally {
      // Back even when an assertion failed: the next tests need their leader.
      await leader.startApiserver();
    }
    await waitFor('imports restored', () => local().service('team-b', 'antrea-mc-svc-1'), { timeoutMs: 60_000, intervalMs: 200 });
  });

  it('counts the retention down also when the agent restarts while the leader is down', async () => {
    await waitFor('imports present', () => (agent?.imports.counts(CLUSTERSET_ID)?.total ?? 0) > 0, converge);
    await agent?.stop();
    await leader.stopApiserver();
    try {
      await startMemberAgent();
      await waitForReady(member, CLUSTERSET_ID, 'False', 'ConnectionFailed', 5 * INTERVAL_S * 1000);
      await waitFor('imports removed after retention', async () => (await local().service('team-b', 'antrea-mc-svc-1')) === undefined,
        { timeoutMs: (RETENTION_S + 10) * 1000, intervalMs: 200 });
    } finally {
      await leader.startApiserver();
    }
    await waitFor('imports restored', () => local().service('team-b', 'antrea-mc-svc-1'), { timeoutMs: 60_000, intervalMs: 200 });
  });

  it('repairs imported objects deleted or edited in the member at the next resync', async () => {
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    const svc = await waitFor('an imported Service', () => local().service('team-b', 'antrea-mc-svc-2'), converge);
    const ep = await waitFor('imported Endpoints', () => local().endpoints('team-b', 'antrea-mc-svc-3'), converge);
    await core.deleteNamespacedService({ namespace: 'team-b', name: 'antrea-mc-svc-2' });
    await core.replaceNamespacedEndpoints({ namespace: 'team-b', name: 'antrea-mc-svc-3', body: { metadata: ep.metadata ?? {}, subsets: [{ addresses: [{ ip: '10.99.99.99' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] } });
    const recreated = await waitFor('the deleted Service re-created', () => local().service('team-b', 'antrea-mc-svc-2'), { timeoutMs: (RESYNC_S + 10) * 1000, intervalMs: 200 });
    assert.notEqual(recreated.metadata?.uid, svc.metadata?.uid);
    await waitFor('the edited Endpoints restored', async () => {
      const now = await local().endpoints('team-b', 'antrea-mc-svc-3');
      return now?.subsets?.[0]?.addresses?.[0]?.ip !== '10.99.99.99' && now?.subsets?.[0]?.addresses?.[0]?.ip === ep.subsets?.[0]?.addresses?.[0]?.ip;
    }, { timeoutMs: (RESYNC_S + 10) * 1000, intervalMs: 200 });
  });

  it('never touches objects it does not own', async () => {
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedService({ namespace: 'team-a', body: { metadata: { name: 'antrea-mc-mine' }, spec: { ports: [{ port: 1234 }] } } });
    const mine = await core.readNamespacedService({ namespace: 'team-a', name: 'antrea-mc-mine' });
    await ri().create(serviceImportRI('team-a', 'mine', [{ name: 'http', port: 80 }]));
    await waitFor('a conflict counted in status', () => (agent?.imports.counts(CLUSTERSET_ID)?.conflicts ?? 0) >= 1, converge);
    const still = await core.readNamespacedService({ namespace: 'team-a', name: 'antrea-mc-mine' });
    assert.equal(still.metadata?.resourceVersion, mine.metadata?.resourceVersion);
    assert.equal(await local().serviceImport('team-a', 'mine'), undefined);
    await ri().delete('team-a-mine-service');
    await waitFor('conflict cleared', () => agent?.imports.counts(CLUSTERSET_ID)?.conflicts === 0, converge);
    assert.ok(await core.readNamespacedService({ namespace: 'team-a', name: 'antrea-mc-mine' }), 'the user Service survives the withdrawal');
  });

  // A user's object holding one name of an imported Service refuses the whole Service before
  // anything is created: otherwise the user's Endpoints would back the imported Service, and
  // deleting that Service on withdrawal would make kube-apiserver delete them too.
  for (const held of ['endpoints', 'serviceimport'] as const) {
    it(`imports nothing of a Service whose ${held === 'endpoints' ? 'Endpoints' : 'ServiceImport'} name a user's object holds, and leaves it untouched`, async () => {
      const core = member.adminConfig().makeApiClient(CoreV1Api);
      const custom = member.adminConfig().makeApiClient(CustomObjectsApi);
      const name = `held-${held}`;
      const userObject = held === 'endpoints'
        ? await core.createNamespacedEndpoints({ namespace: 'team-a', body: { metadata: { name: `antrea-mc-${name}` }, subsets: [{ addresses: [{ ip: '10.77.0.1' }], ports: [{ port: 8080 }] }] } })
        : await custom.createNamespacedCustomObject({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespace: 'team-a',
          body: { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', metadata: { name }, spec: { type: 'ClusterSetIP', ports: [{ port: 8080, protocol: 'TCP' }] } } }) as { metadata?: { uid?: string; resourceVersion?: string } };
      const since = new Date().toISOString();
      const userRef = held === 'endpoints' ? `endpoints team-a/antrea-mc-${name}` : `serviceimports team-a/${name}`;
      const conflictEvents = async () => (await core.listNamespacedEvent({ namespace: AGENT_NS })).items
        .filter((e) => e.reason === 'ImportConflict' && e.message?.includes(userRef));
      await ri().create(serviceImportRI('team-a', name, [{ name: 'http', port: 80 }]));
      await ri().create(endpointsRI('team-a', name, ['10.60.0.1']));
      await waitFor('one ImportConflict naming the user\'s object', async () => (await conflictEvents()).length === 1, converge);
      // The Endpoints RI is judged after its sibling: let it settle, then nothing of the Service exists.
      await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
      assert.equal(await local().service('team-a', `antrea-mc-${name}`), undefined, 'no imported Service');
      const creates = readAuditEvents(member.auditLogPath, (e) => e.verb === 'create' && e.requestReceivedTimestamp >= since
        && e.objectRef?.namespace === 'team-a' && (e.objectRef.name === name || e.objectRef.name === `antrea-mc-${name}`));
      assert.deepEqual(creates.map((e) => `${e.objectRef?.resource ?? ''}/${e.objectRef?.name ?? ''}:${String(e.responseStatus?.code)}`), [], 'nothing of the Service was created');
      assert.equal((await conflictEvents())[0]?.count ?? 1, 1, 'one Event, not repeated');

      await ri().delete(`team-a-${name}-endpoints`);
      await ri().delete(`team-a-${name}-service`);
      await waitFor('conflict cleared', () => agent?.imports.counts(CLUSTERSET_ID)?.conflicts === 0, converge);
      await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
      const after = held === 'endpoints'
        ? await core.readNamespacedEndpoints({ namespace: 'team-a', name: `antrea-mc-${name}` })
        : await custom.getNamespacedCustomObject({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespace: 'team-a', name }) as { metadata?: { uid?: string; resourceVersion?: string } };
      assert.equal(after.metadata?.uid, userObject.metadata?.uid, 'the user\'s object survives the withdrawal');
      assert.equal(after.metadata?.resourceVersion, userObject.metadata?.resourceVersion, 'and is unchanged');
      const deletes = readAuditEvents(member.auditLogPath, (e) => e.verb === 'delete' && e.requestReceivedTimestamp >= since && e.objectRef?.namespace === 'team-a'
        && (e.objectRef.name === name || e.objectRef.name === `antrea-mc-${name}`));
      assert.deepEqual(deletes.map((e) => e.objectRef?.resource), [], 'nothing deleted');
      if (held === 'endpoints') await core.deleteNamespacedEndpoints({ namespace: 'team-a', name: `antrea-mc-${name}` });
      else await custom.deleteNamespacedCustomObject({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespace: 'team-a', name });
    });
  }

  it('checks a new Service\'s names from metadata-only watches: no GET of its Endpoints or ServiceImport name', async () => {
    const since = new Date().toISOString();
    await ri().create(serviceImportRI('team-a', 'names-free', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI('team-a', 'names-free', ['10.60.0.2']));
    await waitFor('the Service imported', async () => (await local().service('team-a', 'antrea-mc-names-free')) !== undefined, converge);
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    // Had the watches failed (say, the API server refusing PartialObjectMetadata), each name would be read with a GET.
    const reads = readAuditEvents(member.auditLogPath, (e) => e.verb === 'get' && e.requestReceivedTimestamp >= since && e.objectRef?.namespace === 'team-a'
      && (e.objectRef.resource === 'endpoints' || e.objectRef.resource === 'serviceimports'));
    assert.deepEqual(reads.map((e) => `${e.objectRef?.resource ?? ''}/${e.objectRef?.name ?? ''}`), [], 'no GET of the names');
    await ri().delete('team-a-names-free-endpoints');
    await ri().delete('team-a-names-free-service');
    await waitFor('the Service withdrawn', async () => (await local().service('team-a', 'antrea-mc-names-free')) === undefined, converge);
  });

  it('keeps watching with the new token after a rotation, the old one revoked', async () => {
    const next = await createMemberAccess(leader, MEMBER_ID, { serviceAccount: 'member-east-rotated' });
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: next.token });
    // The watcher restarts with the new client: the leader sees ResourceImports listed and watched as the new ServiceAccount.
    const newUser = `system:serviceaccount:${LEADER_NS}:member-east-rotated`;
    await waitFor('a ResourceImport list and watch with the new token', () => {
      const verbs = new Set(readFileSync(leader.auditLogPath ?? '', 'utf8').split('\n').filter(Boolean)
        .map((line) => JSON.parse(line) as { verb: string; user: { username: string }; objectRef?: { resource?: string } })
        .filter((e) => e.user.username === newUser && e.objectRef?.resource === 'resourceimports').map((e) => e.verb));
      return verbs.has('list') && verbs.has('watch');
    }, converge);
    await leader.adminConfig().makeApiClient(CoreV1Api).deleteNamespacedServiceAccount({ namespace: LEADER_NS, name: access.serviceAccount });
    await waitFor('the old token rejected', async () => {
      try {
        await tokenConfig(leader, access.token).makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace: LEADER_NS });
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 401;
      }
    }, { timeoutMs: 20_000, intervalMs: 200 });
    await ri().create(serviceImportRI('team-a', 'after-rotation', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI('team-a', 'after-rotation', ['10.50.0.1']));
    await waitFor('an import published after the rotation', () => local().endpoints('team-a', 'antrea-mc-after-rotation'), converge);
    access = next;
  });

  it('opens every watch as client-go does: bookmarks and a server-side timeout of 5-10 minutes', () => {
    for (const [cluster, plane] of [['member', member], ['leader', leader]] as const) {
      const watches = readAuditEvents(plane.auditLogPath, (e) => e.verb === 'watch' && e.userAgent === 'clusterset-agent');
      assert.ok(watches.length >= (cluster === 'member' ? 5 : 2), `${cluster}: ${String(watches.length)} watches by the agent`);
      const bad = watches.map((e) => e.requestURI ?? '').filter((uri) => {
        const query = new URL(uri, 'https://x').searchParams;
        const timeout = Number(query.get('timeoutSeconds'));
        return query.get('allowWatchBookmarks') !== 'true' || !(timeout >= 300 && timeout < 600);
      });
      assert.deepEqual(bad, [], `${cluster}: watches without bookmarks or the server-side timeout`);
    }
  });

  // The server ends a watch at its timeoutSeconds; with bookmarks the agent knows where the
  // quiet collection is and reopens the watch from there. A LIST at every timeout (what a
  // reopen without a usable resourceVersion costs) would read every object again.
  it('reopens a watch the server ended at its timeout from where it was, without a LIST (member and leader)', async () => {
    await agent?.stop();
    // 4 to 7 s: long enough for the bookmark the apiserver sends 2 s before a watch's deadline.
    const started = new Date().toISOString();
    await startMemberAgent('apiClient: { watchTimeoutSeconds: 4 }');
    try {
      await waitFor('the agent ready, its exports synced with the leader', () => agent?.ready() === true && log.text().includes('exports synced with the leader'), converge);
      const agentUser = { member: 'test-admin', leader: `system:serviceaccount:${LEADER_NS}:${access.serviceAccount}` } as const;
      type Request = { verb: string; stage: string; requestURI?: string; userAgent?: string; user: { username: string }; requestReceivedTimestamp: string };
      const requests = (plane: ControlPlane, cluster: keyof typeof agentUser) => readFileSync(plane.auditLogPath ?? '', 'utf8').split('\n').filter(Boolean)
        .map((line) => JSON.parse(line) as Request)
        .filter((e) => e.user.username === agentUser[cluster] && e.requestReceivedTimestamp >= started
          // A watch is logged when it starts (ResponseStarted), a LIST when it completes.
          && ((e.verb === 'watch' && e.stage === 'ResponseStarted') || (e.verb === 'list' && e.stage === 'ResponseComplete')));
      // An informer lists and watches one collection with one selector; other LISTs (the
      // importer's resync of the objects it labelled) read other selections.
      const collection = (uri: string) => {
        const url = new URL(uri, 'https://x');
        return `${url.pathname}?labelSelector=${url.searchParams.get('labelSelector') ?? ''}&fieldSelector=${url.searchParams.get('fieldSelector') ?? ''}`;
      };
      // Every collection watched now has been watched before `since`: each watch after it is a reopen.
      const since = new Date().toISOString();
      const watched = { member: new Set<string>(), leader: new Set<string>() };
      for (const [cluster, plane] of [['member', member], ['leader', leader]] as const) {
        for (const e of requests(plane, cluster)) if (e.verb === 'watch' && e.userAgent === 'clusterset-agent') watched[cluster].add(collection(e.requestURI ?? ''));
      }
      assert.ok(watched.member.size >= 7, `member collections watched: ${[...watched.member].join(', ')}`);
      assert.ok([...watched.leader].some((c) => c.includes('/resourceimports')) && [...watched.leader].some((c) => c.includes('/resourceexports')), `leader collections watched: ${[...watched.leader].join(', ')}`);
      const reopened = () => ([['member', member], ['leader', leader]] as const).every(([cluster, plane]) => {
        const after = requests(plane, cluster).filter((e) => e.verb === 'watch' && e.requestReceivedTimestamp > since).map((e) => collection(e.requestURI ?? ''));
        return [...watched[cluster]].every((c) => after.includes(c));
      });
      await waitFor('every watch reopened after its timeout', reopened, { timeoutMs: 30_000, intervalMs: 250 });

      for (const [cluster, plane] of [['member', member], ['leader', leader]] as const) {
        const window = requests(plane, cluster).filter((e) => e.requestReceivedTimestamp > since && watched[cluster].has(collection(e.requestURI ?? '')));
        const lists = window.filter((e) => e.verb === 'list').map((e) => e.requestURI);
        assert.deepEqual(lists, [], `${cluster}: no LIST of a watched collection while its watches time out`);
        const watches = window.filter((e) => e.verb === 'watch');
        const bad = watches.map((e) => new URL(e.requestURI ?? '', 'https://x').searchParams).filter((q) => {
          const timeout = Number(q.get('timeoutSeconds'));
          return !(Number(q.get('resourceVersion')) > 0) || q.get('allowWatchBookmarks') !== 'true' || !(timeout >= 4 && timeout < 8);
        }).map(String);
        assert.deepEqual(bad, [], `${cluster}: reopened watches without a resourceVersion, bookmarks or the configured timeout`);
      }
    } finally {
      // Back to the default timeouts for what follows.
      await agent?.stop();
      await startMemberAgent();
      await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    }
  });

  // A bare kube-apiserver runs no namespace controller: a deleted namespace keeps the
  // `kubernetes` finalizer and stays Terminating until the test finalizes it.
  it('refuses an import into a Terminating namespace with an Event and a status count, creates nothing meanwhile, and lands it once the namespace is back', async () => {
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    const cs = clusterSetApi(member.adminConfig());
    const ns = 'team-t';
    await createNamespace(member.adminConfig(), ns);
    await core.deleteNamespace({ name: ns });
    assert.equal((await core.readNamespace({ name: ns })).status?.phase, 'Terminating');
    // The count the status shows now, once it agrees with the importer's (status writes are coalesced).
    const rejectedBefore = await waitFor('the status count settled', async () => {
      const shown = (await cs.get(CLUSTERSET_ID)).status?.imports?.rejected ?? 0;
      return shown === agent?.imports.counts(CLUSTERSET_ID)?.rejected ? shown : undefined;
    }, converge);
    const since = new Date().toISOString();
    await ri().create(serviceImportRI(ns, 'web', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI(ns, 'web', ['10.70.0.1']));

    const refusals = async () => (await core.listNamespacedEvent({ namespace: AGENT_NS })).items
      .filter((e) => e.reason === 'ImportRejectedNamespaceTerminating' && e.message?.includes(`"${ns}"`));
    const [event] = await waitFor('an ImportRejectedNamespaceTerminating Event', async () => { const found = await refusals(); return found.length > 0 ? found : undefined; }, converge);
    assert.match(event?.message ?? '', new RegExp(`ResourceImport ${LEADER_NS}/${ns}-web-(service|endpoints).*target namespace "${ns}" is being deleted \\(Terminating\\): the import lands once the namespace is created again`));
    assert.equal(event?.type, 'Warning');
    await waitFor('both imports counted as rejected in the ClusterSet status', async () =>
      (await cs.get(CLUSTERSET_ID)).status?.imports?.rejected === rejectedBefore + 2, converge);

    // The importer re-lists its objects every RESYNC_S: over two of those the refused imports
    // are not retried (the old behaviour was a create every few seconds).
    const agentRequests = (test: (e: AuditEvent) => boolean) => readAuditEvents(member.auditLogPath, (e) =>
      e.userAgent === 'clusterset-agent' && e.requestReceivedTimestamp >= since && test(e));
    const resyncs = () => agentRequests((e) => e.verb === 'list' && e.objectRef?.resource === 'services' && (e.requestURI ?? '').includes('labelSelector=')).length;
    const resyncsAtRefusal = resyncs();
    await waitFor('two importer resyncs after the refusal', () => resyncs() >= resyncsAtRefusal + 2, { timeoutMs: 4 * RESYNC_S * 1000, intervalMs: 250 });
    const creates = agentRequests((e) => e.verb === 'create' && e.objectRef?.namespace === ns);
    // At most one create per import that raced the namespace cache (refused with 403), never a retry.
    assert.ok(creates.length <= 2, `creates in the Terminating namespace: ${creates.map((e) => `${e.objectRef?.resource ?? ''}:${String(e.responseStatus?.code)}`).join(', ')}`);
    assert.equal((await refusals()).reduce((n, e) => n + (e.count ?? 1), 0) <= 2, true, 'one Event per refused import, not repeated');

    // Finalized (what the namespace controller does once it emptied it), deleted, created again.
    const terminating = await core.readNamespace({ name: ns });
    await core.replaceNamespaceFinalize({ name: ns, body: { apiVersion: 'v1', kind: 'Namespace', metadata: terminating.metadata ?? { name: ns }, spec: { finalizers: [] } } });
    await waitFor('the namespace gone', async () => {
      try {
        await core.readNamespace({ name: ns });
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 404;
      }
    }, converge);
    await createNamespace(member.adminConfig(), ns);
    await waitFor('the import landed once the namespace is back', async () =>
      (await local().endpoints(ns, 'antrea-mc-web'))?.subsets?.[0]?.addresses?.[0]?.ip === '10.70.0.1' && (await local().serviceImport(ns, 'web')) !== undefined, converge);
    await waitFor('no import counted as rejected any more', async () => (await cs.get(CLUSTERSET_ID)).status?.imports?.rejected === rejectedBefore, converge);

    await ri().delete(`${ns}-web-endpoints`);
    await ri().delete(`${ns}-web-service`);
    await waitFor('the import withdrawn', async () => (await local().service(ns, 'antrea-mc-web')) === undefined, converge);
  });

  it('a Role without watch on resourceimports: ImportsSynced=False in the status within a bound, status exits 3 naming it; lists are read in pages of 500', async () => {
    // More imports than one page holds, targeted at another cluster (nothing lands here).
    const extra = 520;
    for (let i = 0; i < extra; i++) {
      const far = serviceImportRI('team-b', `far-${String(i)}`, [{ name: 'p', port: 80 }], ['west']);
      await ri().create({ ...far, metadata: { ...far.metadata, labels: { 'test-batch': 'far' } } });
    }
    const rbac = leader.adminConfig().makeApiClient(RbacAuthorizationV1Api);
    const role = await rbac.readNamespacedRole({ namespace: LEADER_NS, name: access.serviceAccount });
    const original = role.rules ?? [];
    // The same rules, but resourceimports may only be read and listed, never watched.
    const withoutWatch = original.flatMap((r) => (r.resources?.includes('resourceimports') === true
      ? [Object.assign({}, r, { resources: r.resources.filter((x) => x !== 'resourceimports') }), Object.assign({}, r, { resources: ['resourceimports'], verbs: r.verbs.filter((v) => v !== 'watch') })]
      : [r])).filter((r) => (r.resources?.length ?? 0) > 0);
    const since = Date.now();
    await rbac.replaceNamespacedRole({ namespace: LEADER_NS, name: access.serviceAccount, body: Object.assign({}, role, { rules: withoutWatch }) });
    // The open watch ends at its server-side timeout at the latest; a restart makes the next one now.
    await agent?.stop();
    await startMemberAgent();
    const synced = async () => ((await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID))?.status?.conditions ?? []).find((c) => c.type === 'ImportsSynced');
    const failing = await waitFor('ImportsSynced=False on the member ClusterSet', async () => {
      const c = await synced();
      return c?.status === 'False' ? c : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });
    assert.equal(failing.reason, 'Forbidden');
    assert.match(failing.message ?? '', /the ResourceImport watcher fails, imports are frozen: .*watch/);
    assert.ok(Date.parse(failing.lastTransitionTime ?? '') >= since - 1000, 'since when it fails');
    const ready = ((await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID))?.status?.conditions ?? []).find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True', 'the heartbeat still works: Ready alone would hide it');
    const shown = await statusOf(member);
    assert.equal(shown.code, 3, shown.stdout + shown.stderr);
    assert.match(shown.stdout, /- ImportsSynced=False \(Forbidden\) since \S+: the ResourceImport watcher fails, imports are frozen/);

    // Each list of the leader's imports was read in pages: limit=500, then continue.
    const lists = readAuditEvents(leader.auditLogPath, (e) => e.verb === 'list' && e.objectRef?.resource === 'resourceimports' &&
      e.user.username === `system:serviceaccount:${LEADER_NS}:${access.serviceAccount}` && Date.parse(e.requestReceivedTimestamp) >= since)
      .map((e) => new URL(e.requestURI ?? '', 'https://x').searchParams);
    assert.ok(lists.some((q) => q.get('limit') === '500' && q.get('continue') === null), 'a first page of 500');
    assert.ok(lists.some((q) => q.get('limit') === '500' && (q.get('continue') ?? '') !== ''), 'a next page, with the continue token');
    assert.ok(lists.every((q) => q.get('limit') === '500'), 'no list without a limit');

    await rbac.replaceNamespacedRole({ namespace: LEADER_NS, name: access.serviceAccount, body: Object.assign({}, await rbac.readNamespacedRole({ namespace: LEADER_NS, name: access.serviceAccount }), { rules: original }) });
    await waitFor('ImportsSynced=True once watch is granted again', async () => (await synced())?.status === 'True', { timeoutMs: 60_000, intervalMs: 250 });
    await leader.adminConfig().makeApiClient(CustomObjectsApi).deleteCollectionNamespacedCustomObject({
      group: RESOURCE_IMPORT.group, version: RESOURCE_IMPORT.version, plural: RESOURCE_IMPORT.plural, namespace: LEADER_NS, labelSelector: 'test-batch=far',
    });
  });

  it('removes everything it imported when the ClusterSet is deleted, and nothing else', async () => {
    await waitFor('imports present', () => (agent?.imports.counts(CLUSTERSET_ID)?.total ?? 0) > 0, converge);
    await clusterSetApi(member.adminConfig()).delete(CLUSTERSET_ID);
    await waitFor('no object of ours left', async () => {
      const rows = await local().snapshot();
      return rows.every((r) => !/ (team-a|team-b)\/antrea-mc-(svc|late)/.test(r)) && !rows.some((r) => r.startsWith('serviceimports team-b/'));
    }, { timeoutMs: 60_000, intervalMs: 200 });
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    assert.ok(await core.readNamespacedService({ namespace: 'team-a', name: 'antrea-mc-mine' }), 'the user Service is not ours to delete');
  });
});
