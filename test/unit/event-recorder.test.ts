import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { KubeConfig, type CoreV1Event } from '@kubernetes/client-node';
import {
  createEventRecorder, type BufferedEventRecorder, type EventRecorderOptions, type EventTarget,
} from '../../src/common/events/recorder.js';
import type { EventSink, EventUpdate } from '../../src/common/events/event-sink.js';
import { FakeClock } from './fake-clock.js';
import { selfSignedLoopbackCert } from '../harness/pki.js';

const TARGET: EventTarget = { apiVersion: 'multicluster.crd.antrea.io/v1alpha2', kind: 'ClusterSet', name: 'cs', namespace: 'kube-system', uid: 'u-1' };
const PREFIX = '(combined from similar events): ';
const MINUTE = 60_000;

type Failure = (kind: 'create' | 'patch', call: number) => Error | undefined;

/** Records every call, tracks how many overlap, and can fail or hold calls. */
class FakeSink implements EventSink {
  readonly creates: { namespace: string; body: CoreV1Event }[] = [];
  readonly patches: { namespace: string; name: string; update: EventUpdate }[] = [];
  calls = 0;
  inFlight = 0;
  maxInFlight = 0;
  fail: Failure | undefined;
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;

  hold(): void {
    this.#gate = new Promise((resolve) => { this.#open = resolve; });
  }

  release(): void {
    this.#open?.();
    this.#gate = undefined;
  }

  create(namespace: string, body: CoreV1Event): Promise<unknown> {
    return this.#call('create', () => this.creates.push({ namespace, body }));
  }

  patch(namespace: string, name: string, update: EventUpdate): Promise<unknown> {
    return this.#call('patch', () => this.patches.push({ namespace, name, update }));
  }

  async #call(kind: 'create' | 'patch', land: () => void): Promise<unknown> {
    this.calls += 1;
    const call = this.calls;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await tick();
      if (this.#gate) await this.#gate;
      const error = this.fail?.(kind, call);
      if (error !== undefined) throw error;
      land();
      return {};
    } finally {
      this.inFlight -= 1;
    }
  }
}

function apiError(code: number, reason?: string, headers: Record<string, string> = {}): Error {
  // The shape of client-node's ApiException: code, response headers, raw Status body.
  return Object.assign(new Error(`HTTP ${code}`), { code, headers, body: JSON.stringify({ kind: 'Status', code, ...(reason && { reason }) }) });
}

function setup(options: EventRecorderOptions = {}) {
  const sink = new FakeSink();
  const clock = new FakeClock();
  const warnings: { message: string; meta: Record<string, unknown> | undefined }[] = [];
  const logger = { warn: (message: string, meta?: Record<string, unknown>) => { warnings.push({ message, meta }); } };
  const recorder = createEventRecorder(new KubeConfig(), logger, 'test-agent', { sink, clock, random: () => 0, ...options });
  return { sink, clock, warnings, recorder };
}

/** Flushes while moving fake time on, so retry backoffs elapse. */
async function drain(recorder: BufferedEventRecorder, clock: FakeClock): Promise<void> {
  let done = false;
  const flushed = recorder.flush().then(() => { done = true; });
  while (!done) {
    await tick();
    clock.advance(MINUTE);
  }
  await flushed;
}

const counts = (sink: FakeSink) => [...sink.creates.map((c) => c.body.count ?? 0), ...sink.patches.map((p) => p.update.count)];

