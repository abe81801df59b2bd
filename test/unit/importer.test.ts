// The Importer against an in-memory member (FakeStore) and an in-memory leader whose list and
// watch drive the real ResilientInformer over client-node's ListWatch: trust (pause/resume),
// retention, atomic service imports, the exact per-leader cap under concurrency, disabled
// kinds and one delete per object.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResourceImport } from '../../src/common/api/antrea.js';
import { DEFAULT_CONFIG, type ImportPolicyConfig } from '../../src/common/config/config.js';
import type { EventTarget } from '../../src/common/events/recorder.js';
import { Importer, importTargetKinds, type ImporterLogger } from '../../src/importer/importer.js';
import { purgeOwned } from '../../src/importer/purge.js';
import { ownerAnnotations, ownerLabels, type ImportOwner } from '../../src/importer/ownership.js';
import { ApiError } from '../../src/common/kube/rest-client.js';
import { FakeStore, storeKey } from './fakes/fake-store.js';
import { waitFor as waitUntil } from '../harness/wait.js';
import { epsRI, LEADER_NS, resourceImport, RILeader, svcRI } from './fakes/ri-leader.js';
import { SERVICE_IMPORT_V1ALPHA1 } from '../../src/common/api/mcs.js';
import type { ResourceDescriptor } from '../../src/common/api/meta.js';

/** Writes in flight in an initial sync: what bench:imports measured fastest (docs/testing.md). */
const SYNC_WRITES_IN_FLIGHT = 24;
const OWNER: ImportOwner = { clusterSetID: 'cs', leaderClusterID: 'leader', leaderNamespace: LEADER_NS, agentNamespace: 'agent-ns', localClusterID: 'east' };
const TARGET: EventTarget = { apiVersion: 'multicluster.crd.antrea.io/v1alpha2', kind: 'ClusterSet', name: 'cs', namespace: 'agent-ns' };

// ---------------------------------------------------------------------------------------
// ResourceImports and the keys of what they become
// ---------------------------------------------------------------------------------------

function clusterInfoRI(id: string): ResourceImport {
  return resourceImport(`${id}-clusterinfo`, { name: id, namespace: 'kube-system', kind: 'ClusterInfo', clusterinfo: { clusterID: id, serviceCIDR: '10.96.0.0/12' } });
}

const keys = (ns: string, name: string) => ({
  service: storeKey({ group: '', plural: 'services', namespace: ns, name: `antrea-mc-${name}` }),
  serviceImport: storeKey({ group: 'multicluster.x-k8s.io', plural: 'serviceimports', namespace: ns, name }),
  endpoints: storeKey({ group: '', plural: 'endpoints', namespace: ns, name: `antrea-mc-${name}` }),
  endpointSlice: storeKey({ group: 'discovery.k8s.io', plural: 'endpointslices', namespace: ns, name: `antrea-mc-${name}.ipv4` }),
});

function objectsOf(store: FakeStore, ns: string, name: string): number {
  return Object.values(keys(ns, name)).filter((k) => store.objects.has(k)).length;
}

// ---------------------------------------------------------------------------------------
// The importer under test
// ---------------------------------------------------------------------------------------

interface LogLine {
  level: 'debug' | 'info' | 'warn';
  message: string;
  meta: Record<string, unknown> | undefined;
}

function capture() {
  const lines: LogLine[] = [];
  const logger: ImporterLogger = {
    debug: (message, meta) => { lines.push({ level: 'debug', message, meta }); },
    info: (message, meta) => { lines.push({ level: 'info', message, meta }); },
    warn: (message, meta) => { lines.push({ level: 'warn', message, meta }); },
  };
  return { lines, logger };
}

interface Setup {
  importer: Importer;
  store: FakeStore;
  leader: RILeader;
  namespaces: Set<string>;
  log: LogLine[];
  events: { reason: string; message: string }[];
  terminating: Set<string>;
}

const running: Importer[] = [];
// A failed assertion must not leave an importer (and its retry timers) running.
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

