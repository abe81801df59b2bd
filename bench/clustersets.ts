// Benchmark: N ClusterSets in one member against one leader, on the COMPILED agent (dist/, a
// child process, as users run it): time from creation to all Ready, steady-state RSS and CPU
// per ClusterSet, requests per minute to the member and to the leader, TCP connections to the
// leader, and RSS 10 s and 60 s after deleting them all, for each of `rounds` rounds of
// creation and deletion.
//
//   npm run bench:clustersets -- [--n 200] [--interval 10] [--steady 60] [--rounds 2]
//
// Every ClusterSet has its own cluster ID (member-announce-from-<id> on the leader); they share
// one leader token (no admission policy is installed, so one ServiceAccount may announce many
// IDs). Prints figures only; asserts nothing.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { CLUSTERSET, type ClusterSet } from '../src/common/api/antrea.js';
import { readAuditEvents, type AuditEvent } from '../test/harness/agent-process.js';
import { AGENT_NS, CLUSTERSET_ID, createMemberAccess, installCrds, LEADER_NS, setupLeader, writeLeaderSecret } from '../test/harness/clusterset.js';
import { freePort, startControlPlane } from '../test/harness/control-plane.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, cpuSeconds, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, metricSum, pool, rssKb, rssPartsKb, tcpConnectionsTo } from './common.js';

const { values } = parseArgs({ options: {
  n: { type: 'string', default: '200' }, interval: { type: 'string', default: '10' }, steady: { type: 'string', default: '60' },
  // Rounds of create, Ready, delete: RSS after each deletion tells a high-water mark from a leak.
  rounds: { type: 'string', default: '2' },
} });
const N = Number(values.n);
const INTERVAL_S = Number(values.interval);
const STEADY_S = Number(values.steady);
const ROUNDS = Math.max(1, Number(values.rounds));
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

buildDist();