describe('createEventRecorder', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => { unhandled.push(reason); };
  before(() => { process.on('unhandledRejection', onUnhandled); });
  after(() => {
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, []);
  });

  it('same event twice: one create, then one PATCH with count 2', async () => {
    const { sink, recorder } = setup();
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad import');
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad import');
    await recorder.flush();
    assert.equal(sink.creates.length, 1);
    const body = sink.creates[0]?.body;
    assert.equal(body?.count, 1);
    assert.equal(body?.message, 'bad import');
    assert.deepEqual(body?.involvedObject, { apiVersion: TARGET.apiVersion, kind: 'ClusterSet', name: 'cs', namespace: 'kube-system', uid: 'u-1' });
    assert.deepEqual(body?.source, { component: 'test-agent' });
    assert.equal(body?.reportingComponent, 'test-agent');
    assert.equal(body?.metadata.namespace, 'kube-system');
    assert.deepEqual(sink.patches.map((p) => [p.name, p.update.count, p.update.message]), [[body?.metadata.name, 2, 'bad import']]);
    assert.deepEqual(recorder.stats(), { queued: 0, inFlight: 0, sent: 2, dropped: 0, rateLimited: 0, cached: { aggregates: 1, events: 1, sources: 1 } });
  });

  it('repeats while a request is still queued only raise the count it carries', async () => {
    const { sink, recorder } = setup({ maxInFlight: 1 });
    recorder.record(TARGET, 'Normal', 'Other', 'first');
    for (let i = 0; i < 5; i += 1) recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad import');
    await recorder.flush();
    assert.deepEqual(sink.creates.map((c) => [c.body.reason, c.body.count]), [['Other', 1], ['ImportRejected', 5]]);
    assert.equal(sink.patches.length, 0);
  });

  it('truncates messages to 1024 characters', async () => {
    const { sink, recorder } = setup();
    recorder.record(TARGET, 'Warning', 'Long', 'x'.repeat(5000));
    await recorder.flush();
    assert.equal(sink.creates[0]?.body.message?.length, 1024);
  });

  it('7,500 distinct messages at once: 9 Events plus one aggregate carrying the rest, never more than 2 in flight', async () => {
    const { sink, recorder } = setup();
    for (let i = 0; i < 7500; i += 1) recorder.record(TARGET, 'Warning', 'ImportRejected', `import ${i} rejected`);
    assert.ok(recorder.stats().queued <= 10);
    await recorder.flush();
    assert.equal(sink.creates.length, 10);
    assert.equal(sink.patches.length, 0);
    assert.ok(sink.maxInFlight <= 2, `max in flight ${sink.maxInFlight}`);
    const aggregate = sink.creates.find((c) => c.body.message?.startsWith(PREFIX));
    assert.equal(aggregate?.body.message, `${PREFIX}import 7499 rejected`);
    assert.equal(aggregate?.body.count, 7491);
    assert.equal(counts(sink).reduce((a, b) => a + b, 0), 7500);
    assert.equal(recorder.stats().dropped, 0);
  });

  it('7,500 distinct messages in bursts: requests stay far below 7,500 and the count stays true', async () => {
    const { sink, clock, recorder } = setup();
    for (let i = 0; i < 7500; i += 1) {
      recorder.record(TARGET, 'Warning', 'ImportRejected', `import ${i} rejected`);
      if (i % 50 === 49) await tick();
    }
    await recorder.flush();
    assert.ok(sink.calls <= 25, `${sink.calls} requests`);
    assert.ok(sink.maxInFlight <= 2, `max in flight ${sink.maxInFlight}`);
    assert.equal(sink.creates.length, 10);
    // The spam filter refused the later bursts, but (as in client-go) they still count: the next
    // accepted PATCH, once a token has refilled, carries the full total.
    assert.ok(recorder.stats().rateLimited > 0);
    clock.advance(5 * MINUTE);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'import 7500 rejected');
    await recorder.flush();
    assert.deepEqual(sink.patches.at(-1)?.update, { count: 7492, lastTimestamp: new Date(5 * MINUTE), message: `${PREFIX}import 7500 rejected` });
  });

  it('aggregates different reasons (and types) separately', async () => {
    const { sink, recorder } = setup();
    for (let i = 0; i < 15; i += 1) {
      recorder.record(TARGET, 'Warning', 'ImportRejected', `rejected ${i}`);
      recorder.record(TARGET, 'Warning', 'ImportFailed', `failed ${i}`);
    }
    await recorder.flush();
    assert.equal(sink.creates.length, 20);
    const aggregates = sink.creates.filter((c) => c.body.message?.startsWith(PREFIX)).map((c) => [c.body.reason, c.body.count]);
    assert.deepEqual(aggregates.sort(), [['ImportFailed', 6], ['ImportRejected', 6]]);
  });

  it('a message seen before the aggregate started still dedups onto its own Event', async () => {
    const { sink, recorder } = setup();
    for (let i = 0; i < 12; i += 1) recorder.record(TARGET, 'Warning', 'ImportRejected', `rejected ${i}`);
    await recorder.flush();
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'rejected 0');
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'rejected 11');
    await recorder.flush();
    const byMessage = new Map(sink.creates.map((c) => [c.body.metadata.name, c.body.message]));
    assert.deepEqual(sink.patches.map((p) => [byMessage.get(p.name), p.update.count]), [['rejected 0', 2], [`${PREFIX}rejected 11`, 4]]);
  });

  it('spam filter: 25 per object, then drops (logged once), one more every 5 minutes', async () => {
    const { sink, clock, warnings, recorder } = setup();
    for (let i = 0; i < 30; i += 1) recorder.record(TARGET, 'Normal', `Reason${i}`, 'msg');
    await recorder.flush();
    assert.equal(sink.creates.length, 25);
    assert.equal(recorder.stats().rateLimited, 5);
    const rateLines = () => warnings.filter((w) => w.message.includes('rate limit'));
    assert.equal(rateLines().length, 1);
    assert.equal(rateLines()[0]?.meta?.['object'], 'ClusterSet kube-system/cs');

    // Another object has its own bucket.
    recorder.record({ ...TARGET, name: 'other' }, 'Normal', 'Reason0', 'msg');
    clock.advance(5 * MINUTE - 1);
    recorder.record(TARGET, 'Normal', 'Late0', 'msg');
    clock.advance(1);
    recorder.record(TARGET, 'Normal', 'Late1', 'msg');
    recorder.record(TARGET, 'Normal', 'Late2', 'msg');
    await recorder.flush();
    assert.deepEqual(sink.creates.slice(25).map((c) => [c.body.involvedObject.name, c.body.reason]), [['other', 'Reason0'], ['cs', 'Late1']]);
    assert.equal(recorder.stats().rateLimited, 7);
    assert.equal(rateLines().length, 1);

    // The count not yet logged is reported when the recorder stops.
    await recorder.stop();
    assert.equal(rateLines().length, 2);
    assert.equal(rateLines()[1]?.meta?.['dropped'], 6);
  });

  it('spam filter: a refused repeat still counts in the next accepted PATCH', async () => {
    const { sink, clock, recorder } = setup({ spamBurst: 2 });
    for (let i = 0; i < 4; i += 1) {
      recorder.record(TARGET, 'Warning', 'ImportRejected', 'same');
      await recorder.flush();
    }
    assert.deepEqual(counts(sink), [1, 2]);
    clock.advance(5 * MINUTE);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'same');
    await recorder.flush();
    assert.deepEqual(counts(sink), [1, 2, 5]);
  });

  it('retries a 429, honouring Retry-After, and delivers', async () => {
    const { sink, clock, recorder } = setup();
    sink.fail = (_kind, call) => (call === 1 ? apiError(429, 'TooManyRequests', { 'Retry-After': '7' }) : undefined);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad');
    await clock.waitForTimers(1);
    assert.deepEqual(clock.pendingDelays(), [7000]);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad');
    assert.equal(recorder.stats().queued, 1);
    clock.advance(7000);
    await recorder.flush();
    assert.equal(sink.calls, 2);
    assert.deepEqual(sink.creates.map((c) => c.body.count), [2]);
    assert.equal(recorder.stats().sent, 1);
  });

  it('drops after the retries when the API server keeps failing; flush still resolves', async () => {
    const { sink, clock, warnings, recorder } = setup({ maxRetries: 3 });
    sink.fail = () => apiError(503);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad');
    await drain(recorder, clock);
    assert.equal(sink.calls, 4);
    assert.deepEqual(recorder.stats(), { queued: 0, inFlight: 0, sent: 0, dropped: 1, rateLimited: 0, cached: { aggregates: 1, events: 1, sources: 1 } });
    assert.ok(warnings.some((w) => w.message === 'dropping event after retries'));

    // Once the server recovers, the next occurrence creates the Event (the create was lost).
    sink.fail = undefined;
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad');
    await recorder.flush();
    assert.deepEqual(sink.creates.map((c) => c.body.count), [2]);
  });

  it('does not retry a request the API server rejects (403)', async () => {
    const { sink, recorder, warnings } = setup();
    sink.fail = () => apiError(403, 'Forbidden');
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad');
    await recorder.flush();
    assert.equal(sink.calls, 1);
    assert.equal(recorder.stats().dropped, 1);
    assert.ok(warnings.some((w) => w.message.includes('rejected by the API server')));
  });

  it('a PATCH of an expired Event (404) becomes a create; a create that already landed (409) becomes a PATCH', async () => {
    const { sink, recorder } = setup();
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad');
    await recorder.flush();
    sink.fail = (kind, call) => (kind === 'patch' && call === 2 ? apiError(404, 'NotFound') : undefined);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'bad');
    await recorder.flush();
    assert.deepEqual(sink.creates.map((c) => c.body.count), [1, 2]);

    sink.fail = (kind, call) => (kind === 'create' && call === 4 ? apiError(409, 'AlreadyExists') : undefined);
    recorder.record(TARGET, 'Warning', 'Other', 'x');
    await recorder.flush();
    assert.equal(sink.patches.at(-1)?.update.count, 1);
  });

  it('never throws to the caller, even with a throwing sink and logger', async () => {
    const clock = new FakeClock();
    const sink: EventSink = {
      create: () => { throw new TypeError('sync boom'); },
      patch: () => Promise.reject(new Error('async boom')),
    };
    const logger = { warn: () => { throw new Error('logger boom'); } };
    const recorder = createEventRecorder(new KubeConfig(), logger, 'x', { sink, clock, maxRetries: 1 });
    assert.doesNotThrow(() => { recorder.record(TARGET, 'Warning', 'R', 'm'); });
    await drain(recorder, clock);
    assert.equal(recorder.stats().dropped, 1);
  });

  it('queue and caches stay bounded; Normals are dropped before Warnings', async () => {
    const { sink, warnings, recorder } = setup({ maxQueue: 50, maxCacheEntries: 100 });
    sink.hold();
    for (let i = 0; i < 40; i += 1) recorder.record({ ...TARGET, name: `w${i}` }, 'Warning', 'ImportRejected', 'bad');
    for (let i = 0; i < 1000; i += 1) recorder.record({ ...TARGET, name: `n${i}` }, 'Normal', 'Imported', 'ok');
    const stats = recorder.stats();
    assert.equal(stats.inFlight, 2);
    assert.equal(stats.queued, 50);
    assert.equal(stats.dropped, 1040 - 52);
    assert.ok(stats.cached.aggregates <= 100 && stats.cached.events <= 100 && stats.cached.sources <= 100, JSON.stringify(stats.cached));
    assert.equal(warnings.filter((w) => w.message.includes('queue full')).length, 1);

    sink.release();
    await recorder.flush();
    const names = sink.creates.map((c) => c.body.involvedObject.name ?? '');
    assert.equal(names.filter((n) => n.startsWith('w')).length, 40);
    assert.deepEqual(names.filter((n) => n.startsWith('n')), Array.from({ length: 12 }, (_, i) => `n${988 + i}`));
    assert.ok(sink.maxInFlight <= 2);
  });

  it('window expiry: after 10 minutes a new message creates a fresh Event', async () => {
    const { sink, clock, recorder } = setup();
    for (let i = 0; i < 10; i += 1) recorder.record(TARGET, 'Warning', 'ImportRejected', `rejected ${i}`);
    await recorder.flush();
    assert.equal(sink.creates.length, 10);

    // Within the (sliding) window a new message still goes to the aggregate.
    clock.advance(9 * MINUTE);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'rejected 10');
    await recorder.flush();
    assert.deepEqual(sink.patches.map((p) => [p.update.count, p.update.message]), [[2, `${PREFIX}rejected 10`]]);

    clock.advance(10 * MINUTE + 1);
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'rejected 11');
    recorder.record(TARGET, 'Warning', 'ImportRejected', 'rejected 0');
    await recorder.flush();
    assert.deepEqual(sink.creates.slice(10).map((c) => [c.body.message, c.body.count]), [['rejected 11', 1], ['rejected 0', 1]]);
    assert.equal(sink.patches.length, 1);
    // Expired entries were pruned: only the fresh group and its two Events remain.
    assert.deepEqual(recorder.stats().cached, { aggregates: 1, events: 2, sources: 1 });
  });

  it('stop() waits for the requests in flight, discards the queue and ignores later events', async () => {
    const { sink, recorder, warnings } = setup();
    sink.hold();
    for (let i = 0; i < 5; i += 1) recorder.record(TARGET, 'Normal', `R${i}`, 'm');
    const stopped = recorder.stop();
    recorder.record(TARGET, 'Normal', 'After', 'm');
    sink.release();
    await stopped;
    assert.equal(sink.creates.length, 2);
    assert.deepEqual(recorder.stats(), { queued: 0, inFlight: 0, sent: 2, dropped: 4, rateLimited: 0, cached: { aggregates: 5, events: 5, sources: 1 } });
    assert.ok(warnings.some((w) => w.message.includes('discarded')));
    await recorder.flush();
  });
});

describe('createEventRecorder against an API server', () => {
  let server: https.Server;
  let kc: KubeConfig;
  before(async () => {
    const tls = selfSignedLoopbackCert();
    // Not an API server: a proxy's HTML page, which names neither the request nor the client.
    server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      req.resume();
      res.writeHead(403, { 'content-type': 'text/html' });
      res.end('<html>Forbidden</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`, caData: Buffer.from(tls.cert).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  after(async () => { await new Promise((resolve) => server.close(resolve)); });

  it("names whose recorder failed and the request in the error it logs (the component's events, the verb and path)", async () => {
    const warnings: { message: string; meta: Record<string, unknown> | undefined }[] = [];
    const logger = { warn: (message: string, meta?: Record<string, unknown>) => { warnings.push({ message, meta }); } };
    const recorder = createEventRecorder(kc, logger, 'clusterset-agent-leader');
    recorder.record(TARGET, 'Warning', 'Test', 'refused');
    await recorder.flush();
    const dropped = warnings.find((w) => w.message === 'dropping event: rejected by the API server');
    assert.match(String(dropped?.meta?.['error']), /^clusterset-agent-leader events POST \/api\/v1\/namespaces\/kube-system\/events/, JSON.stringify(warnings));
  });
});
