import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rejection } from '../../src/importer/policy.js';
import { RiState } from '../../src/importer/ri-state.js';

function setup(): { state: RiState; requeued: string[]; left: string[] } {
  const requeued: string[] = [];
  const left: string[] = [];
  const state = new RiState({
    requeue: (riName) => { requeued.push(riName); },
    leftGroup: (riName, group) => { left.push(`${riName}@${group}`); },
  });
  return { state, requeued, left };
}

const refusal = (rule: Rejection['rule'], message = `refused: ${rule}`): Rejection => ({ rule, message });

describe('RiState', () => {
  it('.joinGroup() - moving to another group gives up the hold on the old one', () => {
    const { state, left } = setup();
    state.joinGroup('a', { group: 'svc:x', kind: 'ServiceImport' });
    state.joinGroup('a', { group: 'svc:x', kind: 'ServiceImport' });
    assert.deepEqual(left, []);
    state.joinGroup('a', { group: 'svc:y', kind: 'ServiceImport' });
    assert.deepEqual(left, ['a@svc:x']);
    assert.deepEqual([...state.members('svc:x')], []);
    assert.deepEqual([...state.members('svc:y')], ['a']);
  });

  it('.setVerdict() - a ServiceImport RI whose verdict or refusal changed requeues the rest of its group', () => {
    const { state, requeued } = setup();
    state.joinGroup('si', { group: 'svc:x', kind: 'ServiceImport' });
    state.joinGroup('eps', { group: 'svc:x', kind: 'Endpoints' });
    state.setVerdict('si', 'applied');
    assert.deepEqual(requeued, ['eps']);
    state.setVerdict('si', 'applied');
    assert.deepEqual(requeued, ['eps'], 'unchanged: nobody requeued');
    state.reject('si', refusal('NamespaceNotFound', 'one'), []);
    state.reject('si', refusal('NamespaceNotFound', 'two'), []);
    assert.deepEqual(requeued, ['eps', 'eps', 'eps'], 'a new refusal message counts as a change');
    state.setVerdict('eps', 'applied');
    assert.deepEqual(requeued, ['eps', 'eps', 'eps'], 'an Endpoints verdict requeues nobody');
  });

  it('.reject() - remembers what a refusal waits for, until the RI is judged otherwise', () => {
    const { state } = setup();
    const first = refusal('NamespaceNotFound');
    assert.equal(state.reject('a', first, ['ns-1', 'ns-2']), undefined);
    assert.deepEqual([...state.waitingFor('ns-1')], ['a']);
    assert.equal(state.reject('a', refusal('NamespaceNotFound'), ['ns-2']), first);
    assert.deepEqual([...state.waitingFor('ns-1')], []);
    assert.deepEqual([...state.waitingFor('ns-2')], ['a']);
    state.reject('b', refusal('TooManyObjects'), []);
    assert.deepEqual([...state.waitingForCapacity], ['b']);
    assert.equal(state.rejectedCount, 2);
    state.setVerdict('a', 'applied');
    state.setVerdict('b', 'skipped');
    assert.deepEqual([...state.waitingFor('ns-2')], []);
    assert.deepEqual([...state.waitingForCapacity], []);
    assert.equal(state.rejectedCount, 0);
  });

  it('.conflict() - is news once per message, and cleared by any other verdict', () => {
    const { state } = setup();
    assert.equal(state.conflict('a', 'wants x'), true);
    assert.equal(state.conflict('a', 'wants x'), false);
    assert.equal(state.conflict('a', 'wants y'), true);
    state.setVerdict('a', 'conflict');
    assert.equal(state.conflictCount, 1);
    state.setVerdict('a', 'applied');
    assert.equal(state.conflictCount, 0);
  });

  it('.forget() - drops everything about a withdrawn RI and gives up its hold', () => {
    const { state, requeued, left } = setup();
    state.joinGroup('si', { group: 'svc:x', kind: 'ServiceImport' });
    state.joinGroup('eps', { group: 'svc:x', kind: 'Endpoints' });
    state.reject('si', refusal('NamespaceNotFound'), ['ns']);
    requeued.length = 0;
    state.forget('si');
    assert.deepEqual(requeued, ['eps'], 'the Endpoints RI learns its sibling went');
    assert.deepEqual(left, ['si@svc:x']);
    assert.equal(state.verdict('si'), undefined);
    assert.equal(state.rejection('si'), undefined);
    assert.deepEqual([...state.waitingFor('ns')], []);
    assert.deepEqual(state.known(), ['eps']);
  });

  it('.clear() - forgets everything', () => {
    const { state } = setup();
    state.joinGroup('a', { group: 'svc:x', kind: 'ServiceImport' });
    state.reject('a', refusal('TooManyObjects'), ['ns']);
    state.conflict('b', 'wants x');
    state.clear();
    assert.deepEqual(state.known(), []);
    assert.equal(state.rejectedCount + state.conflictCount + state.waitingForCapacity.size, 0);
    assert.deepEqual([...state.waitingFor('ns')], []);
  });
});
