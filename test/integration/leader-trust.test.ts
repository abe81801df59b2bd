// A leader link you can trust, on real control planes with a fault-injecting TLS proxy of
// the project's own between the agent and the leader: non-Kubernetes answers are failures
// with their own reason and never a reason to delete imports; trust lost stops imports at
// once; request loss is ridden out inside a beat; a partition turns Ready=False within the
// bound and healing brings it back within an interval; an announce that is not ours is never
// deleted; leaving a leader that never accepted us is immediate; a restart adopts the
// announce with GET then PUT; an HTTP/2 connection that silently died is replaced.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
// Polling within an observation window (asserting that something does NOT happen), never synchronisation.
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import {
  AGENT_NS, capturedLogger, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS, readyCondition, setupLeader,
  waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { startFaultProxy, type FaultProxy } from '../harness/fault-proxy.js';
import { startTcpProxy } from '../harness/tcp-proxy.js';
import { endpointsRI, leaderImports, maybe, memberReads, serviceImportRI } from '../harness/imports.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;
const THRESHOLD = 3;
const MEMBER_ID = 'east';
const SET = 'trusted-set';
/** Request loss ridden out for this long (the soak script runs it for 5 minutes). */
const LOSS_SECONDS = Number(process.env['CSA_LOSS_SECONDS'] ?? '60');

describe('a leader link you can trust', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let proxy: FaultProxy;
  let agent: Agent | undefined;
  let log = capturedLogger();
  const config = () => loadConfig({
    flags: parseConfigFlags(['--config', 'agent.yaml']), env: {},
    readFile: () => `namespace: ${AGENT_NS}
heartbeat: { intervalSeconds: ${String(INTERVAL_S)}, failureThreshold: ${String(THRESHOLD)} }
imports: { lostLeaderRetentionSeconds: 600 }
`,
  });
  const startMemberAgent = async () => {
    log = capturedLogger();
    agent = await startAgent(config(), log.logger, member.adminConfig());
  };
  const ri = () => leaderImports(leader.adminConfig());
  const local = () => memberReads(member.adminConfig());
  const sets = () => clusterSetApi(member.adminConfig());
  const announces = () => {
    const api = leader.adminConfig().makeApiClient(CustomObjectsApi);
    const ref = { group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS };
    return {
      get: async (name: string) => (await api.getNamespacedCustomObject({ ...ref, name })) as MemberClusterAnnounce,
    };
  };
  /** Ready transitions of the ClusterSet's area, counted from its event stream. */
  const readyTransitions: string[] = [];
  const watchTransitions = () => {
    const area = agent?.controller.areaFor(SET);
    assert.ok(area, 'the area exists');
    area.events.subscribe((e) => {
      if (e.type === 'conditions' && e.previousReady !== e.status.ready.status) readyTransitions.push(`${e.previousReady}->${e.status.ready.status} ${e.status.ready.reason ?? ''}`);
    });
  };

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader'), startControlPlane('member')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    for (const ns of [AGENT_NS, 'team-a']) await createNamespace(member.adminConfig(), ns);
    proxy = await startFaultProxy({ upstream: leader.server, upstreamCaPem: leader.caPem, seed: 7 });
    const access = await createMemberAccess(leader, MEMBER_ID);
    await writeLeaderSecret(member, 'leader-token', { caPem: proxy.caPem, token: access.token });
    await createClusterSet(member, { name: SET, clusterID: MEMBER_ID, server: proxy.url, secret: 'leader-token' });
    await ri().create(serviceImportRI('team-a', 'web', [{ name: 'http', port: 80 }]));
    await ri().create(endpointsRI('team-a', 'web', ['10.10.0.5']));
    await startMemberAgent();
    await waitForReady(member, SET, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    await waitFor('the import to land', () => local().endpoints('team-a', 'antrea-mc-web'), { timeoutMs: 15_000 });
    watchTransitions();
  });
  after(async () => {
    await agent?.stop();
    await proxy.close();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}\n--- transitions ---\n${readyTransitions.join('\n')}`);

  const importedUids = async () => {
    const [svc, eps, si] = await Promise.all([local().service('team-a', 'antrea-mc-web'), local().endpoints('team-a', 'antrea-mc-web'), local().serviceImport('team-a', 'web')]);
    return [svc?.metadata?.uid, eps?.metadata?.uid, si?.metadata?.uid];
  };

  for (const answer of [{ status: 200, expect: /HTTP 200 with content type "text\/html"/ }, { status: 404, expect: /HTTP 404 with content type "text\/html"/ }]) {
    it(`a server answering ${String(answer.status)} text/html is not the leader: UnexpectedResponse, imports kept`, async () => {
      const before = await importedUids();
      assert.ok(before.every(Boolean), 'the import is in place');
      proxy.respondWith({ status: answer.status, contentType: 'text/html', body: '<!DOCTYPE html><html><body>Down for maintenance</body></html>' });
      try {
        const cs = await waitForReady(member, SET, 'False', 'UnexpectedResponse', (THRESHOLD + 1) * INTERVAL_S * 1000 + 1000);
        assert.match(readyCondition(cs)?.message ?? '', answer.expect);
        assert.match(readyCondition(cs)?.message ?? '', /Down for maintenance/, 'the first bytes are quoted');
        assert.equal(agent?.controller.areaFor(SET)?.importing, false, 'imports are paused');
      } finally {
        proxy.respondWith(undefined);
      }
      // Healing brings Ready back within one interval (plus the beat itself).
      await waitForReady(member, SET, 'True', 'Connected', INTERVAL_S * 1000 + 1500);
      assert.deepEqual(await importedUids(), before, 'nothing was deleted or recreated');
    });
  }

  it('trust lost (Secret deleted): an import created afterwards does not land; trust back: it does', async () => {
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    const secret = await core.readNamespacedSecret({ namespace: AGENT_NS, name: 'leader-token' });
    await core.deleteNamespacedSecret({ namespace: AGENT_NS, name: 'leader-token' });
    await waitForReady(member, SET, 'False', 'SecretNotFound', 2 * INTERVAL_S * 1000);
    assert.equal(agent?.controller.areaFor(SET)?.importing, false);
    await ri().create(serviceImportRI('team-a', 'late', [{ name: 'http', port: 81 }]));
    // Three intervals in which the import would have landed (it takes well under a second when trusted).
    const deadline = Date.now() + 3 * INTERVAL_S * 1000;
    while (Date.now() < deadline) {
      assert.equal(await local().service('team-a', 'antrea-mc-late'), undefined, 'nothing is imported from an untrusted leader');
      await delay(200);
    }
    assert.ok((await importedUids()).every(Boolean), 'what was imported before is kept (retention)');
    await core.createNamespacedSecret({ namespace: AGENT_NS, body: { metadata: { name: 'leader-token' }, type: 'Opaque', data: secret.data ?? {} } });
    await waitForReady(member, SET, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    await waitFor('the late import to land once trusted again', () => local().service('team-a', 'antrea-mc-late'), { timeoutMs: 15_000 });
    await ri().delete('team-a-late-service');
  });

  it(`rides out 20% request loss (503s and resets) for ${String(LOSS_SECONDS)} s with no Ready transition`, { timeout: (LOSS_SECONDS + 60) * 1000 }, async () => {
    readyTransitions.length = 0;
    const stampBefore = readyCondition(await sets().get(SET))?.lastTransitionTime;
    const statsBefore = proxy.stats();
    proxy.setFaults({ failureRate: 0.2, failure: 'mixed' });
    const until = Date.now() + LOSS_SECONDS * 1000;
    try {
      while (Date.now() < until) {
        assert.deepEqual(readyTransitions, [], 'no Ready transition under loss');
        await delay(1000);
      }
    } finally {
      proxy.setFaults({ failureRate: 0 });
    }
    const stats = proxy.stats();
    const injected = stats.injectedFailures - statsBefore.injectedFailures;
    const requests = stats.requests - statsBefore.requests;
    assert.ok(injected >= LOSS_SECONDS / INTERVAL_S * 0.1, `faults were really injected (${String(injected)} of ${String(requests)} requests)`);
    assert.deepEqual(readyTransitions, []);
    assert.equal(readyCondition(await sets().get(SET))?.lastTransitionTime, stampBefore);
    process.stderr.write(`request loss: ${String(injected)} of ${String(requests)} requests failed by the proxy over ${String(LOSS_SECONDS)} s; 0 Ready transitions\n`);
  });

  it(`a partition turns Ready=False within (threshold + 1) × interval; healing brings it back within an interval`, async () => {
    readyTransitions.length = 0;
    const started = Date.now();
    proxy.partition(true);
    let lostAfter: number;
    try {
      await waitForReady(member, SET, 'False', 'ConnectionFailed', (THRESHOLD + 1) * INTERVAL_S * 1000 + 500);
      lostAfter = Date.now() - started;
      // A beat already in flight when the partition starts may be the first failed one.
      assert.ok(lostAfter > (THRESHOLD - 1) * INTERVAL_S * 1000 - INTERVAL_S * 500, `not before ${String(THRESHOLD)} failed beats (${String(lostAfter)} ms)`);
    } finally {
      proxy.partition(false);
    }
    const healed = Date.now();
    await waitForReady(member, SET, 'True', 'Connected', INTERVAL_S * 1000 + 1500);
    const back = Date.now() - healed;
    assert.ok((await importedUids()).every(Boolean), 'imports kept through the partition');
    const stoppedWarnings = log.lines.filter((l) => l.includes('"level":"warn"') && l.includes('stopped before it synced'));
    assert.deepEqual(stoppedWarnings, [], 'a normal reconnect is not a warning');
    process.stderr.write(`partition: Ready=False ${String(lostAfter)} ms after it began (bound ${String((THRESHOLD + 1) * INTERVAL_S * 1000)} ms); Ready=True ${String(back)} ms after healing\n`);
  });

  it('a connection that silently died is replaced: straight to the leader (HTTP/2), Ready comes back within 45 s', { timeout: 120_000 }, async () => {
    // No fault proxy here: TLS passes through a TCP forwarder, so the agent negotiates HTTP/2
    // with the real apiserver, where a timed-out request only resets its stream and the dead
    // connection would otherwise be kept (a NAT or load balancer that dropped its state).
    const tcp = await startTcpProxy(leader.server);
    try {
      const access = await createMemberAccess(leader, 'south');
      await writeLeaderSecret(member, 'south-token', { caPem: leader.caPem, token: access.token });
      await createClusterSet(member, { name: 'south-set', clusterID: 'south', server: tcp.url, secret: 'south-token' });
      await waitForReady(member, 'south-set', 'True', 'Connected', 2 * INTERVAL_S * 1000);
      const connectionsBefore = tcp.connections();
      const frozen = Date.now();
      tcp.freeze();
      await waitForReady(member, 'south-set', 'False', 'ConnectionFailed', (THRESHOLD + 1) * INTERVAL_S * 1000 + 1500);
      const lost = Date.now() - frozen;
      await waitForReady(member, 'south-set', 'True', 'Connected', 45_000 - lost);
      const back = Date.now() - frozen;
      assert.ok(tcp.connections() > connectionsBefore, 'a new connection replaced the dead one');
      assert.equal(readyCondition(await sets().get(SET))?.status, 'True', 'the other ClusterSet was not affected');
      process.stderr.write(`dead connection: Ready=False ${String(lost)} ms after it went silent; Ready=True ${String(back)} ms after\n`);
      await sets().delete('south-set');
      await waitFor('south-set to leave', async () => (await maybe(() => sets().get('south-set'))) === undefined, { timeoutMs: 15_000 });
    } finally {
      await tcp.close();
    }
  });

  it('a second ClusterSet claiming the same membership gets DuplicateMembership, writes nothing, and leaves without touching the first one\'s announce', async () => {
    const name = `member-announce-from-${MEMBER_ID}`;
    const announceBefore = await announces().get(name);
    const access = await createMemberAccess(leader, MEMBER_ID, { serviceAccount: 'member-east-dup' });
    await writeLeaderSecret(member, 'dup-token', { caPem: proxy.caPem, token: access.token });
    await createClusterSet(member, { name: 'wrong-name', clusterID: MEMBER_ID, server: proxy.url, secret: 'dup-token' });
    const cs = await waitForReady(member, 'wrong-name', 'False', 'DuplicateMembership', 2 * INTERVAL_S * 1000);
    assert.match(readyCondition(cs)?.message ?? '', new RegExp(`ClusterSet ${SET} already holds the membership of cluster ${MEMBER_ID}`));
    const deleteStarted = Date.now();
    await sets().delete('wrong-name');
    await waitFor('the duplicate ClusterSet to be gone', async () => {
      try {
        await sets().get('wrong-name');
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 404;
      }
    }, { timeoutMs: 10_000 });
    const leaveMs = Date.now() - deleteStarted;
    assert.ok(leaveMs < 5_000, `leaving a leader that never accepted this ClusterSet is immediate (${String(leaveMs)} ms)`);
    const announceAfter = await announces().get(name);
    assert.equal(announceAfter.metadata?.uid, announceBefore.metadata?.uid, 'the healthy announce was not deleted');
    assert.equal(announceAfter.clusterSetID, SET);
    assert.equal(readyCondition(await sets().get(SET))?.status, 'True');
  });

  it('a restart adopts the announce with GET then PUT, never a CREATE', async () => {
    await agent?.stop();
    agent = undefined;
    proxy.resetRequests();
    await startMemberAgent();
    const announcePath = `/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${LEADER_NS}/memberclusterannounces`;
    const first = await waitFor('two announce requests after the restart', () => {
      const seen = proxy.requests().filter((r) => r.path.startsWith(announcePath)).map((r) => r.method);
      return seen.length >= 2 ? seen.slice(0, 2) : undefined;
    }, { timeoutMs: 3 * INTERVAL_S * 1000 });
    assert.deepEqual(first, ['GET', 'PUT']);
    assert.equal(proxy.requests().filter((r) => r.path.startsWith(announcePath) && r.method === 'POST').length, 0);
    await waitForReady(member, SET, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    readyTransitions.length = 0;
    watchTransitions();
  });
});
