// 200 ClusterSets created and deleted twice against one leader, on real control planes, with
// the agent in this process so its heap can be measured after forced full collections: what
// the agent holds per ClusterSet must all be released when the ClusterSet is deleted.
//
// Round 1 warms up (code compiled on first use, informer caches, connection pools); its heap
// after deletion is the baseline. Round 2 must come back to that baseline, within a bound far
// below what 200 ClusterSets hold while they exist (also measured, so the test can see a leak).
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { CLUSTERSET, MEMBER_CLUSTER_ANNOUNCE, type ClusterSet } from '../../src/common/api/antrea.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { AGENT_NS, capturedLogger, CLUSTERSET_ID, createMemberAccess, installCrds, LEADER_NS, setupLeader, writeLeaderSecret } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const N = 200;
const INTERVAL_S = 10;
const MIB = 1024 * 1024;
/** What may stay after round 2, in total: 12.8 KiB per ClusterSet. */
const MAX_RESIDUAL_BYTES = 2.5 * MIB;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Heap in use after full collections, with event-loop turns between them for finalizers and cleared timers. */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i += 1) {
    gc();
    await nextTurn();
  }
  return process.memoryUsage().heapUsed;
}

const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

describe(`${String(N)} ClusterSets created and deleted`, () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  const log = capturedLogger('info');

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('churn-leader'), startControlPlane('churn-member')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    await createNamespace(member.adminConfig(), AGENT_NS);
    const access = await createMemberAccess(leader, 'churn');
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    // Warnings only: the capture would itself retain the info lines of 400 joins and leaves.
    log.logger.level = 'warn';
    agent = await startAgent(loadConfig({ flags: parseConfigFlags(['--namespace', AGENT_NS, '--heartbeat-interval', String(INTERVAL_S)]), env: {} }), log.logger, member.adminConfig());
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader?.stop(), member?.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  const ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS };

  async function pool(items: readonly string[], width: number, fn: (item: string) => Promise<unknown>): Promise<void> {
    let next = 0;
    await Promise.all(Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] ?? '');
    }));
  }

  /**
   * Creates the N ClusterSets, waits for all Ready, returns the settled heap; then deletes them
   * and waits until the agent let go of all. Each round uses new names and cluster IDs, so that
   * anything kept per name (a map never pruned) shows as growth instead of being reused.
   */
  async function round(tag: string): Promise<{ loaded: number; after: number; readyMs: number }> {
    const ids = Array.from({ length: N }, (_, i) => `${tag}-${String(i)}`);
    const api = member.adminConfig().makeApiClient(CustomObjectsApi);
    const leaderApi = leader.adminConfig().makeApiClient(CustomObjectsApi);
    const list = async () => ((await api.listNamespacedCustomObject(ref)) as { items: ClusterSet[] }).items;
    const announces = async () => ((await leaderApi.listNamespacedCustomObject({
      group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS,
    })) as { items: unknown[] }).items.length;
    const created = performance.now();
    await pool(ids, 16, (id) => api.createNamespacedCustomObject({ ...ref, body: {
      apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: `${CLUSTERSET_ID}-${id}` },
      spec: { clusterID: id, namespace: LEADER_NS, leaders: [{ clusterID: 'leader', server: leader.server, secret: 'leader-token' }] },
    } }));
    await waitFor(`${String(N)} ClusterSets Ready`, async () =>
      (await list()).filter((cs) => cs.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True').length === N,
    { timeoutMs: 2 * 60_000, intervalMs: 250 });
    const readyMs = performance.now() - created;
    const loaded = await settledHeap();
    await pool(ids, 16, (id) => api.deleteNamespacedCustomObject({ ...ref, name: `${CLUSTERSET_ID}-${id}` }));
    // Gone from the member (the agent removed its finalizer after leaving) and from the leader (announces deleted).
    await waitFor('every ClusterSet left and gone', async () => (await list()).length === 0 && (await announces()) === 0,
      { timeoutMs: 2 * 60_000, intervalMs: 250 });
    return { loaded, after: await settledHeap(), readyMs };
  }

  it('hold memory while they exist and give all of it back once deleted', async () => {
    const before = await settledHeap();
    const warmup = await round('first');
    const second = await round('second');
    const held = second.loaded - warmup.after;
    const figures = `all Ready ${(warmup.readyMs / 1000).toFixed(1)} s and ${(second.readyMs / 1000).toFixed(1)} s after creation; heap after GC: ${mib(before)} before, round 1 ${mib(warmup.loaded)} → ${mib(warmup.after)}, round 2 ${mib(second.loaded)} → ${mib(second.after)}`;
    // Parallel joins: every round is Ready well within two heartbeat intervals of creation.
    for (const { readyMs } of [warmup, second]) assert.ok(readyMs < 2 * INTERVAL_S * 1000, `all Ready within 2 intervals; ${figures}`);
    // The measurement must be able to see what 200 ClusterSets hold, or the bound below proves
    // nothing: leaking half of it must already fail.
    assert.ok(held > 2 * MAX_RESIDUAL_BYTES, `${String(N)} ClusterSets should visibly hold heap (${mib(held)}); ${figures}`);
    // A cleanup that lags behind the delete (timers, queued retries) gets until the deadline.
    let residual = second.after - warmup.after;
    await waitFor(`the heap back within ${mib(MAX_RESIDUAL_BYTES)} of the baseline`, async () => {
      residual = (await settledHeap()) - warmup.after;
      return residual < MAX_RESIDUAL_BYTES;
    }, { timeoutMs: 30_000, intervalMs: 1000 }).catch(() => {
      assert.fail(`${mib(residual)} retained after deleting ${String(N)} ClusterSets (${(residual / N / 1024).toFixed(1)} KiB each); ${figures}`);
    });
    console.log(`# ${figures}; held ${(held / N / 1024).toFixed(1)} KiB per ClusterSet, residual ${(residual / 1024).toFixed(0)} KiB`);
  });
});
