// The order of names and cluster IDs the leader writes (src/common/text/order.ts): localeCompare's,
// without loading ICU for plain Kubernetes names (issue 31, the leader's memory).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { V1ServiceAccount } from '@kubernetes/client-node';
import { compareNames } from '../../src/common/text/order.js';
import { leaderClusterSetStatus, type MemberLiveness } from '../../src/leader/decisions/liveness.js';
import { memberIdsData } from '../../src/leader/decisions/member-ids.js';

const localeCompare = Object.getOwnPropertyDescriptor(String.prototype, 'localeCompare');
afterEach(() => { if (localeCompare) Object.defineProperty(String.prototype, 'localeCompare', localeCompare); });

/** localeCompare made to fail: what touches ICU's collation shows. */
function forbidLocaleCompare(): void {
  Object.defineProperty(String.prototype, 'localeCompare', { configurable: true, writable: true, value() { throw new Error('localeCompare called'); } });
}

// A small deterministic generator: the same names on every run.
function names(count: number, seed = 7): string[] {
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789.-';
  let x = seed;
  const next = () => { x = (x * 1103515245 + 12345) % 2147483648; return x / 2147483648; };
  return Array.from({ length: count }, () => Array.from({ length: Math.floor(next() * 7) }, () => chars[Math.floor(next() * chars.length)]).join(''));
}

void describe('the order of names the leader writes', () => {
  void it('is localeCompare\'s (root and en-US collation) for names of a-z, 0-9, - and .', () => {
    const list = names(4000);
    for (let i = 0; i + 1 < list.length; i++) {
      const [a, b] = [list[i] ?? '', list[i + 1] ?? ''];
      const ours = Math.sign(compareNames(a, b));
      for (const locale of ['und', 'en-US']) assert.equal(ours, Math.sign(a.localeCompare(b, locale)), `${a} vs ${b} (${locale})`);
    }
    assert.ok(compareNames('m-1', 'm.1') < 0 && compareNames('m9', 'ma') < 0 && compareNames('m', 'm-') < 0 && compareNames('a', 'a') === 0);
  });

  void it('anything else still goes to localeCompare, so no written order changes', () => {
    for (const [a, b] of [['a', 'B'], ['B', 'a'], ['a_b', 'a-b'], ['é', 'f'], ['M1', 'm0']] as const) {
      assert.equal(Math.sign(compareNames(a, b)), Math.sign(a.localeCompare(b)), `${a} vs ${b}`);
    }
  });

  void it('plain names never reach ICU: the ClusterSet status and the member-ID ConfigMap are built without localeCompare', () => {
    const members: MemberLiveness[] = ['m0002', 'm0010', 'm0001', 'east-1', 'east'].map((clusterID) => ({ clusterID, ready: true, message: '', expiresAt: undefined, lastBeat: undefined, since: undefined }));
    const sas: V1ServiceAccount[] = ['member-m0002', 'member-east', 'member-m0001'].map((name) => ({ metadata: { name, annotations: { 'multicluster.antrea.io/cluster-id': name.slice(7) } } }));
    forbidLocaleCompare();
    const status = leaderClusterSetStatus({ metadata: { name: 'cs', generation: 1 }, spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] } }, members, Date.UTC(2026, 0, 1));
    assert.deepEqual((status.clusterStatuses ?? []).map((s) => s.clusterID), ['east', 'east-1', 'm0001', 'm0002', 'm0010']);
    assert.deepEqual(Object.keys(memberIdsData(sas, []).data).filter((k) => k.startsWith('member-')), ['member-east', 'member-m0001', 'member-m0002']);
  });
});
