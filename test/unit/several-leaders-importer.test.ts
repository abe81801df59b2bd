// Two leaders' importers of one ClusterSet side by side (issue 30 item 2), over one member
// store: an import held by both is one set of objects, from the first leader in spec order;
// a leader that disconnects (past its retention), withdraws or goes removes nothing the other
// still holds, and the other takes the objects over without writing them.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResourceImport } from '../../src/common/api/antrea.js';
import { DEFAULT_CONFIG, type ImportPolicyConfig } from '../../src/common/config/config.js';
import { Importer, importTargetKinds } from '../../src/importer/importer.js';
import { boardMemberOf, ImportBoard, type BoardMember } from '../../src/importer/import-board.js';
import { ENDPOINT_SOURCES_ANNOTATION } from '../../src/common/api/names.js';
import { LEADER_LABEL, type ImportOwner } from '../../src/importer/ownership.js';
import { FakeStore, storeKey } from './fakes/fake-store.js';
import { waitFor as waitUntil } from '../harness/wait.js';
import { epsRI as endpointsOf, LEADER_NS, RILeader, svcRI as serviceImportOf } from './fakes/ri-leader.js';

/** The ServiceImport and Endpoints imports of team-a/`name`. */
const svcRI = (name: string, port?: number) => serviceImportOf('team-a', name, port);
const epsRI = (name: string, ip?: string) => endpointsOf('team-a', name, ip);
/** The Endpoints import as this project's leader sends it: which cluster each subset came from. */
function epsRIWithSources(name: string, sources: string): ResourceImport {
  const ri = epsRI(name);
  return { ...ri, metadata: { ...ri.metadata, annotations: { [ENDPOINT_SOURCES_ANNOTATION]: sources } } };
}
const sliceKey = (name: string) => storeKey({ group: 'discovery.k8s.io', plural: 'endpointslices', namespace: 'team-a', name });
const serviceKey = (name: string) => storeKey({ group: '', plural: 'services', namespace: 'team-a', name: `antrea-mc-${name}` });

const running: Importer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

function setup(policy: Partial<ImportPolicyConfig> = {}, policyOf: Partial<Record<'a' | 'b', Partial<ImportPolicyConfig>>> = {}) {
  const store = new FakeStore();
  const board = new ImportBoard();
  board.setLeaders(['a', 'b']);
  const events: { reason: string; message: string }[] = [];
  const log: string[] = [];
  const make = (leader: 'a' | 'b') => {
    const owner: ImportOwner = { clusterSetID: 'cs', leaderClusterID: leader, leaderNamespace: LEADER_NS, agentNamespace: 'agent-ns', localClusterID: 'west' };
    const importer = new Importer({
      owner, policy: { ...DEFAULT_CONFIG.imports, resyncSeconds: 3600, ...policy, ...policyOf[leader] }, store,
      namespaceExists: (ns) => ['team-a', 'agent-ns'].includes(ns),
      events: { record: (_t, _type, reason, message) => { events.push({ reason, message }); } },
      eventTarget: () => ({ apiVersion: 'multicluster.crd.antrea.io/v1alpha2', kind: 'ClusterSet', name: 'cs', namespace: 'agent-ns' }),
      logger: { debug: () => undefined, info: () => undefined, warn: (message) => { log.push(`${leader}: ${message}`); } },
      onCountsChanged: () => undefined,
      sources: board.handle(leader),
    });
    // As the ImportManager joins them.
    const member = boardMemberOf(importer);
    board.join(leader, member);
    members[leader] = member;
    running.push(importer);
    return importer;
  };
  const members: Partial<Record<'a' | 'b', BoardMember>> = {};
  return { store, board, members, events, log, a: make('a'), b: make('b'), leaderA: new RILeader(), leaderB: new RILeader() };
}

type Setup = ReturnType<typeof setup>;
const writes = (s: Setup) => s.store.calls.filter((c) => /^(create|replace|delete) /.test(c));

/** Polls `check` every 5 ms until it holds, up to a deadline. */
const waitFor = (what: string, check: () => boolean, timeoutMs = 5_000) => waitUntil(what, () => check() || undefined, { timeoutMs, intervalMs: 5 });

