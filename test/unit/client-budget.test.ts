import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientBudget, LONG_WAIT_MS, REPORT_EVERY_MS } from '../../src/common/kube/client-budget.js';

function clock(start = 0) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('ClientBudget', () => {
  it('lets a burst start at once, then spaces requests at 1/qps, in arrival order', () => {
    const c = clock();
    const budget = new ClientBudget({ qps: 10, burst: 3 }, undefined, c);
    assert.deepEqual([budget.reserve(), budget.reserve(), budget.reserve()], [0, 0, 0]);
    assert.deepEqual([budget.reserve(), budget.reserve()].map(Math.round), [100, 200]);
    assert.deepEqual(budget.stats, { throttled: 2, waitedMs: 300 });
  });

  it('refills at qps up to burst, never beyond', () => {
    const c = clock();
    const budget = new ClientBudget({ qps: 10, burst: 2 }, undefined, c);
    budget.reserve();
    budget.reserve();
    c.t += 50;
    assert.equal(Math.round(budget.reserve()), 50, 'half a token came back in 50 ms');
    c.t += 10_000;
    assert.deepEqual([budget.reserve(), budget.reserve()], [0, 0]);
    assert.ok(budget.reserve() > 0, 'a long quiet spell refills only `burst` tokens');
  });

  it('qps 0 turns it off', () => {
    const budget = new ClientBudget({ qps: 0, burst: 1 }, undefined, clock());
    assert.equal(budget.enabled, false);
    for (let i = 0; i < 1000; i += 1) assert.equal(budget.reserve(), 0);
    assert.equal(budget.stats.throttled, 0);
  });

  it('reports waits over a second, at most once a minute, with what happened since the last report', () => {
    const c = clock();
    const reports: unknown[] = [];
    const quick = new ClientBudget({ qps: 1, burst: 1 }, (r) => reports.push(r), c);
    quick.reserve();
    assert.equal(quick.reserve(), LONG_WAIT_MS, 'exactly a second');
    assert.equal(reports.length, 0, 'a one-second wait is not reported');

    const slow = new ClientBudget({ qps: 0.01, burst: 1 }, (r) => reports.push(r), c);
    slow.reserve();
    slow.reserve(); // waits 100 s: reported at once
    slow.reserve(); // 200 s, within the minute: counted for the next report
    assert.deepEqual(reports, [{ longestWaitMs: 100_000, longWaits: 1 }]);
    c.t += REPORT_EVERY_MS;
    slow.reserve(); // 240 s (0.6 token came back)
    assert.deepEqual(reports, [{ longestWaitMs: 100_000, longWaits: 1 }, { longestWaitMs: 240_000, longWaits: 2 }]);
  });

  it('take() resolves after the reserved wait', async () => {
    const budget = new ClientBudget({ qps: 50, burst: 1 });
    await budget.take();
    const started = performance.now();
    await budget.take();
    assert.ok(performance.now() - started >= 15, 'the second token came ~20 ms later');
  });

  it('rejects settings that make no budget', () => {
    assert.throws(() => new ClientBudget({ qps: -1, burst: 1 }), /qps must be a finite number/);
    assert.throws(() => new ClientBudget({ qps: 5, burst: 0 }), /burst must be an integer ≥ 1/);
    assert.throws(() => new ClientBudget({ qps: Infinity, burst: 1 }), /qps must be a finite number/);
  });
});
