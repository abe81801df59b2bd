// The leader at fleet size (issue 31): one timer for the whole fleet's rechecks, status runs
// paced however many members beat, caches that keep only what is read, and the admission
// parameter computed without looking at every pair of members.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ServiceAccount } from '@kubernetes/client-node';
import { CLUSTER_ID_ANNOTATION } from '../../src/common/api/names.js';
import { behindOwnWrite, Deadlines, pacedRunAt, STATUS_INTERVAL_MS } from '../../src/leader/decisions/deadlines.js';
import { compactServiceAccount, memberIdsData } from '../../src/leader/decisions/member-ids.js';

describe('Deadlines (one timer for every member\'s recheck)', () => {
  it('gives the earliest deadline and takes the due keys in order', () => {
    const d = new Deadlines();
    d.set('c', 30);
    d.set('a', 10);
    d.set('b', 20);
    assert.equal(d.earliest(), 10);
    assert.deepEqual(d.takeDue(20), ['a', 'b']);
    assert.equal(d.earliest(), 30);
    assert.equal(d.size, 1);
    assert.deepEqual(d.takeDue(29), []);
    assert.deepEqual(d.takeDue(30), ['c']);
    assert.equal(d.earliest(), undefined);
  });

  it('a recomputed deadline replaces the old one, later or earlier; a deleted key is never due', () => {
    const d = new Deadlines();
    d.set('east', 100);
    d.set('west', 150);
    // east beat: its recheck moves later, and west's is now the earliest.
    d.set('east', 200);
    assert.equal(d.earliest(), 150);
    d.set('west', 50);
    assert.equal(d.earliest(), 50);
    d.delete('west');
    assert.equal(d.earliest(), 200);
    assert.deepEqual(d.takeDue(1000), ['east']);
  });

  it('keeps a fleet\'s beats in bounded memory and agrees with a plain scan', () => {
    const d = new Deadlines();
    const truth = new Map<string, number>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let beat = 0; beat < 50_000; beat++) {
      const key = `m${String(Math.floor(random() * 1000))}`;
      const at = Math.floor(random() * 1e6);
      d.set(key, at);
      truth.set(key, at);
      if (beat % 997 === 0) assert.equal(d.earliest(), Math.min(...truth.values()));
    }
    assert.equal(d.size, truth.size);
    const order = [...truth].sort(([ka, a], [kb, b]) => a - b || ka.localeCompare(kb));
    const due = d.takeDue(Infinity);
    assert.deepEqual(due.map((k) => truth.get(k)), order.map(([, at]) => at));
  });
});

describe('pacedRunAt (status runs at most once per interval)', () => {
  it('runs at once after a quiet spell, and folds a burst into one run an interval after the last', () => {
    assert.equal(pacedRunAt(1000, undefined, STATUS_INTERVAL_MS), 1000);
    assert.equal(pacedRunAt(5000, 1000, 1000), 5000);
    assert.equal(pacedRunAt(1200, 1000, 1000), 2000);
    // A liveness expiry later than the pace keeps its own time.
    assert.equal(pacedRunAt(7000, 1000, 1000), 7000);
  });

  it('a thousand members beating for a minute start at most one status run per interval', () => {
    // Each beat asks for a run; a run starts when asked if allowed, else at the paced time.
    let lastRun: number | undefined;
    let pending: number | undefined;
    const runs: number[] = [];
    const beats = Array.from({ length: 6000 }, (_, i) => (i * 10_000) / 1000 + (i % 7));
    for (const at of beats) {
      if (pending !== undefined && pending <= at) { runs.push(pending); lastRun = pending; pending = undefined; }
      const next = pacedRunAt(at, lastRun, 1000);
      if (next <= at) { runs.push(at); lastRun = at; } else pending = Math.min(pending ?? Infinity, next);
    }
    for (const [i, t] of runs.entries()) if (i > 0) assert.ok(t - (runs[i - 1] ?? 0) >= 1000, `runs ${String(runs[i - 1])} and ${String(t)}`);
    assert.ok(runs.length <= 61, `${String(runs.length)} runs in a minute`);
  });
});

