// The REAL Antrea v2.7 member (antrea-mc-controller member, Antrea's manifests as they are)
// under this project's `leader run` (chart in mode=leader, its policies and its own
// ServiceAccount), beside one of our agents (west): join, liveness from Antrea's heartbeats, its
// exports aggregated and imported by our agent, our export imported by Antrea's member, Antrea's
// stale-export cleanup after a restart, and a leave (Antrea deletes only its announce; the leader
// must delete its exports).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { SERVICE_EXPORT_V1ALPHA1 } from '../../src/common/api/mcs.js';
import { EXPORTED_LABELS_ANNOTATION } from '../../src/common/api/exported-metadata.js';
import { MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, RESOURCE_IMPORT } from '../../src/common/api/antrea.js';
import { CLUSTERSET_ID, waitForReady } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import {
  APP_NS, exportService, imported, memberStatusOnLeader, startAntreaMember, startOurLeader, startOurMember, type InteropMember,
} from '../harness/interop.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

/** Antrea's member announces every 10 s; the leader's timeout must leave room for that. */
const MEMBER_TIMEOUT_MS = 22_000;
const converge = { timeoutMs: 60_000, intervalMs: 200 };

describe('interop: the real Antrea member under our leader', () => {
  const cps: ControlPlane[] = [];
  let leader: Awaited<ReturnType<typeof startOurLeader>>;
  let antrea: Awaited<ReturnType<typeof startAntreaMember>>;
  let west: InteropMember;

  const leaderObject = (d: { group: string; version: string; plural: string }, name: string) => maybe(() =>
    leader.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: d.group, version: d.version, plural: d.plural, namespace: 'antrea-multicluster', name }));
  const statusOf = (id: string) => memberStatusOnLeader(leader, id);

  before(async () => {
    const [l, a, w] = await Promise.all([startControlPlane('leader'), startControlPlane('antrea-east'), startControlPlane('west')]);
    cps.push(l, a, w);
    leader = await startOurLeader(l, { memberTimeoutMs: MEMBER_TIMEOUT_MS });
    [antrea, west] = await Promise.all([startAntreaMember(a, 'east', leader), startOurMember(w, 'west', leader)]);
  });
  after(async () => {
    await Promise.all([antrea.stop(), west.stop()]);
    await leader.stop();
    await Promise.all(cps.map((cp) => cp.stop()));
  });
  onFailureShowLogs(() => cps, () => `--- our leader ---\n${leader.log()}\n--- antrea member ---\n${antrea.log()}\n--- west ---\n${west.log()}`);

  it('join: our leader admits Antrea\'s member, finalizes its announce and reports it Ready', async () => {
    await waitForReady(west.cp, CLUSTERSET_ID, 'True', 'Connected', 60_000);
    const ready = await waitFor('east Ready on our leader', async () => {
      const c = await statusOf('east');
      return c?.status === 'True' ? c : undefined;
    }, converge);
    assert.equal(ready.type, 'Ready');
    const announce = await leaderObject(MEMBER_CLUSTER_ANNOUNCE, 'member-announce-from-east') as { metadata?: { finalizers?: string[] } };
    assert.ok((announce.metadata?.finalizers ?? []).length > 0, 'our leader put its finalizer on Antrea\'s announce');
  });

  it('Antrea\'s export is aggregated by our leader and imported by our agent', async () => {
    const clusterIP = await exportService(antrea.cp, 'web', 80);
    const re = await waitFor('Antrea\'s web export Succeeded', async () => {
      const r = (await leaderObject(RESOURCE_EXPORT, `east-${APP_NS}-web-service`)) as { status?: { conditions?: { type: string; status: string }[] } } | undefined;
      return r?.status?.conditions?.find((c) => c.type === 'Succeeded' && c.status === 'True') ? r : undefined;
    }, converge);
    assert.ok(re);
    const got = await waitFor('web imported in west', async () => {
      const i = await imported(west.cp, 'web');
      return i && i.ips.length > 0 ? i : undefined;
    }, converge);
    assert.deepEqual(got.ports, [80]);
    // Antrea's member exports the Service's ClusterIP (endpointIPType: ClusterIP in its ConfigMap).
    assert.deepEqual(got.ips, [clusterIP]);
  });

  it('our export is imported by Antrea\'s member', async () => {
    // With exported labels and annotations (KEP-1645): the import carries them as annotations
    // Antrea's member ignores; it must import all the same.
    await exportService(west.cp, 'api', 81, APP_NS, { exportedLabels: { team: 'api' }, exportedAnnotations: { note: 'from west' } });
    const got = await waitFor('api imported by Antrea', async () => {
      const i = await imported(antrea.cp, 'api');
      return i && i.ips.length > 0 ? i : undefined;
    }, { timeoutMs: 90_000, intervalMs: 250 });
    assert.deepEqual(got.ports, [81]);
    const ri = await leaderObject(RESOURCE_IMPORT, `${APP_NS}-api-service`) as { metadata?: { annotations?: Record<string, string> } } | undefined;
    assert.equal(ri?.metadata?.annotations?.[EXPORTED_LABELS_ANNOTATION], '{"team":"api"}', 'Antrea\'s member imported an import that carries exported labels');
  });

  it('liveness and stale cleanup: a stopped Antrea member turns Disconnected; restarted, it comes back and withdraws an export deleted while it was down', async () => {
    await antrea.controller()?.kill();
    const stoppedAt = Date.now();
    const down = await waitFor('east Disconnected', async () => {
      const c = await statusOf('east');
      return c?.status === 'False' ? c : undefined;
    }, { timeoutMs: MEMBER_TIMEOUT_MS + 30_000, intervalMs: 200 });
    const took = Date.now() - stoppedAt;
    assert.equal(down.reason, 'Disconnected');
    // The last beat was at most one Antrea interval (10 s) before the stop.
    assert.ok(took <= MEMBER_TIMEOUT_MS + 5_000, `Disconnected after ${String(took)} ms`);
    await antrea.cp.adminConfig().makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: SERVICE_EXPORT_V1ALPHA1.group, version: SERVICE_EXPORT_V1ALPHA1.version, plural: SERVICE_EXPORT_V1ALPHA1.plural, namespace: APP_NS, name: 'web',
    });
    await antrea.start();
    await waitFor('east Ready again', async () => (await statusOf('east'))?.status === 'True', converge);
    await waitFor('the stale web export and its import gone', async () =>
      (await leaderObject(RESOURCE_EXPORT, `east-${APP_NS}-web-service`)) === undefined && (await leaderObject(RESOURCE_IMPORT, `${APP_NS}-web-service`)) === undefined, converge);
    await waitFor('web un-imported in west', async () => (await imported(west.cp, 'web')) === undefined, converge);
  });

  it('leave: Antrea deletes only its announce; our leader deletes its exports, and our agent un-imports them', async () => {
    await exportService(antrea.cp, 'db', 5432);
    await waitFor('db imported in west', async () => (await imported(west.cp, 'db'))?.ports[0] === 5432, converge);
    await antrea.leave();
    await waitFor('east announce gone', async () => (await leaderObject(MEMBER_CLUSTER_ANNOUNCE, 'member-announce-from-east')) === undefined, converge);
    await waitFor('east exports and the db import gone', async () =>
      (await leaderObject(RESOURCE_EXPORT, `east-${APP_NS}-db-service`)) === undefined && (await leaderObject(RESOURCE_IMPORT, `${APP_NS}-db-service`)) === undefined, converge);
    await waitFor('db un-imported in west', async () => (await imported(west.cp, 'db')) === undefined, converge);
    // Antrea's member removes what it imported when it leaves.
    await waitFor('api un-imported by Antrea', async () => (await imported(antrea.cp, 'api')) === undefined, converge);
    const cs = await waitFor('leader ClusterSet with west only', async () => {
      const c = await leader.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        group: 'multicluster.crd.antrea.io', version: 'v1alpha2', plural: 'clustersets', namespace: 'antrea-multicluster', name: CLUSTERSET_ID,
      }) as { status?: { totalClusters?: number; clusterStatuses?: { clusterID: string }[] } };
      return c.status?.totalClusters === 1 ? c : undefined;
    }, converge);
    assert.deepEqual(cs.status?.clusterStatuses?.map((s) => s.clusterID), ['west']);
  });
});
