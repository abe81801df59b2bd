// A mixed ClusterSet: two members of each kind (this project's agent; the real Antrea v2.7
// member) under one leader of each kind in turn (our `leader run`, then the real Antrea leader).
// Every member exports a Service of its own; every member imports every other member's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { RESOURCE_EXPORT, type ResourceExport } from '../../src/common/api/antrea.js';
import { SERVICE_EXPORT_V1ALPHA1, type ServiceExport } from '../../src/common/api/mcs.js';
import { LEADER_NS } from '../harness/clusterset.js';
import { maybe } from '../harness/imports.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import {
  APP_NS, exportService, imported, memberStatusOnLeader, startAntreaLeader, startAntreaMember, startOurLeader, startOurMember,
  type InteropLeader, type InteropMember,
} from '../harness/interop.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const IDS = { ours: ['o1', 'o2'], antrea: ['a1', 'a2'] } as const;
/** Antrea's member announces every 10 s and starts importing on its second beat. */
const converge = { timeoutMs: 90_000, intervalMs: 250 };

describe('interop: a mixed ClusterSet, two members of each kind under a leader of each kind', () => {
  const cps: ControlPlane[] = [];
  const leaders: InteropLeader[] = [];
  const members: InteropMember[] = [];

  before(async () => {
    const started = await Promise.all(['ours-leader', 'antrea-leader', ...IDS.ours, ...IDS.antrea].map((name) => startControlPlane(name)));
    cps.push(...started);
    const [ourLeaderCp, antreaLeaderCp, o1, o2, a1, a2] = started as [ControlPlane, ControlPlane, ControlPlane, ControlPlane, ControlPlane, ControlPlane];
    const [ours, antrea] = await Promise.all([startOurLeader(ourLeaderCp, { memberTimeoutMs: 22_000 }), startAntreaLeader(antreaLeaderCp)]);
    leaders.push(ours, antrea);
    members.push(...await Promise.all([
      startOurMember(o1, 'o1', ours), startOurMember(o2, 'o2', ours), startAntreaMember(a1, 'a1', ours), startAntreaMember(a2, 'a2', ours),
    ]));
    for (const m of members) await exportService(m.cp, `svc-${m.id}`, 80);
  });
  after(async () => {
    await Promise.all(members.map((m) => m.stop()));
    await Promise.all(leaders.map((l) => l.stop()));
    await Promise.all(cps.map((cp) => cp.stop()));
  });
  onFailureShowLogs(() => cps, () => [...leaders.map((l) => `--- ${l.kind} leader ---\n${l.log()}`), ...members.map((m) => `--- ${m.kind} member ${m.id} ---\n${m.log()}`)].join('\n'));

  const everyoneImportsEveryone = async (leader: InteropLeader) => {
    for (const m of members) {
      await waitFor(`${m.kind} member ${m.id} Ready on the ${leader.kind} leader`, async () => (await memberStatusOnLeader(leader, m.id))?.status === 'True', converge);
    }
    for (const m of members) {
      for (const other of members.filter((o) => o !== m)) {
        const got = await waitFor(`${m.kind} member ${m.id} to import svc-${other.id} (${other.kind}) via the ${leader.kind} leader`, async () => {
          const i = await imported(m.cp, `svc-${other.id}`);
          return i && i.ips.length > 0 ? i : undefined;
        }, converge);
        assert.deepEqual(got.ports, [80]);
      }
    }
  };

  it('under our leader', async () => {
    await everyoneImportsEveryone(leaders[0] as InteropLeader);
  });

  // Item 11 of issue 29: Antrea's member sends a Service's ports only. Absent fields are the
  // Kubernetes defaults, not differences: one Service exported from both kinds is no conflict.
  it('under our leader, one Service exported by both kinds of member: both exports Succeeded, no Conflict on ours', async () => {
    const ours = leaders[0] as InteropLeader;
    const [o1, , a1, a2] = members as [InteropMember, InteropMember, InteropMember, InteropMember];
    await Promise.all([exportService(o1.cp, 'shared', 80), exportService(a1.cp, 'shared', 80)]);
    const reApi = ours.cp.adminConfig().makeApiClient(CustomObjectsApi);
    for (const id of [o1.id, a1.id]) {
      const verdict = await waitFor(`the leader's verdict on ${id}'s export of shared`, async () => {
        const re = (await maybe(() => reApi.getNamespacedCustomObject({ group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS, name: `${id}-${APP_NS}-shared-service` }))) as ResourceExport | undefined;
        return re?.status?.conditions?.[0];
      }, converge);
      assert.equal(verdict.type, 'Succeeded', `${id}: ${verdict.reason ?? ''} ${verdict.message ?? ''}`);
    }
    const seApi = o1.cp.adminConfig().makeApiClient(CustomObjectsApi);
    const conditions = await waitFor('our member\'s ServiceExport Valid', async () => {
      const se = (await seApi.getNamespacedCustomObject({ group: SERVICE_EXPORT_V1ALPHA1.group, version: SERVICE_EXPORT_V1ALPHA1.version, plural: SERVICE_EXPORT_V1ALPHA1.plural, namespace: APP_NS, name: 'shared' })) as ServiceExport;
      const c = se.status?.conditions ?? [];
      return c.some((x) => x.type === 'Valid' && x.status === 'True') ? c : undefined;
    }, converge);
    assert.ok(!conditions.some((c) => c.type === 'Conflict' && c.status === 'True'), JSON.stringify(conditions));
    const got = await waitFor('Antrea member a2 imports shared from both', async () => {
      const i = await imported(a2.cp, 'shared');
      return i && i.ips.length > 0 ? i : undefined;
    }, converge);
    assert.deepEqual(got.ports, [80]);
  });

  it('under Antrea\'s leader, after every member moved over (left ours, joined Antrea\'s)', async () => {
    const [ours, antrea] = leaders as [InteropLeader, InteropLeader];
    await Promise.all(members.map((m) => m.join(antrea)));
    await everyoneImportsEveryone(antrea);
    // Each member left our leader cleanly: nothing of theirs remains there.
    const left = await waitFor('our leader with no members left', async () => {
      const remaining = (await Promise.all(members.map(async (m) => ((await memberStatusOnLeader(ours, m.id)) ? m.id : '')))).filter(Boolean);
      return remaining.length === 0 ? remaining : undefined;
    }, converge);
    assert.deepEqual(left, []);
  });
});
