// Two member clusters configured with one cluster ID (issue 19, "cluster identity"): who holds
// the announce (pure), the writer that stamps its identity and writes nothing to another
// cluster's live announce, and the area that reports DuplicateClusterID, pauses its links, tells
// the leader once, takes over after the window and never deletes the holder's objects on leave.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { CLUSTER_UID_ANNOTATION, HOLDER_CLUSTER_UID_ANNOTATION, TIMESTAMP_ANNOTATION } from '../../src/common/api/names.js';
import { AnnounceHeldElsewhereError, AnnounceWriter } from '../../src/announce/announce-writer.js';
import { clusterIdentity } from '../../src/announce/cluster-identity.js';
import { duplicateMessage, judgeHolder, shouldReportDuplicate, takeoverWindowMs } from '../../src/announce/holder.js';
import type { LeaderApi } from '../../src/commonarea/leader-api.js';
import { RemoteCommonArea, type LeaderLink } from '../../src/commonarea/remote-common-area.js';
import { FakeLeader } from './fakes/fake-leader.js';

const NAME = 'member-announce-from-east';
const T0 = Date.parse('2026-12-03T10:00:00Z');
const WINDOW = 6_000;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined };

function announce(uid: string | undefined, touchMs: number | undefined, created = '2026-12-01T00:00:00Z'): MemberClusterAnnounce {
  const annotations: Record<string, string> = {};
  if (uid !== undefined) annotations[CLUSTER_UID_ANNOTATION] = uid;
  if (touchMs !== undefined) annotations[TIMESTAMP_ANNOTATION] = new Date(touchMs).toISOString();
  return { metadata: { name: NAME, annotations, creationTimestamp: created as unknown as Date }, clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' };
}

describe('judgeHolder', () => {
  it('an unstamped announce (Antrea\'s member, an older agent) or our own is ours', () => {
    assert.deepEqual(judgeHolder(announce(undefined, T0), 'uid-a', T0, WINDOW), { op: 'ours' });
    assert.deepEqual(judgeHolder(announce('uid-a', T0), 'uid-a', T0, WINDOW), { op: 'ours' });
  });

  it('another cluster that beat within the window holds it; just past the window it is taken over', () => {
    assert.deepEqual(judgeHolder(announce('uid-b', T0), 'uid-a', T0 + WINDOW - 1, WINDOW), { op: 'held-elsewhere', holder: 'uid-b', lastBeatMs: T0 });
    assert.deepEqual(judgeHolder(announce('uid-b', T0), 'uid-a', T0 + WINDOW, WINDOW), { op: 'take-over', previous: 'uid-b', lastBeatMs: T0 });
  });

  it('a beat stamped in our future (clock skew) is fresh; without touch-ts the creation time counts', () => {
    assert.equal(judgeHolder(announce('uid-b', T0 + 60_000), 'uid-a', T0, WINDOW).op, 'held-elsewhere');
    assert.equal(judgeHolder(announce('uid-b', undefined, new Date(T0 - 1000).toISOString()), 'uid-a', T0, WINDOW).op, 'held-elsewhere');
    assert.equal(judgeHolder(announce('uid-b', undefined, 'garbage'), 'uid-a', T0, WINDOW).op, 'take-over');
  });

  it('without our own identity any live stamped announce is another\'s', () => {
    assert.equal(judgeHolder(announce('uid-b', T0), undefined, T0, WINDOW).op, 'held-elsewhere');
    assert.equal(judgeHolder(announce(undefined, T0), undefined, T0, WINDOW).op, 'ours');
  });

  it('the window is three heartbeat intervals; the message names both identities and the holder\'s last beat', () => {
    assert.equal(takeoverWindowMs(10_000), 30_000);
    assert.equal(duplicateMessage('east', 'uid-a', 'uid-b', 30_000),
      'cluster ID east is also used by another member cluster: its announce member-announce-from-east is held by cluster uid-b (its heartbeats are live), ' +
      'this cluster is uid-a. This cluster writes nothing to the leader (no heartbeat, no exports; imports paused) so that neither deletes the other\'s exports. ' +
      'Give one of the two clusters another cluster ID; this one takes over 30 s after the other\'s last heartbeat');
  });

  it('reports at detection, on a new holder, then only every repeat period', () => {
    assert.equal(shouldReportDuplicate(undefined, 'uid-b', T0), true);
    assert.equal(shouldReportDuplicate({ atMs: T0, holder: 'uid-b' }, 'uid-b', T0 + 299_999), false);
    assert.equal(shouldReportDuplicate({ atMs: T0, holder: 'uid-b' }, 'uid-b', T0 + 300_000), true);
    assert.equal(shouldReportDuplicate({ atMs: T0, holder: 'uid-b' }, 'uid-c', T0 + 1), true);
  });
});

function steppingClock(start: number) {
  let t = start;
  return { now: () => new Date(t), advance: (ms: number) => { t += ms; } };
}

describe('AnnounceWriter with a cluster identity', () => {
  it('stamps its identity on every write and keeps one request per beat at rest', async () => {
    const leader = new FakeLeader();
    const clock = steppingClock(T0);
    const writer = new AnnounceWriter({ clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' }, clock.now, { takeoverWindowMs: WINDOW });
    writer.setClusterUid('uid-a');
    await writer.beat(leader);
    leader.calls.length = 0;
    clock.advance(2000);
    await writer.beat(leader);
    assert.deepEqual(leader.calls, [`update ${NAME}`]);
    assert.equal(leader.announces.get(NAME)?.metadata?.annotations?.[CLUSTER_UID_ANNOTATION], 'uid-a');
  });

  it('writes nothing to another cluster\'s live announce: each beat is one GET, until its beats are older than the window', async () => {
    const leader = new FakeLeader();
    const clock = steppingClock(T0);
    const holder = new AnnounceWriter({ clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' }, clock.now, { takeoverWindowMs: WINDOW });
    holder.setClusterUid('uid-b');
    await holder.beat(leader);
    const tookOver: string[] = [];
    const twin = new AnnounceWriter({ clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' }, clock.now, { takeoverWindowMs: WINDOW, onTakeOver: (p) => { tookOver.push(p); } });
    twin.setClusterUid('uid-a');
    leader.calls.length = 0;
    for (let i = 0; i < 3; i++) {
      clock.advance(2000);
      await holder.beat(leader);
      await assert.rejects(twin.beat(leader), (err: unknown) => err instanceof AnnounceHeldElsewhereError && err.holder === 'uid-b' && err.ours === 'uid-a');
    }
    // The holder's beats are each one PUT; the twin's each one GET: it never wrote.
    assert.deepEqual(leader.calls, Array<string[]>(3).fill([`update ${NAME}`, `get ${NAME}`]).flat());
    assert.equal(await twin.heldElsewhere(leader), true);
    assert.deepEqual(await twin.leave(leader), 'held-elsewhere');
    assert.deepEqual(leader.deletes, []);
    // The holder stops; one window after its last beat the twin takes over.
    clock.advance(WINDOW - 1);
    await assert.rejects(twin.beat(leader), AnnounceHeldElsewhereError);
    clock.advance(1);
    await twin.beat(leader);
    assert.deepEqual(tookOver, ['uid-b']);
    assert.equal(leader.announces.get(NAME)?.metadata?.annotations?.[CLUSTER_UID_ANNOTATION], 'uid-a');
    // The old holder comes back: its PUT conflicts, its GET finds the twin live: it stands back.
    await assert.rejects(holder.beat(leader), (err: unknown) => err instanceof AnnounceHeldElsewhereError && err.holder === 'uid-a');
  });

  it('adopts an unstamped announce and stamps it; without an identity it drops a taken-over stamp', async () => {
    const leader = new FakeLeader();
    const clock = steppingClock(T0);
    leader.announces.set(NAME, { ...announce(undefined, T0), metadata: { ...announce(undefined, T0).metadata, uid: 'u1', resourceVersion: '1' } });
    const writer = new AnnounceWriter({ clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' }, clock.now, { takeoverWindowMs: WINDOW });
    writer.setClusterUid('uid-a');
    await writer.beat(leader);
    assert.equal(leader.announces.get(NAME)?.metadata?.annotations?.[CLUSTER_UID_ANNOTATION], 'uid-a');
    const blind = new AnnounceWriter({ clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' }, clock.now, { takeoverWindowMs: WINDOW });
    clock.advance(WINDOW);
    await blind.beat(leader);
    assert.equal(leader.announces.get(NAME)?.metadata?.annotations?.[CLUSTER_UID_ANNOTATION], undefined);
  });
});

class RecordingLink implements LeaderLink {
  readonly calls: string[] = [];
  resume(): void { this.calls.push('resume'); }
  pause(why: string): void { this.calls.push(`pause ${why.split(':')[0] ?? ''}`); }
  stop(): Promise<void> { return Promise.resolve(); }
  leave(api?: LeaderApi): Promise<void> { this.calls.push(`leave ${api ? 'api' : ''}`); return Promise.resolve(); }
}

const running: RemoteCommonArea[] = [];
afterEach(async () => { await Promise.all(running.splice(0).map((a) => a.stop())); });

describe('RemoteCommonArea with another cluster holding our cluster ID', () => {
  function setup(leader: FakeLeader, clock: ReturnType<typeof steppingClock>, uid: string) {
    const importer = new RecordingLink();
    const exporter = new RecordingLink();
    const area = new RemoteCommonArea({
      identity: { clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' },
      leaderNamespace: leader.namespace, heartbeatCron: '0 0 0 1 1 *', intervalMs: 2000, requestTimeoutMs: 500, failureThreshold: 3,
      createApi: () => leader, logger: silent, importer, exporter, now: clock.now, random: () => 0.5,
      clusterUid: () => Promise.resolve(uid),
    });
    area.setCredentials({ ok: true, credentials: { server: leader.server, caPem: 'pem', token: 't', fingerprint: 'f' } });
    running.push(area);
    return { area, importer, exporter };
  }

  it('is Ready=False DuplicateClusterID at once, pauses both links, writes nothing but one Event, and takes over after the window', async () => {
    const leader = new FakeLeader();
    const clock = steppingClock(T0);
    const holder = new AnnounceWriter({ clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' }, clock.now, { takeoverWindowMs: 6000 });
    holder.setClusterUid('uid-b');
    await holder.beat(leader);
    const { area, importer, exporter } = setup(leader, clock, 'uid-a');
    leader.calls.length = 0;
    await area.start();
    const ready = area.getStatus().ready;
    assert.equal(ready.status, 'False');
    assert.equal(ready.reason, 'DuplicateClusterID');
    assert.match(ready.message ?? '', /held by cluster uid-b \(its heartbeats are live\), this cluster is uid-a/);
    assert.deepEqual(importer.calls, ['pause DuplicateClusterID']);
    assert.deepEqual(exporter.calls, ['pause DuplicateClusterID']);
    for (let i = 0; i < 2; i++) {
      clock.advance(2000);
      await holder.beat(leader);
      await area.beatNow();
      // The holder's fresh beat changes nothing in the condition: the ClusterSet status is not rewritten.
      assert.deepEqual(area.getStatus().ready, ready);
    }
    assert.deepEqual(leader.calls.filter((c) => !c.startsWith('update')), [`get ${NAME}`, 'create event DuplicateClusterID', `get ${NAME}`, `get ${NAME}`], 'GETs only, and one Event');
    const [event] = leader.events;
    assert.equal(event?.involvedObject.name, NAME);
    assert.equal(event.type, 'Warning');
    assert.deepEqual(event.metadata.annotations, { [CLUSTER_UID_ANNOTATION]: 'uid-a', [HOLDER_CLUSTER_UID_ANNOTATION]: 'uid-b' });
    // Leaving while the other cluster holds the ID deletes neither its announce nor its exports.
    assert.equal(exporter.calls.includes('leave api'), false);
    // The holder stops beating: one window later this cluster takes over and resumes.
    clock.advance(6000);
    await area.beatNow();
    assert.equal(area.getStatus().ready.status, 'True');
    assert.equal(leader.announces.get(NAME)?.metadata?.annotations?.[CLUSTER_UID_ANNOTATION], 'uid-a');
    assert.deepEqual(exporter.calls.slice(-1), ['resume']);
  });

  it('leave() while another cluster holds the ID deletes nothing and calls no exporter leave', async () => {
    const leader = new FakeLeader();
    const clock = steppingClock(T0);
    const { area, exporter } = setup(leader, clock, 'uid-a');
    await area.start();
    assert.equal(area.getStatus().ready.status, 'True');
    // Another cluster with our ID takes the announce (e.g. we were silent past the window).
    const holder = new AnnounceWriter({ clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' }, clock.now, { takeoverWindowMs: 6000 });
    holder.setClusterUid('uid-b');
    clock.advance(7000);
    await holder.beat(leader);
    assert.equal(await area.leave(), 'held-elsewhere');
    assert.deepEqual(leader.deletes, []);
    assert.equal(exporter.calls.some((c) => c.startsWith('leave')), false);
    assert.ok(leader.announces.has(NAME));
  });
});

describe('clusterIdentity', () => {
  it('reads once on success; after a failure it asks again only after a minute', async () => {
    let reads = 0;
    let fail = true;
    let now = 0;
    const warnings: string[] = [];
    const provider = clusterIdentity(() => {
      reads += 1;
      return fail ? Promise.reject(new Error('forbidden')) : Promise.resolve('uid-a');
    }, { info: () => undefined, warn: (m) => { warnings.push(m); } }, () => now);
    assert.equal(await provider(), undefined);
    fail = false;
    now = 59_999;
    assert.equal(await provider(), undefined);
    assert.equal(reads, 1);
    now = 60_000;
    assert.equal(await provider(), 'uid-a');
    assert.equal(await provider(), 'uid-a');
    assert.equal(reads, 2);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /grant the agent get on namespaces/);
  });
});
