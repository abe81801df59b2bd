import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ImportCapacity } from '../../src/importer/capacity.js';

describe('ImportCapacity', () => {
  it('.admit() - reserves a group\'s full size at once, and only once for its other holders', () => {
    const capacity = new ImportCapacity(10);
    assert.equal(capacity.admit('svc-a-service', 'svc:a', 3), true);
    assert.equal(capacity.reservedFor('svc:a'), 3);
    assert.equal(capacity.reservedTotal, 3);
    // The group's Endpoints RI joins the reservation; nothing more is taken.
    assert.equal(capacity.admit('svc-a-endpoints', 'svc:a', 3), true);
    assert.equal(capacity.reservedTotal, 3);
  });

  it('.admit() - never exceeds the limit: a group that does not fit whole is refused and nothing changes', () => {
    const capacity = new ImportCapacity(7);
    assert.equal(capacity.admit('a', 'svc:a', 3), true);
    assert.equal(capacity.admit('b', 'svc:b', 3), true);
    assert.equal(capacity.admit('c', 'svc:c', 3), false);
    assert.equal(capacity.reservedFor('svc:c'), undefined);
    assert.equal(capacity.reservedTotal, 6);
    // A smaller group still fits exactly.
    assert.equal(capacity.admit('d', 'ri:d', 1), true);
    assert.equal(capacity.reservedTotal, 7);
    assert.equal(capacity.admit('e', 'ri:e', 1), false);
    assert.equal(capacity.reservedTotal, 7);
  });

  it('.admit() - is exact however many holders race for the last slots', () => {
    const capacity = new ImportCapacity(31);
    const admitted = Array.from({ length: 50 }, (_, i) => capacity.admit(`ri-${i}`, `svc:${i}`, 3)).filter(Boolean).length;
    assert.equal(admitted, 10);
    assert.equal(capacity.reservedTotal, 30);
  });

  it('.admit() - a group that grows reserves only the difference, and only if it fits', () => {
    const capacity = new ImportCapacity(5);
    assert.equal(capacity.admit('x', 'ri:x', 2), true);
    assert.equal(capacity.admit('y', 'ri:y', 1), true);
    assert.equal(capacity.admit('x', 'ri:x', 4), true);
    assert.equal(capacity.reservedFor('ri:x'), 4);
    assert.equal(capacity.reservedTotal, 5);
    assert.equal(capacity.admit('x', 'ri:x', 5), false);
    assert.equal(capacity.reservedFor('ri:x'), 4, 'a refused growth keeps what the group had');
    // Shrinking does not give slots back while the group is held.
    assert.equal(capacity.admit('x', 'ri:x', 1), true);
    assert.equal(capacity.reservedFor('ri:x'), 4);
  });

  it('.unadmit() - frees the slots only when no holder and no object remains', () => {
    const capacity = new ImportCapacity(10);
    capacity.admit('svc', 'svc:a', 3);
    capacity.admit('eps', 'svc:a', 3);
    capacity.objectAdded('svc:a');
    assert.equal(capacity.unadmit('svc', 'svc:a'), false, 'another holder remains');
    assert.equal(capacity.unadmit('eps', 'svc:a'), false, 'an object remains');
    assert.equal(capacity.reservedTotal, 3);
    capacity.objectRemoved('svc:a');
    assert.equal(capacity.reservedTotal, 3, 'removing an object frees nothing by itself');
    assert.equal(capacity.releaseIfUnused('svc:a'), true);
    assert.equal(capacity.reservedFor('svc:a'), undefined);
    assert.equal(capacity.reservedTotal, 0);
    assert.equal(capacity.releaseIfUnused('svc:a'), false, 'nothing left to free');
  });

  it('.unadmit() - of the last holder of an empty group frees it at once', () => {
    const capacity = new ImportCapacity(3);
    capacity.admit('a', 'svc:a', 3);
    assert.equal(capacity.admit('b', 'svc:b', 3), false);
    assert.equal(capacity.unadmit('a', 'svc:a'), true);
    assert.equal(capacity.admit('b', 'svc:b', 3), true);
  });

  it('.objectAdded()/.objectRemoved() - count objects per group', () => {
    const capacity = new ImportCapacity(10);
    capacity.objectAdded('svc:a');
    capacity.objectAdded('svc:a');
    assert.equal(capacity.objectsIn('svc:a'), 2);
    capacity.objectRemoved('svc:a');
    capacity.objectRemoved('svc:a');
    capacity.objectRemoved('svc:a');
    assert.equal(capacity.objectsIn('svc:a'), 0);
  });

  it('.settle() - frees unused groups and reserves for what exists, over the limit if need be', () => {
    const capacity = new ImportCapacity(4);
    capacity.admit('held', 'ri:held', 1);
    // After a restart the objects are counted as they are found: part of a service, two of an RI.
    capacity.forgetObjects();
    capacity.objectAdded('svc:a');
    capacity.objectAdded('ri:b');
    capacity.objectAdded('ri:b');
    const freed = capacity.settle((group, objects) => (group.startsWith('svc:') ? 3 : objects));
    assert.equal(freed, false, 'the only reservation has a holder');
    assert.equal(capacity.reservedFor('svc:a'), 3);
    assert.equal(capacity.reservedFor('ri:b'), 2);
    assert.equal(capacity.reservedFor('ri:held'), 1);
    assert.equal(capacity.reservedTotal, 6);
    assert.equal(capacity.admit('new', 'ri:new', 1), false, 'over the limit, nothing new is admitted');
  });

  it('.settle() - reports freed groups and keeps larger reservations', () => {
    const capacity = new ImportCapacity(10);
    capacity.admit('a', 'ri:a', 3);
    capacity.objectAdded('ri:a');
    capacity.admit('b', 'ri:b', 2);
    capacity.objectAdded('ri:b');
    capacity.unadmit('b', 'ri:b');
    capacity.forgetObjects();
    capacity.objectAdded('ri:a');
    assert.equal(capacity.settle((_group, objects) => objects), true);
    assert.equal(capacity.reservedFor('ri:b'), undefined);
    assert.equal(capacity.reservedFor('ri:a'), 3, 'a reservation is never lowered');
    assert.equal(capacity.reservedTotal, 3);
  });

  it('.clear() - forgets reservations, holders and objects', () => {
    const capacity = new ImportCapacity(3);
    capacity.admit('a', 'svc:a', 3);
    capacity.objectAdded('svc:a');
    capacity.clear();
    assert.equal(capacity.reservedTotal, 0);
    assert.equal(capacity.objectsIn('svc:a'), 0);
    assert.equal(capacity.admit('b', 'svc:b', 3), true);
  });
});
