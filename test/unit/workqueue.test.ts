import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RetryInfo, WorkQueue, type WorkResult } from '../../src/common/runtime/workqueue.js';
import { FakeClock } from './fake-clock.js';

/** Lets a test hold a handler call open and see when it started. */
class Gate {
  readonly #entered = Promise.withResolvers<undefined>();
  readonly #release = Promise.withResolvers<undefined>();
  get entered(): Promise<undefined> {
    return this.#entered.promise;
  }
  async pass(): Promise<void> {
    this.#entered.resolve(undefined);
    await this.#release.promise;
  }
  release(): void {
    this.#release.resolve(undefined);
  }
}

describe('WorkQueue', () => {
  it('.add() - a key added while waiting is queued once', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    assert.equal(queue.size, 2);
    const seen: string[] = [];
    queue.start((key) => {
      seen.push(key);
      return Promise.resolve();
    });
    await queue.onIdle();
    assert.deepEqual(seen, ['a', 'b']);
  });

  it('.start() - never runs the same key in two workers, even with spare concurrency', async () => {
    const queue = new WorkQueue({ concurrency: 3, clock: new FakeClock() });
    const gate = new Gate();
    const running = new Set<string>();
    const starts: string[] = [];
    const bDone = Promise.withResolvers<undefined>();
    let overlap = false;
    let maxInFlight = 0;
    queue.start(async (key) => {
      overlap ||= running.has(key);
      running.add(key);
      starts.push(key);
      maxInFlight = Math.max(maxInFlight, queue.inFlight);
      if (key === 'a' && starts.length === 1) {
        await gate.pass();
      }
      running.delete(key);
      if (key === 'b') {
        bDone.resolve(undefined);
      }
    });
    queue.add('a');
    await gate.entered;
    queue.add('a');
    queue.add('b');
    await bDone.promise;
    assert.deepEqual(starts, ['a', 'b'], "'b' ran beside the held 'a'; the second 'a' did not");
    assert.equal(queue.size, 0, "the second 'a' waits outside the ready queue");
    gate.release();
    await queue.onIdle();
    assert.deepEqual(starts, ['a', 'b', 'a']);
    assert.equal(overlap, false);
    assert.equal(maxInFlight, 2);
  });

  it('.addNext() - puts a key ahead of the waiting ones, moving it if it was already waiting, once', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    for (const key of ['a', 'b', 'c', 'd']) queue.add(key);
    queue.addNext('x');
    queue.addNext('c');
    queue.add('c');
    assert.equal(queue.size, 5);
    const seen: string[] = [];
    queue.start((key) => {
      seen.push(key);
      return Promise.resolve();
    });
    await queue.onIdle();
    assert.deepEqual(seen, ['c', 'x', 'a', 'b', 'd']);
  });

  it('.addNext() - a key in flight runs once more right after, ahead of the backlog', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    const gate = new Gate();
    const seen: string[] = [];
    queue.start(async (key) => {
      seen.push(key);
      if (seen.length === 1) await gate.pass();
    });
    queue.add('a');
    await gate.entered;
    for (const key of ['b', 'c']) queue.add(key);
    queue.addNext('a');
    queue.addNext('a');
    assert.equal(queue.size, 2, 'the in-flight key waits outside the ready queue');
    gate.release();
    await queue.onIdle();
    assert.deepEqual(seen, ['a', 'a', 'b', 'c']);
  });

  it('.addNext() - does nothing once stopped', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    await queue.stop();
    queue.addNext('a');
    assert.equal(queue.size, 0);
  });

  it('.add() - a key re-added many times while in flight runs exactly once more', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    const gate = new Gate();
    let calls = 0;
    queue.start(async () => {
      calls += 1;
      if (calls === 1) {
        await gate.pass();
      }
    });
    queue.add('k');
    await gate.entered;
    queue.add('k');
    queue.add('k');
    queue.add('k');
    assert.equal(queue.size, 0, 'an in-flight key is not queued behind itself');
    gate.release();
    await queue.onIdle();
    assert.equal(calls, 2);
  });

  it('.addRateLimited() - a failing key backs off exponentially and success resets it', async () => {
    const clock = new FakeClock();
    const retries: RetryInfo[] = [];
    const queue = new WorkQueue({
      clock,
      backoff: { baseMs: 5, maxMs: 40 },
      random: () => 0,
      onError: (_key, _err, retry) => retries.push(retry),
    });
    let failuresLeft = 5;
    let successes = 0;
    queue.start(() => {
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        return Promise.reject(new Error('transient'));
      }
      successes += 1;
      return Promise.resolve();
    });
    queue.add('k');
    for (let i = 0; i < 5; i += 1) {
      await queue.onIdle();
      const [delay] = clock.pendingDelays();
      assert.ok(delay !== undefined, 'retry scheduled');
      clock.advance(delay - 1);
      assert.equal(queue.size + queue.inFlight, 0, 'not retried before its delay');
      clock.advance(1);
    }
    await queue.onIdle();
    assert.deepEqual(retries.map((r) => r.delayMs), [5, 10, 20, 40, 40]);
    assert.deepEqual(retries.map((r) => r.attempts), [1, 2, 3, 4, 5]);
    assert.equal(successes, 1);
    assert.equal(queue.numRequeues('k'), 0);

    failuresLeft = 1;
    queue.add('k');
    await queue.onIdle();
    assert.deepEqual(clock.pendingDelays(), [5], 'backoff starts over after a success');
  });

  it('.addRateLimited() - applies jitter from the injected random source', () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, backoff: { baseMs: 100, maxMs: 1000, jitter: 0.5 }, random: () => 1 });
    assert.equal(queue.addRateLimited('k'), 50);
    assert.deepEqual(clock.pendingDelays(), [50]);
  });

  it('.forget() - resets a key\'s backoff', () => {
    const queue = new WorkQueue({ clock: new FakeClock(), random: () => 0 });
    queue.addRateLimited('k');
    queue.addRateLimited('k');
    assert.equal(queue.numRequeues('k'), 2);
    queue.forget('k');
    assert.equal(queue.numRequeues('k'), 0);
    assert.equal(queue.addRateLimited('k'), 5);
  });

  it('.start() - { requeueAfterMs } runs the key again after that delay and resets backoff', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, random: () => 0 });
    const results: (() => Promise<WorkResult>)[] = [
      () => Promise.reject(new Error('first attempt fails')),
      () => Promise.resolve({ requeueAfterMs: 1000 }),
      () => Promise.resolve(undefined),
    ];
    let calls = 0;
    queue.start(() => {
      const next = results[calls];
      calls += 1;
      assert.ok(next !== undefined);
      return next();
    });
    queue.add('k');
    await queue.onIdle();
    assert.equal(queue.numRequeues('k'), 1);
    clock.advance(5);
    await queue.onIdle();
    assert.equal(calls, 2);
    assert.equal(queue.numRequeues('k'), 0, 'a requeueAfter result is not a failure');
    assert.deepEqual(clock.pendingDelays(), [1000]);
    clock.advance(999);
    assert.equal(queue.size + queue.inFlight, 0);
    clock.advance(1);
    await queue.onIdle();
    assert.equal(calls, 3);
    assert.equal(clock.pending, 0);
  });

  it('.addAfter() - the earlier deadline wins and the key runs once', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const seen: number[] = [];
    queue.start(() => {
      seen.push(clock.now());
      return Promise.resolve();
    });
    queue.addAfter('k', 100);
    queue.addAfter('k', 50);
    queue.addAfter('k', 70);
    assert.equal(queue.delayed, 1);
    clock.advance(50);
    await queue.onIdle();
    clock.advance(1000);
    await queue.onIdle();
    assert.deepEqual(seen, [50]);
  });

  it('.addAfter() - zero or negative delays add immediately', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    assert.equal(queue.size, 2);
    assert.equal(queue.delayed, 0);
    queue.start(() => Promise.resolve());
    await queue.onIdle();
  });

  it('.stop() - aborts running handlers, waits for them, cancels timers and ignores later adds', async () => {
    const clock = new FakeClock();
    const errors: unknown[] = [];
    const queue = new WorkQueue({ clock, concurrency: 2, onError: (_k, err) => errors.push(err) });
    const entered = Promise.withResolvers<undefined>();
    let handlerEnded = false;
    let calls = 0;
    queue.start(async (_key, signal) => {
      calls += 1;
      entered.resolve(undefined);
      await new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => {
          reject(new Error('aborted'));
        });
      }).finally(() => {
        handlerEnded = true;
      });
    });
    queue.add('running');
    queue.addAfter('delayed', 10);
    queue.addRateLimited('retrying');
    await entered.promise;

    const stopped = queue.stop();
    assert.equal(clock.pending, 0, 'delay and backoff timers are cancelled');
    await stopped;
    assert.equal(handlerEnded, true, 'stop() resolves only after the handler settled');
    assert.equal(queue.inFlight, 0);
    assert.deepEqual(errors, [], 'errors caused by stopping are not reported');

    queue.add('late');
    queue.addAfter('late', 5);
    assert.equal(queue.size, 0);
    assert.equal(clock.pending, 0);
    clock.advance(1000);
    assert.equal(calls, 1);
    await queue.stop();
    assert.throws(() => {
      queue.start(() => Promise.resolve());
    }, /stopped/);
  });

  it('.onIdle() - resolves at once when nothing is queued or running', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    await queue.onIdle();
    queue.addAfter('later', 10);
    await queue.onIdle();
    assert.equal(queue.delayed, 1);
  });

  it('onError - a throwing hook does not stop retries', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({
      clock,
      random: () => 0,
      onError: () => {
        throw new Error('logger broke');
      },
    });
    let calls = 0;
    queue.start(() => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('fail')) : Promise.resolve();
    });
    queue.add('k');
    await queue.onIdle();
    clock.advance(5);
    await queue.onIdle();
    assert.equal(calls, 2);
  });

  it('.start() - handlers that do no I/O leave the event loop a turn between keys', async () => {
    // A backlog of CPU-only reconciles (cache reads, pure decisions) must not starve timers and
    // sockets (health probes, Lease renewal): a timer armed now fires before the backlog is done.
    const queue = new WorkQueue({ concurrency: 4, clock: new FakeClock() });
    const keys = Array.from({ length: 100 }, (_, i) => `k${String(i)}`);
    for (const key of keys) queue.add(key);
    let handled = 0;
    let handledWhenTimerFired: number | undefined;
    setTimeout(() => { handledWhenTimerFired = handled; }, 0);
    // A macrotask of the poll phase too: an I/O callback, as a /healthz request is.
    let handledAtImmediate: number | undefined;
    setImmediate(() => { handledAtImmediate = handled; });
    queue.start(async () => {
      // A millisecond of CPU each (re-parsing, comparing), then done without I/O.
      const until = performance.now() + 1;
      while (performance.now() < until) { /* working */ }
      handled += 1;
      await Promise.resolve();
    });
    await queue.onIdle();
    assert.equal(handled, keys.length);
    assert.ok(handledWhenTimerFired !== undefined && handledWhenTimerFired < keys.length, `the timer fired after ${String(handledWhenTimerFired)} of ${String(keys.length)} keys`);
    assert.ok(handledAtImmediate !== undefined && handledAtImmediate < keys.length, `setImmediate ran after ${String(handledAtImmediate)} of ${String(keys.length)} keys`);
  });

  it('rejects invalid options and a second start()', () => {
    assert.throws(() => new WorkQueue({ concurrency: 0 }), /concurrency/);
    assert.throws(() => new WorkQueue({ backoff: { baseMs: 10, maxMs: 1 } }), /maxMs/);
    const queue = new WorkQueue();
    queue.start(() => Promise.resolve());
    assert.throws(() => {
      queue.start(() => Promise.resolve());
    }, /already started/);
  });
});
