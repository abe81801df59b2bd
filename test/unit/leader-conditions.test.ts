import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaderConditions } from '../../src/conditions/leader-conditions.js';
import { failure, FailureReason } from '../../src/conditions/reasons.js';

function clock() {
  let t = Date.parse('2026-12-02T10:00:00Z');
  return { now: () => new Date(t), advance: (s: number) => { t += s * 1000; } };
}
const down = failure(FailureReason.ConnectionFailed, 'cannot reach leader');

describe('LeaderConditions', () => {
  it('starts Unknown and turns Ready and IsLeader True after one success', () => {
    const c = clock();
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 3, now: c.now });
    assert.equal(lc.snapshot().ready.status, 'Unknown');
    c.advance(5);
    assert.equal(lc.recordSuccess(), true);
    const s = lc.snapshot();
    assert.equal(s.ready.status, 'True');
    assert.equal(s.isLeader.status, 'True');
    assert.equal(s.ready.lastTransitionTime, '2026-12-02T10:00:05Z');
    assert.equal(s.lastHeartbeatTime, '2026-12-02T10:00:05Z');
  });

  it('advances lastHeartbeatTime once a minute, not every beat, so steady beats are no status change', () => {
    const c = clock();
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 3, now: c.now });
    lc.recordSuccess();
    const changes: string[] = [];
    for (let beat = 1; beat <= 18; beat += 1) {
      c.advance(10);
      if (lc.recordSuccess()) changes.push(lc.snapshot().lastHeartbeatTime ?? '');
    }
    assert.deepEqual(changes, ['2026-12-02T10:01:00Z', '2026-12-02T10:02:00Z', '2026-12-02T10:03:00Z'], '18 beats in 3 minutes: 3 changes');
    lc.recordFailure(down);
    lc.recordFailure(down);
    lc.recordFailure(down);
    c.advance(10);
    assert.equal(lc.recordSuccess(), true);
    assert.equal(lc.snapshot().lastHeartbeatTime, '2026-12-02T10:03:10Z', 'a recovery stamps the time at once');
  });

  it('reports the first failure before ever connecting at once', () => {
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 3, now: clock().now });
    lc.recordFailure(down);
    assert.equal(lc.snapshot().ready.status, 'False');
    assert.equal(lc.snapshot().ready.reason, 'ConnectionFailed');
  });

  it('stays True through threshold-1 failures, then turns False with the reason', () => {
    const c = clock();
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 3, now: c.now });
    lc.recordSuccess();
    const since = lc.snapshot().ready.lastTransitionTime;
    c.advance(10);
    assert.equal(lc.recordFailure(down), false, 'first failure changes nothing visible');
    c.advance(10);
    lc.recordFailure(down);
    assert.equal(lc.snapshot().ready.status, 'True');
    assert.equal(lc.snapshot().ready.lastTransitionTime, since);
    c.advance(10);
    assert.equal(lc.recordFailure(down), true);
    assert.equal(lc.snapshot().ready.status, 'False');
    assert.equal(lc.snapshot().ready.lastTransitionTime, '2026-12-02T10:00:30Z');
    assert.equal(lc.snapshot().isLeader.status, 'True', 'a lost leader is still the leader');
  });

  it('a success in between resets the count', () => {
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 2, now: clock().now });
    lc.recordSuccess();
    lc.recordFailure(down);
    lc.recordSuccess();
    lc.recordFailure(down);
    assert.equal(lc.snapshot().ready.status, 'True');
  });

  it('permanent failures turn Ready False at once even when connected', () => {
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 5, now: clock().now });
    lc.recordSuccess();
    lc.recordFailure(failure(FailureReason.SecretNotFound, 'gone', true));
    assert.equal(lc.snapshot().ready.reason, 'SecretNotFound');
    assert.equal(lc.snapshot().ready.status, 'False');
  });

  it('keeps the transition time while False but follows the latest reason and message', () => {
    const c = clock();
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 1, now: c.now });
    lc.recordFailure(down);
    const since = lc.snapshot().ready.lastTransitionTime;
    c.advance(10);
    assert.equal(lc.recordFailure(failure(FailureReason.Unauthorized, 'token revoked')), true);
    assert.equal(lc.snapshot().ready.reason, 'Unauthorized');
    assert.equal(lc.snapshot().ready.lastTransitionTime, since);
    assert.equal(lc.recordFailure(failure(FailureReason.Unauthorized, 'token revoked')), false, 'same failure again is no change');
  });

  it('carries state over from a previous status so a restart is not a transition', () => {
    const initial = { ready: { type: 'Ready', status: 'True' as const, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Connected' } };
    const lc = new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 3, now: clock().now, initial });
    lc.recordSuccess();
    assert.equal(lc.snapshot().ready.lastTransitionTime, '2026-01-01T00:00:00Z');
    lc.recordFailure(down);
    assert.equal(lc.snapshot().ready.status, 'True', 'hysteresis applies from the carried-over True');
  });

  it('rejects a nonsensical threshold', () => {
    assert.throws(() => new LeaderConditions({ leaderClusterID: 'l1', failureThreshold: 0 }), /failureThreshold/);
  });
});
