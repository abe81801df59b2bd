import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringPool } from '../../src/common/kube/string-pool.js';

describe('StringPool', () => {
  it('changes no value: objects and arrays at any depth keep their content, keys and order', () => {
    const pool = new StringPool(4);
    const object = { kind: 'Service', metadata: { name: 'a', uid: 'u-1', labels: { x: 'y' } }, spec: { ports: [{ name: 'http', port: 80 }], ips: ['10.0.0.1', null] }, n: 1, ok: true };
    const copy = structuredClone(object);
    assert.equal(pool.internValues(object), object, 'in place');
    assert.deepEqual(object, copy);
    assert.deepEqual(Object.keys(object.metadata), Object.keys(copy.metadata));
  });

  it('never holds more than two generations of strings, however many it saw', () => {
    const pool = new StringPool(100);
    for (let i = 0; i < 10_000; i++) pool.intern(`name-${String(i)}`);
    assert.ok(pool.size <= 200, `size ${String(pool.size)}`);
    assert.ok(pool.size > 100);
  });

  it('keeps a string that recurs across generations, and lets one-off strings age out', () => {
    const pool = new StringPool(10);
    pool.intern('antrea-multicluster');
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 9; i++) pool.intern(`once-${String(round)}-${String(i)}`);
      pool.intern('antrea-multicluster');
    }
    // Ten per generation: the recurring string plus the latest one-off strings.
    assert.ok(pool.size <= 20);
    const before = pool.size;
    pool.intern('antrea-multicluster');
    assert.equal(pool.size, before, 'already pooled: nothing added');
  });

  it('leaves long strings and the unique metadata fields (uid, resourceVersion) out of the pool', () => {
    const pool = new StringPool();
    pool.intern('x'.repeat(65));
    pool.internValues({ metadata: { uid: '0fa41221-4904-4d44-a7ca-22f07b40c05f', resourceVersion: '583' } });
    assert.equal(pool.size, 0);
    pool.internValues({ metadata: { name: 'a', annotations: { hash: 'fe6c7f07ae9899c2' } } });
    assert.equal(pool.size, 2);
  });
});