describe('behindOwnWrite (a status run waits for the cache to show the leader\'s own last write)', () => {
  it('holds while the cache shows the copy the write replaced, within the grace; not after, nor once the cache moved on', () => {
    const written = { resourceVersion: '100', atMs: 1000 };
    assert.equal(behindOwnWrite('100', written, 1500, 10_000), true);
    // The write's event arrived (or someone else wrote since): the cache is newer than what we replaced.
    assert.equal(behindOwnWrite('101', written, 1500, 10_000), false);
    // The event never came: after the grace the cache is trusted again (a conflict then says why).
    assert.equal(behindOwnWrite('100', written, 11_000, 10_000), false);
    assert.equal(behindOwnWrite('100', undefined, 1500, 10_000), false);
  });
});

describe('compactServiceAccount (the leader\'s ServiceAccount cache)', () => {
  it('keeps the identity and the cluster-ID annotation only', () => {
    const sa: V1ServiceAccount = {
      apiVersion: 'v1', kind: 'ServiceAccount',
      metadata: {
        name: 'member-east', namespace: 'antrea-multicluster', uid: 'u1', resourceVersion: '42', labels: { a: 'b' },
        annotations: { [CLUSTER_ID_ANNOTATION]: 'east', 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(2000) },
      },
      secrets: [{ name: 'member-east-token' }],
    };
    assert.deepEqual(compactServiceAccount(sa), {
      metadata: { name: 'member-east', namespace: 'antrea-multicluster', uid: 'u1', resourceVersion: '42', annotations: { [CLUSTER_ID_ANNOTATION]: 'east' } },
    });
    const plain = compactServiceAccount({ metadata: { name: 'default', namespace: 'ns' } });
    assert.deepEqual(plain, { metadata: { name: 'default', namespace: 'ns' } });
    // The admission parameter reads the same from the compact copy.
    assert.deepEqual(memberIdsData([compactServiceAccount(sa)], []).data, memberIdsData([sa], []).data);
  });
});

describe('memberIdsData at fleet size', () => {
  /** The ServiceAccount entries (lower-case keys); the reserved keys have capitals. */
  const members = (data: Record<string, string>) => Object.entries(data).filter(([k]) => k === k.toLowerCase());
  it('finds every dash-prefix pair, chains included, and only those', () => {
    const sas = ['east', 'east-1', 'east-1-a', 'east1', 'eastx', 'west', 'west2', 'north-1'].map((id) => ({ metadata: { name: `member-${id}`, annotations: { [CLUSTER_ID_ANNOTATION]: id } } }));
    const plan = memberIdsData(sas, []);
    assert.deepEqual(members(plan.data).map(([, id]) => id).sort(), ['east1', 'eastx', 'north-1', 'west', 'west2']);
    assert.deepEqual(plan.problems.map((p) => /^cluster IDs (\S+) .* and (\S+) /.exec(p)?.slice(1).join(' ')), ['east east-1', 'east east-1-a', 'east-1 east-1-a']);
  });

  it('20,000 members are not compared pair by pair (400 million comparisons took seconds)', () => {
    const sas = Array.from({ length: 20_000 }, (_, i) => ({ metadata: { name: `member-m${String(i)}`, annotations: { [CLUSTER_ID_ANNOTATION]: `m${String(i)}` } } }));
    const t0 = performance.now();
    const plan = memberIdsData(sas, []);
    const took = performance.now() - t0;
    assert.equal(members(plan.data).length, 20_000);
    assert.equal(plan.data['DashPrefixPairsRefused'], 'true');
    assert.ok(took < 1500, `memberIdsData took ${took.toFixed(0)} ms for 20,000 members`);
  });
});
