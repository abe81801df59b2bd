// Leader election on a real kube-apiserver: the Lease wire format (MicroTime), one leader out
// of two candidates, failover after a crash (no release) and after a graceful release.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { kubeLeaseClient, LeaseElector } from '../../src/common/election/lease-elector.js';
import { apiStatus, httpStatus } from '../../src/common/kube/errors.js';
import { capturedLogger } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace, kubectl } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const NS = 'clusterset-agent';
const LEASE = 'clusterset-agent';
const LEASE_S = 3;
const RENEW_S = 2;
const RETRY_S = 0.5;
/** Scheduling and request latency on two busy cores, on top of the protocol's own bound. */
const SLACK_MS = 1_000;

describe('leader election on a real Lease', () => {
  let cp: ControlPlane;
  const log = capturedLogger();
  const electors: LeaseElector[] = [];
  const stoppedLeading: string[] = [];

  const candidate = () => {
    const elector = new LeaseElector({
      lease: kubeLeaseClient(cp.adminConfig(), NS, LEASE),
      leaseDurationSeconds: LEASE_S,
      renewDeadlineSeconds: RENEW_S,
      retryPeriodSeconds: RETRY_S,
      logger: log.logger,
      onStoppedLeading: (reason) => { stoppedLeading.push(reason); },
    });
    electors.push(elector);
    elector.start();
    return elector;
  };
  const readLease = () => cp.adminConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: NS, name: LEASE });
  const leaders = () => electors.filter((e) => e.isLeader);

  before(async () => {
    cp = await startControlPlane('election');
    await createNamespace(cp.adminConfig(), NS);
  });
  after(async () => {
    await Promise.all(electors.map((e) => e.stop()));
    await cp.stop();
  });
  onFailureShowLogs(() => [cp], () => `--- elector log ---\n${log.text()}`);

  it('Lease times must be V1MicroTime: a plain Date is rejected, and reads return strings', async () => {
    const api = cp.adminConfig().makeApiClient(CoordinationV1Api);
    const at = new Date('2026-01-02T03:04:05.678Z');
    await assert.rejects(
      api.createNamespacedLease({ namespace: NS, body: { metadata: { name: 'plain-date' }, spec: { holderIdentity: 'x', renewTime: at } } }),
      (err: unknown) => httpStatus(err) === 400 && /cannot parse "\.678Z" as "\.000000"/.test(apiStatus(err)?.message ?? ''),
    );
    const created = await api.createNamespacedLease({
      namespace: NS, body: { metadata: { name: 'micro-time' }, spec: { holderIdentity: 'x', renewTime: new V1MicroTime(at.getTime()) } },
    });
    assert.equal(typeof created.spec?.renewTime, 'string', 'typed V1MicroTime, read back as a string');
    assert.equal(String(created.spec?.renewTime), '2026-01-02T03:04:05.678000Z');
    await api.deleteNamespacedLease({ namespace: NS, name: 'micro-time' });
  });

  it('two electors on one Lease: exactly one leads while the Lease is renewed', async () => {
    const a = candidate();
    const b = candidate();
    const first = await waitFor('a leader', () => leaders()[0], { timeoutMs: 10_000, intervalMs: 20 });
    const follower = first === a ? b : a;
    // Watch several renewals go by, checking the invariant at every poll.
    const renewTimes = new Set<string>();
    const violations: string[] = [];
    await waitFor('four renewals by the leader', async () => {
      const now = leaders();
      if (now.length !== 1 || now[0] !== first) violations.push(`leaders: ${now.map((e) => e.identity).join(', ')}`);
      const lease = await readLease();
      if (lease.spec?.holderIdentity !== first.identity) violations.push(`Lease holder: ${String(lease.spec?.holderIdentity)}`);
      renewTimes.add(String(lease.spec?.renewTime));
      return renewTimes.size >= 4;
    }, { timeoutMs: 10_000, intervalMs: 100 });
    assert.deepEqual(violations, []);
    assert.equal(follower.leader, first.identity, 'the follower sees who leads');
    const shown = await kubectl(cp, ['get', 'lease', '-n', NS, LEASE, '-o',
      'jsonpath={.spec.holderIdentity} {.spec.leaseDurationSeconds} {.spec.leaseTransitions} {.spec.renewTime}']);
    assert.match(shown, new RegExp(`^${first.identity} ${String(LEASE_S)} 0 \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z$`));
    assert.match(first.identity, /^.+_[0-9a-f]{16}$/, 'hostname + random suffix');
  });

  it('a leader that stops without releasing is replaced within leaseDuration + retryPeriod, not before its lease expires', async () => {
    const [leader] = leaders();
    assert.ok(leader);
    const follower = electors.find((e) => e !== leader && !e.isLeader);
    assert.ok(follower);
    await leader.stop();
    const stoppedAt = Date.now();
    const lastRenew = Date.parse(String((await readLease()).spec?.renewTime));
    await waitFor('the follower to take over', () => follower.isLeader, { timeoutMs: 15_000, intervalMs: 10 });
    const tookOverAt = Date.now();
    const failoverMs = tookOverAt - stoppedAt;
    process.stderr.write(`# election failover without release: ${String(failoverMs)} ms after stop, ${String(tookOverAt - lastRenew)} ms after the last renewal (lease ${String(LEASE_S)} s, retry ${String(RETRY_S)} s)\n`);
    assert.ok(tookOverAt - lastRenew >= LEASE_S * 1000, 'never before the old lease expired');
    assert.ok(failoverMs <= (LEASE_S + RETRY_S) * 1000 + SLACK_MS, `failover took ${String(failoverMs)} ms`);
    const lease = await readLease();
    assert.equal(lease.spec?.holderIdentity, follower.identity);
    assert.equal(lease.spec.leaseTransitions, 1);
    assert.deepEqual(stoppedLeading, [], 'stop() is not a loss');
  });

  it('a leader that releases is replaced at the next retry', async () => {
    const [leader] = leaders();
    assert.ok(leader);
    const next = candidate();
    await waitFor('the new candidate to see the leader', () => next.leader === leader.identity, { timeoutMs: 5_000, intervalMs: 10 });
    assert.equal(await leader.release(), true);
    const releasedAt = Date.now();
    const released = await readLease();
    assert.ok(released.spec?.holderIdentity === undefined || released.spec.holderIdentity === '' || released.spec.holderIdentity === next.identity);
    await waitFor('the candidate to take over', () => next.isLeader, { timeoutMs: 10_000, intervalMs: 10 });
    const failoverMs = Date.now() - releasedAt;
    process.stderr.write(`# election failover with release: ${String(failoverMs)} ms after release (retry ${String(RETRY_S)} s)\n`);
    assert.ok(failoverMs <= RETRY_S * 1000 + SLACK_MS, `failover took ${String(failoverMs)} ms`);
    const lease = await readLease();
    assert.equal(lease.spec?.holderIdentity, next.identity);
    assert.equal(lease.spec.leaseTransitions, 2);
    assert.equal(lease.spec.leaseDurationSeconds, LEASE_S);
    assert.deepEqual(leaders(), [next]);
  });
});
