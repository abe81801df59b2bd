// The member's view of its leader token's lifetime: read from the JWT, exposed as a metric
// computed at scrape time, and said in the ClusterSet's Ready message in its last week.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenExpiresAtMs } from '../../src/commonarea/credentials.js';
import { LeaderConditions } from '../../src/conditions/leader-conditions.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { parseMetrics, sampleValue } from '../harness/agent-process.js';

const jwt = (claims: object) => `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const T0 = Date.parse('2026-12-03T12:00:00Z');

describe('leader token expiry', () => {
  it('reads exp from a ServiceAccount JWT; nothing from a token without one or that is not a JWT', () => {
    assert.equal(tokenExpiresAtMs(jwt({ exp: T0 / 1000, sub: 'system:serviceaccount:ns:member-east' })), T0);
    assert.equal(tokenExpiresAtMs(jwt({ sub: 'legacy' })), undefined);
    assert.equal(tokenExpiresAtMs(jwt({ exp: 'soon' })), undefined);
    assert.equal(tokenExpiresAtMs('opaque-token'), undefined);
    assert.equal(tokenExpiresAtMs('a.%%%.c'), undefined);
  });

  it('is a metric computed at scrape time, negative once expired, gone with the ClusterSet', async () => {
    let now = T0;
    const m = new AgentMetrics({ defaultMetrics: false, now: () => now });
    m.setTokenExpiry('cs', 'leader', T0 + 3_600_000);
    assert.equal(sampleValue(parseMetrics(await m.metrics()), 'clusterset_agent_leader_token_expiry_seconds', { clusterset: 'cs', leader: 'leader' }), 3600);
    now = T0 + 3_700_000;
    assert.equal(sampleValue(parseMetrics(await m.metrics()), 'clusterset_agent_leader_token_expiry_seconds', { clusterset: 'cs', leader: 'leader' }), -100);
    m.setTokenExpiry('cs', 'leader', undefined);
    assert.equal(sampleValue(parseMetrics(await m.metrics()), 'clusterset_agent_leader_token_expiry_seconds', { clusterset: 'cs', leader: 'leader' }), undefined);
    m.setTokenExpiry('cs', 'leader', T0);
    m.forget('cs');
    assert.equal(sampleValue(parseMetrics(await m.metrics()), 'clusterset_agent_leader_token_expiry_seconds', { clusterset: 'cs', leader: 'leader' }), undefined);
  });

  it('the Ready message names the expiry and the fix in the token\'s last week only', () => {
    const lc = new LeaderConditions({ leaderClusterID: 'leader', failureThreshold: 3, now: () => new Date(T0) });
    lc.setTokenExpiry(T0 + 8 * 86_400_000);
    lc.recordSuccess();
    assert.equal(lc.snapshot().ready.message, 'Heartbeat accepted by leader cluster leader');
    lc.setTokenExpiry(T0 + 6 * 86_400_000);
    assert.equal(lc.recordSuccess(), true, 'the message changed: one status write');
    assert.equal(lc.snapshot().ready.message, "Heartbeat accepted by leader cluster leader; the leader token expires at 2026-12-09T12:00:00.000Z: issue a new one on the leader with 'clusterset-agent leader create-member-token' and apply the Secret here");
    assert.equal(lc.recordSuccess(), false, 'stable: no countdown, no write per beat');
  });
});
