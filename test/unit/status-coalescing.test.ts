// When the leader ClusterSet's status is written (src/leader/decisions/status-coalescing.ts):
// at once after a quiet spell, inside a burst within each change's bound, every pending change
// in one write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSetStatus } from '../../src/common/api/antrea.js';
import { changeUrgency, coalescingBounds, StatusCoalescer } from '../../src/leader/decisions/status-coalescing.js';

const T = '2026-12-05T10:00:00Z';
function status(members: Record<string, 'True' | 'False'>, extra: Partial<ClusterSetStatus> = {}): ClusterSetStatus {
  const ids = Object.keys(members).sort();
  const ready = ids.filter((id) => members[id] === 'True').length;
  return {
    totalClusters: ids.length, readyClusters: ready, observedGeneration: 1,
    conditions: [{ type: 'Ready', status: ready === ids.length ? 'True' : 'False', lastTransitionTime: T }],
    clusterStatuses: ids.map((id) => ({ clusterID: id, conditions: [{ type: 'Ready', status: members[id] ?? 'False', lastTransitionTime: T }] })),
    ...extra,
  };
}

void describe('changeUrgency', () => {
  void it('is urgent when a listed member is no longer Ready, a condition other than Ready changes, or the spec moved', () => {
    assert.equal(changeUrgency(status({ a: 'True', b: 'True' }), status({ a: 'True', b: 'False' })), 'urgent');
    const duplicate = { type: 'DuplicateClusterID', status: 'True' as const, lastTransitionTime: T, reason: 'DuplicateClusterID' };
    assert.equal(changeUrgency(status({ a: 'True' }), status({ a: 'True' }, { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T }, duplicate] })), 'urgent');
    assert.equal(changeUrgency(status({ a: 'True' }), status({ a: 'True' }, { observedGeneration: 2 })), 'urgent');
    assert.equal(changeUrgency(undefined, status({ a: 'True' })), 'urgent', 'the first status');
  });

  void it('is routine for members joining, leaving and coming back', () => {
    assert.equal(changeUrgency(status({ a: 'True' }), status({ a: 'True', b: 'True' })), 'routine', 'a join');
    assert.equal(changeUrgency(status({ a: 'True', b: 'False' }), status({ a: 'True' })), 'routine', 'a Disconnected member left');
    assert.equal(changeUrgency(status({ a: 'True', b: 'True' }), status({ a: 'True' })), 'routine', 'a member left (its leave deleted the announce)');
    assert.equal(changeUrgency(status({ a: 'False' }), status({ a: 'True' })), 'routine', 'back');
    assert.equal(changeUrgency(status({ a: 'True' }), status({ a: 'True', b: 'False' })), 'routine', 'a member shown first as not ready');
  });
});

void describe('StatusCoalescer (a 30 s member timeout: quiet 30 s, urgent 6 s, routine 15 s)', () => {
  const bounds = coalescingBounds(30_000);

  void it('derives its bounds from the member timeout', () => {
    assert.deepEqual(bounds, { quietMs: 30_000, urgentMs: 6_000, routineMs: 15_000 });
  });

  void it('writes the first change after a quiet spell at once, and holds the next ones back to their bound', () => {
    const c = new StatusCoalescer(bounds);
    assert.deepEqual(c.changed('routine', 0), { write: true }, 'never written');
    c.written(0);
    assert.deepEqual(c.changed('routine', 5_000), { write: false, dueAtMs: 20_000 });
    assert.deepEqual(c.changed('routine', 9_000), { write: false, dueAtMs: 20_000 }, 'due from the first time it was seen');
    assert.deepEqual(c.changed('urgent', 12_000), { write: false, dueAtMs: 18_000 }, 'an urgent one brings the write forward');
    assert.deepEqual(c.changed('urgent', 18_000), { write: true });
    c.written(18_000);
    // Quiet again only a member timeout after the last write.
    assert.deepEqual(c.changed('urgent', 47_000), { write: false, dueAtMs: 53_000 });
    c.written(53_000);
    assert.deepEqual(c.changed('routine', 83_000), { write: true });
  });

  void it('is not quiet while a change is pending, however long ago the last write was', () => {
    const c = new StatusCoalescer(bounds);
    c.written(0);
    assert.deepEqual(c.changed('routine', 10_000), { write: false, dueAtMs: 25_000 });
    // The run at the due time came late (a busy leader): still written, not a new quiet spell's leading edge only.
    assert.deepEqual(c.changed('routine', 45_000), { write: true });
  });

  void it('forgets a change that undid itself, and an urgent one that became routine keeps the routine bound of its start', () => {
    const c = new StatusCoalescer(bounds);
    c.written(0);
    assert.deepEqual(c.changed('urgent', 5_000), { write: false, dueAtMs: 11_000 });
    // The member came back; another joined meanwhile: routine, counted from 5 s.
    assert.deepEqual(c.changed('routine', 8_000), { write: false, dueAtMs: 20_000 });
    c.unchanged();
    assert.deepEqual(c.changed('routine', 31_000), { write: true }, 'nothing pending and no write for 31 s: quiet');
  });
});