function setup(options: { policy?: Partial<ImportPolicyConfig>; store?: FakeStore; concurrency?: number; serviceImport?: ResourceDescriptor; endpointSliceObjects?: boolean } = {}): Setup {
  const store = options.store ?? new FakeStore();
  const leader = new RILeader();
  const namespaces = new Set(['team-a', 'team-b', 'agent-ns']);
  const terminating = new Set<string>();
  const { lines, logger } = capture();
  const events: { reason: string; message: string }[] = [];
  const policy: ImportPolicyConfig = { ...DEFAULT_CONFIG.imports, resyncSeconds: 3600, ...options.policy };
  const importer = new Importer({
    owner: OWNER, policy, store,
    namespaceExists: (ns) => namespaces.has(ns),
    namespaceTerminating: (ns) => terminating.has(ns),
    events: { record: (_target, _type, reason, message) => { events.push({ reason, message }); } },
    eventTarget: () => TARGET,
    logger,
    onCountsChanged: () => undefined,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.serviceImport !== undefined ? { serviceImport: options.serviceImport } : {}),
    ...(options.endpointSliceObjects !== undefined ? { endpointSliceObjects: options.endpointSliceObjects } : {}),
  });
  running.push(importer);
  return { importer, store, leader, namespaces, terminating, log: lines, events };
}

/** Polls `check` every 5 ms until it holds, up to a deadline. */
const waitFor = (what: string, check: () => boolean, timeoutMs = 5_000) => waitUntil(what, () => check() || undefined, { timeoutMs, intervalMs: 5 });

/** Lets timers and pending promises run: the importer is idle and stays so. */
async function settle(s: Setup): Promise<void> {
  await sleep(30);
  await s.importer.onIdle();
  await sleep(10);
  await s.importer.onIdle();
}

const warnings = (s: Setup) => s.log.filter((l) => l.level === 'warn').map((l) => l.message);

// ---------------------------------------------------------------------------------------

describe('Importer: trust', () => {
  it('pause stops writes at once, also for an RI whose event arrived before the watcher stopped', async () => {
    const s = setup();
    s.leader.put(svcRI('team-a', 'a'));
    const releaseCreates = s.store.hold('create');
    s.importer.resume(s.leader.api());
    await waitFor('the Service of a being created', () => s.store.count('create') === 1);
    assert.equal(s.leader.openWatches, 1);
    // The watch delivers b, which is queued at once; trust is lost in the same tick.
    s.leader.put(svcRI('team-a', 'b'));
    s.importer.pause('Unauthorized: the token was rejected');
    s.importer.pause('ConnectionFailed: a later reason');
    releaseCreates();
    await settle(s);
    // Only the create already on the wire completed; nothing else was written.
    assert.deepEqual(s.store.calls.filter((c) => !c.startsWith('list ') && !c.startsWith('get ')), [`create ${keys('team-a', 'a').service}`]);
    assert.equal(objectsOf(s.store, 'team-a', 'b'), 0);
    const paused = s.log.filter((l) => l.message.startsWith('imports paused'));
    assert.equal(paused.length, 1, 'logged once per pause');
    assert.equal(paused[0]?.meta?.['why'], 'Unauthorized: the token was rejected');
    await waitFor('the watch closed', () => s.leader.openWatches === 0);

    // Resume (same client): one full resync repairs everything, including b, queued while paused.
    const lists = s.store.count('list');
    const leaderLists = s.leader.listCalls;
    s.importer.resume(s.leader.api());
    await waitFor('a and b imported', () => objectsOf(s.store, 'team-a', 'a') === 2 && objectsOf(s.store, 'team-a', 'b') === 2);
    await settle(s);
    assert.equal(s.store.count('list') - lists, importTargetKinds(DEFAULT_CONFIG.imports).length, 'one index rebuild');
    assert.equal(s.leader.listCalls - leaderLists, 1, 'one list of the leader');
    assert.equal(s.store.count('create', keys('team-a', 'a').service), 1, 'the Service of a was not created twice');
    // A resume with the same client while running changes nothing.
    s.importer.resume(s.leader.api());
    await settle(s);
    assert.equal(s.leader.listCalls - leaderLists, 1);
    assert.equal(s.importer.counts().total, 4);
    await s.importer.stop();
  });

  it('purges after the retention period, and restores on resume', async () => {
    const s = setup({ policy: { lostLeaderRetentionSeconds: 0.15 } });
    s.leader.put(svcRI('team-a', 'web'), epsRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('imported', () => objectsOf(s.store, 'team-a', 'web') === 4);
    const pausedAt = Date.now();
    s.importer.pause('ConnectionFailed: leader lost');
    await waitFor('purged', () => s.store.ownedNow() === 0, 2_000);
    assert.ok(Date.now() - pausedAt >= 140, 'not before the retention period');
    await waitFor('counts follow', () => s.importer.counts().total === 0);
    for (const key of Object.values(keys('team-a', 'web'))) assert.equal(s.store.count('delete', key), 1, key);
    s.importer.resume(s.leader.api());
    await waitFor('restored', () => objectsOf(s.store, 'team-a', 'web') === 4);
    await settle(s);
    assert.deepEqual(s.importer.counts(), { total: 4, rejected: 0, conflicts: 0 });
    await s.importer.stop();
  });

  it('a resume within the retention period deletes nothing', async () => {
    const s = setup({ policy: { lostLeaderRetentionSeconds: 0.15 } });
    s.leader.put(svcRI('team-a', 'web'), epsRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('imported', () => objectsOf(s.store, 'team-a', 'web') === 4);
    await settle(s);
    s.importer.pause('ConnectionFailed: leader lost');
    await sleep(50);
    s.importer.resume(s.leader.api());
    await sleep(200);
    await settle(s);
    assert.equal(s.store.count('delete'), 0);
    assert.equal(s.store.count('create'), 4);
    assert.equal(s.store.count('replace'), 0);
    await s.importer.stop();
  });

  it('a fresh importer paused (agent restarted during an outage) counts the retention down too', async () => {
    const store = new FakeStore();
    const ref = { group: '', version: 'v1', plural: 'services', namespaced: true, namespace: 'team-a', name: 'antrea-mc-old' };
    store.seed(ref, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'antrea-mc-old', namespace: 'team-a', labels: ownerLabels(OWNER), annotations: ownerAnnotations(OWNER, 'team-a-old-service') } });
    const s = setup({ store, policy: { lostLeaderRetentionSeconds: 0.1 } });
    s.importer.pause('ConnectionFailed: leader unreachable');
    await waitFor('purged', () => store.ownedNow() === 0, 2_000);
    await s.importer.stop();
  });

  it('does not warn about a watcher stopped before it synced (reconnect, pause)', async () => {
    const s = setup();
    const other = new RILeader();
    s.leader.holdList();
    s.importer.resume(s.leader.api());
    await waitFor('listing', () => s.leader.listCalls === 1);
    s.importer.resume(other.api());
    await waitFor('listing with the new client', () => other.listCalls === 1);
    s.importer.pause('Forbidden: access revoked');
    await sleep(50);
    assert.deepEqual(warnings(s).filter((m) => !m.startsWith('imports paused')), []);
    await s.importer.stop();
  });
});

