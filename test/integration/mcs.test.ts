// KEP-1645 (MCS) behaviour of this project's leader and agents on fuller control planes
// (kube-controller-manager with the EndpointSlice and EndpointSlice-mirroring controllers, a
// scheduler, a kwok node): Deployments' Pods are Running with IPs and the Services are exported
// the way users do it. A ServiceImport in every member including the exporter, session affinity
// carried over, EndpointSlices per source cluster with exactly one set of endpoints as kube sees
// them (Antrea's Endpoints kept but not mirrored), Headless imports, and un-export.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api, type V1EndpointSlice } from '@kubernetes/client-node';
import { SERVICE_EXPORT, SERVICE_IMPORT, type ServiceImport } from '../../src/common/api/mcs.js';
import { useAgentClusterSet, type AgentMember } from '../harness/agents.js';
import { startControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import { exportService } from '../harness/service-export.js';
import { waitFor } from '../harness/wait.js';

const NS = 'mcs';
const converge = { timeoutMs: 30_000, intervalMs: 200 };
const MIRROR_MANAGER = 'endpointslicemirroring-controller.k8s.io';

type Member = AgentMember<'east' | 'west'>;

describe('MCS on fuller control planes: this project\'s leader and two agents', () => {
  const { members } = useAgentClusterSet(NS, async () => {
    const [leader, east, west] = await Promise.all([
      startControlPlane('mcs-leader'),
      startControlPlane('mcs-east', { controllers: true, podCIDR: '10.244.0.0/16' }),
      startControlPlane('mcs-west', { controllers: true, podCIDR: '10.245.0.0/16' }),
    ]);
    return { leader, members: [['east', east], ['west', west]] };
  });

  const serviceImport = (m: Member, name: string) => maybe(async () => (await m.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespace: NS, name,
  })) as ServiceImport);
  const slicesOf = async (m: Member, service: string): Promise<V1EndpointSlice[]> =>
    (await m.cp.adminConfig().makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: NS, labelSelector: `kubernetes.io/service-name=${service}` })).items;

  /** A Deployment of two Pods (Running on the kwok node), a Service selecting them, a ServiceExport. */
  const deployAndExport = async (m: Member, name: string, spec: Record<string, unknown>) => {
    const kc = m.cp.adminConfig();
    const labels = { app: name };
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: NS,
      body: { metadata: { name }, spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'example.invalid/hello:1' }] } } } },
    });
    // No EndpointSlice of the test's own: the EndpointSlice controller writes the Pods'.
    await exportService(kc, NS, name, { spec: { selector: labels, ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }], ...spec } });
  };
  const unexport = (m: Member, name: string) => m.cp.adminConfig().makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
    group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: NS, name,
  });
  const podIPs = async (m: Member, app: string) => (await m.cp.adminConfig().makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `app=${app}` }))
    .items.map((p) => p.status?.podIP ?? '').filter((ip) => ip !== '').sort();

  it('imports a Service exported by both members into both, with session affinity, and one EndpointSlice per source cluster that kube sees once', async () => {
    const [east, west] = members as [Member, Member];
    // A control case first: a selector-less Service whose Endpoints the mirroring controller does mirror.
    const core = west.cp.adminConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedService({ namespace: NS, body: { metadata: { name: 'control' }, spec: { ports: [{ port: 80 }] } } });
    await core.createNamespacedEndpoints({ namespace: NS, body: { metadata: { name: 'control' }, subsets: [{ addresses: [{ ip: '10.9.9.9' }], ports: [{ port: 80 }] }] } });

    const affinity = { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } } };
    await deployAndExport(east, 'hello', affinity);
    await deployAndExport(west, 'hello', affinity);
    const ips = { east: await waitFor('east Pod IPs', async () => ((await podIPs(east, 'hello')).length === 2 ? podIPs(east, 'hello') : undefined), converge),
      west: await waitFor('west Pod IPs', async () => ((await podIPs(west, 'hello')).length === 2 ? podIPs(west, 'hello') : undefined), converge) };
    assert.ok(ips.east.every((ip) => ip.startsWith('10.244.')) && ips.west.every((ip) => ip.startsWith('10.245.')));

    for (const m of members) {
      // A ServiceImport in every member, the exporting ones included (both export here).
      const si = await waitFor(`ServiceImport in ${m.id}`, async () => {
        const s = await serviceImport(m, 'hello');
        return s?.spec?.ips?.length === 1 ? s : undefined;
      }, converge);
      assert.equal(si.spec?.type, 'ClusterSetIP');
      assert.equal(si.spec?.sessionAffinity, 'ClientIP');
      assert.deepEqual(si.spec?.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10 } });
      assert.equal(si.spec?.internalTrafficPolicy, 'Cluster');
      const derived = await m.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: NS, name: 'antrea-mc-hello' });
      assert.equal(si.spec?.ips?.[0], derived.spec?.clusterIP);

      const slices = await waitFor(`two MCS EndpointSlices in ${m.id}`, async () => {
        const s = await slicesOf(m, 'antrea-mc-hello');
        return s.length === 2 && s.every((x) => (x.endpoints ?? []).length === 1) ? s : undefined;
      }, converge);
      assert.deepEqual(slices.map((s) => s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster']).sort(), ['east', 'west']);
      for (const s of slices) {
        assert.equal(s.metadata?.labels?.['multicluster.kubernetes.io/service-name'], 'hello');
        assert.equal(s.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], 'clusterset-agent.multicluster.clusterset-agent.io');
        assert.equal(s.addressType, 'IPv4');
        assert.deepEqual(s.ports?.map((p) => [p.name, p.port, p.protocol]), [['tcp', 42, 'TCP']]);
      }
      // ClusterIP mode: each cluster's endpoint is its Service's ClusterIP.
      const byCluster = new Map(slices.map((s) => [s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'], s.endpoints?.[0]?.addresses[0]]));
      for (const exporter of members) {
        const svc = await exporter.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: NS, name: 'hello' });
        assert.equal(byCluster.get(exporter.id), svc.spec?.clusterIP);
      }
      const endpoints = await m.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedEndpoints({ namespace: NS, name: 'antrea-mc-hello' });
      assert.equal(endpoints.metadata?.labels?.['endpointslice.kubernetes.io/skip-mirror'], 'true', 'Antrea\'s Endpoints are still written, marked skip-mirror');
      assert.equal(endpoints.subsets?.flatMap((s) => s.addresses ?? []).length, 2);
    }
    // The mirroring controller runs: it mirrored the control Endpoints (created before the imports)...
    await waitFor('the control Endpoints mirrored', async () => (await slicesOf(west, 'control')).some((s) => s.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'] === MIRROR_MANAGER), converge);
    // ...and the imported Service has exactly one set of endpoints: ours, nothing mirrored, nothing from the endpointslice controller.
    for (const m of members) {
      const slices = await slicesOf(m, 'antrea-mc-hello');
      assert.deepEqual(slices.map((s) => s.metadata?.labels?.['endpointslice.kubernetes.io/managed-by']), [
        'clusterset-agent.multicluster.clusterset-agent.io', 'clusterset-agent.multicluster.clusterset-agent.io',
      ]);
    }
  });

  it('imports a headless Service as Headless: no IP, a headless derived Service, the Pod IPs in the slice', async () => {
    const [east, west] = members as [Member, Member];
    await deployAndExport(east, 'db', { clusterIP: 'None' });
    const ips = await waitFor('east db Pod IPs', async () => ((await podIPs(east, 'db')).length === 2 ? podIPs(east, 'db') : undefined), converge);
    const slice = await waitFor('db EndpointSlice in west with both Pod IPs', async () => {
      const s = await slicesOf(west, 'antrea-mc-db');
      return s.length === 1 && s[0]?.endpoints?.length === 2 ? s[0] : undefined;
    }, converge);
    assert.deepEqual(slice.endpoints?.map((e) => e.addresses[0]).sort(), ips);
    assert.equal(slice.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'], 'east');
    for (const m of members) {
      const si = await waitFor(`db ServiceImport in ${m.id}`, () => serviceImport(m, 'db'), converge);
      assert.equal(si.spec?.type, 'Headless');
      assert.equal(si.spec?.ips, undefined);
      const derived = await m.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: NS, name: 'antrea-mc-db' });
      assert.equal(derived.spec?.clusterIP, 'None');
    }
  });

  it('un-export: the ServiceImport stays while one member exports, and goes with its slices when the last one stops', async () => {
    const [east, west] = members as [Member, Member];
    await unexport(east, 'hello');
    await waitFor('only west\'s slice left in east', async () => {
      const s = await slicesOf(east, 'antrea-mc-hello');
      return s.length === 1 && s[0]?.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] === 'west';
    }, converge);
    assert.ok(await serviceImport(east, 'hello'), 'west still exports hello');
    await unexport(west, 'hello');
    for (const m of members) {
      await waitFor(`hello ServiceImport and slices gone from ${m.id}`, async () =>
        (await serviceImport(m, 'hello')) === undefined && (await slicesOf(m, 'antrea-mc-hello')).length === 0, converge);
    }
  });
});
