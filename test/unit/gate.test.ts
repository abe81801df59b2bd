import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExclusiveGate } from '../../src/common/runtime/gate.js';

/** Runs every pending promise continuation: the gate is promise-only, so this is deterministic. */
const flush = (): Promise<void> => new Promise((resolve) => { setImmediate(resolve); });

/** A piece of work a test holds open: it records when it starts and ends. */
function held(events: string[], name: string): { work: () => Promise<string>; release: () => void; fail: (err: Error) => void } {
  const { promise, resolve, reject } = Promise.withResolvers<undefined>();
  return {
    work: async () => {
      events.push(`start ${name}`);
      await promise;
      events.push(`end ${name}`);
      return name;
    },
    release: () => { resolve(undefined); },
    fail: reject,
  };
}

describe('ExclusiveGate', () => {
  it('.shared() - writers run together', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const a = held(events, 'a');
    const b = held(events, 'b');
    const runs = [gate.shared(a.work), gate.shared(b.work)];
    await flush();
    assert.deepEqual(events, ['start a', 'start b']);
    assert.equal(gate.writers, 2);
    b.release();
    a.release();
    assert.deepEqual(await Promise.all(runs), ['a', 'b']);
    assert.equal(gate.writers, 0);
  });

  it('.shared() - never starts work synchronously, even with the gate free', async () => {
    const gate = new ExclusiveGate();
    let started = false;
    const run = gate.shared(() => {
      started = true;
      return Promise.resolve('ran');
    });
    assert.equal(started, false);
    assert.equal(await run, 'ran');
    assert.equal(started, true);
  });

  it('.exclusive() - waits for the writers inside to leave', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const a = held(events, 'a');
    const b = held(events, 'b');
    const x = held(events, 'x');
    const writers = [gate.shared(a.work), gate.shared(b.work)];
    await flush();
    const exclusive = gate.exclusive(x.work);
    await flush();
    assert.deepEqual(events, ['start a', 'start b']);
    a.release();
    await flush();
    assert.deepEqual(events, ['start a', 'start b', 'end a']);
    b.release();
    await flush();
    assert.deepEqual(events, ['start a', 'start b', 'end a', 'end b', 'start x']);
    x.release();
    assert.equal(await exclusive, 'x');
    await Promise.all(writers);
  });

  it('.exclusive() - blocks new writers from the moment it is requested until it is done', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const a = held(events, 'a');
    const b = held(events, 'b');
    const x = held(events, 'x');
    const first = gate.shared(a.work);
    await flush();
    const exclusive = gate.exclusive(x.work);
    assert.equal(gate.exclusivePending, true);
    const second = gate.shared(b.work);
    b.release();
    await flush();
    assert.deepEqual(events, ['start a']);
    a.release();
    await flush();
    assert.deepEqual(events, ['start a', 'end a', 'start x']);
    x.release();
    await Promise.all([first, exclusive, second]);
    assert.deepEqual(events, ['start a', 'end a', 'start x', 'end x', 'start b', 'end b']);
    assert.equal(gate.exclusivePending, false);
  });

  it('.exclusive() - runs one at a time, in the order requested', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const x = held(events, 'x');
    const y = held(events, 'y');
    const w = held(events, 'w');
    const runs = [gate.exclusive(x.work), gate.exclusive(y.work)];
    const writer = gate.shared(w.work);
    w.release();
    y.release();
    await flush();
    assert.deepEqual(events, ['start x']);
    x.release();
    await Promise.all([...runs, writer]);
    // Writers wait for every exclusive section pending, not only the first.
    assert.deepEqual(events, ['start x', 'end x', 'start y', 'end y', 'start w', 'end w']);
  });

  it('a failing exclusive section rejects its caller and lets the next one and the writers run', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const x = held(events, 'x');
    const y = held(events, 'y');
    const w = held(events, 'w');
    const failed = gate.exclusive(x.work);
    const next = gate.exclusive(y.work);
    const writer = gate.shared(w.work);
    w.release();
    y.release();
    x.fail(new Error('boom'));
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'y');
    assert.equal(await writer, 'w');
    assert.deepEqual(events, ['start x', 'start y', 'end y', 'start w', 'end w']);
  });

  it('a failing writer rejects its caller and still leaves', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const a = held(events, 'a');
    const x = held(events, 'x');
    const failed = gate.shared(a.work);
    await flush();
    const exclusive = gate.exclusive(x.work);
    x.release();
    a.fail(new Error('boom'));
    await assert.rejects(failed, /boom/);
    assert.equal(await exclusive, 'x');
    assert.equal(gate.writers, 0);
  });

  it('.open() - lets waiting and new writers pass a pending exclusive section', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const x = held(events, 'x');
    const a = held(events, 'a');
    const b = held(events, 'b');
    const exclusive = gate.exclusive(x.work);
    const waiting = gate.shared(a.work);
    await flush();
    assert.deepEqual(events, ['start x']);
    gate.open();
    a.release();
    b.release();
    assert.equal(await waiting, 'a');
    assert.equal(await gate.shared(b.work), 'b');
    assert.deepEqual(events, ['start x', 'start a', 'end a', 'start b', 'end b']);
    x.release();
    await exclusive;
  });

  it('.settled() - resolves once every exclusive section requested so far has settled, failed ones too', async () => {
    const gate = new ExclusiveGate();
    const events: string[] = [];
    const x = held(events, 'x');
    const y = held(events, 'y');
    const failed = gate.exclusive(x.work).catch((err: unknown) => err);
    const run = gate.exclusive(y.work);
    let settled = false;
    void gate.settled().then(() => { settled = true; });
    x.fail(new Error('boom'));
    await flush();
    assert.equal(settled, false);
    y.release();
    await gate.settled();
    assert.equal(settled, true);
    assert.ok((await failed) instanceof Error);
    assert.equal(await run, 'y');
  });
});
