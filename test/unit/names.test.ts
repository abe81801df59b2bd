import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDnsLabel, isDnsSubdomain } from '../../src/common/api/names.js';
import { leaderTarget } from '../../src/clusterset/spec.js';

describe('isDnsLabel()', () => {
  it('accepts lower-case alphanumerics and inner dashes, up to 63 characters', () => {
    for (const ok of ['a', '0', 'kube-system', 'a-b-c', '1a', 'a1', 'a--b', 'x'.repeat(63)]) assert.ok(isDnsLabel(ok), ok);
  });
  it('refuses empty, dashes at either end, dots, upper case, other characters and 64 characters', () => {
    for (const bad of ['', '-a', 'a-', '-', 'a.b', 'A', 'aB', 'a_b', 'a b', 'é', 'x'.repeat(64)]) assert.ok(!isDnsLabel(bad), bad);
  });
  it('refuses what is not a string', () => {
    for (const bad of [undefined, null, 1, ['a'], { a: 1 }]) assert.ok(!isDnsLabel(bad));
  });
});

describe('isDnsSubdomain()', () => {
  it('accepts dot-separated labels up to 253 characters', () => {
    for (const ok of ['a', 'a.b', 'east.example.com', 'a-1.b-2', 'x'.repeat(253), `${'x'.repeat(63)}.${'y'.repeat(63)}`]) {
      assert.ok(isDnsSubdomain(ok), ok);
    }
  });
  it('like Kubernetes, limits only the whole name, not each label', () => {
    assert.ok(isDnsSubdomain(`${'x'.repeat(100)}.b`));
  });
  it('refuses empty labels, dashes at a label\'s either end, and 254 characters', () => {
    for (const bad of ['', '.', 'a..b', '.a', 'a.', 'a.-b', 'a-.b', '-a', 'a-', 'A.b', 'a_b', 'a/b', 'x'.repeat(254)]) {
      assert.ok(!isDnsSubdomain(bad), bad);
    }
    assert.ok(!isDnsSubdomain(undefined));
  });
  it('answers quickly on long hostile input', () => {
    const started = performance.now();
    for (let i = 0; i < 100; i++) isDnsSubdomain(`${'a-'.repeat(126)}-`);
    assert.ok(performance.now() - started < 1000);
  });
});

describe('ClusterSet spec names', () => {
  const spec = (clusterID: string) => leaderTarget({
    apiVersion: 'multicluster.crd.antrea.io/v1alpha2', kind: 'ClusterSet', metadata: { name: 'set', namespace: 'agents' },
    spec: { clusterID, namespace: 'antrea-multicluster', leaders: [{ clusterID: 'leader', server: 'https://10.0.0.1:6443', secret: 's' }] },
  });
  it('takes a cluster ID in the one cluster-ID grammar: a DNS-1123 label, so no dots at all', () => {
    assert.equal(spec('east-1').ok, true);
    for (const id of ['east.example', 'a..b', 'a.-b', `a${'b'.repeat(63)}`]) assert.equal(spec(id).ok, false, id);
  });
});