const tmp = mkdtempSync(path.join(tmpdir(), 'bench-clustersets-'));
const outFile = path.join(tmp, 'agent.stdout.log');
const errFile = path.join(tmp, 'agent.stderr.log');
const [leader, member] = await Promise.all([startControlPlane('csets-leader', { auditLog: true }), startControlPlane('csets-member', { auditLog: true })]);
let agent: ReturnType<typeof spawn> | undefined;
try {
  await Promise.all([setupLeader(leader), installCrds(member)]);
  await createNamespace(member.adminConfig(), AGENT_NS);
  const access = await createMemberAccess(leader, 'bench');
  await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });

  const metricsPort = await freePort();
  const fds = [openSync(outFile, 'w'), openSync(errFile, 'w')] as const;
  agent = spawn(process.execPath, [...IMAGE_NODE_ARGS, agentEntry, 'run', '--kubeconfig', member.kubeconfigPath, '--namespace', AGENT_NS,
    '--heartbeat-interval', String(INTERVAL_S), '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', `127.0.0.1:${String(metricsPort)}`, '--log-level', 'warn'],
  { stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, CSA_EXPORT_ENABLED: 'false', NODE_OPTIONS: IMAGE_NODE_OPTIONS } });
  for (const fd of fds) closeSync(fd);
  let exited: number | null | undefined;
  agent.on('exit', (code) => { exited = code; });
  const alive = () => { if (exited !== undefined) throw new Error(`the agent exited (code ${String(exited)}); see ${errFile}`); };
  const pid = agent.pid ?? 0;
  /** RSS with the agent's V8 heap (used of committed, prom-client's nodejs_* gauges) beside it. */
  const memory = async (): Promise<{ rssKb: number; text: string }> => {
    const [used, total] = await Promise.all([metricSum(metricsPort, 'nodejs_heap_size_used_bytes'), metricSum(metricsPort, 'nodejs_heap_size_total_bytes')]);
    const rss = rssKb(pid);
    const parts = rssPartsKb(pid);
    return { rssKb: rss, text: `${mib(rss)} (anonymous ${mib(parts.anon)}, file ${mib(parts.file)}; heap ${(used / 2 ** 20).toFixed(1)} of ${(total / 2 ** 20).toFixed(1)} MiB)` };
  };
  await delay(3000);
  alive();
  const idle = await memory();

  const api = member.adminConfig().makeApiClient(CustomObjectsApi);
  const ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS };
  const ids = Array.from({ length: N }, (_, i) => `m${String(i)}`);
  const list = async () => ((await api.listNamespacedCustomObject(ref)) as { items: ClusterSet[] }).items;
  /** Creates the N ClusterSets; resolves with the time until all are Ready. */
  const createAll = async (): Promise<number> => {
    const created = performance.now();
    await pool(ids, 16, async (id) => api.createNamespacedCustomObject({ ...ref, body: {
      apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: `${CLUSTERSET_ID}-${id}` },
      spec: { clusterID: id, namespace: LEADER_NS, leaders: [{ clusterID: 'leader', server: leader.server, secret: 'leader-token' }] },
    } }));
    await waitFor(`${String(N)} ClusterSets Ready`, async () => {
      alive();
      return (await list()).filter((cs) => cs.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True').length === N;
    }, { timeoutMs: 10 * 60_000, intervalMs: 250 });
    return performance.now() - created;
  };
  /** Deletes them all, waits until they left, and samples memory 10 s and 60 s later. */
  const deleteAll = async (): Promise<{ after10: string; after60: string }> => {
    await pool(ids, 16, async (id) => api.deleteNamespacedCustomObject({ ...ref, name: `${CLUSTERSET_ID}-${id}` }));
    await waitFor('every ClusterSet gone (left its leader)', async () => { alive(); return (await list()).length === 0; }, { timeoutMs: 10 * 60_000, intervalMs: 250 });
    await delay(10_000);
    const after10 = (await memory()).text;
    await delay(50_000);
    return { after10, after60: (await memory()).text };
  };
  const allReadyMs = await createAll();

  // Steady state: an observation window (not synchronisation), after the joins settled.
  await delay(2 * INTERVAL_S * 1000);
  const cpu0 = cpuSeconds(pid);
  const windowStart = new Date();
  const t0 = performance.now();
  await delay(STEADY_S * 1000);
  alive();
  const windowMs = performance.now() - t0;
  const cpu = cpuSeconds(pid) - cpu0;
  const steady = await memory();
  const leaderConnections = tcpConnectionsTo(pid, Number(new URL(leader.server).port));
  const inWindow = (e: AuditEvent) => new Date(e.requestReceivedTimestamp) >= windowStart && new Date(e.requestReceivedTimestamp).getTime() <= windowStart.getTime() + windowMs;
  const memberEvents = readAuditEvents(member.auditLogPath, (e) => inWindow(e) && e.user.username === 'test-admin');
  const statusWrites = memberEvents.filter((e) => e.objectRef?.resource === 'clustersets' && ['update', 'patch'].includes(e.verb)).length;
  const leaderEvents = readAuditEvents(leader.auditLogPath, (e) => inWindow(e) && e.user.username.startsWith(`system:serviceaccount:${LEADER_NS}:`));
  const perMinute = (n: number) => (n / (windowMs / 60_000)).toFixed(1);

  const deleted = [await deleteAll()];
  const laterReadyMs: number[] = [];
  for (let round = 2; round <= ROUNDS; round++) {
    laterReadyMs.push(await createAll());
    deleted.push(await deleteAll());
  }

  console.log(`\n${String(N)} ClusterSets against one leader, heartbeat every ${String(INTERVAL_S)} s, compiled agent (NODE_OPTIONS=${IMAGE_NODE_OPTIONS}, ${Object.entries(IMAGE_ENV).map(([k, v]) => `${k}=${v}`).join(' ')})`);
  console.log(`  creation -> all Ready: ${secs(allReadyMs)} (${(allReadyMs / (INTERVAL_S * 1000)).toFixed(2)} intervals)`);
  console.log(`  RSS: ${idle.text} idle; ${steady.text} with ${String(N)} ClusterSets (${((steady.rssKb - idle.rssKb) / 1024 / N).toFixed(2)} MiB each)`);
  deleted.forEach((d, i) => {
    const again = i === 0 ? '' : ` (round ${String(i + 1)}: all Ready again after ${secs(laterReadyMs[i - 1] ?? NaN)})`;
    console.log(`  after deleting them all${again}: ${d.after10} at 10 s, ${d.after60} at 60 s`);
  });
  console.log(`  CPU in steady state: ${(100 * cpu / (windowMs / 1000)).toFixed(1)}% of a core (${(100 * cpu / (windowMs / 1000) / N).toFixed(3)}% per ClusterSet) over ${secs(windowMs)}`);
  console.log(`  member apiserver: ${perMinute(memberEvents.length)} requests/min (${perMinute(statusWrites)} ClusterSet writes/min, ${(statusWrites / (windowMs / 60_000) / N).toFixed(2)} per ClusterSet per minute)`);
  console.log(`  leader apiserver: ${perMinute(leaderEvents.length)} requests/min (${(leaderEvents.length / (windowMs / 1000 / INTERVAL_S) / N).toFixed(2)} per ClusterSet per beat); ${String(leaderConnections)} TCP connections open to it`);
} finally {
  if (agent && agent.exitCode === null) {
    agent.kill('SIGTERM');
    await new Promise((resolve) => agent?.once('exit', resolve));
  }
  await Promise.all([leader.stop(), member.stop()]);
}
