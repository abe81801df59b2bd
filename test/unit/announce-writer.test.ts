import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnnounceError, AnnounceMismatchError, AnnounceOwnedElsewhereError, AnnounceWriter } from '../../src/announce/announce-writer.js';
import { TIMESTAMP_ANNOTATION } from '../../src/common/api/names.js';
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
    assert.deepEqual(leader.calls, [`get ${NAME}`, `create ${NAME}`]);
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

  it('adopts an existing announce after a restart with GET then PUT, never a CREATE that would conflict', async () => {
    const leader = new FakeLeader();
    await new AnnounceWriter(identity, clock()).beat(leader);
    leader.touchAsLeader(NAME, 'f');
    leader.calls.length = 0;
    await new AnnounceWriter(identity, clock(Date.parse('2026-12-02T11:00:00Z'))).beat(leader);
    assert.deepEqual(leader.calls, [`get ${NAME}`, `update ${NAME}`]);
    assert.deepEqual(leader.announces.get(NAME)?.metadata?.finalizers, ['f']);
  });

  it('never overwrites an announce another ClusterSet owns', async () => {
    const leader = new FakeLeader();
    await new AnnounceWriter({ ...identity, clusterSetID: 'other-set' }, clock()).beat(leader);
    const before = structuredClone(leader.announces.get(NAME));
    leader.calls.length = 0;
    await assert.rejects(new AnnounceWriter(identity, clock()).beat(leader), (err) =>
      err instanceof AnnounceOwnedElsewhereError && err.ownerClusterSetID === 'other-set' && /belongs to ClusterSet "other-set"/.test(err.message));
    assert.deepEqual(leader.calls, [`get ${NAME}`], 'nothing but the read');
    assert.deepEqual(leader.announces.get(NAME), before);
  });

  it('refuses an answer that is not the announce it wrote (identity or touch-ts differ)', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    leader.rewriteAnswers = (mca) => ({ ...mca, clusterSetID: 'someone-else' });
    await assert.rejects(writer.beat(leader), (err) => err instanceof AnnounceMismatchError && /clusterSetID/.test(err.message));
    leader.rewriteAnswers = (mca) => ({ ...mca, metadata: { ...mca.metadata, annotations: { [TIMESTAMP_ANNOTATION]: '2020-01-01T00:00:00Z' } } });
    await assert.rejects(writer.beat(leader), (err) => err instanceof AnnounceMismatchError && /touch-ts/.test(err.message));
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
    await assert.rejects(new AnnounceWriter(identity, clock()).beat(leader), (err) => err instanceof AnnounceError && err.verb === 'get');
  });

  it('does not take a bare 404 (not a Kubernetes Status) for a deleted announce', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    leader.failWith = Object.assign(new Error('leader answered 404 with content type "text/html"'), { statusCode: 404 });
    leader.calls.length = 0;
    await assert.rejects(writer.beat(leader));
    assert.deepEqual(leader.calls, [`update ${NAME}`], 'no create after a proxy\'s 404 page');
  });
});

describe('AnnounceWriter.leave()', () => {
  it('deletes the announce with a uid precondition and tolerates one that is already gone', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    const uid = leader.announces.get(NAME)?.metadata?.uid;
    assert.equal(await writer.leave(leader), 'deleted');
    assert.equal(leader.announces.size, 0);
    assert.deepEqual(leader.deletes, [{ name: NAME, uid }]);
    assert.equal(await writer.leave(leader), 'absent');
  });

  it('after a restart, reads the announce first and deletes only its own', async () => {
    const leader = new FakeLeader();
    await new AnnounceWriter(identity, clock()).beat(leader);
    leader.calls.length = 0;
    assert.equal(await new AnnounceWriter(identity, clock()).leave(leader), 'deleted');
    assert.deepEqual(leader.calls, [`get ${NAME}`, `delete ${NAME}`]);
  });

  it('never deletes an announce another ClusterSet owns', async () => {
    const leader = new FakeLeader();
    await new AnnounceWriter({ ...identity, clusterSetID: 'healthy-set' }, clock()).beat(leader);
    leader.calls.length = 0;
    assert.equal(await new AnnounceWriter(identity, clock()).leave(leader), 'owned-elsewhere');
    assert.deepEqual(leader.calls, [`get ${NAME}`]);
    assert.equal(leader.announces.get(NAME)?.clusterSetID, 'healthy-set');
  });

  it('does not delete an announce that replaced ours meanwhile (uid precondition), and re-checks its owner', async () => {
    const leader = new FakeLeader();
    const writer = new AnnounceWriter(identity, clock());
    await writer.beat(leader);
    // Ours is deleted and another ClusterSet's announce of the same name takes its place.
    leader.announces.clear();
    await new AnnounceWriter({ ...identity, clusterSetID: 'newcomer' }, clock()).beat(leader);
    leader.calls.length = 0;
    assert.equal(await writer.leave(leader), 'owned-elsewhere');
    assert.deepEqual(leader.calls, [`delete ${NAME}`, `get ${NAME}`]);
    assert.equal(leader.announces.get(NAME)?.clusterSetID, 'newcomer');
  });
});
