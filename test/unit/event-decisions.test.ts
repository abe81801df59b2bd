// The recorder's pure decisions one by one; test/unit/event-recorder.test.ts drives them
// together through createEventRecorder.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventCorrelator } from '../../src/common/events/correlator.js';
import { DropReport } from '../../src/common/events/drop-report.js';
import type { EventTarget } from '../../src/common/events/event.js';
import { decideOnFailure, retryAfterMs } from '../../src/common/events/send-failure.js';
import { SpamFilter } from '../../src/common/events/spam-filter.js';

const TARGET: EventTarget = { apiVersion: 'multicluster.crd.antrea.io/v1alpha2', kind: 'ClusterSet', name: 'cs', namespace: 'kube-system', uid: 'u-1' };
const PREFIX = '(combined from similar events): ';
const MINUTE = 60_000;

function apiError(code: number, reason?: string, headers: Record<string, string> = {}): Error {
  // The shape of client-node's ApiException: code, response headers, raw Status body.
  return Object.assign(new Error(`HTTP ${code}`), { code, headers, body: JSON.stringify({ kind: 'Status', code, ...(reason && { reason }) }) });
}

describe('EventCorrelator', () => {
  const correlator = () => new EventCorrelator({ component: 'test-agent', windowMs: 10 * MINUTE, maxEvents: 3, maxEntries: 100 });

  it('the same event again is the same Event with a higher count; the first request creates it, later ones patch', () => {
    const c = correlator();
    const first = c.correlate(0, TARGET, 'Warning', 'R', 'm');
    assert.equal(first.count, 1);
    assert.equal(first.name.startsWith('cs.'), true);
    assert.equal(c.claimCreate(first.logKey), true);
    const second = c.correlate(1, TARGET, 'Warning', 'R', 'm');
    assert.deepEqual([second.name, second.logKey, second.count, second.firstTimestamp], [first.name, first.logKey, 2, 0]);
    assert.equal(c.claimCreate(second.logKey), false);

    // A create that was dropped has to be sent again.
    c.createLost(second.logKey, second.name);
    assert.equal(c.claimCreate(second.logKey), true);
  });

  it('folds new distinct messages into one aggregate once maxEvents - 1 have their own Event', () => {
    const c = correlator();
    const events = ['a', 'b', 'c', 'd'].map((m, i) => c.correlate(i, TARGET, 'Warning', 'R', m));
    assert.deepEqual(events.map((e) => e.message), ['a', 'b', `${PREFIX}c`, `${PREFIX}d`]);
    assert.equal(new Set(events.map((e) => e.name)).size, 3);
    assert.equal(events[3]?.count, 2);
    // Another reason is another group; a message seen before still goes to its own Event.
    assert.equal(c.correlate(5, TARGET, 'Warning', 'Other', 'c').message, 'c');
    assert.equal(c.correlate(6, TARGET, 'Warning', 'R', 'a').count, 2);
    assert.deepEqual(c.size, { aggregates: 2, events: 4 });
  });

  it('truncates messages to 1024 characters, the aggregate prefix included', () => {
    const c = correlator();
    assert.equal(c.correlate(0, TARGET, 'Normal', 'R', 'x'.repeat(5000)).message.length, 1024);
    c.correlate(1, TARGET, 'Normal', 'R', 'y');
    const aggregate = c.correlate(2, TARGET, 'Normal', 'R', 'z'.repeat(5000)).message;
    assert.equal(aggregate.length, 1024);
    assert.ok(aggregate.startsWith(PREFIX));
  });

  it('expires entries older than the window and caps the caches, least recently used first', () => {
    const c = correlator();
    const old = c.correlate(0, TARGET, 'Normal', 'Old', 'm');
    c.correlate(5 * MINUTE, TARGET, 'Normal', 'New', 'm');
    c.expire(10 * MINUTE + 1);
    assert.deepEqual(c.size, { aggregates: 1, events: 1 });
    const again = c.correlate(10 * MINUTE + 1, TARGET, 'Normal', 'Old', 'm');
    assert.notEqual(again.name, old.name);
    assert.equal(again.count, 1);

    const small = new EventCorrelator({ component: 'test-agent', windowMs: 10 * MINUTE, maxEvents: 3, maxEntries: 2 });
    for (let i = 0; i < 5; i += 1) small.correlate(i, TARGET, 'Normal', `R${i}`, 'm');
    small.cap();
    assert.deepEqual(small.size, { aggregates: 2, events: 2 });
  });
});