async function settle(s: Setup): Promise<void> {
  for (let i = 0; i < 3; i += 1) {
    await sleep(20);
    await Promise.all([s.a.onIdle(), s.b.onIdle()]);
  }
}

/** Both leaders hold `api` (Service and Endpoints) and both are connected: one set of objects, written by a. */
async function bothHoldApi(s: Setup): Promise<void> {
  s.leaderA.put(svcRI('api'), epsRI('api'));
  s.leaderB.put(svcRI('api'), epsRI('api'));
  s.a.resume(s.leaderA.api());
  s.b.resume(s.leaderB.api());
  await waitFor('api imported', () => s.store.objects.has(serviceKey('api')) && s.a.counts().total === 4);
  await settle(s);
}

/**
 * `api` imported through b; then a, the first leader, holds it too and refuses it (team-a is in
 * its imports.deniedNamespaces): a is its source, and b yields what it wrote to a, which never adopts it.
 */
async function refusedByTheFirst(): Promise<Setup> {
  const s = setup({}, { a: { deniedNamespaces: ['team-a'] } });
  s.leaderB.put(svcRI('api'), epsRI('api'));
  s.b.resume(s.leaderB.api());
  await waitFor('api imported from b', () => s.b.counts().total === 4);
  s.leaderA.put(svcRI('api'), epsRI('api'));
  s.a.resume(s.leaderA.api());
  await waitFor('a refuses api; b yields it', () => s.a.counts().rejected === 2 && s.b.counts().total === 0);
  return s;
}

