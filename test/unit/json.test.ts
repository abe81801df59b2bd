// cloneJson replaces structuredClone on the importer's hot path: it must make the same copy
// of wire JSON, sharing nothing with the original.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloneJson } from '../../src/common/kube/json.js';

describe('cloneJson()', () => {
  interface Sample {
    apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, string>; ownerReferences: { uid: string; controller: boolean }[] };
    subsets: { addresses?: { ip: string; targetRef: null }[]; ports?: { port: number; protocol: string }[] }[];
    gone: undefined; n: number; f: number; t: boolean; s: string;
  }
  const sample: Sample = {
    apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'a', labels: { x: 'y' }, ownerReferences: [{ uid: 'u', controller: false }] },
    subsets: [{ addresses: [{ ip: '10.0.0.1', targetRef: null }], ports: [{ port: 80, protocol: 'TCP' }] }, {}],
    gone: undefined, n: 0, f: 1.5, t: true, s: '',
  };

  it('makes the copy structuredClone makes: keys in order, undefined members kept', () => {
    const copy = cloneJson(sample);
    assert.deepStrictEqual(copy, structuredClone(sample));
    assert.deepEqual(Object.keys(copy), Object.keys(sample));
    assert.equal('gone' in copy, true);
    assert.equal(cloneJson(null), null);
    assert.equal(cloneJson('x'), 'x');
  });

  const sampleCopy = structuredClone(sample);

  it('shares no object or array with the original', () => {
    const copy = cloneJson(sample);
    copy.metadata.labels['x'] = 'changed';
    for (const ref of copy.metadata.ownerReferences) ref.uid = 'changed';
    for (const subset of copy.subsets) (subset.addresses ??= []).push({ ip: '10.0.0.2', targetRef: null });
    assert.deepStrictEqual(sample, structuredClone(sampleCopy));
  });
});