describe('SpamFilter', () => {
  const filter = (burst = 2) => new SpamFilter({ burst, refillMs: 5 * MINUTE, windowMs: 10 * MINUTE, maxEntries: 100 });

  it('allows a burst per source, then one per refill; the first refusal per window is to be logged', () => {
    const f = filter();
    assert.deepEqual([f.allow('s', 'obj', 0), f.allow('s', 'obj', 0)], [{ allowed: true }, { allowed: true }]);
    assert.deepEqual(f.allow('s', 'obj', 0), { allowed: false, logDropped: { object: 'obj', dropped: 1 } });
    assert.deepEqual(f.allow('s', 'obj', 1), { allowed: false });
    assert.deepEqual(f.allow('other', 'other obj', 1), { allowed: true });
    assert.deepEqual(f.allow('s', 'obj', 5 * MINUTE), { allowed: true });
    assert.equal(f.refused, 2);
    assert.deepEqual(f.unreported(5 * MINUTE), [{ object: 'obj', dropped: 1 }]);
    assert.deepEqual(f.unreported(5 * MINUTE), []);
  });

  it('forgets buckets that are full again and caps the rest, handing back their unlogged refusals', () => {
    const f = filter(1);
    f.allow('s', 'obj', 0);
    f.allow('s', 'obj', 0);
    f.allow('s', 'obj', 0);
    assert.deepEqual(f.expire(5 * MINUTE - 1), []);
    assert.deepEqual(f.expire(5 * MINUTE), [{ object: 'obj', dropped: 1 }]);
    assert.equal(f.size, 0);

    const small = new SpamFilter({ burst: 1, refillMs: 5 * MINUTE, windowMs: 10 * MINUTE, maxEntries: 1 });
    small.allow('a', 'A', 0);
    small.allow('b', 'B', 0);
    assert.deepEqual(small.cap(0), []);
    assert.equal(small.size, 1);
  });
});

describe('DropReport', () => {
  it('says to log the first drop, then at most once per window with the count since', () => {
    const report = new DropReport(10);
    assert.deepEqual([report.note(0), report.note(1), report.note(9), report.note(10), report.note(11)], [1, undefined, undefined, 3, undefined]);
    assert.equal(report.unreported(12), 1);
    assert.equal(report.unreported(12), undefined);
  });
});

describe('decideOnFailure', () => {
  it('retries 429, 5xx and transport errors, with the server\'s Retry-After if any', () => {
    assert.deepEqual(decideOnFailure(apiError(429, 'TooManyRequests', { 'Retry-After': '7' }), true, 1, 4, 0), { op: 'retry', retryAfterMs: 7000 });
    assert.deepEqual(decideOnFailure(apiError(503), false, 1, 4, 0), { op: 'retry', retryAfterMs: undefined });
    assert.deepEqual(decideOnFailure(new Error('ECONNRESET'), true, 4, 4, 0), { op: 'retry', retryAfterMs: undefined });
    assert.deepEqual(decideOnFailure(apiError(503), true, 5, 4, 0), { op: 'exhausted' });
  });

  it('flips a PATCH of an expired Event to a create and a create that landed to a PATCH; rejects the rest', () => {
    assert.deepEqual(decideOnFailure(apiError(404, 'NotFound'), false, 1, 4, 0), { op: 'flip' });
    assert.deepEqual(decideOnFailure(apiError(409, 'AlreadyExists'), true, 1, 4, 0), { op: 'flip' });
    assert.deepEqual(decideOnFailure(apiError(409, 'AlreadyExists'), true, 5, 4, 0), { op: 'exhausted' });
    assert.deepEqual(decideOnFailure(apiError(404, 'NotFound'), true, 1, 4, 0), { op: 'rejected' });
    assert.deepEqual(decideOnFailure(apiError(403, 'Forbidden'), true, 1, 4, 0), { op: 'rejected' });
  });

  it('reads Retry-After as seconds or an HTTP date, capped at 10 minutes', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(retryAfterMs(apiError(429, undefined, { 'retry-after': ' 3 ' }), now), 3000);
    assert.equal(retryAfterMs(apiError(429, undefined, { 'Retry-After': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now), 30_000);
    assert.equal(retryAfterMs(apiError(429, undefined, { 'Retry-After': 'Tue, 31 Dec 2024 23:00:00 GMT' }), now), 0);
    assert.equal(retryAfterMs(apiError(429, undefined, { 'Retry-After': '86400' }), now), 10 * MINUTE);
    assert.equal(retryAfterMs(apiError(429, undefined, { 'Retry-After': 'soon' }), now), undefined);
    assert.equal(retryAfterMs(apiError(429), now), undefined);
  });
});
