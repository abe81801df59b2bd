// Benchmark: what one member costs each of its leader clusters per heartbeat when its ClusterSet
// lists 1, 2 and 3 leaders (issue 30), on the COMPILED agent (dist/, a child process, as users
// run it), against three real leader control planes running this project's leader controller.
//
//   npm run bench:leaders -- [--beats 10] [--interval 2]
//
// One member, one ClusterSet, one exported Service (so every leader's area has an exporter and
// an importer with something in them); spec.leaders grows from 1 to 2 to 3 leaders while the
// agent runs. For each size, once every listed leader is connected and two beats have passed,
// `beats` whole heartbeat ticks are observed: the requests each leader's API server received
// with the member's token (its audit log) and the agent's requests to the member's own API
// server (userAgent clusterset-agent), per tick. Prints a table; asserts nothing.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CLUSTERSET, type ClusterSet } from '../src/common/api/antrea.js';
import { SERVICE_EXPORT } from '../src/common/api/mcs.js';
import { AgentMetrics } from '../src/common/metrics/metrics.js';
import { LeaderController } from '../src/leader/controller.js';
import { readAuditEvents, type AuditEvent } from '../test/harness/agent-process.js';
import { AGENT_NS, capturedLogger, CLUSTERSET_ID, createMemberAccess, installCrds, LEADER_NS, setupLeader, writeLeaderSecret } from '../test/harness/clusterset.js';
import { freePort, startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS } from './common.js';

const { values } = parseArgs({ options: { beats: { type: 'string', default: '10' }, interval: { type: 'string', default: '2' } } });
const BEATS = Number(values.beats);
const INTERVAL_S = Number(values.interval);
const LEADER_IDS = ['leader-1', 'leader-2', 'leader-3'] as const;
const MEMBER_ID = 'east';

buildDist();

