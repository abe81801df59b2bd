import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnnounceError, AnnounceWriter } from '../../src/announce/announce-writer.js';
import { TIMESTAMP_ANNOTATION } from '../../src/api/types.js';
import { apiError, FakeLeader } from './fakes/fake-leader.js';

const identity = { clusterID: 'east', clusterSetID: 'set-1', leaderClusterID: 'leader-1' };
const NAME = 'member-announce-from-east';

function clock(start = Date.parse('2026-12-02T10:00:00Z')): () => Date {
  let t = start;
  return () => new Date((t += 1000));
}

describe('AnnounceWriter.beat()', () => {
  it('creates the announce with identity fields and a touch-ts on the first beat', async () => {
    const leader = new FakeLeader();
    await new AnnounceWriter(identity, clock()).beat(leader);
    const mca = leader.announces.get(NAME);
    assert.equal(mca?.clusterID, 'east');
    assert.equal(mca.clusterSetID, 'set-1');
    assert.equal(mca.leaderClusterID, 'leader-1');
    assert.equal(mca.metadata?.annotations?.[TIMESTAMP_ANNOTATION], '2026-12-02T10:00:01.000Z');
    assert.deepEqual(leader.calls, [`create ${NAME}`]);
  });

  it('costs exactly one request per beat in steady state, with a new touch-ts each time', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    leader.calls.length = 0;
    const stamps = new Set<string>();
    for (let i = 0; i < 5; i++) {
      await writer.beat(leader);
      stamps.add(leader.announces.get(NAME)?.metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '');
    }
    assert.deepEqual(leader.calls, Array<string>(5).fill(`update ${NAME}`));
    assert.equal(stamps.size, 5);
  });

  it('stamps a strictly later touch-ts even when the clock does not move', async () => {
    const leader = new FakeLeader();
    const frozen = () => new Date('2026-12-02T10:00:00Z');
    const writer = new AnnounceWriter(identity, frozen);
    await writer.beat(leader);
    const first = leader.announces.get(NAME)?.metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '';
    await writer.beat(leader);
    const second = leader.announces.get(NAME)?.metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '';
    assert.ok(second > first, `${second} should be after ${first}`);
  });

  it('recovers from a concurrent write (409) by refetching, and keeps the leader finalizer', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    leader.touchAsLeader(NAME, 'memberclusterannounce.finalizer.antrea.io/east');
    leader.calls.length = 0;
    await writer.beat(leader);
    assert.deepEqual(leader.calls, [`update ${NAME}`, `get ${NAME}`, `update ${NAME}`]);
    assert.deepEqual(leader.announces.get(NAME)?.metadata?.finalizers, ['memberclusterannounce.finalizer.antrea.io/east']);
    leader.calls.length = 0;
    await writer.beat(leader);
    assert.deepEqual(leader.calls, [`update ${NAME}`], 'back to one request once the copy is fresh');
  });

  it('recreates the announce when it was deleted on the leader (404)', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    leader.announces.clear();
    leader.calls.length = 0;
    await writer.beat(leader);
    assert.deepEqual(leader.calls, [`update ${NAME}`, `create ${NAME}`]);
    assert.ok(leader.announces.get(NAME)?.metadata?.annotations?.[TIMESTAMP_ANNOTATION]);
  });

  it('adopts an existing announce after a restart (AlreadyExists → get → update)', async () => {
    const leader = new FakeLeader();
    await new AnnounceWriter(identity, clock()).beat(leader);
    leader.touchAsLeader(NAME, 'f');
    leader.calls.length = 0;
    await new AnnounceWriter(identity, clock(Date.parse('2026-12-02T11:00:00Z'))).beat(leader);
    assert.deepEqual(leader.calls, [`create ${NAME}`, `get ${NAME}`, `update ${NAME}`]);
    assert.deepEqual(leader.announces.get(NAME)?.metadata?.finalizers, ['f']);
  });

  it('does not treat a missing leader namespace as a deleted announce', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    leader.failWith = apiError(404, 'NotFound', 'namespaces "leader-ns" not found', { name: 'leader-ns', kind: 'namespaces' });
    leader.calls.length = 0;
    await assert.rejects(writer.beat(leader), (err) => err instanceof AnnounceError && err.verb === 'update');
    assert.deepEqual(leader.calls, [`update ${NAME}`]);
  });

  it('names the failed verb', async () => {
    const leader = new FakeLeader();
    leader.failWith = apiError(403, 'Forbidden', 'forbidden');
    await assert.rejects(new AnnounceWriter(identity, clock()).beat(leader), (err) => err instanceof AnnounceError && err.verb === 'create');
  });
});

describe('AnnounceWriter.leave()', () => {
  it('deletes the announce and tolerates one that is already gone', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    await writer.leave(leader);
    assert.equal(leader.announces.size, 0);
    await writer.leave(leader);
  });
});