describe('several leaders: imports merged across leaders', () => {
  it('an import both leaders hold is one set of objects from the first leader, with no conflict', async () => {
    const s = setup();
    await bothHoldApi(s);
    assert.equal(s.store.objects.get(serviceKey('api'))?.metadata?.labels?.[LEADER_LABEL], 'a');
    assert.equal(s.store.ownedNow(), 4);
    assert.equal(s.store.count('create'), 4, 'each object created once');
    assert.deepEqual({ a: s.a.counts(), b: s.b.counts() }, { a: { total: 4, rejected: 0, conflicts: 0, divergent: 0 }, b: { total: 0, rejected: 0, conflicts: 0, divergent: 0 } });
    assert.deepEqual(s.events, []);
  });

  it('the first leader lost past its retention: the other takes over and nothing is written or deleted', async () => {
    const s = setup({ lostLeaderRetentionSeconds: 0.05 });
    await bothHoldApi(s);
    const before = writes(s).length;
    s.a.pause('ConnectionFailed: leader-a is down');
    await waitFor('b took api over', () => s.b.counts().total === 4);
    // Past a's retention: its purge has run, and kept what b holds.
    await waitFor('a\'s retention over', () => s.log.some((l) => l.startsWith('a: removing imports')));
    await settle(s);
    assert.deepEqual(writes(s).slice(before), [], 'no import object written or deleted');
    assert.equal(s.store.ownedNow(), 4);
    assert.equal(s.a.counts().total, 0);

    // A new import during the outage comes through b; a's return takes api back, writing nothing.
    s.leaderB.put(svcRI('web'));
    await waitFor('web imported through b', () => s.store.objects.get(serviceKey('web'))?.metadata?.labels?.[LEADER_LABEL] === 'b');
    s.leaderA.put(svcRI('web'));
    const beforeReturn = writes(s).length;
    s.a.resume(s.leaderA.api());
    await waitFor('a is the source again', () => s.a.counts().total === 6 && s.b.counts().total === 0);
    await settle(s);
    assert.deepEqual(writes(s).slice(beforeReturn), [], 'unchanged imports are not written when a comes back');
  });

  it('a leader withdrawing an import the other still holds removes nothing; the last one withdrawing removes it', async () => {
    const s = setup();
    await bothHoldApi(s);
    const before = writes(s).length;
    s.leaderA.remove('team-a-api-endpoints');
    s.leaderA.remove('team-a-api-service');
    await waitFor('b took api over', () => s.b.counts().total === 4);
    await settle(s);
    assert.deepEqual(writes(s).slice(before), []);
    s.leaderB.remove('team-a-api-endpoints');
    s.leaderB.remove('team-a-api-service');
    await waitFor('api removed', () => s.store.ownedNow() === 0);
  });

  it('a leader that goes (removed from spec.leaders) leaves behind what the other holds', async () => {
    const s = setup();
    await bothHoldApi(s);
    const before = writes(s).length;
    await s.a.leave();
    await waitFor('b took api over', () => s.b.counts().total === 4);
    await settle(s);
    assert.deepEqual(writes(s).slice(before), []);
    assert.equal(s.store.ownedNow(), 4);
  });

  // The move off Antrea's leader (test/integration/antrea-migration.test.ts): Antrea's leader
  // sends no endpoint sources, so its EndpointSlice is named without a cluster; ours names one
  // per source cluster. The leader that goes left its slice in no importer's index.
  it('a leader that goes (released from the board): the other takes the import over whole, writing its slice into the one the first leader wrote (an update, no delete)', async () => {
    const s = setup();
    s.leaderA.put(svcRI('api'), epsRI('api'));
    s.leaderB.put(svcRI('api'), epsRIWithSources('api', 'east=1'));
    s.a.resume(s.leaderA.api());
    s.b.resume(s.leaderB.api());
    await waitFor('api imported from a', () => s.store.objects.has(sliceKey('antrea-mc-api.ipv4')) && s.a.counts().total === 4);
    await settle(s);
    const before = s.store.calls.length;
    await s.a.leave();
    s.board.leave('a', s.members.a ?? assert.fail('no member a'));
    const labelled = () => (s.store.objects.get(sliceKey('antrea-mc-api.ipv4')) as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'];
    await waitFor('b wrote its endpoints into a\'s slice', () => labelled() === 'east');
    await settle(s);
    const calls = s.store.calls.slice(before).filter((c) => /^(create|replace|delete) /.test(c));
    assert.deepEqual(calls, [`replace ${sliceKey('antrea-mc-api.ipv4')}`], 'one update of the slice, nothing created or deleted');
    assert.ok(!s.store.objects.has(sliceKey('antrea-mc-api.east.ipv4')));
    assert.equal(s.b.counts().total, 4);
  });

  // A leader back from an outage gets an Endpoints import before its ServiceImport sibling
  // (several-leaders.test.ts saw it): it becomes the source of the Endpoints import and holds it
  // back until the sibling lands; what the other leader wrote for it must not be deleted then.
  it('the first leader holding an Endpoints import without its ServiceImport yet: it holds back and deletes nothing the other wrote', async () => {
    const s = setup();
    s.leaderB.put(svcRI('api'), epsRI('api'));
    s.b.resume(s.leaderB.api());
    await waitFor('api imported from b', () => s.b.counts().total === 4);
    await settle(s);
    const before = s.store.calls.length;
    s.leaderA.put(epsRI('api'));
    s.a.resume(s.leaderA.api());
    await settle(s);
    assert.deepEqual(s.store.calls.slice(before).filter((c) => /^(create|replace|delete) /.test(c)), [], 'nothing written while a holds the import back');
    // The sibling lands; the Endpoints import, unchanged, is taken up again by the sibling's arrival.
    s.leaderA.put(svcRI('api'));
    await waitFor('a the source of all of api', () => s.a.counts().total === 4);
    await settle(s);
    assert.deepEqual(s.store.calls.slice(before).filter((c) => /^(create|delete) /.test(c)), [], 'taken over in place: nothing created or deleted');
  });

  it('both leaders lost: the first one\'s retention removes what it wrote, not what the other wrote (that one\'s retention decides)', async () => {
    const s = setup({}, { a: { lostLeaderRetentionSeconds: 0.05 } });
    s.leaderA.put(svcRI('api'));
    s.leaderB.put(svcRI('web'));
    s.a.resume(s.leaderA.api());
    s.b.resume(s.leaderB.api());
    await waitFor('both imported', () => s.store.objects.has(serviceKey('api')) && s.store.objects.has(serviceKey('web')));
    await settle(s);
    s.b.pause('ConnectionFailed: leader-b is down');
    s.a.pause('ConnectionFailed: leader-a is down');
    await waitFor('a\'s retention over', () => s.log.some((l) => l.startsWith('a: removing imports')));
    await waitFor('api removed', () => !s.store.objects.has(serviceKey('api')));
    await settle(s);
    assert.equal(s.store.objects.get(serviceKey('web'))?.metadata?.labels?.[LEADER_LABEL], 'b', 'web stays for b\'s own retention');
  });

  // The first leader refuses an import the other holds: the other yields and leaves its objects
  // behind for the first, which never adopts them (it refuses), and hands them over again at
  // every full resync (its index rebuild takes them in). Once both withdraw the import, nobody
  // ever adopts them. The board drops what a rebuild covers: a bounded set, not one more copy
  // of every object per resync for as long as the ClusterSet lives.
  it('left-behind entries no source adopts stay bounded over full resyncs, and go once the import is withdrawn', async () => {
    const s = await refusedByTheFirst();
    await settle(s);
    const before = writes(s).length;
    const resync = async () => {
      s.a.takeOver();
      await settle(s);
    };
    for (let i = 0; i < 6; i += 1) await resync();
    assert.ok(s.board.leftBehindCount <= 8, `left behind after 6 full resyncs: ${String(s.board.leftBehindCount)} (two resyncs' worth of 4 objects at most)`);
    assert.deepEqual(writes(s).slice(before), [], 'nothing written or deleted meanwhile');
    assert.equal(s.store.ownedNow(), 4);

    s.leaderA.remove('team-a-api-endpoints', 'team-a-api-service');
    s.leaderB.remove('team-a-api-endpoints', 'team-a-api-service');
    await settle(s);
    for (let i = 0; i < 2; i += 1) await resync();
    assert.equal(s.store.ownedNow(), 0, 'a rebuild took the withdrawn import\'s objects in and removed them');
    assert.equal(s.board.leftBehindCount, 0);
  });

  // The ImportManager replaces a leader's importer (leaves the board, stops it, joins the new
  // one): a rebuild of the old one that ends after that counts for nothing. Were it to count as
  // the new importer's, the new one's first rebuild, whose list may have begun before what was
  // left behind existed, would take it for gone.
  it('a stopped importer\'s late index rebuild does not count as its successor\'s', async () => {
    const s = await refusedByTheFirst();
    s.a.takeOver();
    await settle(s);
    const left = s.board.leftBehindCount;
    assert.ok(left > 0);
    const release = s.store.hold('list');
    s.a.takeOver();
    await waitFor('a\'s rebuild listing', () => s.store.calls.some((c) => c.startsWith('list ')) && s.store.pending > 0);
    s.board.leave('a', s.members.a ?? assert.fail('no member a'));
    const stopped = s.a.stop();
    s.board.join('a', { view: () => ({ state: 'absent', ri: undefined }), recheck: () => undefined, recheckAll: () => undefined, surrender: () => [] });
    release();
    await stopped;
    assert.equal(s.board.leftBehindCount, left);
    // The new importer's first rebuild, having found none of it: nothing is dropped yet.
    s.board.handle('a').rebuilt({ kinds: importTargetKinds(DEFAULT_CONFIG.imports), found: [], indexed: () => false });
    assert.equal(s.board.leftBehindCount, left);
  });

  it('copies that differ: the first leader\'s is kept, an Event and a count say so', async () => {
    const s = setup();
    s.leaderA.put(svcRI('api', 80));
    s.leaderB.put(svcRI('api', 81));
    s.a.resume(s.leaderA.api());
    s.b.resume(s.leaderB.api());
    await waitFor('api imported', () => s.store.objects.has(serviceKey('api')));
    await waitFor('the difference counted', () => s.a.counts().divergent === 1);
    await settle(s);
    const ports = (s.store.objects.get(serviceKey('api'))?.['spec'] as { ports?: { port?: number }[] } | undefined)?.ports;
    assert.deepEqual(ports?.map((p) => p.port), [80]);
    assert.deepEqual(s.events.map((e) => e.reason), ['ImportSourcesDiffer']);
    assert.match(s.events[0]?.message ?? '', /team-a-api-service differs between leaders: leader a .* and b; the member keeps leader a's/);
  });
});
