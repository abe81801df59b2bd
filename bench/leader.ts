// Benchmark: `leader run` at fleet size, on the COMPILED build (the bundle bin/clusterset-agent.js
// starts, a child process with the image's memory settings), against a real leader control plane
// with the chart's admission policies installed.
//
//   npm run bench:leader -- [--members 100] [--services 2000] [--updates 1000] [--width 8]
//
// Every member has its own token from `leader create-member-token` and announces itself; every
// Service is exported by two members (a Service and an Endpoints export each: 4 x services
// exports in all, 8,000 by default), written with those members' tokens. Then `updates`
// endpoint changes (one member's Endpoints export gets a new address) are written as churn,
// `width` at a time, and the time from each write to the ResourceImport carrying it is taken
// from a watch. The baseline is the best a minimal client can do for the same pipeline in the
// same run: a watcher in another namespace that, for each export event, writes the import
// straight away (one watch hop, one write, one watch hop, nothing else).
//
// Prints: export -> import p50/p99 (and as a ratio of the baseline's), leader RSS, leader writes
// per effective change, and after a restart: writes and time until it caught up. Asserts nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import {
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ResourceExport,
  type ResourceImport,
} from '../src/common/api/antrea.js';
import {
  RE_LABEL_SOURCE_CLUSTER_ID,
  RE_LABEL_SOURCE_KIND,
  RE_LABEL_SOURCE_NAME,
  RE_LABEL_SOURCE_NAMESPACE,
  RESOURCE_EXPORT_FINALIZER,
} from '../src/common/api/names.js';
import { createMemberToken } from '../src/leader/member-token.js';
import { readAuditEvents } from '../test/harness/agent-process.js';
import { CLUSTERSET_ID, LEADER_NS, setupLeader } from '../test/harness/clusterset.js';
import { freePort, startControlPlane } from '../test/harness/control-plane.js';
import { createNamespace, issueToken, kubectlApply, tokenConfig } from '../test/harness/kube.js';
import { CHART, helmTemplate } from '../test/harness/leader-admission.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, metricSum, pool, rssKb, waitForQuietMachine } from './common.js';

