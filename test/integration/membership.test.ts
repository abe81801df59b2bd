// Membership on real control planes: join, steady-state cost, outage hysteresis, token
// rotation without restart, restart without change, and a clean leave.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { TIMESTAMP_ANNOTATION } from '../../src/common/api/names.js';
import { LEAVE_FINALIZER } from '../../src/clusterset/controller.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS,
  readyCondition, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace, kubectl } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;
const THRESHOLD = 3;
const MEMBER_ID = 'east';
const MCA_NAME = `member-announce-from-${MEMBER_ID}`;

describe('membership with a leader', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  let log = capturedLogger();
  let access: { serviceAccount: string; token: string };

  const config = () => loadConfig({
    flags: parseConfigFlags(['--namespace', AGENT_NS, '--heartbeat-interval', String(INTERVAL_S), '--failure-threshold', String(THRESHOLD)]),
    env: {},
  });
  const startMemberAgent = async () => {
    log = capturedLogger();
    agent = await startAgent(config(), log.logger, member.adminConfig());
  };
  const leaderObjects = () => leader.adminConfig().makeApiClient(CustomObjectsApi);
  const mcaRef = { group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS };
  const readAnnounce = async () => (await leaderObjects().getNamespacedCustomObject({ ...mcaRef, name: MCA_NAME })) as MemberClusterAnnounce;

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader', { auditLog: true }), startControlPlane('member')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    await createNamespace(member.adminConfig(), AGENT_NS);
    access = await createMemberAccess(leader, MEMBER_ID);
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    await startMemberAgent();
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('joins: Ready and IsLeader turn True within 2 intervals and the announce carries the right fields', async () => {
    const created = Date.now();
    await createClusterSet(member, { clusterID: MEMBER_ID, server: leader.server, secret: 'leader-token' });
    const cs = await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    process.stderr.write(`# join: Ready=True ${String(Date.now() - created)} ms after the ClusterSet was created\n`);
    const leaderStatus = cs.status?.clusterStatuses?.[0];
    assert.equal(leaderStatus?.clusterID, 'leader');
    assert.deepEqual(leaderStatus.conditions?.map((c) => [c.type, c.status]), [['Ready', 'True'], ['IsLeader', 'True']]);
    assert.equal(cs.status?.totalClusters, 1);
    assert.equal(cs.status.readyClusters, 1);
    assert.equal(cs.status.observedGeneration, cs.metadata?.generation);
    assert.ok(cs.metadata?.finalizers?.includes(LEAVE_FINALIZER));
    const mca = await readAnnounce();
    assert.equal(mca.clusterID, MEMBER_ID);
    assert.equal(mca.clusterSetID, CLUSTERSET_ID);
    assert.equal(mca.leaderClusterID, 'leader');
    assert.ok(mca.metadata?.annotations?.[TIMESTAMP_ANNOTATION], 'touch-ts is set from creation on');
  });

  it('stamps a new touch-ts on every beat', async () => {
    const seen = new Set<string>();
    await waitFor('three distinct touch-ts values', async () => {
      seen.add((await readAnnounce()).metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '');
      return seen.size >= 3;
    }, { timeoutMs: 4 * INTERVAL_S * 1000, intervalMs: 200 });
    for (const stamp of seen) assert.ok(!Number.isNaN(Date.parse(stamp)), `${stamp} is RFC3339`);
  });

  it('shows the membership at a glance in kubectl get clustersets', async () => {
    const table = await kubectl(member, ['get', 'clustersets', '-n', AGENT_NS]);
    const [header, row] = table.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+LEADER CLUSTER NAMESPACE\s+TOTAL CLUSTERS\s+READY CLUSTERS\s+LEADER\s+READY\s+REASON\s+LAST HEARTBEAT\s+AGE$/);
    assert.match(row ?? '', new RegExp(`^${CLUSTERSET_ID}\\s+${LEADER_NS}\\s+1\\s+1\\s+leader\\s+True\\s+Connected\\s+\\d+s\\s+\\S+$`));
  });

  it('costs exactly one leader request per beat in steady state (apiserver audit log)', async () => {
    const user = `system:serviceaccount:${LEADER_NS}:${access.serviceAccount}`;
    const windowStart = Date.now();
    const beats = 5;
    const readEvents = () => readFileSync(leader.auditLogPath ?? '', 'utf8').split('\n').filter(Boolean)
      .map((line) => JSON.parse(line) as { stage: string; verb: string; user: { username: string }; objectRef?: { resource?: string }; requestReceivedTimestamp: string; responseStatus?: { code?: number } })
      .filter((e) => e.stage === 'ResponseComplete' && e.user.username === user && e.objectRef?.resource === 'memberclusterannounces'
        && Date.parse(e.requestReceivedTimestamp) >= windowStart);
    const events = await waitFor(`${String(beats + 1)} announce requests`, () => {
      const found = readEvents();
      return found.length >= beats + 1 ? found : false;
    }, { timeoutMs: (beats + 3) * INTERVAL_S * 1000, intervalMs: 250 });
    // Beats fire on the schedule's ticks: group requests by tick; the first and last tick may be partial.
    const byTick = new Map<number, string[]>();
    for (const e of events) {
      const tick = Math.floor(Date.parse(e.requestReceivedTimestamp) / (INTERVAL_S * 1000));
      byTick.set(tick, [...(byTick.get(tick) ?? []), `${e.verb}:${String(e.responseStatus?.code)}`]);
    }
    const full = [...byTick.entries()].sort(([a], [b]) => a - b).slice(1, -1);
    assert.ok(full.length >= beats - 2, `expected several complete ticks, got ${JSON.stringify([...byTick])}`);
    for (const [tick, requests] of full) assert.deepEqual(requests, ['update:200'], `tick ${String(tick)}`);
    process.stderr.write(`# steady state: ${JSON.stringify(full.map(([, r]) => r.length))} requests per beat over ${String(full.length)} beats\n`);
  });

  it('rotates the token without restart and without a Ready transition', async () => {
    const api = clusterSetApi(member.adminConfig());
    const before = readyCondition(await api.get(CLUSTERSET_ID));
    const next = await createMemberAccess(leader, MEMBER_ID, { serviceAccount: 'member-east-v2' });
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: next.token });
    const newUser = `system:serviceaccount:${LEADER_NS}:${next.serviceAccount}`;
    const oldUser = `system:serviceaccount:${LEADER_NS}:${access.serviceAccount}`;
    const announceRequests = () => readFileSync(leader.auditLogPath ?? '', 'utf8').split('\n').filter(Boolean)
      .map((line) => JSON.parse(line) as { stage: string; user: { username: string }; objectRef?: { resource?: string }; requestReceivedTimestamp: string })
      .filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.resource === 'memberclusterannounces');
    const firstNew = await waitFor('a beat with the new token', () => announceRequests().find((e) => e.user.username === newUser),
      { timeoutMs: 2 * INTERVAL_S * 1000, intervalMs: 100 });
    await waitFor('two more beats', () => announceRequests().filter((e) => e.user.username === newUser).length >= 3,
      { timeoutMs: 3 * INTERVAL_S * 1000, intervalMs: 100 });
    const oldAfterSwitch = announceRequests().filter((e) => e.user.username === oldUser && e.requestReceivedTimestamp > firstNew.requestReceivedTimestamp);
    assert.deepEqual(oldAfterSwitch, [], 'the old token is never used again');
    // Revoke the old token: if the agent still used it, beats would now fail.
    await leader.adminConfig().makeApiClient(CoreV1Api).deleteNamespacedServiceAccount({ namespace: LEADER_NS, name: access.serviceAccount });
    const stampAfterRevoke = (await readAnnounce()).metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '';
    await waitFor('beats continuing after the old token was revoked', async () =>
      ((await readAnnounce()).metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '') > stampAfterRevoke, { timeoutMs: 3 * INTERVAL_S * 1000, intervalMs: 200 });
    const after = readyCondition(await api.get(CLUSTERSET_ID));
    assert.equal(after?.status, 'True');
    assert.equal(after.lastTransitionTime, before?.lastTransitionTime, 'rotation is not a transition');
    assert.equal(agent?.controller.leaderStatus(CLUSTERSET_ID)?.consecutiveFailures, 0);
    access = next;
  });

  it('restarts without changing anything: same announce, same transition times', async () => {
    const api = clusterSetApi(member.adminConfig());
    const before = await api.get(CLUSTERSET_ID);
    const mcaBefore = await readAnnounce();
    await agent?.stop();
    await startMemberAgent();
    const stamp = mcaBefore.metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '';
    await waitFor('a beat from the restarted agent', async () => ((await readAnnounce()).metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '') > stamp,
      { timeoutMs: 2 * INTERVAL_S * 1000, intervalMs: 100 });
    const after = await api.get(CLUSTERSET_ID);
    assert.equal((await readAnnounce()).metadata?.uid, mcaBefore.metadata?.uid, 'announce not recreated');
    assert.equal(readyCondition(after)?.lastTransitionTime, readyCondition(before)?.lastTransitionTime);
    assert.deepEqual(after.status?.clusterStatuses?.[0]?.conditions?.map((c) => c.lastTransitionTime),
      before.status?.clusterStatuses?.[0]?.conditions?.map((c) => c.lastTransitionTime));
  });

  it('rides out N-1 failed beats, turns False with ConnectionFailed on the Nth, and recovers within one interval', async () => {
    const controller = agent?.controller;
    assert.ok(controller);
    await leader.stopApiserver();
    const tolerated = await waitFor(`${String(THRESHOLD - 1)} failed beats`, () => {
      const s = controller.leaderStatus(CLUSTERSET_ID);
      return s && s.consecutiveFailures >= THRESHOLD - 1 ? s : false;
    }, { timeoutMs: (THRESHOLD + 1) * INTERVAL_S * 1000, intervalMs: 50 });
    assert.equal(tolerated.consecutiveFailures, THRESHOLD - 1);
    assert.equal(tolerated.ready.status, 'True', `still Ready after ${String(THRESHOLD - 1)} failures`);
    assert.equal(readyCondition(await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID))?.status, 'True');
    const down = await waitForReady(member, CLUSTERSET_ID, 'False', 'ConnectionFailed', 3 * INTERVAL_S * 1000);
    assert.match(readyCondition(down)?.message ?? '', /cannot reach leader API server https:\/\/127\.0\.0\.1:\d+/);
    assert.equal(down.status?.readyClusters, 0);
    await leader.startApiserver();
    const back = Date.now();
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', INTERVAL_S * 1000 + 1000);
    process.stderr.write(`# recovery: Ready=True ${String(Date.now() - back)} ms after the leader answered /readyz\n`);
  });

  it('leaves on ClusterSet deletion: the announce is deleted on the leader, then the ClusterSet goes', async () => {
    const api = clusterSetApi(member.adminConfig());
    await api.delete(CLUSTERSET_ID);
    await waitFor('the announce to be gone from the leader', async () => {
      try {
        await readAnnounce();
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 404;
      }
    }, { timeoutMs: 10_000, intervalMs: 100 });
    await waitFor('the ClusterSet to be gone', async () => {
      try {
        await api.get(CLUSTERSET_ID);
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 404;
      }
    }, { timeoutMs: 10_000, intervalMs: 100 });
    const stamp = Date.now();
    // Nothing is left running: no new announce appears afterwards.
    await assert.rejects(waitFor('an announce to reappear', async () => {
      try {
        return await readAnnounce();
      } catch {
        return false;
      }
    }, { timeoutMs: 2 * INTERVAL_S * 1000, intervalMs: 200 }), /timed out/);
    assert.ok(Date.now() - stamp >= 2 * INTERVAL_S * 1000);
  });
});
