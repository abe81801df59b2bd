import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LinkLifecycle, PausedError, retryUntilDone } from '../../src/commonarea/leaderlink/lifecycle.js';
import { WorkQueue } from '../../src/common/runtime/workqueue.js';

describe('LinkLifecycle', () => {
  it('goes new -> active -> paused -> active, saying what each resume changed', () => {
    const link = new LinkLifecycle<string>();
    assert.equal(link.state, 'new');
    assert.equal(link.api, undefined);
    assert.equal(link.resume('a'), 'started');
    assert.equal(link.api, 'a');
    assert.equal(link.resume('a'), 'unchanged');
    assert.equal(link.resume('b'), 'newClient');
    assert.equal(link.api, 'b');
    assert.equal(link.pause('trust lost'), 'active');
    assert.equal(link.state, 'paused');
    assert.equal(link.api, undefined);
    assert.equal(link.pauseReason, 'trust lost');
    assert.equal(link.resume('c'), 'resumed');
    assert.equal(link.pauseReason, undefined);
    assert.equal(link.active, true);
  });

  it('keeps the first reason of repeated pauses, and pausing a new link says so', () => {
    const link = new LinkLifecycle<string>();
    assert.equal(link.pause('first'), 'new');
    assert.equal(link.pause('second'), undefined);
    assert.equal(link.pauseReason, 'first');
  });

  it('fences work begun before a pause or a stop', () => {
    const link = new LinkLifecycle<string>();
    link.resume('a');
    const before = link.generation;
    assert.equal(link.writable(before, 'imports'), 'a');
    link.pause('lost');
    link.resume('a');
    assert.throws(() => link.writable(before, 'imports'), (err: unknown) => err instanceof PausedError && err.message === 'imports were paused');
    const current = link.generation;
    assert.equal(link.writable(current, 'imports'), 'a');
    assert.equal(link.stop(), true);
    assert.throws(() => link.writable(current, 'exports'), PausedError);
  });

  it('stops for good: resume and pause do nothing after stop, stop only once', () => {
    const link = new LinkLifecycle<string>();
    link.resume('a');
    const active = link.activeSignal;
    assert.equal(link.stop(), true);
    assert.equal(link.stop(), false);
    assert.equal(link.resume('b'), 'stopped');
    assert.equal(link.pause('x'), undefined);
    assert.equal(link.active, false);
    assert.equal(link.api, undefined);
    assert.equal(link.stopSignal.aborted, true);
    assert.equal(active.aborted, true);
  });

  it('ends the active signal with each pause and hands out a fresh one', () => {
    const link = new LinkLifecycle<string>();
    link.resume('a');
    const first = link.activeSignal;
    link.pause('lost');
    assert.equal(first.aborted, true);
    assert.equal(link.activeSignal.aborted, false);
    assert.equal(link.stopSignal.aborted, false, 'a pause is not a stop');
  });
});

describe('LinkLifecycle.drain', () => {
  it('resolves at once when nothing is queued, running or resyncing', async () => {
    const queue = new WorkQueue();
    queue.start(() => Promise.resolve(undefined));
    await new LinkLifecycle<string>().drain({ resyncing: () => undefined, queue });
    await queue.stop();
  });

  it('waits for the resync, the work it queued, a resync begun meanwhile and the work handed on', async () => {
    const log: string[] = [];
    const queue = new WorkQueue({ concurrency: 1 });
    // Work that waits for I/O (a LIST, a status write) goes on in a later turn of the event loop.
    const io = () => new Promise<void>((resolve) => { setImmediate(resolve); });
    let resyncing: Promise<void> | undefined;
    // Like the importer's and the exporter's full resync: it lists (until `listed`), then queues keys.
    const resync = (keys: readonly string[], listed: Promise<void>): void => {
      const run: Promise<void> = listed.then(() => {
        log.push(`resync ${keys.join(',')}`);
        for (const key of keys) queue.add(key);
      }).finally(() => {
        if (resyncing === run) resyncing = undefined;
      });
      resyncing = run;
    };
    const statusWrites: Promise<void>[] = [];
    queue.start(async (key) => {
      await io();
      log.push(key);
      const written = io().then(() => { log.push(`status ${key}`); });
      statusWrites.push(written);
      // While `a` runs, a second resync begins (e.g. a recreated announce). Its list answers
      // one turn after `a`'s status write: after the queue and the work handed on were found
      // at rest, so a drain that stopped there would miss it.
      if (key === 'a') resync(['b'], written.then(io));
      return undefined;
    });
    resync(['a'], io());
    await new LinkLifecycle<string>().drain({ resyncing: () => resyncing, queue, handedOn: async () => { await Promise.all(statusWrites); } });
    log.push('drained');
    assert.deepEqual(log, ['resync a', 'a', 'status a', 'resync b', 'b', 'status b', 'drained']);
    await queue.stop();
  });
});

describe('retryUntilDone', () => {
  const fast = { baseMs: 1, maxMs: 2 };

  it('retries a failing attempt until it succeeds, reporting each failure', async () => {
    let calls = 0;
    const failures: number[] = [];
    const done = await retryUntilDone(() => {
      calls += 1;
      return calls < 3 ? Promise.reject(new Error(`failure ${String(calls)}`)) : Promise.resolve();
    }, { backoff: fast, proceed: () => true, signal: new AbortController().signal, failed: (_err, ms) => { failures.push(ms); } });
    assert.equal(done, true);
    assert.equal(calls, 3);
    assert.equal(failures.length, 2);
  });

  it('gives up when proceed turns false, or when the signal aborts the wait', async () => {
    let go = true;
    let calls = 0;
    const stopped = await retryUntilDone(() => {
      calls += 1;
      go = false;
      return Promise.reject(new Error('down'));
    }, { backoff: fast, proceed: () => go, signal: new AbortController().signal, failed: () => undefined });
    assert.equal(stopped, false);
    assert.equal(calls, 1);

    const abort = new AbortController();
    const aborted = await retryUntilDone(() => Promise.reject(new Error('down')), {
      backoff: { baseMs: 60_000, maxMs: 60_000 }, proceed: () => true, signal: abort.signal, failed: () => { abort.abort(); },
    });
    assert.equal(aborted, false);
  });

  it('reports false when proceed no longer holds after a successful attempt', async () => {
    let go = true;
    assert.equal(await retryUntilDone(() => { go = false; return Promise.resolve(); }, { backoff: fast, proceed: () => go, signal: new AbortController().signal, failed: () => undefined }), false);
  });
});