const { values } = parseArgs({ options: {
  members: { type: 'string', default: '100' }, services: { type: 'string', default: '2000' },
  updates: { type: 'string', default: '1000' }, width: { type: 'string', default: '8' },
} });
const MEMBERS = Number(values.members);
const SERVICES = Number(values.services);
const UPDATES = Number(values.updates);
const WIDTH = Number(values.width);
const RELEASE_NS = 'csa-leader';
const LEADER_SA = 'csa-leader-clusterset-agent';
const FLOOR_NS = 'bench-floor';
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const ms = (v: number) => `${v.toFixed(0)} ms`;
const group = RESOURCE_EXPORT.group;
const ref = (d: { plural: string }, namespace = LEADER_NS) => ({ group, version: 'v1alpha1', plural: d.plural, namespace });

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function endpointsExport(clusterID: string, service: string, ip: string, namespace = LEADER_NS): ResourceExport {
  return {
    apiVersion: RESOURCE_EXPORT.apiVersion, kind: RESOURCE_EXPORT.kind,
    metadata: {
      name: `${clusterID}-bench-${service}-endpoints`, namespace,
      labels: { [RE_LABEL_SOURCE_NAME]: service, [RE_LABEL_SOURCE_NAMESPACE]: 'bench', [RE_LABEL_SOURCE_CLUSTER_ID]: clusterID, [RE_LABEL_SOURCE_KIND]: 'Endpoints' },
      finalizers: [RESOURCE_EXPORT_FINALIZER],
    },
    spec: { clusterID, name: service, namespace: 'bench', kind: 'Endpoints', endpoints: { subsets: [{ addresses: [{ ip }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] } },
  };
}

function serviceExport(clusterID: string, service: string): ResourceExport {
  return {
    apiVersion: RESOURCE_EXPORT.apiVersion, kind: RESOURCE_EXPORT.kind,
    metadata: {
      name: `${clusterID}-bench-${service}-service`,
      labels: { [RE_LABEL_SOURCE_NAME]: service, [RE_LABEL_SOURCE_NAMESPACE]: 'bench', [RE_LABEL_SOURCE_CLUSTER_ID]: clusterID, [RE_LABEL_SOURCE_KIND]: 'Service' },
      finalizers: [RESOURCE_EXPORT_FINALIZER],
    },
    spec: { clusterID, name: service, namespace: 'bench', kind: 'Service', service: { serviceSpec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } } },
  };
}

/** Set once the bench ends: watches are not reopened against a control plane being stopped. */
const tearingDown = { now: false };

/** The IPs of an Endpoints import, as one sorted string. */
function ipsOf(ri: ResourceImport): string[] {
  return (ri.spec?.endpoints?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
}

/** Watches imports in `namespace`, resolving waiters for an IP to appear in a named import. */
function importWatcher(kc: KubeConfig, namespace: string) {
  const waiters = new Map<string, () => void>();
  const latest = new Map<string, ResourceImport>();
  const onEvent = (phase: string, ri: ResourceImport) => {
    if (phase === 'DELETED') return;
    const name = ri.metadata?.name ?? '';
    latest.set(name, ri);
    for (const ip of ipsOf(ri)) {
      const key = `${name} ${ip}`;
      const resolve = waiters.get(key);
      if (resolve) { waiters.delete(key); resolve(); }
    }
  };
  // A watch the apiserver ends (its timeout, an error) is opened again at once: its initial
  // events bring the current state, so nothing written meanwhile is missed.
  const start = async (): Promise<void> => {
    if (tearingDown.now) return;
    await new Watch(kc).watch(`/apis/${group}/v1alpha1/namespaces/${namespace}/resourceimports`, {}, (phase, obj) => { onEvent(phase, obj as ResourceImport); }, () => {
      if (!tearingDown.now) void start().catch(() => { setTimeout(() => { void start().catch(() => undefined); }, 500); });
    });
  };
  return {
    start,
    /** The last copy of import `name` the watch delivered. */
    latest: (name: string) => latest.get(name),
    /** A promise for `ip` to appear in import `name`; register before writing. */
    expect: (name: string, ip: string) => new Promise<void>((resolve) => { waiters.set(`${name} ${ip}`, resolve); }),
  };
}

buildDist();
const tmp = mkdtempSync(path.join(tmpdir(), 'bench-leader-'));
const leader = await startControlPlane('bench-leader', { auditLog: true, startTimeoutSeconds: 180 });
let proc: ChildProcess | undefined;
let healthPort = 0;
let metricsPort = 0;
let logFile = '';
const startLeaderProcess = async (label: string) => {
  healthPort = await freePort();
  metricsPort = await freePort();
  logFile = path.join(tmp, `leader-${label}.log`);
  const fds = [openSync(logFile, 'w'), openSync(path.join(tmp, `leader-${label}.err`), 'w')] as const;
  proc = spawn(process.execPath, [...IMAGE_NODE_ARGS, agentEntry, 'leader', 'run', '--kubeconfig', path.join(tmp, 'leader.kubeconfig'),
    '--health-bind-address', `127.0.0.1:${String(healthPort)}`, '--metrics-bind-address', `127.0.0.1:${String(metricsPort)}`, '--log-level', 'info'],
  { stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, NODE_OPTIONS: IMAGE_NODE_OPTIONS, CSA_LEADER_NAMESPACE: LEADER_NS, CSA_NAMESPACE: RELEASE_NS, CSA_LEADER_ELECT: 'false' } });
  for (const fd of fds) closeSync(fd);
  const started = performance.now();
  await waitFor('leader run ready', async () => (await fetch(`http://127.0.0.1:${String(healthPort)}/readyz`).then((r) => r.status, () => 0)) === 200, { timeoutMs: 120_000, intervalMs: 50 });
  return performance.now() - started;
};
const stopLeaderProcess = async () => {
  if (proc && proc.exitCode === null) {
    const p = proc;
    p.kill('SIGTERM');
    await new Promise((resolve) => p.once('exit', resolve));
  }
};
const leaderWrites = () => metricSum(metricsPort, 'clusterset_agent_leader_writes_total');

try {
  const admin = leader.adminConfig();
  await setupLeader(leader);
  await createNamespace(admin, RELEASE_NS);
  await createNamespace(admin, FLOOR_NS);
  await kubectlApply(leader, await helmTemplate(['csa-leader', CHART, '--namespace', RELEASE_NS, '--set', 'mode=leader', '--set', 'leader.createNamespace=false']));
  const leaderToken = await issueToken(admin, RELEASE_NS, LEADER_SA, 86_400);
  writeFileSync(path.join(tmp, 'leader.kubeconfig'), `apiVersion: v1
kind: Config
clusters: [{ name: l, cluster: { server: "${leader.server}", certificate-authority: "${leader.caFile}" } }]
users: [{ name: u, user: { token: "${leaderToken}" } }]
contexts: [{ name: c, context: { cluster: l, user: u } }]
current-context: c
`);
  await startLeaderProcess('first');

  // 100 members, each with its own token, each announcing itself.
  const ids = Array.from({ length: MEMBERS }, (_, i) => `m${String(i).padStart(3, '0')}`);
  const clients = new Map<string, CustomObjectsApi>();
  await pool(ids, 4, async (id) => {
    const token = await createMemberToken(admin, { memberId: id, namespace: LEADER_NS, durationSeconds: 86_400 });
    const secret = parse(token.secretYaml) as { data: { token: string } };
    clients.set(id, tokenConfig(leader, Buffer.from(secret.data.token, 'base64').toString('utf8'), `member-${id}`).makeApiClient(CustomObjectsApi));
  });
  const as = (id: string) => clients.get(id) ?? (() => { throw new Error(id); })();
  await pool(ids, 8, async (id) => waitFor(`${id} admitted`, async () => {
    await as(id).createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: {
      apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind,
      metadata: { name: `member-announce-from-${id}`, annotations: { 'touch-ts': new Date().toISOString() } },
      clusterID: id, clusterSetID: CLUSTERSET_ID, leaderClusterID: 'leader',
    } });
    return true;
  }, { timeoutMs: 60_000, intervalMs: 250 }));

  // Every member beats every 10 s, as Antrea's and this project's members do (GET, then PUT with a new touch-ts).
  const beating = { on: true };
  const beats = (async () => {
    while (beating.on) {
      const round = performance.now();
      await pool(ids, 8, async (id) => {
        try {
          const mca = (await as(id).getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: `member-announce-from-${id}` })) as { metadata: { annotations?: Record<string, string> } };
          mca.metadata.annotations = { ...mca.metadata.annotations, 'touch-ts': new Date().toISOString() };
          await as(id).replaceNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: `member-announce-from-${id}`, body: mca });
        } catch {
          // A beat lost to a conflict with the leader's finalizer write: the next one comes in 10 s.
        }
      });
      await delay(Math.max(0, 10_000 - (performance.now() - round)));
    }
  })();

  // 2,000 Services, each exported by two members: 8,000 exports.
  const services = Array.from({ length: SERVICES }, (_, i) => `svc-${String(i)}`);
  const exportersOf = (i: number) => [ids[i % MEMBERS] ?? '', ids[(i + 1) % MEMBERS] ?? ''];
  const ipOf = (i: number, k: number) => `10.${String(k + 1)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
  const populateStart = performance.now();
  await pool(services.flatMap((s, i) => exportersOf(i).map((id, k) => ({ s, i, id, k }))), 16, async ({ s, i, id, k }) => {
    await as(id).createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport(id, s) });
    await as(id).createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: endpointsExport(id, s, ipOf(i, k)) });
  });
  const watcher = importWatcher(admin, LEADER_NS);
  await watcher.start();
  await waitFor(`${String(2 * SERVICES)} imports`, async () => {
    const list = (await admin.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ ...ref(RESOURCE_IMPORT) })) as { items: ResourceImport[] };
    return list.items.filter((ri) => ri.spec?.kind === 'ServiceImport' || ipsOf(ri).length === 2).length === 2 * SERVICES;
  }, { timeoutMs: 20 * 60_000, intervalMs: 1000 });
  const populateMs = performance.now() - populateStart;
  const rssPopulated = rssKb(proc?.pid ?? 0);
  await waitForQuietMachine();

  // Baseline: the same pipeline by a minimal client (export event -> import write), in another namespace.
  const floorApi = admin.makeApiClient(CustomObjectsApi);
  const floorWatcher = importWatcher(admin, FLOOR_NS);
  await floorWatcher.start();
  const floorServices = services.slice(0, 100);
  for (const s of floorServices) {
    await floorApi.createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), body: endpointsExport('m000', s, '10.0.0.1', FLOOR_NS) });
    await floorApi.createNamespacedCustomObject({ ...ref(RESOURCE_IMPORT, FLOOR_NS), body: { apiVersion: RESOURCE_IMPORT.apiVersion, kind: RESOURCE_IMPORT.kind, metadata: { name: `bench-${s}-endpoints` }, spec: { name: s, namespace: 'bench', kind: 'Endpoints', endpoints: { subsets: [] } } } });
  }
  // Like the leader: the import's last watched copy (its resourceVersion) replaced at once; a conflict reads and retries.
  const floorWrite = async (re: ResourceExport): Promise<void> => {
    const name = `bench-${re.spec?.name ?? ''}-endpoints`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = attempt === 0 ? floorWatcher.latest(name) : (await floorApi.getNamespacedCustomObject({ ...ref(RESOURCE_IMPORT, FLOOR_NS), name })) as ResourceImport;
      try {
        await floorApi.replaceNamespacedCustomObject({ ...ref(RESOURCE_IMPORT, FLOOR_NS), name, body: { ...stored, spec: { ...stored?.spec, endpoints: re.spec?.endpoints } } });
        return;
      } catch {
        // 409: someone wrote since; read and retry.
      }
    }
  };
  await new Watch(admin).watch(`/apis/${group}/v1alpha1/namespaces/${FLOOR_NS}/resourceexports`, {}, (phase, obj) => {
    if (phase === 'MODIFIED') void floorWrite(obj as ResourceExport);
  }, () => undefined);
  const churn = async (count: number, write: (n: number) => { name: string; ip: string; send: () => Promise<unknown> }, watch: typeof watcher) => {
    const latencies: number[] = [];
    const lost: string[] = [];
    await pool(Array.from({ length: count }, (_, n) => n), WIDTH, async (n) => {
      const { name, ip, send } = write(n);
      const arrived = watch.expect(name, ip).then(() => true);
      const t0 = performance.now();
      try {
        await send();
      } catch (err) {
        lost.push(`${name} ${ip}: write failed: ${String(err)}`);
        return;
      }
      if (await Promise.race([arrived, delay(30_000).then(() => false)])) latencies.push(performance.now() - t0);
      else lost.push(`${name} ${ip}: not in the import within 30 s`);
    });
    if (lost.length > 0) console.log(`  (${String(lost.length)} of ${String(count)} updates lost, first: ${lost.slice(0, 3).join('; ')})`);
    return latencies;
  };
  const floor = await churn(UPDATES, (n) => {
    const s = floorServices[n % floorServices.length] ?? '';
    const ip = `10.200.${String(Math.floor(n / 250))}.${String((n % 250) + 1)}`;
    return { name: `bench-${s}-endpoints`, ip, send: async () => {
      const current = (await floorApi.getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), name: `m000-bench-${s}-endpoints` })) as ResourceExport;
      await floorApi.replaceNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), name: `m000-bench-${s}-endpoints`, body: { ...current, spec: { ...current.spec, endpoints: endpointsExport('m000', s, ip).spec?.endpoints } } });
    } };
  }, floorWatcher);
  await waitForQuietMachine();

  // Churn through the leader: one member's Endpoints export of one Service gets a new address.
  const writesBefore = await leaderWrites();
  const churnStart = new Date();
  let rssPeak = 0;
  const sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssKb(proc?.pid ?? 0));
    } catch {
      // The leader exited: the next step says so.
    }
  }, 200);
  const leaderLatency = await (async () => { try { return await churn(UPDATES, (n) => {
    const i = (n * 7919) % SERVICES;
    const s = services[i] ?? '';
    const k = n % 2;
    const id = exportersOf(i)[k] ?? '';
    const ip = `10.${String(100 + k)}.${String(Math.floor(n / 250))}.${String((n % 250) + 1)}`;
    return { name: `bench-${s}-endpoints`, ip, send: async () => {
      const name = `${id}-bench-${s}-endpoints`;
      for (let attempt = 1; ; attempt++) {
        const current = (await as(id).getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name })) as ResourceExport;
        try {
          await as(id).replaceNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name, body: { ...current, spec: { ...current.spec, endpoints: endpointsExport(id, s, ip).spec?.endpoints } } });
          return;
        } catch (err) {
          if (attempt >= 5) throw err;
        }
      }
    } };
  }, watcher); } finally { clearInterval(sampler); } })();
  await delay(2000);
  const churnWrites = (await leaderWrites()) - writesBefore;
  const leaderSA = `system:serviceaccount:${RELEASE_NS}:${LEADER_SA}`;
  const churnAudit = readAuditEvents(leader.auditLogPath, (e) => new Date(e.requestReceivedTimestamp) >= churnStart && e.user.username === leaderSA && ['create', 'update', 'patch', 'delete'].includes(e.verb));
  const byResource = new Map<string, number>();
  for (const e of churnAudit) {
    const key = `${e.verb} ${e.objectRef?.resource ?? ''}`;
    byResource.set(key, (byResource.get(key) ?? 0) + 1);
  }
  const rssAfterChurn = rssKb(proc?.pid ?? 0);

  // Restart: what it writes and how long until it caught up (every object seen at start reconciled once).
  await stopLeaderProcess();
  const restartAt = new Date();
  const readyMs = await startLeaderProcess('restart');
  const caughtUp = await waitFor('leader caught up after the restart', () => {
    const line = readFileSync(logFile, 'utf8').split('\n').find((l) => l.includes('leader caught up'));
    return line === undefined ? undefined : (JSON.parse(line) as { afterMs: number; imports: number; exports: number });
  }, { timeoutMs: 10 * 60_000, intervalMs: 100 });
  await delay(10_000);
  const restartWrites = readAuditEvents(leader.auditLogPath, (e) => new Date(e.requestReceivedTimestamp) >= restartAt && e.user.username === leaderSA && ['create', 'update', 'patch', 'delete'].includes(e.verb));
  const rssRestarted = rssKb(proc?.pid ?? 0);

  const p = (v: number[], q: number) => percentile(v, q);
  console.log(`\nleader run at fleet size, compiled build (NODE_OPTIONS=${IMAGE_NODE_OPTIONS}), chart admission policies installed`);
  console.log(`  ${String(MEMBERS)} members (own tokens), ${String(SERVICES)} Services x 2 exporters = ${String(4 * SERVICES)} exports -> ${String(2 * SERVICES)} imports in ${(populateMs / 1000).toFixed(1)} s`);
  console.log(`  churn: ${String(UPDATES)} endpoint updates, ${String(WIDTH)} in flight`);
  console.log(`  export -> import through the leader: p50 ${ms(p(leaderLatency, 50))}, p99 ${ms(p(leaderLatency, 99))}, max ${ms(Math.max(...leaderLatency))}`);
  console.log(`  baseline (minimal client, same pipeline): p50 ${ms(p(floor, 50))}, p99 ${ms(p(floor, 99))}; ratio p50 ${(p(leaderLatency, 50) / p(floor, 50)).toFixed(2)}, p99 ${(p(leaderLatency, 99) / p(floor, 99)).toFixed(2)}`);
  console.log(`  leader RSS: ${mib(rssPopulated)} populated, ${mib(rssPeak)} peak in churn, ${mib(rssAfterChurn)} after; ${mib(rssRestarted)} after restart`);
  console.log(`  leader writes in churn: ${String(churnWrites)} for ${String(UPDATES)} effective changes = ${(churnWrites / UPDATES).toFixed(3)} per change (${[...byResource].map(([k, v]) => `${k}: ${String(v)}`).join(', ')})`);
  console.log(`  restart: ready (caches synced) after ${ms(readyMs)}, caught up after ${ms(caughtUp.afterMs)} more (${String(caughtUp.exports)} exports, ${String(caughtUp.imports)} imports); writes in the first ${((Date.now() - restartAt.getTime()) / 1000).toFixed(0)} s: ${String(restartWrites.length)}${restartWrites.length > 0 ? ` (${restartWrites.slice(0, 5).map((e) => `${e.verb} ${e.objectRef?.resource ?? ''} ${e.objectRef?.name ?? ''}`).join(', ')})` : ''}`);
  beating.on = false;
  await beats;
} catch (err) {
  // The finally block ends the process with process.exit(), which would swallow this error and
  // exit 0 without a figure: say what failed and exit non-zero.
  console.error(`bench:leader failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  tearingDown.now = true;
  await stopLeaderProcess();
  await leader.stop();
  // The watches' sockets would keep the process alive.
  process.exit(process.exitCode ?? 0);
}
