import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Mutex } from '../../src/runtime/mutex.js';

describe('Mutex', () => {
  it('.runExclusive() - runs callers one at a time in call order', async () => {
    const mutex = new Mutex();
    const events: string[] = [];
    const gates = [Promise.withResolvers<undefined>(), Promise.withResolvers<undefined>(), Promise.withResolvers<undefined>()];
    const runs = gates.map((gate, i) =>
      mutex.runExclusive(async () => {
        events.push(`start ${i}`);
        await gate.promise;
        events.push(`end ${i}`);
        return i;
      }),
    );
    // Release in reverse order: a mutex without FIFO/exclusion would let 2 or 1 finish first.
    gates[2]?.resolve(undefined);
    gates[1]?.resolve(undefined);
    await Promise.resolve();
    assert.deepEqual(events, ['start 0']);
    gates[0]?.resolve(undefined);
    assert.deepEqual(await Promise.all(runs), [0, 1, 2]);
    assert.deepEqual(events, ['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('.runExclusive() - a failing callback rejects its caller and releases the lock', async () => {
    const mutex = new Mutex();
    const failed = mutex.runExclusive(() => {
      throw new Error('boom');
    });
    const next = mutex.runExclusive(() => 'ran');
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'ran');
    assert.equal(mutex.isLocked, false);
  });

  it('.isLocked - true while a callback runs or waits', async () => {
    const mutex = new Mutex();
    assert.equal(mutex.isLocked, false);
    const gate = Promise.withResolvers<undefined>();
    const first = mutex.runExclusive(() => gate.promise);
    const second = mutex.runExclusive(() => undefined);
    assert.equal(mutex.isLocked, true);
    gate.resolve(undefined);
    await first;
    await second;
    assert.equal(mutex.isLocked, false);
  });
});
