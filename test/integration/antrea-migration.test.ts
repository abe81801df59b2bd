// A move off Antrea's leader (issue 30 item 5), as docs/high-availability.md tells it: a
// ClusterSet under the real Antrea v2.7 leader only, with two members running this project's
// agent (o1 exports, both import) and one running Antrea's member controller (a1, imports).
// This project's leader is added to our members with `clusterset-agent join` (appended after
// Antrea's); both leaders live meanwhile (a1 stays under Antrea's leader and keeps importing);
// Antrea's entry is then deleted from spec.leaders; Antrea's member is switched to our leader;
// Antrea's leader controller is stopped. A watch on every one of our members' imported objects
// (Services, Endpoints, EndpointSlices, ServiceImports), opened at the resourceVersion of its
// list, sees no moment without an expected import from start to end, and no deletion at all:
// the EndpointSlices Antrea's leader's imports were written into (no endpoint sources, so one
// slice without a cluster in its name) are kept and updated by our leader's import.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { RESOURCE_IMPORT, type ClusterSet } from '../../src/common/api/antrea.js';
import { AGENT_NS, CLUSTERSET_ID, LEADER_NS } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { maybe } from '../harness/imports.js';
import { watchImports, type ImportWatch } from '../harness/import-watch.js';
import {
  APP_NS, exportService, imported, memberClusterSet, memberStatusOnLeader, startAntreaLeader, startAntreaMember, startOurLeader, startOurMember,
  type InteropLeader,
} from '../harness/interop.js';
import { kubectl } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { runCli } from '../harness/cli.js';
import { waitFor } from '../harness/wait.js';

const ANTREA_LEADER = 'antrea-leader';
const OUR_LEADER = 'csa-leader';
/** Antrea's member announces every 10 s and starts importing on its second beat. */
const converge = { timeoutMs: 90_000, intervalMs: 250 };

const join = (args: readonly string[]) => runCli('join', args);

const condition = (cs: ClusterSet | undefined, type: string) => cs?.status?.conditions?.find((c) => c.type === type);

