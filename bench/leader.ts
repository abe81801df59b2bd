// Benchmark: `leader run` at fleet size, on the COMPILED build (the bundle bin/clusterset-agent.js
// starts, a child process with the image's memory settings), against a real leader control plane
// with the chart's admission policies installed.
//
//   npm run bench:leader -- [--members 100] [--services 2000] [--updates 1000] [--width 8]
//     [--period 10] [--joins 5] [--leaves 5] [--rest 60] [--after-restart 60]
//
// Every member has its own token from `leader create-member-token` and is a cheap simulated
// client (one shared keep-alive connection pool, its own bearer token), not an agent: it
// announces itself and then beats every `period` seconds as Antrea's member does (GET, then PUT
// with a new `touch-ts` in whole seconds), each member's beats starting at a random point of
// the period and each gap jittered by ±5%, so the fleet's beats are spread over the period as
// real members' are. Every Service is exported by two members (a Service and an Endpoints
// export each: 4 x services exports in all, 8,000 by default), written with those members'
// tokens. The run, with the members beating throughout:
//   1. populate: every export written, every import made;
//   2. rest: `rest` seconds of beats only;
//   3. baseline: the same pipeline by a minimal client (below);
//   4. churn: `updates` endpoint changes (one member's Endpoints export gets a new address),
//      `width` at a time, the time from each write to the ResourceImport carrying it taken from
//      a watch; meanwhile `joins` members join (token, announce, one exported Service) and
//      `leaves` members stop beating and, once the leader shows them Disconnected, leave
//      (delete their announce);
//   5. restart of the leader with the members still beating, then `after-restart` seconds.
// The baseline is the best a minimal client can do for the export→import pipeline in the same
// run: a watcher in another namespace that, for each export event, writes the import straight
// away (one watch hop, one write, one watch hop, nothing else).
//
// Prints, for the leader process: export -> import p50/p99 (and as a ratio of the baseline's);
// false Disconnected verdicts (a member whose last beat was within the timeout shown not Ready,
// read from the ClusterSet status watch: must be 0); liveness lag (last beat → Disconnected
// shown) of the members that stopped; RSS; CPU seconds per minute at rest and in churn; the
// event-loop lag (prom-client's monitorEventLoopDelay p99 and max, scraped every 5 s); writes
// per second to the API server by kind in each phase (the audit log; ClusterSet status writes
// must not grow with the beat rate) and per effective change; restart: ready time, catch-up and
// writes. Asserts nothing, but says which of issue 31's goals a figure misses. Exits 1 with the
// error when the run itself fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, createReadStream, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import {
  CLUSTERSET,
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ClusterSet,
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
import type { AuditEvent } from '../test/harness/agent-process.js';
import { CLUSTERSET_ID, LEADER_NS, setupLeader } from '../test/harness/clusterset.js';
import { freePort, startControlPlane } from '../test/harness/control-plane.js';
import { createNamespace, issueToken, kubectlApply } from '../test/harness/kube.js';
import { CHART, helmTemplate } from '../test/harness/leader-admission.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, cpuSeconds, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, metricSum, pool, rssKb, waitForQuietMachine } from './common.js';

const { values } = parseArgs({ options: {
  members: { type: 'string', default: '100' }, services: { type: 'string', default: '2000' },
  updates: { type: 'string', default: '1000' }, width: { type: 'string', default: '8' },
  period: { type: 'string', default: '10' }, joins: { type: 'string' }, leaves: { type: 'string' },
  rest: { type: 'string', default: '60' }, 'after-restart': { type: 'string', default: '60' },
} });
const MEMBERS = Number(values.members);
const SERVICES = Number(values.services);
const UPDATES = Number(values.updates);
const WIDTH = Number(values.width);
const PERIOD_MS = Number(values.period) * 1000;
// 50 of 1,000 by default (issue 31): 5% of the fleet joins and 5% leaves during the churn.
const JOINS = Number(values.joins ?? Math.ceil(MEMBERS / 20));
const LEAVES = Number(values.leaves ?? Math.ceil(MEMBERS / 20));
const REST_MS = Number(values.rest) * 1000;
const AFTER_RESTART_MS = Number(values['after-restart']) * 1000;
/** The leader's member timeout (its default, `leader.memberTimeoutSeconds`). */
const TIMEOUT_MS = 30_000;
for (const [name, v] of Object.entries({ MEMBERS, SERVICES, UPDATES, WIDTH, PERIOD_MS, JOINS, LEAVES, REST_MS, AFTER_RESTART_MS })) {
  if (!Number.isFinite(v) || v < 0) throw new Error(`bench:leader: ${name} must be a number >= 0, got ${String(v)}`);
}
if (LEAVES >= MEMBERS) throw new Error('bench:leader: --leaves must be below --members');
const RELEASE_NS = 'csa-leader';
const LEADER_SA = 'csa-leader-clusterset-agent';
const FLOOR_NS = 'bench-floor';
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const ms = (v: number) => `${v.toFixed(0)} ms`;
const sec = (v: number) => `${(v / 1000).toFixed(1)} s`;
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

