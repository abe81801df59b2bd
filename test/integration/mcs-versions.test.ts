// The MCS API version a member serves (issue 27). A member whose ServiceImport/ServiceExport
// CRDs serve only v1alpha1 (Antrea's member CRDs, clusters set up before mcs-api v0.5) is spoken
// to in v1alpha1; after the upgrade to the chart's CRDs (upstream v0.5.2: v1beta1 stored,
// v1alpha1 served) the objects stored at v1alpha1 stay readable and owned, the restarted agent
// speaks v1beta1, and it rewrites nothing it already imported.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import {
  SERVICE_EXPORT, SERVICE_EXPORT_V1ALPHA1, SERVICE_IMPORT, SERVICE_IMPORT_V1ALPHA1, type ServiceExport, type ServiceImport,
} from '../../src/common/api/mcs.js';
import type { ResourceDescriptor } from '../../src/common/api/meta.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { LeaderController } from '../../src/leader/controller.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, createClusterSet, createMemberAccess, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { applyCrds, createNamespace, kubectl, loadCrdFiles } from '../harness/kube.js';
import { maybe } from '../harness/imports.js';
import { k8sBins, repoRoot } from '../harness/bins.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const NS = 'team-a';
const execFileAsync = promisify(execFile);

/** The NOTES `helm install` prints for a member install into `cp` (a server-side dry run: its lookups read the cluster, nothing is written). */
async function memberInstallNotes(cp: ControlPlane): Promise<string> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'csa-helm-'));
  try {
    const { stdout } = await execFileAsync(k8sBins().helm, ['--kubeconfig', cp.kubeconfigPath, 'install', 'csa', path.join(repoRoot, 'charts', 'clusterset-agent'),
      '--namespace', AGENT_NS, '--dry-run=server'], {
      encoding: 'utf8', timeout: 120_000,
      env: { ...process.env, HELM_CACHE_HOME: path.join(home, 'cache'), HELM_CONFIG_HOME: path.join(home, 'config'), HELM_DATA_HOME: path.join(home, 'data') },
    });
    return stdout;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
const converge = { timeoutMs: 30_000, intervalMs: 200 };

/** The chart's CRDs with the MCS ones cut back to v1alpha1 alone, stored: what a member had before mcs-api v0.5. */
function v1alpha1OnlyCrds(): V1CustomResourceDefinition[] {
  return loadCrdFiles().map((crd) => {
    if (crd.spec.group !== 'multicluster.x-k8s.io') return crd;
    const copy = structuredClone(crd);
    copy.spec.versions = copy.spec.versions.filter((v) => v.name === 'v1alpha1');
    for (const v of copy.spec.versions) v.storage = true;
    return copy;
  });
}

describe('the MCS API version of a member: v1alpha1 only, then the CRD upgrade to v1beta1', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let controller: LeaderController | undefined;
  let agent: Agent | undefined;
  const leaderLog = capturedLogger();
  let log = capturedLogger();

  const custom = () => member.adminConfig().makeApiClient(CustomObjectsApi);
  const get = <T>(d: ResourceDescriptor, name: string) => maybe(async () => (await custom().getNamespacedCustomObject({ group: d.group, version: d.version, plural: d.plural, namespace: NS, name })) as T);
  const exportService = async (name: string, ip: string, d: ResourceDescriptor) => {
    await member.adminConfig().makeApiClient(CoreV1Api).createNamespacedService({ namespace: NS, body: { metadata: { name }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } });
    await member.adminConfig().makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace: NS,
      body: { metadata: { name: `${name}-abc`, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', endpoints: [{ addresses: [ip], conditions: { ready: true } }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    await custom().createNamespacedCustomObject({ group: d.group, version: d.version, plural: d.plural, namespace: NS, body: { apiVersion: d.apiVersion, kind: d.kind, metadata: { name } } });
  };
  const start = async () => {
    log = capturedLogger();
    const config = loadConfig({ env: {}, readFile: () => '' });
    agent = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: 2 } }, log.logger, member.adminConfig());
  };
  const imported = (d: ResourceDescriptor, name: string) => waitFor(`ServiceImport ${name} (${d.version})`, async () => {
    const si = await get<ServiceImport>(d, name);
    return si?.spec?.ips?.length === 1 ? si : undefined;
  }, converge);
  const valid = (d: ResourceDescriptor, name: string) => waitFor(`ServiceExport ${name} Valid (${d.version})`, async () => {
    const se = await get<ServiceExport>(d, name);
    return se?.status?.conditions?.find((c) => c.type === 'Valid' && c.status === 'True');
  }, converge);

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader'), startControlPlane('member')]);
    await Promise.all([setupLeader(leader), applyCrds(member.adminConfig(), v1alpha1OnlyCrds())]);
    for (const ns of [AGENT_NS, NS]) await createNamespace(member.adminConfig(), ns);
    controller = new LeaderController({ kubeConfig: leader.adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 30_000, staleMemberMs: 86_400_000, logger: leaderLog.logger });
    await controller.start();
    const access = await createMemberAccess(leader, 'east');
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    await createClusterSet(member, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
  });
  after(async () => {
    await agent?.stop();
    await controller?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- leader log ---\n${leaderLog.text()}\n--- agent log ---\n${log.text()}`);

  it('speaks v1alpha1 where only v1alpha1 is served: exports and imports work', async () => {
    await start();
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 60_000);
    assert.match(log.text(), /MCS API version.*"version":"v1alpha1"/);
    await exportService('web', '10.244.1.5', SERVICE_EXPORT_V1ALPHA1);
    await valid(SERVICE_EXPORT_V1ALPHA1, 'web');
    const si = await imported(SERVICE_IMPORT_V1ALPHA1, 'web');
    assert.equal(si.apiVersion, SERVICE_IMPORT_V1ALPHA1.apiVersion);
    const slices = (await member.adminConfig().makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: NS, labelSelector: 'multicluster.kubernetes.io/service-name=web' })).items;
    assert.deepEqual(slices.flatMap((s) => s.metadata?.ownerReferences ?? []).map((r) => [r.apiVersion, r.uid]), [[SERVICE_IMPORT_V1ALPHA1.apiVersion, si.metadata?.uid]]);
    // Not written where only v1alpha1 is served (this CRD's schema would even keep it: the agent did not write it).
    assert.equal(si.status?.endpointSliceObjects, undefined);
    assert.equal((await get<ServiceImport>(SERVICE_IMPORT_V1ALPHA1, 'web'))?.status?.endpointSliceObjects, undefined);
  });

  it('the chart\'s NOTES on a v1alpha1-only member: the agent speaks v1alpha1, and how to move to the chart\'s CRDs', async () => {
    const notes = await memberInstallNotes(member);
    assert.match(notes, /MCS CRDs: the ServiceImport CRD in this cluster serves only v1alpha1 \(installed before\nmcs-api v0\.5, or Antrea's own\)\. The agent speaks v1alpha1 there\./);
    assert.match(notes, /To move to the chart's\nv0\.5\.2 \(v1beta1 stored, v1alpha1 still served; objects stored at v1alpha1 stay readable\):/);
    assert.match(notes, /kubectl apply --server-side -f <chart>\/crds\/multicluster\.x-k8s\.io_serviceimports\.yaml/);
  });

  it('after the CRD upgrade the objects stored at v1alpha1 stay readable and owned, and the restarted agent speaks v1beta1', async () => {
    const before = await imported(SERVICE_IMPORT_V1ALPHA1, 'web');
    await agent?.stop();
    agent = undefined;
    // The upgrade as docs/install.md has it: the chart's CRDs applied over the old ones.
    const dir = path.join(repoRoot, 'charts', 'clusterset-agent', 'crds');
    await kubectl(member, ['apply', '--server-side', '--force-conflicts', '-f', path.join(dir, 'multicluster.x-k8s.io_serviceimports.yaml'), '-f', path.join(dir, 'multicluster.x-k8s.io_serviceexports.yaml')]);
    const crds = member.adminConfig().makeApiClient(ApiextensionsV1Api);
    await waitFor('v1beta1 served', async () => {
      const crd = await crds.readCustomResourceDefinition({ name: 'serviceimports.multicluster.x-k8s.io' });
      return crd.spec.versions.some((v) => v.name === 'v1beta1' && v.storage) && crd.status?.storedVersions?.includes('v1alpha1') === true;
    }, converge);
    // Stored at v1alpha1, read through v1beta1: the same object.
    const same = await waitFor('the ServiceImport through v1beta1', () => get<ServiceImport>(SERVICE_IMPORT, 'web'), converge);
    assert.equal(same.metadata?.uid, before.metadata?.uid);

    await start();
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 60_000);
    assert.match(log.text(), /MCS API version.*"version":"v1beta1"/);
    // A new export is imported in v1beta1; the old one is still ours (neither re-created nor a conflict).
    await exportService('api', '10.244.1.6', SERVICE_EXPORT);
    await valid(SERVICE_EXPORT, 'api');
    await imported(SERVICE_IMPORT, 'api');
    await valid(SERVICE_EXPORT, 'web');
    const after = await imported(SERVICE_IMPORT, 'web');
    assert.equal(after.metadata?.uid, before.metadata?.uid, 'the ServiceImport stored at v1alpha1 was kept, not re-created');
    assert.doesNotMatch(log.text(), /ImportConflict|not ours/);
    const slices = (await member.adminConfig().makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: NS, labelSelector: 'multicluster.kubernetes.io/service-name=web' })).items;
    await waitFor('the slice owned through v1beta1', async () => {
      const now = (await member.adminConfig().makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: NS, labelSelector: 'multicluster.kubernetes.io/service-name=web' })).items;
      return now.every((s) => s.metadata?.ownerReferences?.every((r) => r.apiVersion === SERVICE_IMPORT.apiVersion && r.uid === before.metadata?.uid) === true);
    }, converge);
    assert.equal(slices.length, 1);
    // v1beta1 served now: status.endpointSliceObjects on the new import and on the one from before.
    for (const name of ['api', 'web']) {
      await waitFor(`ServiceImport ${name} endpointSliceObjects Present`, async () => (await get<ServiceImport>(SERVICE_IMPORT, name))?.status?.endpointSliceObjects === 'Present', converge);
    }
    // The chart's CRDs now: NOTES have nothing to say about them.
    assert.doesNotMatch(await memberInstallNotes(member), /MCS CRDs:/);
  });
});
