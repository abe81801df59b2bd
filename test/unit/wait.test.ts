// The tests' only synchronisation: waitFor's deadline and its timeout message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '../harness/wait.js';

describe('waitFor', () => {
  it('times its deadline on the monotonic clock: a wall clock stepped forward does not end the wait', async (t) => {
    const realNow = Date.now.bind(Date);
    let checks = 0;
    t.after(() => { Date.now = realNow; });
    const value = await waitFor('the third check', () => {
      checks += 1;
      // A VM resumed after a pause: the wall clock jumps an hour ahead between two checks.
      Date.now = () => realNow() + 3_600_000;
      return checks === 3 ? 'done' : false;
    }, { timeoutMs: 5_000, intervalMs: 1 });
    assert.equal(value, 'done');
  });

  it('names what it waited for, the last value and the explanation once the deadline passes', async () => {
    await assert.rejects(waitFor('a count of 3', () => false, { timeoutMs: 20, intervalMs: 5, explain: () => ({ count: 2 }) }),
      /^Error: timed out after 20 ms waiting for a count of 3 \(last: false\); \{"count":2\}$/);
    await assert.rejects(waitFor('x', () => { throw new Error('refused'); }, { timeoutMs: 10, intervalMs: 5, explain: () => { throw new Error('no status'); } }),
      /\(last: refused\); \(no explanation: no status\)$/);
  });
});