describe('interop: a move off Antrea\'s leader, with nothing a member imported ever absent', () => {
  const cps: ControlPlane[] = [];
  let antrea: Awaited<ReturnType<typeof startAntreaLeader>>;
  let ours: Awaited<ReturnType<typeof startOurLeader>>;
  let o1: Awaited<ReturnType<typeof startOurMember>>;
  let o2: Awaited<ReturnType<typeof startOurMember>>;
  let a1: Awaited<ReturnType<typeof startAntreaMember>>;
  const watches = new Map<string, ImportWatch>();
  let antreaStopped = false;
  /** When our leader was added: the writes the move cost are counted from here. */
  let moveStartedAt = 0;
  /** When Antrea's leader was removed from spec.leaders: the writes the switch of source cost. */
  let switchStartedAt = 0;
  /** What o1 exports for each Service: its ClusterIP (the endpoint an exporting member sends by default, as Antrea's does). */
  const exportedIPs: Record<string, string> = {};

  before(async () => {
    const started = await Promise.all([ANTREA_LEADER, OUR_LEADER, 'o1', 'o2', 'a1'].map((name) => startControlPlane(name)));
    cps.push(...started);
    const [antreaCp, oursCp, o1Cp, o2Cp, a1Cp] = started as [ControlPlane, ControlPlane, ControlPlane, ControlPlane, ControlPlane];
    [antrea, ours] = await Promise.all([startAntreaLeader(antreaCp, ANTREA_LEADER), startOurLeader(oursCp, { clusterID: OUR_LEADER, memberTimeoutMs: 22_000 })]);
    [o1, o2, a1] = await Promise.all([startOurMember(o1Cp, 'o1', antrea), startOurMember(o2Cp, 'o2', antrea), startAntreaMember(a1Cp, 'a1', antrea)]);
    exportedIPs.web = await exportService(o1.cp, 'web', 80);
  });
  after(async () => {
    for (const w of watches.values()) w.stop();
    await Promise.all([o1, o2, a1].map((m) => m?.stop()));
    await Promise.all([ours?.stop(), antreaStopped ? undefined : antrea?.stop()]);
    await Promise.all(cps.map((cp) => cp.stop()));
  });
  onFailureShowLogs(() => cps, () => [
    `--- Antrea's leader ---\n${antrea.log()}`, `--- our leader ---\n${ours.log()}`,
    ...[o1, o2, a1].map((m) => `--- ${m.kind} member ${m.id} ---\n${m.log()}`),
    ...[...watches].map(([id, w]) => `--- watch on ${id}: deletions ${JSON.stringify(w.deletions)}\ngaps ${JSON.stringify(w.gaps.slice(0, 20))}\nerrors ${JSON.stringify(w.errors)}; ${String(w.restarts.length)} reopened`),
  ].join('\n'));

  const importsWhole = async (label: string, name: string) => {
    for (const m of [o1, o2]) {
      await waitFor(`${label}: our member ${m.id} imports ${name} whole`, () => watches.get(m.id)?.whole(name), converge);
      watches.get(m.id)?.expect(name);
    }
  };
  const antreaMemberImports = (name: string, via: InteropLeader) => waitFor(`Antrea's member a1 imports ${name} via the ${via.kind} leader`, async () => {
    const i = await imported(a1.cp, name);
    return i && i.ips.length > 0 ? i : undefined;
  }, converge);
  /** The leader's ResourceImports of `name` (Service and Endpoints). */
  const leaderHolds = async (leader: InteropLeader, name: string) => {
    const api = leader.cp.adminConfig().makeApiClient(CustomObjectsApi);
    const got = await Promise.all(['service', 'endpoints'].map((kind) => maybe(() => api.getNamespacedCustomObject({
      group: RESOURCE_IMPORT.group, version: RESOURCE_IMPORT.version, plural: RESOURCE_IMPORT.plural, namespace: LEADER_NS, name: `${APP_NS}-${name}-${kind}`,
    }))));
    return got.every((ri) => ri !== undefined);
  };
  /** What member `m`'s importer of `leader` sees of both ResourceImports of `name`. */
  const sourceStates = (m: typeof o1, leader: string, name: string) => ['service', 'endpoints']
    .map((kind) => m.agent()?.imports.importerFor(CLUSTERSET_ID, leader)?.sourceView(`${APP_NS}-${name}-${kind}`))
    .map((v) => (v === undefined ? 'no importer' : `${v.state}${v.ri ? '+held' : ''}`));

  it('1. under Antrea\'s leader only: our members and Antrea\'s import the export of o1', async () => {
    for (const m of [o1, o2, a1]) {
      await waitFor(`${m.kind} member ${m.id} Ready on Antrea's leader`, async () => (await memberStatusOnLeader(antrea, m.id))?.status === 'True', converge);
    }
    await antreaMemberImports('web', antrea);
    // 2. The watch, from the list's resourceVersion, on every member of ours (each imports web).
    for (const m of [o1, o2]) watches.set(m.id, await watchImports(m.cp, APP_NS));
    await importsWhole('under Antrea\'s leader', 'web');
  });

  it('3. our leader added with `clusterset-agent join` after Antrea\'s: both leaders live, both hold the import, Antrea\'s stays its source', async () => {
    moveStartedAt = Date.now();
    for (const m of [o1, o2]) {
      const res = await join([
        '--leader-kubeconfig', ours.cp.kubeconfigPath, '--member-kubeconfig', m.cp.kubeconfigPath,
        '--cluster-id', m.id, '--clusterset', CLUSTERSET_ID, '--leader-server', ours.cp.server, '--secret-name', `${OUR_LEADER}-token`, '--wait', '90s',
      ]);
      assert.equal(res.code, 0, `join ${m.id}: ${res.stdout}${res.stderr}`);
    }
    for (const m of [o1, o2]) {
      const cs = await waitFor(`${m.id}: both leaders connected`, async () => {
        const got = await memberClusterSet(m);
        return condition(got, 'AllLeadersConnected')?.status === 'True' ? got : undefined;
      }, converge);
      assert.deepEqual(cs.spec?.leaders.map((l) => l.clusterID), [ANTREA_LEADER, OUR_LEADER]);
      assert.equal(cs.status?.leaders, '2/2');
    }
    await waitFor('our leader holds web (o1 exports to both leaders)', () => leaderHolds(ours, 'web'), converge);
    assert.ok(await leaderHolds(antrea, 'web'), 'Antrea\'s leader still holds web');
    for (const m of [o1, o2]) {
      await waitFor(`${m.id}: both leaders' importers connected and holding web`, () => {
        const states = [...sourceStates(m, ANTREA_LEADER, 'web'), ...sourceStates(m, OUR_LEADER, 'web')];
        if (states.some((s) => s !== 'connected+held')) throw new Error(states.join(', '));
        return true;
      }, converge);
      // Antrea's, listed first, is the source: our leader's importer wrote none of the objects.
      assert.equal(m.agent()?.imports.importerFor(CLUSTERSET_ID, OUR_LEADER)?.counts().total, 0, `${m.id}: objects sourced by our leader`);
    }
    // Antrea's member, under Antrea's leader, still Ready there.
    assert.equal((await memberStatusOnLeader(antrea, a1.id))?.status, 'True');
  });

  it('4. both live: a Service exported meanwhile is imported by our members and by Antrea\'s member under Antrea\'s leader', async () => {
    exportedIPs.api = await exportService(o1.cp, 'api', 8080);
    await importsWhole('both leaders live', 'api');
    await antreaMemberImports('api', antrea);
    await waitFor('our leader holds api', () => leaderHolds(ours, 'api'), converge);
  });

  it('5-6. Antrea\'s leader deleted from spec.leaders, Antrea\'s member switched, Antrea\'s leader stopped: no moment without an import, no deletion', async () => {
    switchStartedAt = Date.now();
    for (const m of [o1, o2]) {
      // As the doc says: delete Antrea's entry from spec.leaders (it is the first).
      await kubectl(m.cp, ['patch', 'clusterset', CLUSTERSET_ID, '-n', AGENT_NS, '--type', 'json', '-p',
        JSON.stringify([{ op: 'test', path: '/spec/leaders/0/clusterID', value: ANTREA_LEADER }, { op: 'remove', path: '/spec/leaders/0' }])]);
    }
    for (const m of [o1, o2]) {
      await waitFor(`${m.id}: our leader alone, connected, the source of everything imported`, async () => {
        const cs = await memberClusterSet(m);
        const state = {
          leaders: cs?.spec?.leaders.map((l) => l.clusterID).join(','), ready: condition(cs, 'Ready')?.status, antreaImporter: m.agent()?.imports.importerFor(CLUSTERSET_ID, ANTREA_LEADER) !== undefined,
          ours: [...sourceStates(m, OUR_LEADER, 'web'), ...sourceStates(m, OUR_LEADER, 'api')],
        };
        if (state.leaders !== OUR_LEADER || state.ready !== 'True' || state.antreaImporter || state.ours.some((s) => s !== 'connected+held')) throw new Error(JSON.stringify(state));
        return true;
      }, converge);
      await m.agent()?.imports.importerFor(CLUSTERSET_ID, OUR_LEADER)?.onIdle();
    }
    // Our members left Antrea's leader: their announces are gone from it.
    for (const m of [o1, o2]) {
      await waitFor(`${m.id} gone from Antrea's leader`, async () => (await memberStatusOnLeader(antrea, m.id)) === undefined, converge);
    }
    // Antrea's member moves by switching its ClusterSet to our leader: it removes what it
    // imported when its ClusterSet goes, so its imports are missing until our leader's arrive.
    const switched = Date.now();
    await a1.join(ours);
    await antreaMemberImports('web', ours);
    await antreaMemberImports('api', ours);
    process.stderr.write(`# Antrea's member a1 switched to our leader: imports back after ${String(Date.now() - switched)} ms\n`);
    // Antrea's leader sends no endpoint sources: its EndpointSlice is `antrea-mc-<name>.ipv4`;
    // ours would name one per source cluster. The slice is kept, updated with its source
    // cluster (slice-reuse.ts), never replaced.
    for (const m of [o1, o2]) {
      await waitFor(`${m.id}: one EndpointSlice per Service, kept, labelled with its source cluster o1`, async () => {
        const slices = watches.get(m.id)?.slices() ?? [];
        const want = ['antrea-mc-api.ipv4', 'antrea-mc-web.ipv4'];
        if (JSON.stringify(slices) !== JSON.stringify(want)) throw new Error(slices.join(', '));
        const labelled = (await m.cp.adminConfig().makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: 'team-a', labelSelector: 'multicluster.kubernetes.io/source-cluster=o1' })).items;
        if (JSON.stringify(labelled.map((e) => e.metadata?.name).sort()) !== JSON.stringify(want)) throw new Error(`labelled o1: ${labelled.map((e) => e.metadata?.name ?? '').join(', ')}`);
        return true;
      }, converge);
    }
    await antrea.stop();
    antreaStopped = true;
    // Still whole after Antrea's leader is gone, from the members' own API.
    for (const m of [o1, o2]) {
      for (const name of ['web', 'api']) assert.deepEqual((await imported(m.cp, name))?.ips, [exportedIPs[name]], `${m.id} imports ${name}`);
    }
    for (const [id, w] of watches) {
      w.stop();
      for (const [what, since] of [['from adding our leader to the end', moveStartedAt], ['from removing Antrea\'s leader to the end (the switch of source)', switchStartedAt]] as const) {
        const events = w.events(since).filter((e) => e.name.startsWith('antrea-mc-') || e.kind === 'ServiceImport');
        const perObject = events.map((e) => `${e.type} ${e.kind}/${e.name}`);
        process.stderr.write(`# ${id}: events on imported objects ${what}: ${String(events.length)} [${perObject.join(', ')}]\n`);
      }
      assert.deepEqual(w.errors, [], `${id}: the watch went on without a break`);
      assert.deepEqual(w.deletions.map((e) => `${e.kind}/${e.name}`), [], `${id}: DELETED events`);
      assert.deepEqual(w.gaps, [], `${id}: moments without an expected import`);
    }
  });
});
