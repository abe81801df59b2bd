// KEP-1645 exported labels and annotations (issue 27 item 4), end to end on real control planes
// with this project's leader: a ServiceExport's spec.exportedLabels/exportedAnnotations reach the
// ServiceImport of every member (the Service's own labels do not); a second exporter with other
// values puts Conflict=True on BOTH ServiceExports while every ServiceImport keeps the oldest
// export's; a key dropped from the export leaves the ServiceImports, a key a user added stays.
// And status.endpointSliceObjects (item 5) is Present on every ServiceImport (v1beta1 served).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { SERVICE_EXPORT, SERVICE_IMPORT, type ServiceExport, type ServiceImport } from '../../src/common/api/mcs.js';
import { EXPORTED_LABELS_ANNOTATION } from '../../src/common/api/exported-metadata.js';
import { RESOURCE_EXPORT, type ResourceExport } from '../../src/common/api/antrea.js';
import { LEADER_NS } from '../harness/clusterset.js';
import { useAgentClusterSet, type AgentMember } from '../harness/agents.js';
import { startControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import { exportService } from '../harness/service-export.js';
import { waitFor } from '../harness/wait.js';

const NS = 'team-a';
const NAME = 'hello';
// The KEP (and the conformance suite) give an implementation 20 s.
const converge = { timeoutMs: 20_000, intervalMs: 200 };

type Member = AgentMember;

describe('exported labels and annotations: to every ServiceImport, the oldest export winning a conflict', () => {
  const clusterSet = useAgentClusterSet(NS, async () => {
    const [leader, east, west] = await Promise.all([startControlPlane('xl-leader'), startControlPlane('xl-east'), startControlPlane('xl-west')]);
    return { leader, members: [['east', east], ['west', west]] };
  });
  const { members } = clusterSet;

  const custom = (m: Member) => m.cp.adminConfig().makeApiClient(CustomObjectsApi);
  const mcs = (d: typeof SERVICE_IMPORT | typeof SERVICE_EXPORT) => ({ group: d.group, version: d.version, plural: d.plural, namespace: NS, name: NAME });
  const serviceImport = (m: Member) => maybe(async () => (await custom(m).getNamespacedCustomObject(mcs(SERVICE_IMPORT))) as ServiceImport);
  const serviceExport = (m: Member) => maybe(async () => (await custom(m).getNamespacedCustomObject(mcs(SERVICE_EXPORT))) as ServiceExport);
  const setExported = async (m: Member, spec: NonNullable<ServiceExport['spec']>) => {
    const se = await serviceExport(m);
    assert.ok(se);
    await custom(m).replaceNamespacedCustomObject({ ...mcs(SERVICE_EXPORT), body: { ...se, spec } });
  };
  const exportHello = (m: Member, ip: string, spec: NonNullable<ServiceExport['spec']>) => exportService(m.cp.adminConfig(), NS, NAME, {
    metadata: { labels: { 'service-own': 'label' }, annotations: { 'service-own': 'annotation' } },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    endpoints: { addresses: [ip], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    exportSpec: spec,
  });
  const conflict = (m: Member, status: 'True' | 'False') => waitFor(`ServiceExport in ${m.id} Conflict=${status}`, async () => {
    const c = (await serviceExport(m))?.status?.conditions?.find((x) => x.type === 'Conflict');
    return c?.status === status ? c : undefined;
  }, converge);
  /** Waits until every member's ServiceImport satisfies `ok`; returns them. */
  const everywhere = (what: string, ok: (si: ServiceImport) => boolean) => Promise.all(members.map((m) => waitFor(`${m.id}: ${what}`, async () => {
    const si = await serviceImport(m);
    return si !== undefined && ok(si) ? si : undefined;
  }, converge)));

  it('puts one exporter\'s labels and annotations on the ServiceImport of every member within 20 s, never the Service\'s own', async () => {
    const [east] = members as [Member, Member];
    await exportHello(east, '10.244.1.5', { exportedLabels: { team: 'a', tier: 'web' }, exportedAnnotations: { note: 'from east' } });
    const imports = await everywhere('exported labels and annotations', (si) =>
      si.metadata?.labels?.['team'] === 'a' && si.metadata.labels['tier'] === 'web' && si.metadata.annotations?.['note'] === 'from east');
    for (const si of imports) {
      assert.equal(si.metadata?.labels?.['service-own'], undefined, 'the Service\'s own label is not copied');
      assert.equal(si.metadata?.annotations?.['service-own'], undefined, 'the Service\'s own annotation is not copied');
      assert.equal(si.metadata?.labels?.['app.kubernetes.io/managed-by'], 'clusterset-agent', 'the agent\'s own label stands');
    }
    // The wire: the member's Service RE carries them, as annotations Antrea's controllers ignore.
    const re = (await clusterSet.leader.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS, name: `east-${NS}-${NAME}-service`,
    })) as ResourceExport;
    assert.equal(re.metadata?.annotations?.[EXPORTED_LABELS_ANNOTATION], '{"team":"a","tier":"web"}');
  });

  it('status.endpointSliceObjects is Present on every ServiceImport (v1beta1 served)', async () => {
    await everywhere('status.endpointSliceObjects Present', (si) => si.status?.endpointSliceObjects === 'Present');
  });

  it('a second exporter with other values: Conflict=True on BOTH ServiceExports, every ServiceImport keeps the oldest export\'s', async () => {
    const [east, west] = members as [Member, Member];
    // A key a user puts on an imported ServiceImport by hand: never the export's to remove.
    const si = await serviceImport(west);
    assert.ok(si);
    await custom(west).replaceNamespacedCustomObject({ ...mcs(SERVICE_IMPORT), body: { ...si, metadata: { ...si.metadata, labels: { ...si.metadata?.labels, 'user-added': 'yes' } } } });

    await exportHello(west, '10.244.2.5', { exportedLabels: { team: 'b' }, exportedAnnotations: { note: 'from west' } });
    const [eastConflict, westConflict] = await Promise.all([conflict(east, 'True'), conflict(west, 'True')]);
    for (const c of [eastConflict, westConflict]) assert.match(c.message ?? '', /exported labels differ[\s\S]*exported annotations differ/);
    const imports = await everywhere('the oldest export\'s values', (s) => s.metadata?.labels?.['team'] === 'a' && s.metadata.annotations?.['note'] === 'from east');
    for (const s of imports) assert.equal(s.metadata?.labels?.['team'], 'a');

    // West aligns: the conflict clears on both.
    await setExported(west, { exportedLabels: { team: 'a', tier: 'web' }, exportedAnnotations: { note: 'from east' } });
    await Promise.all([conflict(east, 'False'), conflict(west, 'False')]);
  });

  it('a key dropped from the exports leaves every ServiceImport; the key a user added stays', async () => {
    const [east, west] = members as [Member, Member];
    await Promise.all([east, west].map((m) => setExported(m, { exportedLabels: { tier: 'web' } })));
    await everywhere('team and note removed, tier kept', (si) =>
      si.metadata?.labels?.['team'] === undefined && si.metadata?.annotations?.['note'] === undefined && si.metadata?.labels?.['tier'] === 'web');
    await Promise.all([conflict(east, 'False'), conflict(west, 'False')]);
    assert.equal((await serviceImport(west))?.metadata?.labels?.['user-added'], 'yes');
  });
});
