// Operating the agent as a process (src/common/process.ts) on real control planes: two replicas with
// Lease leader election (one beats, the other stands by and is still ready), failover after a
// crashed holder without a Ready transition, /healthz and /readyz, /metrics with sane values,
// and the LeaderDisconnected / LeaderConnected Events of a leader outage.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, type CoreV1Event } from '@kubernetes/client-node';
import { CLUSTERSET, MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import {
  AGENT_NS, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS, readyCondition, setupLeader,
  waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import {
  findSamples, readAuditEvents, requestsByTick, sampleValue, startReplica, type AuditEvent, type MetricSample, type Replica,
} from '../harness/agent-process.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

const INTERVAL_S = 2;
const THRESHOLD = 3;
const MEMBER_ID = 'east';
const MCA_NAME = `member-announce-from-${MEMBER_ID}`;
const LEADER_ID = 'leader';
// Election timings: the config takes whole seconds (CSA_LEADER_ELECT_* are integers, retry >= 1).
const LEASE_S = 4;
const RENEW_S = 3;
const RETRY_S = 1;
/**
 * On top of the protocol's bound (leaseDuration + retryPeriod after the last renewal): one Lease
 * GET + PUT by the standby and startAgent's informer lists (the runner reports leading() only
 * once the agent runs), on two cores shared by two etcds, two kube-apiservers and two replicas.
 */
const SLACK_MS = 2_000;

const REPLICA_OPTIONS = {
  argv: ['--heartbeat-interval', String(INTERVAL_S), '--failure-threshold', String(THRESHOLD), '--leader-elect'],
  env: {
    CSA_LEADER_ELECT_LEASE_DURATION: String(LEASE_S),
    CSA_LEADER_ELECT_RENEW_DEADLINE: String(RENEW_S),
    CSA_LEADER_ELECT_RETRY_PERIOD: String(RETRY_S),
  },
};
const LEADER_LABELS = { clusterset: CLUSTERSET_ID, leader: LEADER_ID };

describe('operability: replicas, failover, probes, metrics and events', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let access: { serviceAccount: string; token: string };
  const replicas: Replica[] = [];
  let holder: Replica;
  let standby: Replica;
  /** Moments when not exactly one live replica was leading. */
  const violations: string[] = [];

  const memberUser = () => `system:serviceaccount:${LEADER_NS}:${access.serviceAccount}`;
  /** The member's announce requests received after `since` (epoch ms), oldest first (the log is in completion order). */
  const announceRequests = (since = 0): AuditEvent[] => readAuditEvents(leader.auditLogPath, (e) =>
    e.user.username === memberUser() && e.objectRef?.resource === 'memberclusterannounces' && Date.parse(e.requestReceivedTimestamp) > since)
    .sort((x, y) => x.requestReceivedTimestamp.localeCompare(y.requestReceivedTimestamp));
  const readAnnounce = async () => (await leader.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural,
    namespace: LEADER_NS, name: MCA_NAME,
  })) as MemberClusterAnnounce;
  const readLease = () => member.adminConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: AGENT_NS, name: 'clusterset-agent' });
  const clusterSetEvents = async (reason: string): Promise<CoreV1Event[]> => {
    const list = await member.adminConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: AGENT_NS });
    return list.items.filter((e) => e.reason === reason && e.involvedObject.kind === CLUSTERSET.kind && e.involvedObject.name === CLUSTERSET_ID);
  };
  /** Checks the election invariant among replicas that have not been stopped. */
  const checkOneLeader = (live: readonly Replica[]) => {
    const leading = live.filter((r) => r.process.leading()).map((r) => r.name);
    if (leading.length > 1) violations.push(`${new Date().toISOString()}: ${leading.join(' and ')} lead at once`);
    return leading;
  };

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader', { auditLog: true }), startControlPlane('member')]);
    await Promise.all([setupLeader(leader, LEADER_ID), installCrds(member)]);
    await createNamespace(member.adminConfig(), AGENT_NS);
    access = await createMemberAccess(leader, MEMBER_ID);
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
  });
  after(async () => {
    // Standbys first, so none takes over the released lease and starts an agent during teardown.
    const order = [...replicas].sort((x, y) => Number(x.process.leading()) - Number(y.process.leading()));
    for (const r of order) await r.process.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => replicas.map((r) => `--- replica ${r.name} log ---\n${r.log.text()}`).join('\n'));

  it('two replicas: exactly one leads, the standby answers /readyz 200 as a standby, and the ClusterSet turns Ready', async () => {
    replicas.push(...await Promise.all([startReplica(member, 'a', REPLICA_OPTIONS), startReplica(member, 'b', REPLICA_OPTIONS)]));
    const [a, b] = replicas;
    assert.ok(a && b);
    const first = await waitFor('one replica leading', () => {
      const leading = checkOneLeader(replicas);
      return leading.length === 1 ? replicas.find((r) => r.name === leading[0]) : false;
    }, { timeoutMs: 10_000, intervalMs: 20 });
    holder = first;
    standby = first === a ? b : a;
    const lease = await readLease();
    const holderIdentity = lease.spec?.holderIdentity ?? '';
    assert.notEqual(holderIdentity, '');
    // The standby learns who leads at its next retry.
    const standbyReadyz = await waitFor('the standby to name the holder in /readyz', async () => {
      checkOneLeader(replicas);
      const answer = await standby.get('/readyz');
      return answer.status === 200 && answer.body === `standby (leader: ${holderIdentity})\n` ? answer : false;
    }, { timeoutMs: 3 * RETRY_S * 1000, intervalMs: 100 });
    assert.equal(standbyReadyz.status, 200);

    const created = Date.now();
    await createClusterSet(member, { clusterID: MEMBER_ID, server: leader.server, secret: 'leader-token' });
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    process.stderr.write(`# two replicas: holder ${holder.name}, Ready=True ${String(Date.now() - created)} ms after the ClusterSet was created\n`);
    assert.deepEqual(checkOneLeader(replicas), [holder.name]);
    assert.equal(standby.process.leading(), false);
    assert.equal((await standby.get('/readyz')).status, 200, 'a standby stays ready: it must not be taken out of its Service');
    assert.deepEqual(violations, []);
  });

  it('only the holder beats: one announce request per heartbeat tick in the leader audit log', async () => {
    const windowStart = Date.now();
    const beats = 5;
    const events = await waitFor(`${String(beats + 1)} announce requests`, () => {
      checkOneLeader(replicas);
      const found = announceRequests(windowStart);
      return found.length >= beats + 1 ? found : false;
    }, { timeoutMs: (beats + 3) * INTERVAL_S * 1000, intervalMs: 250 });
    // Two replicas beating with the same token would show two updates (or an update:409) per tick.
    const full = requestsByTick(events, INTERVAL_S).slice(1, -1);
    assert.ok(full.length >= beats - 2, `expected several complete ticks, got ${JSON.stringify(full)}`);
    for (const [tick, requests] of full) assert.deepEqual(requests, ['update:200'], `tick ${String(tick)}`);
    process.stderr.write(`# two replicas: ${JSON.stringify(full.map(([, r]) => r.length))} announce requests per tick over ${String(full.length)} ticks\n`);
    assert.deepEqual(violations, []);
  });

  it('/healthz answers 200 on both replicas, /readyz 200 on the synced holder', async () => {
    for (const r of replicas) {
      const healthz = await r.get('/healthz');
      assert.deepEqual([healthz.status, healthz.body], [200, 'ok\n'], `replica ${r.name}`);
    }
    const readyz = await holder.get('/readyz');
    assert.deepEqual([readyz.status, readyz.body], [200, 'caches synced\n']);
    const standbyReadyz = await standby.get('/readyz');
    assert.equal(standbyReadyz.status, 200);
    assert.match(standbyReadyz.body, /^standby \(leader: .+_[0-9a-f]{16}\)\n$/);
    assert.equal((await holder.get('/nope')).status, 404);
  });

  it('/metrics after the join: connected, beats timed, last beat recent, is_leader 1 on the holder and 0 on the standby', async () => {
    const samples = await holder.metrics();
    assert.equal(sampleValue(samples, 'clusterset_agent_leader_connected', LEADER_LABELS), 1);
    const count = sampleValue(samples, 'clusterset_agent_heartbeat_duration_seconds_count', LEADER_LABELS) ?? 0;
    const sum = sampleValue(samples, 'clusterset_agent_heartbeat_duration_seconds_sum', LEADER_LABELS) ?? -1;
    assert.ok(count > 0, `heartbeat count ${String(count)}`);
    assert.ok(sum > 0 && sum / count < 1, `mean beat ${String(sum / count)} s on loopback`);
    assert.equal(sampleValue(samples, 'clusterset_agent_heartbeat_duration_seconds_bucket', { ...LEADER_LABELS, le: '+Inf' }), count);
    const since = sampleValue(samples, 'clusterset_agent_seconds_since_last_heartbeat', LEADER_LABELS);
    assert.ok(since !== undefined && since >= 0 && since < 2 * INTERVAL_S, `seconds since last heartbeat: ${String(since)}`);
    assert.deepEqual(findSamples(samples, 'clusterset_agent_heartbeat_failures_total'), [], 'no beat has failed yet');
    assert.equal(sampleValue(samples, 'clusterset_agent_is_leader'), 1);

    const standbySamples = await standby.metrics();
    assert.equal(sampleValue(standbySamples, 'clusterset_agent_is_leader'), 0);
    // Process-level series (the Lease client's connections and budget) exist on every replica.
    const processSeries = new Set(['clusterset_agent_is_leader', 'clusterset_agent_apiserver_connections_opened_total',
      'clusterset_agent_apiserver_throttled_requests_total', 'clusterset_agent_apiserver_throttled_seconds_total']);
    const agentSeries = (s: readonly MetricSample[]) => s.filter((x) => x.name.startsWith('clusterset_agent_') && !processSeries.has(x.name));
    assert.ok((sampleValue(samples, 'clusterset_agent_apiserver_connections_opened_total') ?? 0) >= 1, 'the holder counts its connections to the member');
    assert.equal(sampleValue(samples, 'clusterset_agent_apiserver_throttled_requests_total'), 0, 'the default budget held nothing back');
    assert.deepEqual(agentSeries(standbySamples), [], 'a standby runs no agent, so it has no heartbeat series');
    assert.ok(findSamples(standbySamples, 'process_cpu_user_seconds_total').length === 1, 'default process metrics on every replica');
  });

  it('a crashed holder (lease not released) is replaced within leaseDuration + retryPeriod; beats go on without a Ready transition', async () => {
    const api = clusterSetApi(member.adminConfig());
    const readyBefore = readyCondition(await api.get(CLUSTERSET_ID));
    assert.equal(readyBefore?.status, 'True');
    const announceBefore = await readAnnounce();
    // Watch the ClusterSet through the whole failover: Ready must stay True with the same transition time.
    const seen: string[] = [];
    let failoverDone = false;
    const watching = waitFor('the failover to finish', async () => {
      const ready = readyCondition(await api.get(CLUSTERSET_ID));
      if (ready?.status !== 'True' || ready.lastTransitionTime !== readyBefore.lastTransitionTime) seen.push(JSON.stringify(ready));
      return failoverDone;
    }, { timeoutMs: 60_000, intervalMs: 200 }).catch((err: unknown) => { seen.push(String(err)); });
    const crashed = holder;
    try {
      const crashedAt = Date.now();
      await holder.process.stop({ releaseLease: false });
      const stoppedAt = Date.now();
      holder = standby;
      const live = [holder];
      assert.equal(crashed.process.leading(), false);
      const lastRenew = Date.parse(String((await readLease()).spec?.renewTime));
      assert.ok(!Number.isNaN(lastRenew));

      await waitFor('the standby to lead', () => checkOneLeader(live).length === 1, { timeoutMs: 20_000, intervalMs: 20 });
      const leadingAt = Date.now();
      const firstNew = await waitFor('an announce request from the new holder', () => announceRequests(stoppedAt)[0],
        { timeoutMs: 10_000, intervalMs: 50 });
      const firstNewAt = Date.parse(firstNew.requestReceivedTimestamp);
      const gapMs = firstNewAt - crashedAt;
      process.stderr.write(`# failover without release: leading ${String(leadingAt - crashedAt)} ms after the crash, first announce write ` +
        `${String(gapMs)} ms after the crash (${String(firstNewAt - lastRenew)} ms after the last lease renewal; ` +
        `stop took ${String(stoppedAt - crashedAt)} ms; lease ${String(LEASE_S)} s, retry ${String(RETRY_S)} s)\n`);
      assert.ok(leadingAt - crashedAt <= (LEASE_S + RETRY_S) * 1000 + SLACK_MS, `took over after ${String(leadingAt - crashedAt)} ms`);
      assert.ok(firstNewAt >= lastRenew + LEASE_S * 1000, 'the new holder never beat before the crashed holder\'s lease expired');

      // Beats go on, one per tick, from the new holder only (the crashed one would add a second update).
      const ticks = await waitFor('four more ticks of beats', () => {
        checkOneLeader(live);
        const found = requestsByTick(announceRequests(stoppedAt), INTERVAL_S);
        return found.length >= 5 ? found : false;
      }, { timeoutMs: 6 * INTERVAL_S * 1000, intervalMs: 250 });
      const takeover = announceRequests(stoppedAt).slice(0, 2).map((e) => `${e.verb}:${String(e.responseStatus?.code)}`);
      assert.deepEqual(takeover, ['get:200', 'update:200'], 'the new holder adopts the existing announce with GET then PUT, no CREATE');
      // Skip the takeover beat's tick and the next (the immediate beat may spill over), and the last (partial).
      const steady = ticks.slice(2, -1);
      assert.ok(steady.length >= 2, JSON.stringify(ticks));
      for (const [tick, requests] of steady) assert.deepEqual(requests, ['update:200'], `tick ${String(tick)}`);
      assert.equal((await readAnnounce()).metadata?.uid, announceBefore.metadata?.uid, 'announce not recreated');
    } finally {
      failoverDone = true;
      await watching;
    }
    assert.deepEqual(seen, [], 'Ready stayed True with its lastTransitionTime throughout the failover');
    const readyAfter = readyCondition(await api.get(CLUSTERSET_ID));
    assert.equal(readyAfter?.status, 'True');
    assert.equal(readyAfter.lastTransitionTime, readyBefore.lastTransitionTime);
    assert.deepEqual(await clusterSetEvents('LeaderDisconnected'), [], 'a failover is not a disconnection');
    const samples = await holder.metrics();
    assert.equal(sampleValue(samples, 'clusterset_agent_is_leader'), 1);
    assert.ok((sampleValue(samples, 'clusterset_agent_heartbeat_duration_seconds_count', LEADER_LABELS) ?? 0) >= 4, 'the new holder times its beats');
    assert.equal(sampleValue(samples, 'clusterset_agent_leader_connected', LEADER_LABELS), 1, 'the new holder reports the leader connected');
    assert.equal((await holder.get('/readyz')).body, 'caches synced\n');
    assert.deepEqual([crashed.exitCode(), holder.exitCode()], [undefined, undefined], 'neither replica lost leadership');
    assert.deepEqual(violations, []);
  });

  it('a leader outage: failures counted by reason, then Ready=False with a LeaderDisconnected Warning Event naming the reason', async () => {
    const uid = (await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID)).metadata?.uid;
    // kube-apiserver stops listening at SIGTERM but, holding the agent's ResourceImport watch, only
    // exits at the harness's 15 s SIGKILL: measure from the signal, not from stopApiserver() resolving.
    const stopping = leader.stopApiserver();
    const stoppedAt = Date.now();
    try {
      // After one failed beat the counter exists, with its reason, while Ready is still True.
      const early = await waitFor('a counted heartbeat failure', async () => {
        const samples = await holder.metrics();
        return findSamples(samples, 'clusterset_agent_heartbeat_failures_total', LEADER_LABELS).length > 0 ? samples : false;
      }, { timeoutMs: 2 * INTERVAL_S * 1000, intervalMs: 100 });
      assert.deepEqual(findSamples(early, 'clusterset_agent_heartbeat_failures_total').map((s) => s.labels),
        [{ ...LEADER_LABELS, reason: 'ConnectionFailed' }]);
      assert.equal(sampleValue(early, 'clusterset_agent_leader_connected', LEADER_LABELS), 1, 'hysteresis: still connected after one failure');

      const down = await waitForReady(member, CLUSTERSET_ID, 'False', 'ConnectionFailed', (THRESHOLD + 1) * INTERVAL_S * 1000);
      process.stderr.write(`# outage: Ready=False ${String(Date.now() - stoppedAt)} ms after SIGTERM to the leader API server (${String(THRESHOLD)} beats of ${String(INTERVAL_S)} s)\n`);
      const samples = await holder.metrics();
      const failures = sampleValue(samples, 'clusterset_agent_heartbeat_failures_total', { ...LEADER_LABELS, reason: 'ConnectionFailed' }) ?? 0;
      assert.ok(failures >= THRESHOLD, `${String(failures)} failures counted`);
      assert.equal(sampleValue(samples, 'clusterset_agent_leader_connected', LEADER_LABELS), 0);
      const since = sampleValue(samples, 'clusterset_agent_seconds_since_last_heartbeat', LEADER_LABELS) ?? 0;
      assert.ok(since >= (THRESHOLD - 1) * INTERVAL_S, `seconds since the last successful beat keeps growing: ${String(since)}`);

      const [event, ...more] = await waitFor('a LeaderDisconnected Event', async () => {
        const found = await clusterSetEvents('LeaderDisconnected');
        return found.length > 0 ? found : false;
      }, { timeoutMs: 5_000, intervalMs: 100 });
      assert.ok(event);
      assert.deepEqual(more, []);
      assert.equal(event.type, 'Warning');
      assert.equal(event.metadata.namespace, AGENT_NS);
      assert.deepEqual(
        [event.involvedObject.apiVersion, event.involvedObject.kind, event.involvedObject.name, event.involvedObject.namespace, event.involvedObject.uid],
        [`${CLUSTERSET.group}/${CLUSTERSET.version}`, 'ClusterSet', CLUSTERSET_ID, AGENT_NS, uid],
      );
      assert.equal(event.message, `ConnectionFailed: ${readyCondition(down)?.message ?? ''}`);
      assert.match(event.message ?? '', /^ConnectionFailed: cannot reach leader API server https:\/\/127\.0\.0\.1:\d+/);
      assert.equal(event.source?.component, 'clusterset-agent');
    } finally {
      await stopping;
      process.stderr.write(`# outage: stopApiserver() resolved ${String(Date.now() - stoppedAt)} ms after SIGTERM\n`);
    }
  });

  it('the leader back: Ready=True, a LeaderConnected Normal Event, leader_connected 1 again', async () => {
    assert.deepEqual(await clusterSetEvents('LeaderConnected'), [], 'no LeaderConnected before (join and failover are not reconnections)');
    await leader.startApiserver();
    const back = Date.now();
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', INTERVAL_S * 1000 + 2_000);
    process.stderr.write(`# recovery: Ready=True ${String(Date.now() - back)} ms after the leader answered /readyz\n`);
    const [event, ...more] = await waitFor('a LeaderConnected Event', async () => {
      const found = await clusterSetEvents('LeaderConnected');
      return found.length > 0 ? found : false;
    }, { timeoutMs: 5_000, intervalMs: 100 });
    assert.ok(event);
    assert.deepEqual(more, []);
    assert.equal(event.type, 'Normal');
    assert.deepEqual([event.involvedObject.kind, event.involvedObject.name, event.involvedObject.namespace], ['ClusterSet', CLUSTERSET_ID, AGENT_NS]);
    assert.equal(event.message, `Heartbeat accepted by leader cluster ${LEADER_ID}`);
    const samples = await holder.metrics();
    assert.equal(sampleValue(samples, 'clusterset_agent_leader_connected', LEADER_LABELS), 1);
    const since = sampleValue(samples, 'clusterset_agent_seconds_since_last_heartbeat', LEADER_LABELS);
    assert.ok(since !== undefined && since < 2 * INTERVAL_S, `seconds since last heartbeat: ${String(since)}`);
    assert.equal((await clusterSetEvents('LeaderDisconnected')).length, 1, 'one outage, one Warning');
    assert.equal(holder.exitCode(), undefined);
  });
});