const tmp = mkdtempSync(path.join(tmpdir(), 'bench-leaders-'));
const outFile = path.join(tmp, 'agent.stdout.log');
const errFile = path.join(tmp, 'agent.stderr.log');
const planes = await Promise.all([...LEADER_IDS.map((id) => startControlPlane(id, { auditLog: true })), startControlPlane('leaders-member', { auditLog: true })]);
const leaders = planes.slice(0, LEADER_IDS.length);
const member = planes[LEADER_IDS.length] as ControlPlane;
const controllers: LeaderController[] = [];
let agent: ReturnType<typeof spawn> | undefined;
try {
  const users: string[] = [];
  for (const [i, leader] of leaders.entries()) {
    const id = LEADER_IDS[i] ?? '';
    await setupLeader(leader, id);
    const controller = new LeaderController({
      kubeConfig: leader.adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 3 * INTERVAL_S * 1000, staleMemberMs: 86_400_000,
      logger: capturedLogger().logger, metrics: new AgentMetrics({ defaultMetrics: false }),
    });
    controllers.push(controller);
    await controller.start();
    const access = await createMemberAccess(leader, MEMBER_ID);
    users.push(`system:serviceaccount:${LEADER_NS}:${access.serviceAccount}`);
    await writeLeaderSecret(member, `${id}-token`, { caPem: leader.caPem, token: access.token });
  }
  await installCrds(member);
  await createNamespace(member.adminConfig(), 'team-a');
  const kc = member.adminConfig();
  await kc.makeApiClient(CoreV1Api).createNamespacedService({ namespace: 'team-a', body: { metadata: { name: 'api' }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } } });
  await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({ namespace: 'team-a', body: {
    metadata: { name: 'api-abc', labels: { 'kubernetes.io/service-name': 'api' } }, addressType: 'IPv4',
    endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  } });
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a',
    body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name: 'api' } } });

  const api = kc.makeApiClient(CustomObjectsApi);
  const ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS };
  const spec = (n: number) => ({ clusterID: MEMBER_ID, namespace: LEADER_NS,
    leaders: LEADER_IDS.slice(0, n).map((id, i) => ({ clusterID: id, server: leaders[i]?.server ?? '', secret: `${id}-token` })) });
  await api.createNamespacedCustomObject({ ...ref, body: { apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: CLUSTERSET_ID }, spec: spec(1) } });

  const metricsPort = await freePort();
  const fds = [openSync(outFile, 'w'), openSync(errFile, 'w')] as const;
  agent = spawn(process.execPath, [...IMAGE_NODE_ARGS, agentEntry, 'run', '--kubeconfig', member.kubeconfigPath, '--namespace', AGENT_NS,
    '--heartbeat-interval', String(INTERVAL_S), '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', `127.0.0.1:${String(metricsPort)}`, '--log-level', 'warn'],
  { stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, NODE_OPTIONS: IMAGE_NODE_OPTIONS } });
  for (const fd of fds) closeSync(fd);
  let exited: number | null | undefined;
  agent.on('exit', (code) => { exited = code; });
  const alive = () => { if (exited !== undefined) throw new Error(`the agent exited (code ${String(exited)}); see ${errFile}`); };

  const rows: string[][] = [];
  for (let n = 1; n <= LEADER_IDS.length; n++) {
    if (n > 1) {
      await api.patchNamespacedCustomObject({ ...ref, name: CLUSTERSET_ID, body: { spec: spec(n) } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    }
    await waitFor(`${String(n)}/${String(n)} leaders connected, the export on every one`, async () => {
      alive();
      const cs = (await api.getNamespacedCustomObject({ ...ref, name: CLUSTERSET_ID })) as ClusterSet;
      const ready = cs.status?.clusterStatuses?.filter((s) => s.conditions?.find((c) => c.type === 'Ready')?.status === 'True').length;
      return ready === n && cs.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    }, { timeoutMs: 120_000, intervalMs: 250 });
    // Steady state: two beats to settle, then an observation window (not synchronisation) of
    // whole ticks of the wall-clock-aligned schedule.
    await delay(2 * INTERVAL_S * 1000);
    const tickMs = INTERVAL_S * 1000;
    const from = Math.ceil(Date.now() / tickMs) * tickMs;
    const to = from + BEATS * tickMs;
    await delay(to - Date.now() + 1000);
    alive();
    const inWindow = (e: AuditEvent) => { const t = Date.parse(e.requestReceivedTimestamp); return t >= from && t < to; };
    const perBeat = (events: readonly AuditEvent[]) => (events.length / BEATS).toFixed(2);
    /** What the requests were, e.g. `10 update memberclusterannounces:200`. */
    const verbs = (events: readonly AuditEvent[]) => {
      const counts = new Map<string, number>();
      for (const e of events) {
        const key = `${e.verb} ${e.objectRef?.resource ?? e.requestURI ?? ''}:${String(e.responseStatus?.code)}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([k, c]) => `${String(c)} ${k}`).join(', ') || 'none';
    };
    const cells: string[] = [String(n)];
    let total = 0;
    for (let i = 0; i < LEADER_IDS.length; i++) {
      if (i >= n) { cells.push('-'); continue; }
      const events = readAuditEvents(leaders[i]?.auditLogPath, (e) => inWindow(e) && e.user.username === users[i]);
      total += events.length;
      cells.push(`${perBeat(events)} (${verbs(events)})`);
    }
    const toMember = readAuditEvents(member.auditLogPath, (e) => inWindow(e) && e.userAgent === 'clusterset-agent');
    cells.push((total / BEATS).toFixed(2), `${perBeat(toMember)} (${verbs(toMember)})`);
    rows.push(cells);
  }

  console.log(`\nOne member, ClusterSet with 1, 2, 3 leaders (this project's leader controller), heartbeat every ${String(INTERVAL_S)} s, ${String(BEATS)} whole beats observed each, compiled agent`);
  const header = ['leaders', ...LEADER_IDS.map((id) => `${id}: requests/beat (in the window)`), 'to all leaders/beat', 'to the member: requests/beat (in the window)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const r of [header, ...rows]) console.log(`  ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}`);
} finally {
  if (agent && agent.exitCode === null) {
    agent.kill('SIGTERM');
    await new Promise((resolve) => agent?.once('exit', resolve));
  }
  await Promise.all(controllers.map((c) => c.stop()));
  await Promise.all(planes.map((cp) => cp.stop()));
}
