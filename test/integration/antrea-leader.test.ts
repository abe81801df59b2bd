// This project's agent against the REAL Antrea v2.7 leader (antrea-mc-controller leader, built
// by test/antrea-bins, Antrea's manifests applied as they are, its webhooks served by the
// process): two members (east, west) join, Antrea's admission refuses a member claiming another
// cluster's ID, an export of east is aggregated by Antrea and imported by west, and a member
// that leaves takes its announce and exports with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, RESOURCE_IMPORT } from '../../src/common/api/antrea.js';
import { SERVICE_IMPORT_V1ALPHA1 } from '../../src/common/api/mcs.js';
import { EXPORTED_LABELS_ANNOTATION } from '../../src/common/api/exported-metadata.js';
import { CLUSTERSET_ID, waitForReady, writeLeaderSecret } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import {
  APP_NS, exportService, imported, memberStatusOnLeader, startAntreaLeader, startOurMember, type InteropLeader, type InteropMember,
} from '../harness/interop.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const converge = { timeoutMs: 60_000, intervalMs: 200 };

describe('interop: our agent under the real Antrea leader', () => {
  let leaderCp: ControlPlane;
  let leader: InteropLeader;
  const members: InteropMember[] = [];
  const cps: ControlPlane[] = [];

  const leaderObject = (d: { group: string; version: string; plural: string }, name: string) => maybe(() =>
    leader.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: d.group, version: d.version, plural: d.plural, namespace: 'antrea-multicluster', name }));
  const member = (id: string) => members.find((m) => m.id === id) as InteropMember;

  before(async () => {
    const [l, east, west] = await Promise.all([startControlPlane('antrea-leader'), startControlPlane('east'), startControlPlane('west')]);
    leaderCp = l;
    cps.push(l, east, west);
    leader = await startAntreaLeader(leaderCp);
    members.push(await startOurMember(east, 'east', leader), await startOurMember(west, 'west', leader));
  });
  after(async () => {
    await Promise.all(members.map((m) => m.stop()));
    await leader.stop();
    await Promise.all(cps.map((cp) => cp.stop()));
  });
  onFailureShowLogs(() => cps, () => `--- antrea leader ---\n${leader.log()}\n${members.map((m) => `--- ${m.id} ---\n${m.log()}`).join('\n')}`);

  it('join: both members are Connected, and Antrea\'s leader reports them Ready', async () => {
    for (const m of members) await waitForReady(m.cp, CLUSTERSET_ID, 'True', 'Connected', 60_000);
    for (const id of ['east', 'west']) {
      const ready = await waitFor(`Antrea's leader to see ${id} Ready`, async () => {
        const c = await memberStatusOnLeader(leader, id);
        return c?.status === 'True' ? c : undefined;
      }, converge);
      assert.equal(ready.type, 'Ready');
      assert.ok(await leaderObject(MEMBER_CLUSTER_ANNOUNCE, `member-announce-from-${id}`), `announce of ${id} on the leader`);
    }
  });

  it('admission: Antrea\'s webhook refuses a member claiming another cluster\'s ID, and the ClusterSet says AdmissionDenied', async () => {
    const west = member('west');
    await writeLeaderSecret(west.cp, 'leader-token', { caPem: leader.cp.caPem, token: await leader.memberToken('liar') }, west.namespace);
    const cs = await waitForReady(west.cp, CLUSTERSET_ID, 'False', 'AdmissionDenied', 60_000);
    assert.match(JSON.stringify(cs.status), /ClusterID \\"west\\" is not permitted for ServiceAccount \\"member-liar\\"/);
    // Back with a token of its own ServiceAccount (annotated west).
    await writeLeaderSecret(west.cp, 'leader-token', { caPem: leader.cp.caPem, token: await leader.memberToken('west') }, west.namespace);
    await waitForReady(west.cp, CLUSTERSET_ID, 'True', 'Connected', 60_000);
  });

  it('exports and imports: east\'s Service is aggregated by Antrea\'s leader and imported by west', async () => {
    // With exported labels (KEP-1645): our member sends them as an annotation of the RE, which
    // Antrea's leader accepts and does not carry over (docs/antrea-differences.md).
    const eastIP = await exportService(member('east').cp, 'web', 80, APP_NS, { exportedLabels: { team: 'web' } });
    const re = await waitFor('east\'s ResourceExport accepted by Antrea', async () => {
      const r = (await leaderObject(RESOURCE_EXPORT, `east-${APP_NS}-web-service`)) as { metadata?: { annotations?: Record<string, string> }; status?: { conditions?: { type: string; status: string }[] } } | undefined;
      return r?.status?.conditions?.find((c) => c.type === 'Succeeded' && c.status === 'True') ? r : undefined;
    }, converge);
    assert.ok(re);
    assert.equal(re.metadata?.annotations?.[EXPORTED_LABELS_ANNOTATION], '{"team":"web"}');
    const ri = await waitFor('Antrea\'s ResourceImport', () => leaderObject(RESOURCE_IMPORT, `${APP_NS}-web-service`), converge) as { spec?: { kind?: string } };
    assert.equal(ri.spec?.kind, 'ServiceImport');
    for (const id of ['west', 'east']) {
      const got = await waitFor(`web imported in ${id}`, async () => {
        const i = await imported(member(id).cp, 'web');
        return i && i.ips.length > 0 ? i : undefined;
      }, converge);
      assert.deepEqual(got.ports, [80]);
      assert.ok(got.ips.includes(eastIP) || got.ips.includes('10.244.1.5'), `imported endpoints ${JSON.stringify(got.ips)} come from east`);
      const si = await member(id).cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        group: SERVICE_IMPORT_V1ALPHA1.group, version: SERVICE_IMPORT_V1ALPHA1.version, plural: SERVICE_IMPORT_V1ALPHA1.plural, namespace: APP_NS, name: 'web',
      }) as { metadata?: { labels?: Record<string, string> } };
      assert.equal(si.metadata?.labels?.['team'], undefined, `${id}: under Antrea's leader exported labels do not travel`);
    }
  });

  it('leave: east deletes its ClusterSet; its announce and exports go, and west un-imports web', async () => {
    await member('east').leave();
    await waitFor('east announce gone', async () => (await leaderObject(MEMBER_CLUSTER_ANNOUNCE, 'member-announce-from-east')) === undefined, converge);
    await waitFor('east exports and the web import gone', async () =>
      (await leaderObject(RESOURCE_EXPORT, `east-${APP_NS}-web-service`)) === undefined && (await leaderObject(RESOURCE_IMPORT, `${APP_NS}-web-service`)) === undefined, converge);
    await waitFor('web un-imported in west', async () => (await imported(member('west').cp, 'web')) === undefined, converge);
  });
});
