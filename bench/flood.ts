// Benchmark: a leader floods the member with ResourceImports (twice the per-leader cap by
// default), measured on the COMPILED agent run as a child process the way users run it
// (`node dist/cli/main.js run ...`). The script builds dist/ itself first (tsc -p tsconfig.build.json).
//
//   npm run bench:flood -- [--services 5000] [--cap 5000] [--concurrency 16]
//
// Each service is one ServiceImport RI + one Endpoints RI (3 member objects when admitted).
// Prints figures only; it asserts nothing (that is the tests' job: test/integration/import-flood.test.ts).
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { ResourceImport } from '../src/common/api/antrea.js';
import { AGENT_SELECTOR } from '../src/importer/ownership.js';
import { readAuditEvents, requestsByTick } from '../test/harness/agent-process.js';
import {
  AGENT_NS, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, readyCondition, setupLeader, writeLeaderSecret,
} from '../test/harness/clusterset.js';
import { startControlPlane } from '../test/harness/control-plane.js';
import { endpointsRI, leaderImports, serviceImportRI } from '../test/harness/imports.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, pool } from './common.js';

const { values } = parseArgs({ options: { services: { type: 'string', default: '5000' }, cap: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '16' } } });
const SERVICES = Number(values.services);
const CAP = Number(values.cap);
const CONCURRENCY = Number(values.concurrency);
const INTERVAL_S = 2;
const FLOOD_NS = 'flood';

buildDist();