/** Watches `plural` in `namespace` and hands every event to `onEvent`; a watch the apiserver ends is opened again at once (its initial events bring the current state). */
function watchAll(kc: KubeConfig, namespace: string, plural: string, onEvent: (phase: string, obj: unknown) => void): () => Promise<void> {
  const start = async (): Promise<void> => {
    if (tearingDown.now) return;
    await new Watch(kc).watch(`/apis/${group}/v1alpha1/namespaces/${namespace}/${plural}`, {}, (phase, obj) => { onEvent(phase, obj); }, () => {
      if (!tearingDown.now) void start().catch(() => { setTimeout(() => { void start().catch(() => undefined); }, 500); });
    });
  };
  return start;
}

/** Watches imports in `namespace`, resolving waiters for an IP to appear in a named import. */
function importWatcher(kc: KubeConfig, namespace: string) {
  const waiters = new Map<string, () => void>();
  const latest = new Map<string, ResourceImport>();
  const start = watchAll(kc, namespace, 'resourceimports', (phase, obj) => {
    const ri = obj as ResourceImport;
    if (phase === 'DELETED') return;
    const name = ri.metadata?.name ?? '';
    latest.set(name, ri);
    for (const ip of ipsOf(ri)) {
      const key = `${name} ${ip}`;
      const resolve = waiters.get(key);
      if (resolve) { waiters.delete(key); resolve(); }
    }
  });
  return {
    start,
    /** The last copy of import `name` the watch delivered. */
    latest: (name: string) => latest.get(name),
    /** A promise for `ip` to appear in import `name`; register before writing. */
    expect: (name: string, ip: string) => new Promise<void>((resolve) => { waiters.set(`${name} ${ip}`, resolve); }),
  };
}

/** A failed request of a simulated member: the HTTP status and the API's message. */
class HttpError extends Error {
  constructor(readonly status: number, message: string) { super(`HTTP ${String(status)}: ${message}`); }
}

/**
 * Simulated members' client: one keep-alive connection pool for the whole fleet, each request
 * with the member's own bearer token (admission and RBAC see the member's ServiceAccount). A
 * thousand KubeConfig clients would be a thousand pools and TLS handshakes: that is the bench's
 * cost, not the leader's.
 */
