// Side by side with the REAL Antrea v2.7 multicluster controller (built by test/antrea-bins),
// on the same machine in the same run, against our COMPILED build (bin/clusterset-agent.js):
//
//   npm run bench:antrea -- --mode member [--n 2000] [--rounds 2] [--rest 60]
//   npm run bench:antrea -- --mode leader [--services 250] [--changes 50] [--rest 30]
//
// member: our agent and Antrea's member import the same N ResourceImports (N/2 ServiceImport +
//   N/2 Endpoints -> 1.5 N member objects, 2 N for ours with the EndpointSlices) from one leader, each into a FRESH member control plane
//   (its own CRDs installed, nothing else), one at a time, the order alternating per round. From
//   the apiservers' audit logs: ClusterSet created -> first and last object created, requests to
//   the member and to the leader during the sync and at rest (a window after it); RSS.
// leader: our `leader run` and Antrea's leader, each on a fresh leader control plane with its own
//   manifests and admission, aggregating the same exports written by the same two members' tokens
//   (bodies from the member-side export rules both kinds share): initial aggregation, then
//   sequential single-export changes (write -> ResourceImport changed), the leader's writes per
//   change, RSS, and a restart (time to ready, writes and requests in the window after it).
// Prints figures and ratios ours / Antrea; asserts nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, writeFileSync, fstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import {
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ResourceExport,
  type ResourceImport,
} from '../src/common/api/antrea.js';
import { serviceExportPlan } from '../src/exporter/service-export.js';
import type { AuditEvent } from '../test/harness/agent-process.js';
import {
  ANTREA_LEADER_NS, ANTREA_MEMBER_NS, antreaBins, createAntreaLeaderClusterSet, createAntreaMemberToken, installAntreaLeader, installAntreaMember,
  startAntreaController, type AntreaController,
} from '../test/harness/antrea.js';
import { AGENT_NS, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, writeLeaderSecret } from '../test/harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { endpointsRI, leaderImports, serviceImportRI } from '../test/harness/imports.js';
import { createNamespace, issueToken, kubectlApply, tokenConfig } from '../test/harness/kube.js';
import { CHART, helmTemplate } from '../test/harness/leader-admission.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, pool, rssKb, waitForQuietMachine } from './common.js';

const { values } = parseArgs({ options: {
  mode: { type: 'string', default: 'member' },
  n: { type: 'string', default: '2000' },
  rounds: { type: 'string', default: '2' },
  rest: { type: 'string', default: '' },
  services: { type: 'string', default: '250' },
  changes: { type: 'string', default: '50' },
} });
const MODE = values.mode;
if (MODE !== 'member' && MODE !== 'leader') throw new Error(`--mode must be member or leader, not ${MODE}`);
const NS = 'bench';
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const ratio = (ours: number, theirs: number) => (theirs === 0 ? (ours === 0 ? '1.00' : 'inf') : (ours / theirs).toFixed(2));
const median = (xs: readonly number[]) => { const s = [...xs].sort((a, b) => a - b); const m = (s.length - 1) / 2; return ((s[Math.floor(m)] ?? NaN) + (s[Math.ceil(m)] ?? NaN)) / 2; };
const percentile = (xs: readonly number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN; };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CONTROLLER_USER = (ns: string) => `system:serviceaccount:${ns}:antrea-mc-controller`;

buildDist();
antreaBins();

/**
 * Reads a JSON audit log incrementally: every call returns the requests logged since the last,
 * each once: a watch when it starts (ResponseStarted), anything else when it completes. A watch
 * is logged as complete only when it ends, 5 to 10 minutes later, so counting completions
 * missed every watch reopened inside an at-rest window.
 */
