import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff } from '../../src/common/runtime/backoff.js';

describe('Backoff', () => {
  it('.next() - grows by factor from baseMs and stops at maxMs', () => {
    const b = new Backoff({ baseMs: 100, maxMs: 1000, factor: 2, jitter: 0.5, random: () => 0 });
    const delays = Array.from({ length: 6 }, () => b.next());
    assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000]);
    assert.equal(b.attempts, 6);
  });

  it('.next() - jitter only shortens the delay, by at most the jitter fraction', () => {
    const atMax = new Backoff({ baseMs: 100, maxMs: 1000, jitter: 0.5, random: () => 1 });
    assert.equal(atMax.next(), 50);
    let r = 0;
    const sweep = new Backoff({ baseMs: 1000, maxMs: 1000, jitter: 0.2, random: () => (r += 0.1) % 1 });
    for (let i = 0; i < 20; i += 1) {
      const d = sweep.next();
      assert.ok(d >= 800 && d <= 1000, `delay ${d} outside [800, 1000]`);
    }
  });

  it('.next() - stays at maxMs after very many attempts', () => {
    const b = new Backoff({ baseMs: 1, maxMs: 5000, jitter: 0, random: () => 0.5 });
    for (let i = 0; i < 2000; i += 1) {
      b.next();
    }
    assert.equal(b.next(), 5000);
  });

  it('.reset() - starts over from baseMs', () => {
    const b = new Backoff({ baseMs: 10, maxMs: 1000, jitter: 0 });
    b.next();
    b.next();
    assert.equal(b.next(), 40);
    b.reset();
    assert.equal(b.attempts, 0);
    assert.equal(b.next(), 10);
  });

  it('defaults to factor 2', () => {
    const b = new Backoff({ baseMs: 3, maxMs: 100, jitter: 0 });
    assert.deepEqual([b.next(), b.next(), b.next()], [3, 6, 12]);
  });

  it('rejects invalid options', () => {
    assert.throws(() => new Backoff({ baseMs: 0, maxMs: 10 }), /baseMs/);
    assert.throws(() => new Backoff({ baseMs: 10, maxMs: 5 }), /maxMs/);
    assert.throws(() => new Backoff({ baseMs: 1, maxMs: 5, factor: 0.5 }), /factor/);
    assert.throws(() => new Backoff({ baseMs: 1, maxMs: 5, jitter: 1.5 }), /jitter/);
    assert.throws(() => new Backoff({ baseMs: 1, maxMs: 5, jitter: Number.NaN }), /jitter/);
  });
});
