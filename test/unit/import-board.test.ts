// The import board's left-behind entries (what an importer that yields, refuses or goes leaves
// for the next source of an import): adopted by that source, and dropped once an index rebuild
// of the ClusterSet's objects covers them, so that entries no source ever adopts do not pile up
// for as long as the board lives. Small in-memory members; the importers themselves are in
// several-leaders-importer.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ImportBoard, type BoardMember, type IndexListing } from '../../src/importer/import-board.js';
import type { ObjectRef } from '../../src/importer/local-store.js';
import type { Owned } from '../../src/importer/owned-index.js';
import { IMPORT_TARGET_KINDS, keyOf } from '../../src/importer/targets.js';

const SERVICES = IMPORT_TARGET_KINDS.find((k) => k.plural === 'services') ?? assert.fail('no services kind');
const SLICES = IMPORT_TARGET_KINDS.find((k) => k.plural === 'endpointslices') ?? assert.fail('no endpointslices kind');

function entry(riName: string, name: string, kind = SERVICES): Owned {
  const ref: ObjectRef = { ...kind, namespace: 'team-a', name };
  return { ref, riName, group: `team-a/${riName}`, live: { metadata: { name } }, deleting: false };
}

/** A connected member holding no import, with nothing of its own to surrender. */
const member = (): BoardMember => ({ view: () => ({ state: 'connected', ri: undefined }), recheck: () => undefined, recheckAll: () => undefined, surrender: () => [] });

/** A rebuild that listed every kind, found `found` and indexed `indexed` of them. */
function listing(found: readonly Owned[], indexed: readonly Owned[] = found): IndexListing {
  const keys = new Set(indexed.map((e) => keyOf(e.ref)));
  return { kinds: IMPORT_TARGET_KINDS, found, indexed: (key) => keys.has(key) };
}

function board() {
  const b = new ImportBoard();
  b.setLeaders(['a', 'b']);
  const members = { a: member(), b: member() };
  b.join('a', members.a);
  b.join('b', members.b);
  return { board: b, members, a: b.handle('a'), b: b.handle('b') };
}

describe('import board: left-behind entries', () => {
  it('an entry a rebuild indexed is dropped at the next rebuild after it was left, not before', () => {
    const s = board();
    const api = entry('team-a-api-service', 'antrea-mc-api');
    s.b.rebuilt(listing([]));
    s.a.leaveBehind([api]);
    // Listed by a rebuild that may have begun before it was left: kept.
    s.b.rebuilt(listing([api]));
    assert.equal(s.board.leftBehindCount, 1);
    s.b.rebuilt(listing([api]));
    assert.equal(s.board.leftBehindCount, 0, 'in b\'s index now: b surrenders it to the next source');
  });

  it('an entry whose object a rebuild did not find (gone) is dropped; one of a kind it did not list stays', () => {
    const s = board();
    const gone = entry('team-a-api-service', 'antrea-mc-api');
    const unlisted = entry('team-a-api-endpoints', 'antrea-mc-api.ipv4', SLICES);
    s.a.leaveBehind([gone, unlisted]);
    s.b.rebuilt({ kinds: [SERVICES], found: [], indexed: () => false });
    s.b.rebuilt({ kinds: [SERVICES], found: [], indexed: () => false });
    assert.equal(s.board.leftBehindCount, 1);
    assert.deepEqual(s.b.adopt('team-a-api-endpoints'), [unlisted]);
  });

  it('an entry a rebuild found but left to another source (not indexed) stays, and that source adopts it', () => {
    const s = board();
    const api = entry('team-a-api-service', 'antrea-mc-api');
    s.a.leaveBehind([api]);
    s.b.rebuilt(listing([api], []));
    s.b.rebuilt(listing([api], []));
    assert.equal(s.board.leftBehindCount, 1);
    assert.deepEqual(s.a.adopt('team-a-api-service'), [api]);
    assert.equal(s.board.leftBehindCount, 0);
  });

  it('a rebuild of an importer that left the board drops nothing: its index goes with it', () => {
    const s = board();
    const api = entry('team-a-api-service', 'antrea-mc-api');
    s.a.leaveBehind([api]);
    s.b.rebuilt(listing([api]));
    s.board.leave('b', s.members.b);
    s.b.rebuilt(listing([api]));
    s.b.rebuilt(listing([api]));
    assert.equal(s.board.leftBehindCount, 1);
  });
});