function auditTail(file: string | undefined): () => AuditEvent[] {
  if (file === undefined) throw new Error('control plane without an audit log');
  let offset = 0;
  let rest = '';
  return () => {
    let fd: number;
    try { fd = openSync(file, 'r'); } catch { return []; }
    try {
      const size = fstatSync(fd).size;
      if (size <= offset) return [];
      const buf = Buffer.alloc(size - offset);
      readSync(fd, buf, 0, buf.length, offset);
      offset = size;
      const lines = (rest + buf.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      return lines.filter(Boolean).map((l) => JSON.parse(l) as AuditEvent).filter((e) => e.stage === (e.verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete'));
    } finally {
      closeSync(fd);
    }
  };
}

/** A kubeconfig file reaching `cp` with `token`. */
function tokenKubeconfig(cp: ControlPlane, token: string, file: string): string {
  writeFileSync(file, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: cp.server, 'certificate-authority': cp.caFile } }],
    users: [{ name: 'u', user: { token } }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  return file;
}

/** Our compiled build as users run it (`run` or `leader run`), waiting until it logs its ports. */
async function spawnOurs(args: readonly string[], tag: string): Promise<{ child: ChildProcess; healthPort: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), `bench-antrea-${tag}-`));
  const out = path.join(dir, 'stdout.log');
  const fds = [openSync(out, 'w'), openSync(path.join(dir, 'stderr.log'), 'w')] as const;
  const child = spawn(process.execPath, [...IMAGE_NODE_ARGS, agentEntry, ...args, '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0', '--log-level', 'info'],
    { stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, NODE_OPTIONS: IMAGE_NODE_OPTIONS, CSA_IMPORT_MAX_OBJECTS_PER_LEADER: '100000' } });
  for (const fd of fds) closeSync(fd);
  process.on('exit', () => { child.kill('SIGKILL'); });
  let exited: number | null | undefined;
  child.on('exit', (code) => { exited = code; });
  const healthPort = await waitFor(`${tag} to listen`, () => {
    if (exited !== undefined) throw new Error(`${tag} exited (code ${String(exited)}); see ${dir}`);
    const m = /"healthPort":(\d+)/.exec(readFileSync(out, 'utf8'));
    return m ? Number(m[1]) : undefined;
  }, { timeoutMs: 60_000, intervalMs: 50 });
  return {
    child, healthPort,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/**
 * A watch that is started again whenever the server or the client ends it (a re-list re-sends
 * every object, so callers keep first-seen times); returns a stop function.
 */
async function keepWatching(cp: ControlPlane, url: string, onObject: (obj: ResourceImport) => void): Promise<() => void> {
  let stopped = false;
  let current: AbortController | undefined;
  const start = async (): Promise<void> => {
    current = await new Watch(cp.adminConfig()).watch(url, {}, (_type, obj: ResourceImport) => { onObject(obj); }, () => {
      if (!stopped) void start().catch(() => { if (!stopped) setTimeout(() => { void start(); }, 500); });
    });
  };
  await start();
  return () => { stopped = true; current?.abort(); };
}

// =============================================================================================
// member
// =============================================================================================
interface MemberFigures {
  kind: 'ours' | 'antrea';
  firstMs: number;
  lastMs: number;
  idleRssKb: number;
  syncedRssKb: number;
  settledRssKb: number;
  memberSync: number;
  leaderSync: number;
  memberRest: number;
  leaderRest: number;
}

async function benchMember(): Promise<void> {
  const N = Number(values.n);
  const HALF = Math.floor(N / 2);
  // Per imported Service: Antrea's member creates the Service, its Endpoints and the
  // ServiceImport; ours also the EndpointSlice (a bare apiserver has no controller mirroring
  // Endpoints into one). Counting ours to 3 per Service ended the wait with a quarter of the
  // sync still to come, which then counted as "at rest".
  const objectsOf = (kind: 'ours' | 'antrea') => HALF * (kind === 'ours' ? 4 : 3);
  const ROUNDS = Number(values.rounds);
  const REST_S = Number(values.rest || '60');
  const leader = await startControlPlane('bench-leader', { auditLog: true });
  const results: MemberFigures[] = [];
  try {
    await setupLeader(leader);
    const access = await createMemberAccess(leader, 'east');
    const memberUserOnLeader = `system:serviceaccount:${LEADER_NS}:${access.serviceAccount}`;
    const ri = leaderImports(leader.adminConfig());
    const names = Array.from({ length: HALF }, (_, i) => `svc-${String(i)}`);
    await pool(names, 16, async (name) => {
      await ri.create(serviceImportRI(NS, name, [{ name: 'http', port: 80 }]));
      await ri.create(endpointsRI(NS, name, ['10.1.0.1']));
    });
    const leaderAudit = auditTail(leader.auditLogPath);

    const runOne = async (kind: 'ours' | 'antrea'): Promise<MemberFigures> => {
      const cp = await startControlPlane(`bench-${kind}-member`, { auditLog: true });
      let stop: () => Promise<void> = () => Promise.resolve();
      try {
        let pid: number;
        let user: string;
        let csNamespace: string;
        await createNamespace(cp.adminConfig(), NS);
        if (kind === 'ours') {
          await installCrds(cp);
          await createNamespace(cp.adminConfig(), AGENT_NS);
          csNamespace = AGENT_NS;
          // Heartbeat every 10 s, Antrea's member's cadence (and our default).
          const agent = await spawnOurs(['run', '--kubeconfig', cp.kubeconfigPath, '--namespace', AGENT_NS, '--heartbeat-interval', '10'], 'member');
          pid = agent.child.pid ?? 0;
          user = 'test-admin';
          stop = () => agent.stop();
        } else {
          await installAntreaMember(cp);
          const controller = await startAntreaController(cp, 'member', { verbosity: 0 });
          csNamespace = ANTREA_MEMBER_NS;
          pid = controller.pid;
          user = CONTROLLER_USER(ANTREA_MEMBER_NS);
          stop = () => controller.stop();
        }
        await writeLeaderSecret(cp, 'leader-token', { caPem: leader.caPem, token: access.token }, csNamespace);
        const memberAudit = auditTail(cp.auditLogPath);
        const idleRssKb = rssKb(pid);
        await waitForQuietMachine();
        memberAudit();
        leaderAudit();
        const start = Date.now();
        await createClusterSet(cp, { clusterID: 'east', server: leader.server, secret: 'leader-token' }, csNamespace);
        const memberEvents: AuditEvent[] = [];
        const leaderEvents: AuditEvent[] = [];
        const creates = () => memberEvents.filter((e) => e.user.username === user && e.verb === 'create' && e.objectRef?.namespace === NS && (e.responseStatus?.code ?? 0) < 300);
        const OBJECTS = objectsOf(kind);
        await waitFor(`${kind}: ${String(OBJECTS)} objects created`, () => {
          memberEvents.push(...memberAudit());
          leaderEvents.push(...leaderAudit());
          return creates().length >= OBJECTS;
        }, { timeoutMs: 30 * 60_000, intervalMs: 250 });
        const done = creates();
        const lastAt = Math.max(...done.map((e) => Date.parse(e.stageTimestamp ?? e.requestReceivedTimestamp)));
        const firstAt = Math.min(...done.map((e) => Date.parse(e.requestReceivedTimestamp)));
        const inSync = (e: AuditEvent) => { const t = Date.parse(e.requestReceivedTimestamp); return t >= start && t <= lastAt; };
        const syncedRssKb = rssKb(pid);
        // At rest: a window starting 5 s after the last object, long enough for both kinds' periodic work.
        await pause(5_000);
        memberEvents.push(...memberAudit());
        leaderEvents.push(...leaderAudit());
        const restStart = Date.now();
        await pause(REST_S * 1000);
        const memberRestEvents = memberAudit().filter((e) => e.user.username === user && Date.parse(e.requestReceivedTimestamp) >= restStart);
        const leaderRestEvents = leaderAudit().filter((e) => e.user.username === memberUserOnLeader && Date.parse(e.requestReceivedTimestamp) >= restStart);
        const figures: MemberFigures = {
          kind, firstMs: firstAt - start, lastMs: lastAt - start, idleRssKb, syncedRssKb, settledRssKb: rssKb(pid),
          memberSync: memberEvents.filter((e) => e.user.username === user && inSync(e)).length,
          leaderSync: leaderEvents.filter((e) => e.user.username === memberUserOnLeader && inSync(e)).length,
          memberRest: memberRestEvents.length, leaderRest: leaderRestEvents.length,
        };
        const breakdown = (events: readonly AuditEvent[]) => {
          const counts = new Map<string, number>();
          for (const e of events) { const k = `${e.verb} ${e.objectRef?.resource ?? ''}${(e.objectRef as { subresource?: string } | undefined)?.subresource ? `/${String((e.objectRef as { subresource?: string }).subresource)}` : ''}`; counts.set(k, (counts.get(k) ?? 0) + 1); }
          return [...counts].map(([k, v]) => `${String(v)}× ${k}`).join(', ');
        };
        console.log(`${kind.padEnd(6)}: at rest, member: ${breakdown(memberRestEvents) || 'none'}; leader: ${breakdown(leaderRestEvents) || 'none'}`);
        console.log(`${kind.padEnd(6)}: first object ${secs(figures.firstMs)}, last ${secs(figures.lastMs)}; RSS ${mib(idleRssKb)} idle, ${mib(syncedRssKb)} synced, ${mib(figures.settledRssKb)} at rest; ` +
          `requests during the sync: member ${String(figures.memberSync)}, leader ${String(figures.leaderSync)}; at rest (${String(REST_S)} s): member ${String(figures.memberRest)}, leader ${String(figures.leaderRest)}`);
        return figures;
      } finally {
        await stop();
        await cp.stop();
      }
    };

    for (let round = 1; round <= ROUNDS; round++) {
      const order: ('ours' | 'antrea')[] = round % 2 === 1 ? ['ours', 'antrea'] : ['antrea', 'ours'];
      for (const kind of order) results.push(await runOne(kind));
    }
  } finally {
    await leader.stop();
  }
  const of = (kind: 'ours' | 'antrea', key: keyof Omit<MemberFigures, 'kind'>) => median(results.filter((r) => r.kind === kind).map((r) => r[key]));
  const row = (label: string, key: keyof Omit<MemberFigures, 'kind'>, fmt: (v: number) => string) => { console.log(`  ${label.padEnd(44)} ours ${fmt(of('ours', key)).padStart(10)}   Antrea ${fmt(of('antrea', key)).padStart(10)}   ratio ${ratio(of('ours', key), of('antrea', key))}`); };
  console.log(`\nmember: import of ${String(Number(values.n))} ResourceImports (${String(objectsOf('ours'))} member objects ours, ${String(objectsOf('antrea'))} Antrea's), median of ${String(Number(values.rounds))} rounds each, alternating order`);
  row('ClusterSet created -> first object', 'firstMs', secs);
  row('ClusterSet created -> last object', 'lastMs', secs);
  console.log(`    (first -> last: ours ${secs(of('ours', 'lastMs') - of('ours', 'firstMs'))}, Antrea ${secs(of('antrea', 'lastMs') - of('antrea', 'firstMs'))}, ratio ${ratio(of('ours', 'lastMs') - of('ours', 'firstMs'), of('antrea', 'lastMs') - of('antrea', 'firstMs'))})`);
  row('RSS idle', 'idleRssKb', mib);
  row('RSS right after the sync', 'syncedRssKb', mib);
  row('RSS at rest', 'settledRssKb', mib);
  row('member requests during the sync', 'memberSync', String);
  row('leader requests during the sync', 'leaderSync', String);
  row(`member requests at rest (${String(Number(values.rest || '60'))} s)`, 'memberRest', String);
  row(`leader requests at rest (${String(Number(values.rest || '60'))} s)`, 'leaderRest', String);
}

// =============================================================================================
// leader
// =============================================================================================
interface LeaderFigures {
  kind: 'ours' | 'antrea';
  aggregateMs: number;
  changeMs: number[];
  writesPerChange: number;
  rssKb: number;
  restartReadyMs: number;
  restartWrites: number;
  restartRequests: number;
}

const MEMBERS = ['east', 'west'] as const;

function exportsOf(clusterID: string, name: string, ip: string): ResourceExport[] {
  const plan = serviceExportPlan({
    localClusterID: clusterID, leaderNamespace: ANTREA_LEADER_NS, endpointIPType: 'PodIP',
    serviceExport: { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name, namespace: NS } },
    service: { metadata: { name, namespace: NS }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    endpointSlices: [{ metadata: { namespace: NS, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', endpoints: [{ addresses: [ip], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
  });
  return plan.exports;
}

async function benchLeader(): Promise<void> {
  const S = Number(values.services);
  const CHANGES = Number(values.changes);
  const REST_S = Number(values.rest || '30');
  const names = Array.from({ length: S }, (_, i) => `svc-${String(i)}`);
  const results: LeaderFigures[] = [];

  const runOne = async (kind: 'ours' | 'antrea'): Promise<LeaderFigures> => {
    const cp = await startControlPlane(`bench-${kind}-leader`, { auditLog: true });
    let leaderProc: { pid: number; ready(): Promise<boolean>; stop(): Promise<void> } | undefined;
    try {
      let leaderUser: string;
      let start: () => Promise<{ pid: number; ready(): Promise<boolean>; stop(): Promise<void> }>;
      const tokens: Record<string, string> = {};
      if (kind === 'ours') {
        await setupLeader(cp);
        await createNamespace(cp.adminConfig(), 'csa-leader');
        await kubectlApply(cp, await helmTemplate(['csa-leader', CHART, '--namespace', 'csa-leader', '--set', 'mode=leader', '--set', 'leader.createNamespace=false']));
        const kubeconfig = tokenKubeconfig(cp, await issueToken(cp.adminConfig(), 'csa-leader', 'csa-leader-clusterset-agent', 24 * 3600), path.join(cp.dir, 'leader.kubeconfig'));
        leaderUser = 'system:serviceaccount:csa-leader:csa-leader-clusterset-agent';
        start = async () => {
          const p = await spawnOurs(['leader', 'run', '--kubeconfig', kubeconfig, '--namespace', ANTREA_LEADER_NS], 'leader');
          return { pid: p.child.pid ?? 0, ready: () => fetch(`http://127.0.0.1:${String(p.healthPort)}/readyz`).then((r) => r.ok, () => false), stop: () => p.stop() };
        };
        for (const id of MEMBERS) tokens[id] = (await createMemberAccess(cp, id)).token;
      } else {
        await installAntreaLeader(cp);
        leaderUser = CONTROLLER_USER(ANTREA_LEADER_NS);
        start = async () => {
          const c: AntreaController = await startAntreaController(cp, 'leader', { verbosity: 0 });
          return { pid: c.pid, ready: () => fetch(`http://127.0.0.1:${String(c.healthPort)}/readyz`).then((r) => r.ok, () => false), stop: () => c.stop() };
        };
        for (const id of MEMBERS) tokens[id] = await createAntreaMemberToken(cp, id);
      }
      leaderProc = await start();
      if (kind === 'antrea') await createAntreaLeaderClusterSet(cp, CLUSTERSET_ID, 'leader');
      const memberApi = (id: string) => tokenConfig(cp, tokens[id] ?? '').makeApiClient(CustomObjectsApi);
      const ref = (d: { group: string; version: string; plural: string }) => ({ group: d.group, version: d.version, plural: d.plural, namespace: ANTREA_LEADER_NS });
      // Each member's first heartbeat (our policies admit exports only from announced members).
      for (const id of MEMBERS) {
        await waitFor(`${id} announced`, async () => {
          await memberApi(id).createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: {
            apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind,
            metadata: { name: `member-announce-from-${id}`, annotations: { 'touch-ts': new Date().toISOString() } },
            clusterID: id, clusterSetID: CLUSTERSET_ID, leaderClusterID: 'leader',
          } });
          return true;
        }, { timeoutMs: 30_000, intervalMs: 250 });
      }
      // The ResourceImports as they change, from a watch on the leader: when each IP was first seen.
      const seen = new Map<string, number>();
      const note = (key: string) => { if (!seen.has(key)) seen.set(key, performance.now()); };
      const stopWatch = await keepWatching(cp, `/apis/${RESOURCE_IMPORT.group}/${RESOURCE_IMPORT.version}/namespaces/${ANTREA_LEADER_NS}/${RESOURCE_IMPORT.plural}`,
        (obj: ResourceImport) => {
          for (const s of obj.spec?.endpoints?.subsets ?? []) for (const a of s.addresses ?? []) note(`${obj.metadata?.name ?? ''}/${a.ip}`);
          note(`${obj.metadata?.name ?? ''}/present`);
        });
      const audit = auditTail(cp.auditLogPath);
      await waitForQuietMachine();
      audit();

      // Initial aggregation: both members export every Service.
      const t0 = performance.now();
      await pool(names.flatMap((name) => MEMBERS.map((id) => ({ id, name }))), 16, async ({ id, name }) => {
        for (const re of exportsOf(id, name, `10.${id === 'east' ? '1' : '2'}.0.1`)) await memberApi(id).createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: re });
      });
      await waitFor('every import aggregated from both members', () =>
        names.every((name) => seen.has(`${NS}-${name}-endpoints/10.1.0.1`) && seen.has(`${NS}-${name}-endpoints/10.2.0.1`) && seen.has(`${NS}-${name}-service/present`)),
      { timeoutMs: 20 * 60_000, intervalMs: 100 });
      const aggregateMs = performance.now() - t0;
      await pause(5_000);
      audit();

      // Sequential changes: east's endpoints of one Service get a new IP.
      const changeMs: number[] = [];
      for (let i = 0; i < CHANGES; i++) {
        const name = names[i % names.length] ?? 'svc-0';
        const reName = `east-${NS}-${name}-endpoints`;
        const current = (await memberApi('east').getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: reName })) as ResourceExport;
        const ip = `10.3.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
        const desired = exportsOf('east', name, ip)[1] as ResourceExport;
        const sent = performance.now();
        await memberApi('east').replaceNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: reName, body: { ...current, spec: desired.spec } });
        const key = `${NS}-${name}-endpoints/${ip}`;
        await waitFor(`change ${String(i)}`, () => seen.has(key), { timeoutMs: 60_000, intervalMs: 1 });
        changeMs.push((seen.get(key) ?? sent) - sent);
      }
      await pause(5_000);
      const changeWrites = audit().filter((e) => e.user.username === leaderUser && ['create', 'update', 'patch', 'delete'].includes(e.verb)).length;
      const rss = rssKb(leaderProc.pid);

      // Restart: stop, start, then a window of REST_S seconds.
      await leaderProc.stop();
      audit();
      const r0 = performance.now();
      const restartedAt = Date.now();
      leaderProc = await start();
      await waitFor('ready after the restart', () => leaderProc?.ready(), { timeoutMs: 120_000, intervalMs: 50 });
      const restartReadyMs = performance.now() - r0;
      await pause(REST_S * 1000);
      const after = audit().filter((e) => e.user.username === leaderUser && Date.parse(e.requestReceivedTimestamp) >= restartedAt);
      stopWatch();
      const figures: LeaderFigures = {
        kind, aggregateMs, changeMs, writesPerChange: changeWrites / CHANGES, rssKb: rss, restartReadyMs,
        restartWrites: after.filter((e) => ['create', 'update', 'patch', 'delete'].includes(e.verb)).length, restartRequests: after.length,
      };
      console.log(`${kind.padEnd(6)}: aggregation of ${String(S * 2 * 2)} exports ${secs(aggregateMs)}; change -> import p50 ${median(changeMs).toFixed(0)} ms, p99 ${percentile(changeMs, 99).toFixed(0)} ms; ` +
        `${figures.writesPerChange.toFixed(2)} writes per change; RSS ${mib(rss)}; restart: ready in ${secs(restartReadyMs)}, ${String(figures.restartWrites)} writes and ${String(figures.restartRequests)} requests in the ${String(REST_S)} s after`);
      return figures;
    } finally {
      await leaderProc?.stop();
      await cp.stop();
    }
  };

  for (const kind of ['ours', 'antrea', 'antrea', 'ours'].slice(0, Number(values.rounds) * 2) as ('ours' | 'antrea')[]) results.push(await runOne(kind));
  const of = (kind: 'ours' | 'antrea', pick: (f: LeaderFigures) => number) => median(results.filter((r) => r.kind === kind).map(pick));
  const row = (label: string, pick: (f: LeaderFigures) => number, fmt: (v: number) => string) => { console.log(`  ${label.padEnd(44)} ours ${fmt(of('ours', pick)).padStart(10)}   Antrea ${fmt(of('antrea', pick)).padStart(10)}   ratio ${ratio(of('ours', pick), of('antrea', pick))}`); };
  console.log(`\nleader: ${String(S)} Services exported by each of 2 members (${String(S * 4)} ResourceExports), ${String(CHANGES)} sequential changes, median of the runs`);
  row('initial aggregation (all imports complete)', (f) => f.aggregateMs, secs);
  row('export change -> import, p50', (f) => median(f.changeMs), (v) => `${v.toFixed(0)} ms`);
  row('export change -> import, p99', (f) => percentile(f.changeMs, 99), (v) => `${v.toFixed(0)} ms`);
  row('leader writes per change', (f) => f.writesPerChange, (v) => v.toFixed(2));
  row('RSS after the changes', (f) => f.rssKb, mib);
  row('restart: start -> ready', (f) => f.restartReadyMs, secs);
  row(`restart: writes in the ${String(REST_S)} s after`, (f) => f.restartWrites, String);
  row(`restart: requests in the ${String(REST_S)} s after`, (f) => f.restartRequests, String);
}

if (MODE === 'member') await benchMember();
else await benchLeader();