const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const tmp = mkdtempSync(path.join(tmpdir(), 'bench-flood-'));
const outFile = path.join(tmp, 'agent.stdout.log');
const errFile = path.join(tmp, 'agent.stderr.log');
const [leader, member] = await Promise.all([startControlPlane('flood-leader', { auditLog: true }), startControlPlane('flood-member', { auditLog: true })]);
const fds = [openSync(outFile, 'w'), openSync(errFile, 'w')] as const;
let agent: ReturnType<typeof spawn> | undefined;
let exited: number | null | undefined;
let rssTimer: NodeJS.Timeout | undefined;
const stopSampling = new AbortController();
try {
  await Promise.all([setupLeader(leader), installCrds(member)]);
  for (const ns of [AGENT_NS, FLOOD_NS]) await createNamespace(member.adminConfig(), ns);
  const access = await createMemberAccess(leader, 'east');
  await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
  await createClusterSet(member, { clusterID: 'east', server: leader.server, secret: 'leader-token' });

  agent = spawn(process.execPath, [...IMAGE_NODE_ARGS, agentEntry, 'run', '--kubeconfig', member.kubeconfigPath, '--namespace', AGENT_NS,
    '--heartbeat-interval', String(INTERVAL_S), '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0', '--log-level', 'info'],
  { stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, CSA_IMPORT_MAX_OBJECTS_PER_LEADER: String(CAP), NODE_OPTIONS: IMAGE_NODE_OPTIONS } });
  agent.on('exit', (code) => { exited = code; });
  const pid = agent.pid ?? 0;
  const rss: number[] = [];
  rssTimer = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
      if (m) rss.push(Number(m[1]));
    } catch { /* the process has gone */ }
  }, 200);
  const alive = () => { if (exited !== undefined) throw new Error(`the agent exited early (code ${String(exited)}); see ${errFile}`); };

  const csApi = clusterSetApi(member.adminConfig());
  await waitFor('ClusterSet Ready=True', async () => { alive(); return readyCondition(await csApi.get(CLUSTERSET_ID))?.status === 'True'; },
    { timeoutMs: 120_000, intervalMs: 200 });
  await delay(2 * INTERVAL_S * 1000);
  const rssBefore = rss.at(-1) ?? NaN;

  // Agent-owned objects in the member, per exported service name.
  const kc = member.adminConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const owned = async () => {
    const [svcs, eps, sis] = await Promise.all([
      core.listServiceForAllNamespaces({ labelSelector: AGENT_SELECTOR }),
      core.listEndpointsForAllNamespaces({ labelSelector: AGENT_SELECTOR }),
      custom.listCustomObjectForAllNamespaces({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', resourcePlural: 'serviceimports', labelSelector: AGENT_SELECTOR }) as Promise<{ items: { metadata?: { name?: string } }[] }>,
    ]);
    const names = new Map<string, number>();
    for (const o of [...svcs.items, ...eps.items, ...sis.items]) {
      const name = (o.metadata?.name ?? '').replace(/^antrea-mc-/, '');
      names.set(name, (names.get(name) ?? 0) + 1);
    }
    return { total: svcs.items.length + eps.items.length + sis.items.length, names };
  };
  let maxOwned = 0;
  let samples = 0;
  const sampler = (async () => {
    while (!stopSampling.signal.aborted) {
      try { maxOwned = Math.max(maxOwned, (await owned()).total); samples++; } catch { /* next second */ }
      await delay(1000);
    }
  })();

  const ris: ResourceImport[] = [];
  for (let i = 0; i < SERVICES; i++) {
    const name = `svc-${String(i)}`;
    ris.push(serviceImportRI(FLOOD_NS, name, [{ name: 'http', port: 80 }]), endpointsRI(FLOOD_NS, name, [`10.80.${String(Math.floor(i / 250) % 256)}.${String((i % 250) + 1)}`]));
  }
  const ri = leaderImports(leader.adminConfig());
  let retried = 0;
  // A dropped connection (the apiserver under load resets HTTP/2 streams) is retried; an HTTP answer is not.
  const create = async (r: ResourceImport): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await ri.create(r);
        return;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (code === 409 && attempt > 1) return;
        if (typeof code === 'number' || attempt >= 5) throw err;
        retried++;
        await delay(200 * attempt);
      }
    }
  };
  const floodStart = Date.now();
  await pool(ris, CONCURRENCY, create);
  const createdMs = Date.now() - floodStart;
  // Judged: every admitted service counts 3 objects in `total` (2 RIs), every refused RI 1 in `rejected`.
  await waitFor('every ResourceImport judged in the ClusterSet status', async () => {
    alive();
    const imports = (await csApi.get(CLUSTERSET_ID)).status?.imports;
    return (imports?.total ?? 0) / 3 * 2 + (imports?.rejected ?? 0) === ris.length;
  }, { timeoutMs: 15 * 60_000, intervalMs: 250 });
  const floodEnd = Date.now();
  await delay(2 * INTERVAL_S * 1000); // two more beats under the settled load; lets Events flush
  stopSampling.abort();
  await sampler;
  const final = await owned();
  const rssFinal = rss.at(-1) ?? NaN;
  const halfImported = [...final.names.values()].filter((n) => n === 1 || n === 2).length;

  const events = (await core.listNamespacedEvent({ namespace: AGENT_NS })).items.filter((e) => e.involvedObject.name === CLUSTERSET_ID);
  const byReason = new Map<string, { objects: number; count: number }>();
  for (const e of events) {
    const r = byReason.get(e.reason ?? '') ?? { objects: 0, count: 0 };
    byReason.set(e.reason ?? '', { objects: r.objects + 1, count: r.count + (e.count ?? 1) });
  }
  const eventRequests = readAuditEvents(member.auditLogPath, (e) => e.objectRef?.resource === 'events' && (e.verb === 'create' || e.verb === 'patch') && e.user.username === 'test-admin');
  const userAgents = new Set(eventRequests.map((e) => (e as { userAgent?: string }).userAgent ?? '?'));

  const inWindow = (t: string) => { const ms = Date.parse(t); return ms >= floodStart && ms <= floodEnd; };
  const beats = readAuditEvents(leader.auditLogPath, (e) => e.objectRef?.resource === 'memberclusterannounces' && e.verb === 'update'
    && (e.objectRef as { subresource?: string }).subresource === undefined && inWindow(e.requestReceivedTimestamp));
  const period = INTERVAL_S * 1000;
  const firstTick = Math.ceil(floodStart / period);
  const lastTick = Math.floor(floodEnd / period) - 1; // a tick's beat must have had its whole slot inside the window
  const beaten = new Set(requestsByTick(beats, INTERVAL_S).map(([tick]) => tick));
  const ticks = Math.max(0, lastTick - firstTick + 1);
  let missedTicks = 0;
  for (let t = firstTick; t <= lastTick; t++) if (!beaten.has(t)) missedTicks++;
  const agentLog = readFileSync(outFile, 'utf8') + readFileSync(errFile, 'utf8');
  const logCount = (s: string) => agentLog.split('\n').filter((l) => l.includes(s)).length;
  const imports = (await csApi.get(CLUSTERSET_ID)).status?.imports;

  console.log(`\nflood: ${String(SERVICES)} services = ${String(ris.length)} ResourceImports, cap ${String(CAP)} objects, create concurrency ${String(CONCURRENCY)}, compiled agent pid ${String(pid)}`);
  console.log(`  creating all RIs on the leader:               ${secs(createdMs)} (${String(retried)} creates retried after a dropped connection)`);
  console.log(`  first RI create -> all judged (status):        ${secs(floodEnd - floodStart)}`);
  console.log(`agent RSS (VmRSS, ${String(rss.length)} samples every 200 ms)`);
  console.log(`  before flood ${mb(rssBefore)}, peak ${mb(Math.max(...rss))}, final ${mb(rssFinal)}`);
  console.log(`agent-owned objects in the member (Services + Endpoints + ServiceImports, ${String(samples)} samples every 1 s)`);
  console.log(`  max seen ${String(maxOwned)}, final ${String(final.total)} (cap ${String(CAP)}); services: ${String(final.names.size)}, half-imported ${String(halfImported)}`);
  console.log(`member Events for the ClusterSet: ${String(events.length)} objects, sum of count ${String(events.reduce((s, e) => s + (e.count ?? 1), 0))}`);
  for (const [reason, r] of [...byReason].sort()) console.log(`  ${reason}: ${String(r.objects)} objects, count ${String(r.count)}`);
  console.log(`  events create/patch requests by test-admin (member audit): ${String(eventRequests.length)}, answered 429: ${String(eventRequests.filter((e) => e.responseStatus?.code === 429).length)}; userAgents ${JSON.stringify([...userAgents])}`);
  console.log(`heartbeats during the flood window (${secs(floodEnd - floodStart)})`);
  console.log(`  announce updates (leader audit): ${String(beats.length)}; ${String(INTERVAL_S)} s ticks: ${String(ticks)}; ticks without a beat: ${String(missedTicks)}; ticks - beats: ${String(ticks - beats.length)}`);
  console.log(`  agent log lines: 'missed execution' ${String(logCount('missed execution'))}, 'heartbeat failed' ${String(logCount('heartbeat failed'))}`);
  console.log(`ClusterSet status.imports at the end: ${JSON.stringify(imports)}`);
  console.log(`agent logs: ${outFile} ${errFile}`);
} finally {
  stopSampling.abort();
  if (agent && exited === undefined) {
    const gone = new Promise((resolve) => agent?.once('exit', resolve));
    agent.kill('SIGTERM');
    await Promise.race([gone, delay(30_000).then(() => agent?.kill('SIGKILL'))]);
  }
  clearInterval(rssTimer);
  for (const fd of fds) closeSync(fd);
  await Promise.all([leader.stop(), member.stop()]);
}