function fleetClient(server: string, caPem: string) {
  const url = new URL(server);
  const agent = new Agent({ keepAlive: true, maxSockets: 128, ca: caPem });
  return async <T>(token: string, method: string, pathname: string, body?: unknown): Promise<T> => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise<T>((resolve, reject) => {
      const req = request({ agent, host: url.hostname, port: url.port, method, path: pathname, headers: {
        authorization: `Bearer ${token}`, accept: 'application/json',
        ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
      } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(JSON.parse(text) as T);
          else reject(new HttpError(status, (() => { try { return (JSON.parse(text) as { message?: string }).message ?? text; } catch { return text; } })()));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  };
}

/** One phase of the run: its wall-clock window, the leader's CPU seconds over it, event-loop lag samples. */
interface Phase {
  readonly name: string;
  readonly startMs: number;
  endMs: number;
  cpuStart: number;
  cpuEnd: number;
  readonly lagP99: number[];
  readonly lagMax: number[];
}

/** Write requests (create, update, patch, delete) per user class and `verb resource[/subresource]`, per phase, streamed from the audit log. */
async function auditWrites(auditLogPath: string, phases: readonly Phase[], leaderUser: string): Promise<Map<string, Map<string, number>>> {
  const out = new Map(phases.map((p) => [p.name, new Map<string, number>()]));
  const lines = createInterface({ input: createReadStream(auditLogPath, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.includes('"ResponseComplete"') || !/"verb":"(create|update|patch|delete)"/.test(line)) continue;
    const e = JSON.parse(line) as AuditEvent & { objectRef?: { subresource?: string } };
    const at = Date.parse(e.requestReceivedTimestamp);
    const phase = phases.find((p) => at >= p.startMs && at < p.endMs);
    if (phase === undefined) continue;
    const who = e.user.username === leaderUser ? 'leader' : e.user.username.startsWith(`system:serviceaccount:${LEADER_NS}:member-`) ? 'members' : 'others';
    const key = `${who} ${e.verb} ${e.objectRef?.resource ?? ''}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    const counts = out.get(phase.name);
    counts?.set(key, (counts.get(key) ?? 0) + 1);
  }
  return out;
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
const leaderPid = () => proc?.pid ?? 0;
const leaderCpu = () => { try { return cpuSeconds(leaderPid()); } catch { return NaN; } };

// Phases, and what is sampled during each: the leader's event-loop lag (prom-client's
// monitorEventLoopDelay, whose histogram resets at every scrape: each sample is one 5 s window)
// and its RSS.
const phases: Phase[] = [];
let current: Phase | undefined;
const beginPhase = (name: string) => {
  endPhase();
  current = { name, startMs: Date.now(), endMs: Infinity, cpuStart: leaderCpu(), cpuEnd: NaN, lagP99: [], lagMax: [] };
  phases.push(current);
};
function endPhase(): void {
  if (current === undefined) return;
  current.endMs = Date.now();
  current.cpuEnd = leaderCpu();
  current = undefined;
}
let rssPeak = 0;
const sampler = setInterval(() => {
  try {
    rssPeak = Math.max(rssPeak, rssKb(leaderPid()));
  } catch {
    // The leader is restarting.
  }
}, 200);
const lagSampler = setInterval(() => {
  const phase = current;
  void fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`).then(async (r) => r.text()).then((text) => {
    const read = (name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2] ?? NaN);
    const p99 = read('nodejs_eventloop_lag_p99_seconds');
    const max = read('nodejs_eventloop_lag_max_seconds');
    if (phase !== undefined && Number.isFinite(p99)) { phase.lagP99.push(p99 * 1000); phase.lagMax.push(max * 1000); }
  }, () => undefined);
}, 5000);

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
  const fleet = fleetClient(leader.server, leader.caPem);
  const tokens = new Map<string, string>();
  const tokenOf = (id: string) => tokens.get(id) ?? (() => { throw new Error(`no token for ${id}`); })();
  const base = (d: { plural: string }, namespace = LEADER_NS) => `/apis/${group}/v1alpha1/namespaces/${namespace}/${d.plural}`;
  const announceName = (id: string) => `member-announce-from-${id}`;
  // touch-ts in whole seconds, as Antrea's member writes it (time.RFC3339).
  const touchNow = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

  const makeMember = async (id: string) => {
    tokens.set(id, (await createMemberToken(admin, { memberId: id, namespace: LEADER_NS, durationSeconds: 86_400 })).token);
  };
  /** Each member's successful beats (touch-ts, ms), newest last; a few are enough to judge a verdict. */
  const beatsOf = new Map<string, number[]>();
  const recordBeat = (id: string, stamp: string) => {
    const list = beatsOf.get(id) ?? [];
    list.push(Date.parse(stamp));
    if (list.length > 20) list.shift();
    beatsOf.set(id, list);
  };
  const announce = async (id: string) => {
    await waitFor(`${id} admitted`, async () => {
      const stamp = touchNow();
      await fleet(tokenOf(id), 'POST', base(MEMBER_CLUSTER_ANNOUNCE), {
        apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind,
        metadata: { name: announceName(id), annotations: { 'touch-ts': stamp } },
        clusterID: id, clusterSetID: CLUSTERSET_ID, leaderClusterID: 'leader',
      });
      recordBeat(id, stamp);
      return true;
    }, { timeoutMs: 60_000, intervalMs: 250 });
  };

  // Every member beats every PERIOD_MS as Antrea's member does (GET, then PUT with a new
  // touch-ts), starting at a random point of the period, each gap jittered by ±5%.
  const beating = new Set<string>();
  const beatTimers = new Map<string, ReturnType<typeof setTimeout>>();
  let beatErrors = 0;
  const beatOnce = async (id: string) => {
    const url = `${base(MEMBER_CLUSTER_ANNOUNCE)}/${announceName(id)}`;
    try {
      const mca = await fleet<{ metadata: { annotations?: Record<string, string> } }>(tokenOf(id), 'GET', url);
      const stamp = touchNow();
      mca.metadata.annotations = { ...mca.metadata.annotations, 'touch-ts': stamp };
      await fleet(tokenOf(id), 'PUT', url, mca);
      recordBeat(id, stamp);
    } catch {
      // A beat lost to a conflict with the leader's finalizer write: the next one comes in one period.
      beatErrors += 1;
    }
  };
  const startBeating = (id: string, firstInMs = Math.random() * PERIOD_MS) => {
    beating.add(id);
    const next = (inMs: number) => {
      beatTimers.set(id, setTimeout(() => {
        if (!beating.has(id)) return;
        void beatOnce(id).finally(() => { if (beating.has(id)) next(PERIOD_MS * (0.95 + Math.random() * 0.1)); });
      }, inMs));
    };
    next(firstInMs);
  };
  const stopBeating = (id: string) => {
    beating.delete(id);
    clearTimeout(beatTimers.get(id));
  };

  // The leader ClusterSet's status, as a member's user reads it: every Disconnected verdict is
  // judged against the member's own record of its beats.
  const shownReady = new Map<string, boolean>();
  const judged = new Set<string>();
  const falseDisconnected: string[] = [];
  const disconnectedSeenAt = new Map<string, number>();
  const readySeenAt = new Map<string, number>();
  let statusEvents = 0;
  await watchAll(admin, LEADER_NS, CLUSTERSET.plural, (phase, obj) => {
    const cs = obj as ClusterSet;
    if (phase === 'DELETED' || cs.metadata?.name !== CLUSTERSET_ID) return;
    statusEvents += 1;
    const seen = Date.now();
    const listed = new Set<string>();
    for (const s of cs.status?.clusterStatuses ?? []) {
      const id = s.clusterID ?? '';
      listed.add(id);
      const c = s.conditions?.[0];
      const ready = c?.status === 'True';
      shownReady.set(id, ready);
      if (ready) { if (!readySeenAt.has(id)) readySeenAt.set(id, seen); continue; }
      if (!disconnectedSeenAt.has(id)) disconnectedSeenAt.set(id, seen);
      // A verdict is false when, at its transition time (whole seconds, so up to 1 s later in
      // truth), the member's last beat was less than the timeout old.
      const at = Date.parse(c?.lastTransitionTime ?? '');
      const key = `${id} ${c?.lastTransitionTime ?? ''}`;
      if (judged.has(key) || Number.isNaN(at)) continue;
      judged.add(key);
      const last = (beatsOf.get(id) ?? []).filter((b) => b <= at).at(-1);
      if (last !== undefined && at - last < TIMEOUT_MS - 1000) falseDisconnected.push(`${id} at ${c?.lastTransitionTime ?? ''} (last beat ${new Date(last).toISOString()})`);
    }
    for (const id of [...shownReady.keys()]) if (!listed.has(id)) shownReady.delete(id);
  })();

  // The fleet: tokens, announces, beats.
  const ids = Array.from({ length: MEMBERS }, (_, i) => `m${String(i).padStart(4, '0')}`);
  const fleetStart = performance.now();
  await pool(ids, 4, makeMember);
  await pool(ids, 8, async (id) => { await announce(id); startBeating(id); });
  const fleetMs = performance.now() - fleetStart;

  // Every Service exported by two members: 4 exports per Service. The members that leave
  // during the churn export nothing (their exports would be collected under the churn's writes).
  const leavers = ids.slice(MEMBERS - LEAVES);
  const stayers = ids.slice(0, MEMBERS - LEAVES);
  const services = Array.from({ length: SERVICES }, (_, i) => `svc-${String(i)}`);
  const exportersOf = (i: number) => [stayers[i % stayers.length] ?? '', stayers[(i + 1) % stayers.length] ?? ''];
  const ipOf = (i: number, k: number) => `10.${String(k + 1)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
  beginPhase('populate');
  const populateStart = performance.now();
  await pool(services.flatMap((s, i) => exportersOf(i).map((id, k) => ({ s, i, id, k }))), 16, async ({ s, i, id, k }) => {
    await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), serviceExport(id, s));
    await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), endpointsExport(id, s, ipOf(i, k)));
  });
  const watcher = importWatcher(admin, LEADER_NS);
  await watcher.start();
  await waitFor(`${String(2 * SERVICES)} imports`, async () => {
    const list = (await admin.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ ...ref(RESOURCE_IMPORT) })) as { items: ResourceImport[] };
    return list.items.filter((ri) => ri.spec?.kind === 'ServiceImport' || ipsOf(ri).length === 2).length === 2 * SERVICES;
  }, { timeoutMs: 30 * 60_000, intervalMs: 2000 });
  const populateMs = performance.now() - populateStart;
  const rssPopulated = rssKb(leaderPid());

  // At rest: the fleet beats, nothing else changes.
  await waitForQuietMachine(0.5, 30_000);
  beginPhase('rest');
  await delay(REST_MS);
  endPhase();
  const rssRest = rssKb(leaderPid());

  // Baseline: the same pipeline by a minimal client (export event -> import write), in another namespace.
  const floorApi = admin.makeApiClient(CustomObjectsApi);
  const floorWatcher = importWatcher(admin, FLOOR_NS);
  await floorWatcher.start();
  const floorServices = services.slice(0, 100);
  for (const s of floorServices) {
    await floorApi.createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), body: endpointsExport('m0000', s, '10.0.0.1', FLOOR_NS) });
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
    /** Of each latency, the member's own write (GET + PUT): the rest is the pipeline's. */
    const sends: number[] = [];
    const lost: string[] = [];
    await pool(Array.from({ length: count }, (_, n) => n), WIDTH, async (n) => {
      const { name, ip, send } = write(n);
      const arrived = watch.expect(name, ip).then(() => true);
      const t0 = performance.now();
      try {
        await send();
        sends.push(performance.now() - t0);
      } catch (err) {
        lost.push(`${name} ${ip}: write failed: ${String(err)}`);
        return;
      }
      if (await Promise.race([arrived, delay(30_000).then(() => false)])) latencies.push(performance.now() - t0);
      else lost.push(`${name} ${ip}: not in the import within 30 s`);
    });
    if (lost.length > 0) console.log(`  (${String(lost.length)} of ${String(count)} updates lost, first: ${lost.slice(0, 3).join('; ')})`);
    return { latencies, sends, lost: lost.length };
  };
  beginPhase('baseline');
  const floor = (await churn(UPDATES, (n) => {
    const s = floorServices[n % floorServices.length] ?? '';
    const ip = `10.200.${String(Math.floor(n / 250))}.${String((n % 250) + 1)}`;
    return { name: `bench-${s}-endpoints`, ip, send: async () => {
      const current = (await floorApi.getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), name: `m0000-bench-${s}-endpoints` })) as ResourceExport;
      await floorApi.replaceNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), name: `m0000-bench-${s}-endpoints`, body: { ...current, spec: { ...current.spec, endpoints: endpointsExport('m0000', s, ip).spec?.endpoints } } });
    } };
  }, floorWatcher)).latencies;
  endPhase();
  await waitForQuietMachine(0.5, 30_000);

  // Churn through the leader: one member's Endpoints export of one Service gets a new address.
  // Meanwhile members join and leave.
  const writesBefore = await leaderWrites();
  beginPhase('churn');
  rssPeak = 0;
  const joiners = Array.from({ length: JOINS }, (_, i) => `j${String(i).padStart(4, '0')}`);
  const joinedAt = new Map<string, number>();
  const joining = pool(joiners, 2, async (id) => {
    await delay(Math.random() * PERIOD_MS);
    await makeMember(id);
    joinedAt.set(id, Date.now());
    await announce(id);
    startBeating(id, PERIOD_MS * (0.95 + Math.random() * 0.1));
    await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), serviceExport(id, `join-${id}`));
    await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), endpointsExport(id, `join-${id}`, '10.250.0.1'));
  });
  // A leaver stops beating (spread over one period); once the leader shows it Disconnected it
  // leaves as `clusterset-agent leave` does (its announce deleted) and must vanish from the status.
  const stoppedAt = new Map<string, number>();
  const removedAfter: number[] = [];
  let leaveProblems = 0;
  const leaving = pool(leavers, leavers.length || 1, async (id) => {
    await delay(Math.random() * PERIOD_MS);
    stopBeating(id);
    stoppedAt.set(id, Date.now());
    await waitFor(`${id} shown Disconnected`, () => disconnectedSeenAt.has(id) && shownReady.get(id) === false, { timeoutMs: TIMEOUT_MS + 3 * PERIOD_MS + 60_000, intervalMs: 200 })
      .catch(() => { leaveProblems += 1; });
    const left = Date.now();
    try {
      await fleet(tokenOf(id), 'DELETE', `${base(MEMBER_CLUSTER_ANNOUNCE)}/${announceName(id)}`);
      await waitFor(`${id} gone from the status`, () => !shownReady.has(id), { timeoutMs: 120_000, intervalMs: 200 });
      removedAfter.push(Date.now() - left);
    } catch {
      leaveProblems += 1;
    }
  });
  const churnable = services.map((_, i) => i);
  const leaderChurn = await churn(UPDATES, (n) => {
    const i = churnable[(n * 7919) % churnable.length] ?? 0;
    const s = services[i] ?? '';
    const k = n % 2;
    const id = exportersOf(i)[k] ?? '';
    const ip = `10.${String(100 + k)}.${String(Math.floor(n / 250))}.${String((n % 250) + 1)}`;
    return { name: `bench-${s}-endpoints`, ip, send: async () => {
      const name = `${base(RESOURCE_EXPORT)}/${id}-bench-${s}-endpoints`;
      for (let attempt = 1; ; attempt++) {
        const current = await fleet<ResourceExport>(tokenOf(id), 'GET', name);
        try {
          await fleet(tokenOf(id), 'PUT', name, { ...current, spec: { ...current.spec, endpoints: endpointsExport(id, s, ip).spec?.endpoints } });
          return;
        } catch (err) {
          if (attempt >= 5) throw err;
        }
      }
    } };
  }, watcher);
  const leaderLatency = leaderChurn.latencies;
  await delay(2000);
  const churnWrites = (await leaderWrites()) - writesBefore;
  const churnDoneMs = Date.now();
  await Promise.all([joining, leaving]);
  // Joiners shown Ready: from the join (token made) to the leader's status saying so.
  await waitFor('every joiner shown Ready', () => joiners.every((id) => shownReady.get(id) === true), { timeoutMs: 120_000, intervalMs: 200 }).catch(() => undefined);
  endPhase();
  const churnCpuWindowMs = churnDoneMs - (phases.find((p) => p.name === 'churn')?.startMs ?? churnDoneMs);
  const rssChurnPeak = rssPeak;
  const rssAfterChurn = rssKb(leaderPid());

  // Restart in the middle of the run, the fleet beating throughout: what it writes and how long
  // until it caught up (every object seen at start reconciled once).
  beginPhase('restart');
  await stopLeaderProcess();
  const restartAt = Date.now();
  const readyMs = await startLeaderProcess('restart');
  const caughtUp = await waitFor('leader caught up after the restart', () => {
    const line = readFileSync(logFile, 'utf8').split('\n').find((l) => l.includes('leader caught up'));
    return line === undefined ? undefined : (JSON.parse(line) as { afterMs: number; imports: number; exports: number });
  }, { timeoutMs: 10 * 60_000, intervalMs: 100 });
  // The phase's CPU is the new process's, from its start.
  const restartPhase = phases.at(-1);
  if (restartPhase) restartPhase.cpuStart = 0;
  beginPhase('after-restart');
  rssPeak = 0;
  await delay(AFTER_RESTART_MS);
  endPhase();
  const rssRestarted = rssKb(leaderPid());
  const liveAtEnd = [...beating].filter((id) => shownReady.get(id) !== true);

  const stopped = [...stoppedAt.keys()];
  const lastBeatOf = (id: string) => (beatsOf.get(id) ?? []).at(-1) ?? NaN;
  const disconnectLag = stopped.filter((id) => disconnectedSeenAt.has(id)).map((id) => (disconnectedSeenAt.get(id) ?? NaN) - lastBeatOf(id));
  const joinReady = joiners.filter((id) => readySeenAt.has(id)).map((id) => (readySeenAt.get(id) ?? NaN) - (joinedAt.get(id) ?? NaN));
  for (const id of [...beating]) stopBeating(id);

  const leaderUser = `system:serviceaccount:${RELEASE_NS}:${LEADER_SA}`;
  const writes = await auditWrites(leader.auditLogPath ?? '', phases, leaderUser);
  const duration = (p: Phase) => (Math.min(p.endMs, Date.now()) - p.startMs) / 1000;
  const phase = (name: string) => phases.find((p) => p.name === name) ?? (() => { throw new Error(`no phase ${name}`); })();
  const perMinute = (p: Phase, windowS = duration(p)) => ((p.cpuEnd - p.cpuStart) / windowS) * 60;
  const rate = (p: Phase, who: string) => [...(writes.get(p.name) ?? [])].filter(([k]) => k.startsWith(`${who} `))
    .sort(([, a], [, b]) => b - a).map(([k, v]) => `${k.slice(who.length + 1)} ${(v / duration(p)).toFixed(2)}/s`).join(', ') || 'none';
  const count = (p: Phase, key: string) => (writes.get(p.name) ?? new Map<string, number>()).get(key) ?? 0;
  const restartWrites = [...(writes.get('restart') ?? [])].filter(([k]) => k.startsWith('leader ')).reduce((a, [, v]) => a + v, 0)
    + [...(writes.get('after-restart') ?? [])].filter(([k]) => k.startsWith('leader ')).reduce((a, [, v]) => a + v, 0);
  const p = (v: number[], q: number) => percentile(v, q);
  // The gaps between each member's successful beats: when the API server cannot take the fleet's
  // beats (200 requests a second at 1,000 members), members beat late and the liveness figures
  // measure the machine, not the leader.
  const beatGaps = [...beatsOf.values()].flatMap((list) => list.slice(1).map((b, i) => b - (list[i] ?? b)));
  const lag = (ph: Phase) => ph.lagP99.length === 0 ? 'no sample' : `p99 ${ms(p(ph.lagP99, 50))} median of 5-s windows, ${ms(Math.max(...ph.lagP99))} worst window; max ${ms(Math.max(...ph.lagMax))}`;
  const statusPerMin = (ph: Phase) => (count(ph, 'leader update clustersets/status') / duration(ph)) * 60;
  const rest = phase('rest');
  const churnPhase = phase('churn');
  const after = phase('after-restart');

  console.log(`\nleader run at fleet size, compiled build (NODE_OPTIONS=${IMAGE_NODE_OPTIONS}), chart admission policies installed`);
  console.log(`  ${String(MEMBERS)} members (own tokens, simulated), each beating every ${sec(PERIOD_MS)} ±5% (GET + PUT, spread over the period): made and announced in ${sec(fleetMs)}; ${String(beatErrors)} beats lost to errors`);
  console.log(`  beat gaps (touch-ts to touch-ts, last 20 beats of each member): p50 ${sec(p(beatGaps, 50))}, p99 ${sec(p(beatGaps, 99))}, max ${sec(Math.max(...beatGaps))}${p(beatGaps, 99) > TIMEOUT_MS ? ': the API server did not keep up with the fleet\'s beats, the liveness figures are the machine\'s' : ''}`);
  console.log(`  ${String(SERVICES)} Services x 2 exporters = ${String(4 * SERVICES)} exports -> ${String(2 * SERVICES)} imports in ${sec(populateMs)}`);
  console.log(`  churn: ${String(UPDATES)} endpoint updates, ${String(WIDTH)} in flight; ${String(JOINS)} members joined, ${String(LEAVES)} stopped beating and left`);
  console.log(`  export -> import through the leader: p50 ${ms(p(leaderLatency, 50))}, p99 ${ms(p(leaderLatency, 99))}, max ${ms(Math.max(...leaderLatency))}${leaderChurn.lost > 0 ? ` (${String(leaderChurn.lost)} lost)` : ''}; of which the member's own write (GET + PUT, sharing the fleet's connections): p50 ${ms(p(leaderChurn.sends, 50))}, p99 ${ms(p(leaderChurn.sends, 99))}`);
  console.log(`  baseline (minimal client, same pipeline): p50 ${ms(p(floor, 50))}, p99 ${ms(p(floor, 99))}; ratio p50 ${(p(leaderLatency, 50) / p(floor, 50)).toFixed(2)}, p99 ${(p(leaderLatency, 99) / p(floor, 99)).toFixed(2)}`);
  console.log(`  false Disconnected (beat within the timeout, shown not Ready): ${String(falseDisconnected.length)}${falseDisconnected.length > 0 ? ` (first: ${falseDisconnected.slice(0, 3).join('; ')})` : ''}; ${String(statusEvents)} ClusterSet events watched; beating members not Ready at the end: ${String(liveAtEnd.length)}`);
  console.log(`  liveness: last beat -> Disconnected shown (timeout ${sec(TIMEOUT_MS)}): p50 ${sec(p(disconnectLag, 50))}, p99 ${sec(p(disconnectLag, 99))}, max ${sec(Math.max(...disconnectLag))} (${String(disconnectLag.length)} of ${String(stopped.length)}); left -> gone from the status p99 ${sec(p(removedAfter, 99))}; join -> Ready shown p99 ${sec(p(joinReady, 99))} (${String(joinReady.length)} of ${String(JOINS)})${leaveProblems > 0 ? `; ${String(leaveProblems)} leave steps timed out` : ''}`);
  console.log(`  leader RSS: ${mib(rssPopulated)} populated, ${mib(rssRest)} after the rest, ${mib(rssChurnPeak)} peak in churn, ${mib(rssAfterChurn)} after; ${mib(rssRestarted)} after the restart`);
  // Per minute, and in all: a churn that takes longer on a busier machine lowers the rate, not the work.
  const cpu = (ph: Phase) => `${(ph.cpuEnd - ph.cpuStart).toFixed(1)} s CPU`;
  console.log(`  leader CPU: ${perMinute(rest).toFixed(2)} s/min at rest (${cpu(rest)} in ${duration(rest).toFixed(0)} s), ${perMinute(churnPhase).toFixed(2)} s/min in churn (${cpu(churnPhase)} in ${duration(churnPhase).toFixed(0)} s: the endpoint changes took ${(churnCpuWindowMs / 1000).toFixed(0)} s, joins and leaves went on until the last member left), ${perMinute(after).toFixed(2)} s/min after the restart`);
  console.log(`  leader event-loop lag: at rest ${lag(rest)}; in churn ${lag(churnPhase)}; after the restart ${lag(after)}`);
  for (const ph of [rest, churnPhase, after]) {
    console.log(`  writes/s, ${ph.name} (${duration(ph).toFixed(0)} s): leader ${rate(ph, 'leader')}; members ${rate(ph, 'members')}`);
  }
  console.log(`  leader ClusterSet status writes per minute: ${statusPerMin(rest).toFixed(1)} at rest, ${statusPerMin(churnPhase).toFixed(1)} in churn, ${statusPerMin(after).toFixed(1)} after the restart`);
  console.log(`  leader writes in churn (its metric): ${String(churnWrites)} for ${String(UPDATES)} effective changes = ${(churnWrites / UPDATES).toFixed(3)} per change (joins, leaves and status included)`);
  console.log(`  restart: ready (caches synced) after ${ms(readyMs)}, caught up after ${ms(caughtUp.afterMs)} more (${String(caughtUp.exports)} exports, ${String(caughtUp.imports)} imports); leader writes from the restart to ${((Date.now() - restartAt) / 1000).toFixed(0)} s after: ${String(restartWrites)} (${rate(phase('restart'), 'leader')} during the restart)`);
  const goals: [string, boolean][] = [
    ['p99 export→import ≤ 1 s', p(leaderLatency, 99) <= 1000],
    ['0 false Disconnected', falseDisconnected.length === 0],
    ['Disconnected within timeout + one period (p99)', p(disconnectLag, 99) <= TIMEOUT_MS + PERIOD_MS],
    ['leader RSS ≤ 300 MiB', Math.max(rssPopulated, rssChurnPeak, rssRestarted) <= 300 * 1024],
    ['event-loop lag p99 ≤ 50 ms (worst window)', Math.max(...rest.lagP99, ...churnPhase.lagP99, ...after.lagP99) <= 50],
    ['ClusterSet status writes ≤ 1 per second', Math.max(statusPerMin(rest), statusPerMin(churnPhase), statusPerMin(after)) <= 60],
    ['restart ready ≤ 10 s with 0 writes', readyMs <= 10_000 && restartWrites === 0],
  ];
  console.log(`  issue 31 goals: ${goals.map(([g, ok]) => `${g}: ${ok ? 'met' : 'MISSED'}`).join('; ')}`);
} catch (err) {
  // The finally block ends the process with process.exit(), which would swallow this error and
  // exit 0 without a figure: say what failed and exit non-zero.
  console.error(`bench:leader failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  tearingDown.now = true;
  clearInterval(sampler);
  clearInterval(lagSampler);
  await stopLeaderProcess();
  await leader.stop();
  // The watches' sockets would keep the process alive.
  process.exit(process.exitCode ?? 0);
}