describe('Importer: atomic service imports', () => {
  it('holds Endpoints back while the ServiceImport is refused, and lands them once it is accepted', async () => {
    const s = setup();
    s.leader.put(svcRI('team-a', 'web', 0), epsRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('both judged', () => s.importer.counts().rejected === 2);
    await settle(s);
    assert.equal(s.store.count('create'), 0, 'not half an import');
    const held = s.events.find((e) => e.reason === 'ImportRejectedServiceNotImported');
    assert.ok(held, JSON.stringify(s.events));
    assert.match(held.message, /^ResourceImport leader-ns\/team-a-web-endpoints rejected \(ServiceNotImported\): Endpoints for team-a\/web are held back: ResourceImport leader-ns\/team-a-web-service was refused \(InvalidPayload: spec\.serviceImport\.spec\.ports\[0\]\.port 0/);
    assert.deepEqual(s.events.map((e) => e.reason).sort(), ['ImportRejectedInvalidPayload', 'ImportRejectedServiceNotImported']);

    s.leader.put(svcRI('team-a', 'web', 80));
    await waitFor('the whole service imported', () => objectsOf(s.store, 'team-a', 'web') === 4);
    await settle(s);
    assert.deepEqual(s.importer.counts(), { total: 4, rejected: 0, conflicts: 0 });

    // Refused again: its Endpoints go too.
    s.leader.put(svcRI('team-a', 'web', 0));
    await waitFor('the whole service removed', () => objectsOf(s.store, 'team-a', 'web') === 0);
    await settle(s);
    assert.equal(s.importer.counts().rejected, 2);
    for (const key of Object.values(keys('team-a', 'web'))) assert.equal(s.store.count('delete', key), 1, key);
    await s.importer.stop();
  });

  it('creates nothing of a Service when a user\'s object holds one of its names, and says so once', async () => {
    const s = setup();
    const endpoints = { group: '', version: 'v1', plural: 'endpoints', namespaced: true, namespace: 'team-a', name: 'antrea-mc-web' };
    s.store.seed(endpoints, { metadata: { name: 'antrea-mc-web', namespace: 'team-a' }, subsets: [] });
    s.leader.put(svcRI('team-a', 'web'), epsRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('the conflict counted', () => s.importer.counts().conflicts === 1);
    await settle(s);
    assert.equal(s.store.count('create'), 0, 'nothing of the Service created');
    assert.deepEqual(s.events.map((e) => e.reason), ['ImportConflict'], 'one Event');
    assert.match(s.events[0]?.message ?? '', /needs endpoints team-a\/antrea-mc-web, which exists and it was not created by clusterset-agent: nothing of the imported Service was created/);
    s.leader.remove('team-a-web-service', 'team-a-web-endpoints');
    await waitFor('the conflict cleared', () => s.importer.counts().conflicts === 0);
    await settle(s);
    assert.equal(s.store.count('delete'), 0);
    assert.ok(s.store.objects.has(keys('team-a', 'web').endpoints), 'the user\'s Endpoints are still there');
    await s.importer.stop();
  });

  it('never deletes an imported Service whose same-named Endpoints are not ours', async () => {
    const s = setup();
    s.leader.put(svcRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('the Service imported', () => objectsOf(s.store, 'team-a', 'web') === 2);
    await settle(s);
    // A user creates Endpoints of that name after the import landed.
    const endpoints = { group: '', version: 'v1', plural: 'endpoints', namespaced: true, namespace: 'team-a', name: 'antrea-mc-web' };
    s.store.seed(endpoints, { metadata: { name: 'antrea-mc-web', namespace: 'team-a' }, subsets: [] });
    s.leader.remove('team-a-web-service');
    await waitFor('the ServiceImport removed', () => !s.store.objects.has(keys('team-a', 'web').serviceImport));
    await settle(s);
    assert.equal(s.store.count('delete', keys('team-a', 'web').service), 0, 'the Service is kept');
    assert.ok(s.events.some((e) => e.reason === 'ImportConflict' && /would delete Endpoints team-a\/antrea-mc-web/.test(e.message)), JSON.stringify(s.events));
    await s.importer.stop();
  });

  it('a slice kube-apiserver refuses is a counted rejection with an Event: no skip-mirror Endpoints without it, nothing of the import kept, the same version not tried again', async () => {
    const s = setup({ policy: { resyncSeconds: 0.05 } });
    s.leader.put(svcRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('the Service imported', () => objectsOf(s.store, 'team-a', 'web') === 2);
    await settle(s);
    const sliceName = 'antrea-mc-web.ipv4';
    s.store.failNext('create', new ApiError(422, { kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422,
      message: `EndpointSlice.discovery.k8s.io "${sliceName}" is invalid: endpoints: Too many: 1001: must have at most 1000 items`,
      details: { name: sliceName, group: 'discovery.k8s.io', kind: 'EndpointSlice' } }));
    s.leader.put(epsRI('team-a', 'web'));
    await waitFor('the refusal counted', () => s.importer.counts().rejected === 1);
    await settle(s);
    assert.deepEqual(s.events.map((e) => e.reason), ['ImportRejectedInvalidObject']);
    assert.match(s.events[0]?.message ?? '', /kube-apiserver refused EndpointSlice antrea-mc-web\.ipv4: .*must have at most 1000 items/);
    assert.equal(s.store.count('create', keys('team-a', 'web').endpoints), 0, 'the skip-mirror Endpoints are not written without their slices');
    assert.equal(objectsOf(s.store, 'team-a', 'web'), 2, 'Service and ServiceImport only');
    const lists = s.store.count('list');
    await waitFor('two resyncs', () => s.store.count('list') >= lists + 2 * importTargetKinds(DEFAULT_CONFIG.imports).length);
    await settle(s);
    assert.equal(s.store.count('create', keys('team-a', 'web').endpointSlice), 1, 'the refused version is not written again at a resync');
    // A new version of the import is tried again, and lands.
    s.leader.put(epsRI('team-a', 'web', '10.1.0.2'));
    await waitFor('the Endpoints imported', () => objectsOf(s.store, 'team-a', 'web') === 4);
    await waitFor('the refusal cleared', () => s.importer.counts().rejected === 0);
    await s.importer.stop();
  });

  it('writes each slice owned by its ServiceImport (its uid), and owned again when the ServiceImport is created again', async () => {
    const s = setup({ policy: { resyncSeconds: 0.05 } });
    s.leader.put(svcRI('team-a', 'web'), epsRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('the Service imported', () => objectsOf(s.store, 'team-a', 'web') === 4);
    await settle(s);
    const owners = () => (s.store.objects.get(keys('team-a', 'web').endpointSlice)?.metadata as { ownerReferences?: unknown[] } | undefined)?.ownerReferences;
    const uid = () => s.store.objects.get(keys('team-a', 'web').serviceImport)?.metadata?.uid;
    assert.deepEqual(owners(), [{ apiVersion: 'multicluster.x-k8s.io/v1beta1', kind: 'ServiceImport', name: 'web', uid: uid(), controller: false }]);
    // Someone deletes the ServiceImport: the next resync creates it again, with a new uid, and the slice follows.
    const before = uid();
    s.store.objects.delete(keys('team-a', 'web').serviceImport);
    await waitFor('the ServiceImport created again', () => uid() !== undefined && uid() !== before);
    await waitFor('the slice owned by the new ServiceImport', () => JSON.stringify(owners()).includes(`"uid":"${uid() ?? ''}"`));
    await s.importer.stop();
  });

  it('speaks v1alpha1 to a member that serves only v1alpha1: every ServiceImport read and write, the slices\' owner', async () => {
    const s = setup({ serviceImport: SERVICE_IMPORT_V1ALPHA1 });
    s.leader.put(svcRI('team-a', 'web'), epsRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('the Service imported', () => objectsOf(s.store, 'team-a', 'web') === 4);
    await settle(s);
    const mcs = [...s.store.versions].filter((v) => v.startsWith('multicluster.x-k8s.io/'));
    assert.deepEqual(mcs, ['multicluster.x-k8s.io/v1alpha1/serviceimports']);
    assert.equal(s.store.objects.get(keys('team-a', 'web').serviceImport)?.apiVersion, 'multicluster.x-k8s.io/v1alpha1');
    const slice = s.store.objects.get(keys('team-a', 'web').endpointSlice)?.metadata as { ownerReferences?: { apiVersion: string }[] } | undefined;
    assert.equal(slice?.ownerReferences?.[0]?.apiVersion, 'multicluster.x-k8s.io/v1alpha1');
    await s.importer.leave();
    assert.equal(objectsOf(s.store, 'team-a', 'web'), 0);
  });

  it('status.endpointSliceObjects: Present written once per ServiceImport, nothing on a restart; a CRD that prunes it is written once, then never', async () => {
    const s = setup({ endpointSliceObjects: true });
    s.leader.put(svcRI('team-a', 'web'), epsRI('team-a', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('the Service imported', () => objectsOf(s.store, 'team-a', 'web') === 4);
    await waitFor('the status written', () => s.store.count('status') === 1);
    await settle(s);
    assert.deepEqual(s.store.objects.get(keys('team-a', 'web').serviceImport)?.['status'], { endpointSliceObjects: 'Present' });
    assert.equal(s.store.count('status'), 1);
    await s.importer.stop();
    // A restart over the same member: the status already says Present.
    const again = setup({ store: s.store, endpointSliceObjects: true });
    again.leader.put(svcRI('team-a', 'web'), epsRI('team-a', 'web'));
    again.importer.resume(again.leader.api());
    await settle(again);
    await waitFor('synced', () => again.importer.counts().total === 4);
    assert.equal(s.store.count('status'), 1, 'no status write on a restart');
    assert.equal(s.store.count('replace'), 0);
    await again.importer.stop();

    const pruning = new FakeStore();
    pruning.prunedStatusFields.add('endpointSliceObjects');
    const p = setup({ store: pruning, endpointSliceObjects: true, concurrency: 1 });
    p.leader.put(svcRI('team-a', 'web'), svcRI('team-a', 'api'));
    p.importer.resume(p.leader.api());
    await waitFor('both imported', () => objectsOf(pruning, 'team-a', 'web') + objectsOf(pruning, 'team-a', 'api') === 4);
    await settle(p);
    assert.equal(pruning.count('status'), 1, 'pruned once: not written again');
    await p.importer.stop();
  });

  it('retries a refusal for a missing namespace when the namespace appears', async () => {
    const s = setup();
    s.leader.put(svcRI('ghost', 'web'), epsRI('ghost', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('both refused', () => s.importer.counts().rejected === 2);
    await settle(s);
    assert.equal(s.store.count('create'), 0);
    assert.ok(s.events.every((e) => e.reason === 'ImportRejectedNamespaceNotFound' || e.reason === 'ImportRejectedServiceNotImported'));
    s.namespaces.add('ghost');
    s.importer.namespaceAdded('ghost');
    await waitFor('imported once the namespace exists', () => objectsOf(s.store, 'ghost', 'web') === 4, 2_000);
    await settle(s);
    assert.deepEqual(s.importer.counts(), { total: 4, rejected: 0, conflicts: 0 });
    await s.importer.stop();
  });

  it('refuses imports into a Terminating namespace with a reason, and tries again only once it is created again', async () => {
    const s = setup();
    s.terminating.add('team-b');
    s.leader.put(svcRI('team-b', 'web'), epsRI('team-b', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('both refused', () => s.importer.counts().rejected === 2);
    await settle(s);
    assert.equal(s.store.count('create'), 0);
    const refusal = s.events.find((e) => e.reason === 'ImportRejectedNamespaceTerminating');
    assert.match(refusal?.message ?? '', /target namespace "team-b" is being deleted \(Terminating\)/);
    // Deleted and created again: the informer reports it added.
    s.terminating.delete('team-b');
    s.importer.namespaceAdded('team-b');
    // Service, ServiceImport, Endpoints and its EndpointSlice.
    await waitFor('imported once the namespace is back', () => objectsOf(s.store, 'team-b', 'web') === 4, 2_000);
    await settle(s);
    assert.deepEqual(s.importer.counts(), { total: 4, rejected: 0, conflicts: 0 });
    await s.importer.stop();
  });

  it('a create refused because the namespace is terminating (cache not caught up) is the same refusal, not a retry loop', async () => {
    const s = setup();
    s.store.failNext('create', new ApiError(403, { kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403,
      message: 'services "antrea-mc-web" is forbidden: unable to create new content in namespace team-b because it is being terminated' }));
    s.leader.put(svcRI('team-b', 'web'));
    s.importer.resume(s.leader.api());
    await waitFor('refused', () => s.importer.counts().rejected === 1);
    await sleep(1_500);
    await settle(s);
    assert.equal(s.store.count('create'), 1, 'not retried while the namespace is terminating');
    assert.ok(s.events.some((e) => e.reason === 'ImportRejectedNamespaceTerminating'), JSON.stringify(s.events));
    s.importer.namespaceAdded('team-b');
    await waitFor('imported once the namespace is back', () => objectsOf(s.store, 'team-b', 'web') === 2, 2_000);
    await s.importer.stop();
  });

  it('in an initial sync, each service gets its Endpoints right after its ServiceImport, not after the whole backlog', async () => {
    const s = setup({ concurrency: 2 });
    s.store.latency = { create: 1 };
    const names = Array.from({ length: 40 }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
    // The leader lists them sorted by name: each Endpoints RI comes before its ServiceImport RI.
    for (const name of names) s.leader.put(epsRI('team-a', name), svcRI('team-a', name));
    s.importer.resume(s.leader.api());
    await waitFor('imported', () => names.every((name) => objectsOf(s.store, 'team-a', name) === 4), 20_000);
    const creates = s.store.calls.filter((c) => c.startsWith('create '));
    const at = (key: string) => creates.indexOf(`create ${key}`);
    // Endpoints of the first service before the tenth Service: it waited for its sibling only.
    assert.ok(at(keys('team-a', names[0] ?? '').endpoints) < at(keys('team-a', names[9] ?? '').service), creates.slice(0, 30).join('\n'));
    for (const name of names) {
      const k = keys('team-a', name);
      assert.ok(at(k.endpoints) > at(k.serviceImport), `${name}: Endpoints after their ServiceImport`);
      assert.ok(at(k.endpoints) - at(k.serviceImport) <= 4 * 2, `${name}: Endpoints within a few creates of their ServiceImport (${String(at(k.serviceImport))} -> ${String(at(k.endpoints))})`);
    }
    await s.importer.stop();
  });

  it('Endpoints published before their ServiceImport wait quietly and land with it', async () => {
    const s = setup();
    s.leader.put(epsRI('team-a', 'late'));
    s.importer.resume(s.leader.api());
    await waitFor('held back', () => s.importer.counts().rejected === 1);
    await settle(s);
    assert.equal(s.store.count('create'), 0);
    s.leader.put(svcRI('team-a', 'late'));
    await waitFor('imported', () => objectsOf(s.store, 'team-a', 'late') === 4);
    await settle(s);
    assert.deepEqual(s.events, [], 'an ordering race is not a warning');
    assert.deepEqual(s.importer.counts(), { total: 4, rejected: 0, conflicts: 0 });
    await s.importer.stop();
  });
});

describe('Importer: throughput of an initial sync', () => {
  it('lists every kind of the index at once before the first write', async () => {
    const s = setup();
    const release = s.store.hold('list');
    s.importer.resume(s.leader.api());
    const kinds = importTargetKinds(DEFAULT_CONFIG.imports).length;
    // One after the other, only the first list would be in flight while it is held.
    try {
      await waitFor(`${String(kinds)} lists in flight`, () => s.store.pending === kinds);
    } finally {
      release();
    }
    await settle(s);
    await s.importer.stop();
  });

  it(`keeps at least ${String(SYNC_WRITES_IN_FLIGHT)} writes in flight, as many as the fastest minimal client keeps (bench:imports)`, async () => {
    const s = setup();
    const names = Array.from({ length: 2 * SYNC_WRITES_IN_FLIGHT }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
    for (const name of names) s.leader.put(epsRI('team-a', name), svcRI('team-a', name));
    const release = s.store.hold('create');
    s.importer.resume(s.leader.api());
    try {
      // A worker writes its import's objects one after the other (a ServiceImport needs its
      // Service's IP, Endpoints come after their slices): the requests in flight are the workers.
      await waitFor(`${String(SYNC_WRITES_IN_FLIGHT)} creates in flight`, () => s.store.pending >= SYNC_WRITES_IN_FLIGHT);
    } finally {
      // Also on failure: stopping the importer waits for the held creates.
      release();
    }
    await waitFor('imported', () => names.every((name) => objectsOf(s.store, 'team-a', name) === 4), 20_000);
    await s.importer.stop();
  });
});

describe('Importer: the per-leader cap', () => {
  it('is exact under concurrent workers with slow creates, and all-or-nothing per exported service', async () => {
    const store = new FakeStore();
    store.latency = { create: () => 1 + Math.random() * 8, get: 1 };
    const s = setup({ store, policy: { maxObjectsPerLeader: 41 } });
    const names = Array.from({ length: 20 }, (_, i) => `svc-${String(i)}`);
    // Endpoints first for half of them: they must wait for their service, not take its slots.
    for (const [i, name] of names.entries()) {
      if (i % 2 === 0) s.leader.put(epsRI('team-b', name), svcRI('team-b', name));
      else s.leader.put(svcRI('team-b', name), epsRI('team-b', name));
    }
    s.leader.put(clusterInfoRI('west'));
    s.importer.resume(s.leader.api());
    await waitFor('the cap filled', () => store.ownedNow() === 41, 10_000);
    await settle(s);
    assert.ok(store.maxOwned <= 41, `at most 41 objects at any instant, saw ${String(store.maxOwned)}`);
    const complete = names.filter((n) => objectsOf(store, 'team-b', n) === 4);
    const refused = names.filter((n) => objectsOf(store, 'team-b', n) === 0);
    assert.equal(complete.length, 10);
    assert.equal(refused.length, 10, 'no half-imported service');
    for (const name of refused) {
      for (const key of Object.values(keys('team-b', name))) assert.equal(store.count('create', key), 0, `nothing of ${name} was ever created`);
    }
    assert.ok(store.objects.has(storeKey({ group: 'multicluster.crd.antrea.io', plural: 'clusterinfoimports', namespace: 'agent-ns', name: 'west-clusterinfo' })));
    assert.deepEqual(s.importer.counts(), { total: 41, rejected: 20, conflicts: 0 });
    assert.equal(s.events.filter((e) => e.reason === 'ImportRejectedTooManyObjects').length, 10);
    assert.equal(s.events.filter((e) => e.reason === 'ImportRejectedServiceNotImported').length, 10);
    assert.match(s.events.find((e) => e.reason === 'ImportRejectedTooManyObjects')?.message ?? '',
      /the exported Service team-b\/svc-\d+ \(Service, ServiceImport, Endpoints and EndpointSlices\) needs 4 object\(s\), which do not fit within imports\.maxObjectsPerLeader \(41\)/);

    // Un-exporting one frees its slots for one refused service, atomically again.
    const gone = complete[0] ?? '';
    s.leader.remove(`team-b-${gone}-service`, `team-b-${gone}-endpoints`);
    await waitFor('a refused service admitted in its place', () => names.filter((n) => objectsOf(store, 'team-b', n) === 4).length === 10 && objectsOf(store, 'team-b', gone) === 0, 5_000);
    await settle(s);
    assert.ok(store.maxOwned <= 41, `at most 41 objects at any instant, saw ${String(store.maxOwned)}`);
    assert.equal(names.filter((n) => objectsOf(store, 'team-b', n) === 0).length, 10);
    assert.deepEqual(s.importer.counts(), { total: 41, rejected: 18, conflicts: 0 });
    await s.importer.stop();
  });
});

describe('Importer: listing and deleting', () => {
  it('lists only enabled kinds', async () => {
    const plurals = (p: Partial<ImportPolicyConfig>) => importTargetKinds({ ...DEFAULT_CONFIG.imports, ...p }).map((k) => k.plural);
    assert.deepEqual(plurals({}), ['services', 'endpoints', 'endpointslices', 'serviceimports', 'clusterinfoimports']);
    assert.ok(plurals({ allowedKinds: ['ServiceImport', 'AntreaClusterNetworkPolicy'] }).includes('clusternetworkpolicies'));
    assert.ok(!plurals({ enableLabelIdentity: true }).includes('labelidentities'), 'enabled but not allowed');
    assert.ok(!plurals({ allowedKinds: ['LabelIdentity'] }).includes('labelidentities'), 'allowed but not enabled');
    assert.ok(plurals({ enableLabelIdentity: true, allowedKinds: ['LabelIdentity'] }).includes('labelidentities'));

    const store = new FakeStore();
    await purgeOwned(store, OWNER, capture().logger, DEFAULT_CONFIG.imports);
    const s = setup({ store });
    s.importer.resume(s.leader.api());
    await waitFor('the index rebuilt', () => store.count('list') >= 10);
    await settle(s);
    const listed = store.calls.filter((c) => c.startsWith('list '));
    assert.equal(listed.length, 10, 'two lists (purge, index) of each of the five enabled kinds');
    assert.ok(listed.every((c) => !c.includes('clusternetworkpolicies') && !c.includes('labelidentities')), listed.join(', '));
    await s.importer.stop();
  });

  it('deletes each object once when a service is un-exported, whatever the order', async () => {
    const store = new FakeStore();
    store.latency = { delete: 20 };
    const s = setup({ store });
    s.leader.put(svcRI('team-a', 'one'), epsRI('team-a', 'one'), svcRI('team-a', 'two'), epsRI('team-a', 'two'), epsRI('team-a', 'three'), svcRI('team-a', 'three'));
    s.importer.resume(s.leader.api());
    await waitFor('imported', () => store.ownedNow() === 12);
    await settle(s);
    s.leader.remove('team-a-one-service', 'team-a-one-endpoints');
    s.leader.remove('team-a-two-endpoints', 'team-a-two-service');
    s.leader.remove('team-a-three-endpoints');
    await sleep(5);
    s.leader.remove('team-a-three-service');
    await waitFor('all removed', () => store.ownedNow() === 0);
    await settle(s);
    for (const name of ['one', 'two', 'three']) {
      for (const key of Object.values(keys('team-a', name))) assert.equal(store.count('delete', key), 1, key);
    }
    assert.deepEqual(s.importer.counts(), { total: 0, rejected: 0, conflicts: 0 });
    await s.importer.stop();
  });

  it('deletes each object once also while periodic resyncs rebuild the index', async () => {
    const store = new FakeStore();
    store.latency = { delete: 40, list: 5 };
    const s = setup({ store, policy: { resyncSeconds: 0.02 } });
    const names = ['a', 'b', 'c', 'd'];
    for (const name of names) s.leader.put(svcRI('team-a', name), epsRI('team-a', name));
    s.importer.resume(s.leader.api());
    await waitFor('imported', () => store.ownedNow() === 16);
    await settle(s);
    for (const name of names) s.leader.remove(`team-a-${name}-endpoints`, `team-a-${name}-service`);
    await waitFor('all removed', () => store.ownedNow() === 0);
    await sleep(150);
    await s.importer.onIdle();
    for (const name of names) {
      for (const key of Object.values(keys('team-a', name))) assert.equal(store.count('delete', key), 1, key);
    }
    await s.importer.stop();
  });
});
