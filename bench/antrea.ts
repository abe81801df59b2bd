// Side by side with the REAL Antrea v2.7 multicluster controller (built by test/antrea-bins),
// on the same machine in the same run, against our COMPILED build (bin/clusterset-agent.js):
//
//   npm run bench:antrea -- --mode member [--n 2000] [--rounds 2] [--rest 60]
//   npm run bench:antrea -- --mode leader [--members 200] [--services 500] [--updates 300] [--width 8]
//     [--period 10] [--joins N] [--leaves N] [--rest 60] [--after-restart 60] [--rounds 1]
//
// member: our agent and Antrea's member import the same N ResourceImports (N/2 ServiceImport +
//   N/2 Endpoints -> 1.5 N member objects, 2 N for ours with the EndpointSlices) from one leader, each into a FRESH member control plane
//   (its own CRDs installed, nothing else), one at a time, the order alternating per round. From
//   the apiservers' audit logs: ClusterSet created -> first and last object created, requests to
//   the member and to the leader during the sync and at rest (a window after it); RSS.
// leader: the simulated fleet of bench:leader (bench/fleet.ts: members with their own tokens
//   beating as Antrea's members do, two exporters per Service, endpoint churn with members
//   joining and leaving, a restart) against our `leader run` and against Antrea's leader, each on
//   a fresh leader control plane with its own manifests and admission (our chart's policies,
//   Antrea's webhooks) and its own members' tokens (ours from `leader create-member-token`,
//   Antrea's as `antctl mc create membertoken` makes them), the order alternating per round.
// Prints figures and ratios ours / Antrea ("n/a" where Antrea has no such figure); asserts
// nothing; exits 1 with the error when a run fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, fstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AuditEvent } from '../test/harness/agent-process.js';
import { ANTREA_MEMBER_NS, antreaBins, installAntreaMember, startAntreaController } from '../test/harness/antrea.js';
import { AGENT_NS, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, writeLeaderSecret } from '../test/harness/clusterset.js';
import { startControlPlane } from '../test/harness/control-plane.js';
import { endpointsRI, leaderImports, serviceImportRI } from '../test/harness/imports.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, pool, rssKb, runBench, waitForQuietMachine } from './common.js';
import { fleetOptions, runFleet, tearingDown } from './fleet.js';
import { antreaLeader, ourLeader } from './fleet-leaders.js';
import { printFleet, summarize, type FleetSummary } from './fleet-report.js';

const { values } = parseArgs({ options: {
  mode: { type: 'string', default: 'member' },
  n: { type: 'string', default: '2000' },
  rounds: { type: 'string', default: '' },
  rest: { type: 'string', default: '' },
  // --mode leader: the simulated fleet's (bench/fleet.ts).
  members: { type: 'string', default: '200' }, services: { type: 'string', default: '500' },
  updates: { type: 'string', default: '300' }, width: { type: 'string', default: '8' },
  period: { type: 'string', default: '10' }, joins: { type: 'string' }, leaves: { type: 'string' },
  'after-restart': { type: 'string', default: '60' },
} });
const MODE = values.mode;
if (MODE !== 'member' && MODE !== 'leader') throw new Error(`--mode must be member or leader, not ${MODE}`);
const NS = 'bench';
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const ratio = (ours: number, theirs: number) => (theirs === 0 ? (ours === 0 ? '1.00' : 'inf') : (ours / theirs).toFixed(2));
const median = (xs: readonly number[]) => { const s = [...xs].sort((a, b) => a - b); const m = (s.length - 1) / 2; return ((s[Math.floor(m)] ?? NaN) + (s[Math.ceil(m)] ?? NaN)) / 2; };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CONTROLLER_USER = (ns: string) => `system:serviceaccount:${ns}:antrea-mc-controller`;


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
  const ROUNDS = Number(values.rounds || '2');
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
  console.log(`\nmember: import of ${String(Number(values.n))} ResourceImports (${String(objectsOf('ours'))} member objects ours, ${String(objectsOf('antrea'))} Antrea's), median of ${String(ROUNDS)} rounds each, alternating order`);
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
async function benchLeader(): Promise<void> {
  const o = fleetOptions('bench:antrea --mode leader', { ...values, rest: values.rest || '60' }, false);
  const ROUNDS = Number(values.rounds || '1');
  const results: { kind: 'ours' | 'antrea'; s: FleetSummary }[] = [];
  const runOne = async (kind: 'ours' | 'antrea') => {
    // A fresh leader control plane for each run; the fleet, its exports and its churn the same.
    const cp = await startControlPlane(`bench-${kind}-leader`, { auditLog: true, startTimeoutSeconds: 180 });
    try {
      const leader = kind === 'ours' ? await ourLeader(cp, cp.dir) : await antreaLeader(cp);
      const f = await runFleet(cp, leader, o);
      console.log(`\n${kind === 'ours' ? 'ours (leader run, compiled build)' : 'Antrea v2.7 leader (antrea-mc-controller)'}:`);
      printFleet(f);
      results.push({ kind, s: summarize(f) });
    } finally {
      await cp.stop();
    }
  };
  for (let round = 1; round <= ROUNDS; round++) {
    const order: ('ours' | 'antrea')[] = round % 2 === 1 ? ['ours', 'antrea'] : ['antrea', 'ours'];
    for (const kind of order) await runOne(kind);
  }
  const of = (kind: 'ours' | 'antrea', key: keyof FleetSummary) => median(results.filter((r) => r.kind === kind).map((r) => r.s[key]));
  const row = (label: string, key: keyof FleetSummary, fmt: (v: number) => string, note = '') => {
    const [ours, theirs] = [of('ours', key), of('antrea', key)];
    const r = Number.isNaN(ours) || Number.isNaN(theirs) ? 'n/a' : ratio(ours, theirs);
    console.log(`  ${label.padEnd(50)} ours ${fmt(ours).padStart(10)}   Antrea ${(Number.isNaN(theirs) ? 'n/a' : fmt(theirs)).padStart(10)}   ratio ${r.padStart(5)}${note === '' ? '' : `   (${note})`}`);
  };
  const msf = (v: number) => `${v.toFixed(0)} ms`;
  const perMin = (v: number) => `${v.toFixed(2)}/min`;
  console.log(`\nleader, the same simulated fleet on each (bench/fleet.ts): ${String(o.members)} members beating every ${String(o.periodMs / 1000)} s, ` +
    `${String(4 * o.services)} exports, ${String(o.updates)} endpoint changes ${String(o.width)} in flight, ${String(o.joins)} joining and ${String(o.leaves)} leaving, a restart; ` +
    `${ROUNDS === 1 ? 'one run each' : `median of ${String(ROUNDS)} runs each, the order alternating`}; ratio = ours / Antrea`);
  row('populate: every export written -> every import', 'populateMs', secs);
  row('export -> import under churn, p50', 'exportImportP50', msf);
  row('export -> import under churn, p99', 'exportImportP99', msf);
  row('updates lost (not imported within 30 s)', 'lost', String);
  row('false Disconnected', 'falseDisconnected', String);
  row('liveness: last beat -> Disconnected shown, p99', 'livenessP99', secs, 'Antrea: judged every 10 s, its status written every 30 s');
  row('left (announce deleted) -> gone from the status, p99', 'goneP99', secs);
  row('join -> shown Ready, p99', 'joinReadyP99', secs);
  row('RSS after the rest', 'rssRest', mib);
  row('RSS peak (populated, churn, after the restart)', 'rssPeak', mib);
  row('CPU at rest', 'cpuRest', (v) => `${v.toFixed(2)} s/min`);
  row('CPU under churn', 'cpuChurn', (v) => `${v.toFixed(2)} s/min`);
  row('CPU after the restart', 'cpuAfter', (v) => `${v.toFixed(2)} s/min`);
  row('event-loop lag p99, worst 5-s window', 'lagP99Worst', msf, 'n/a for Antrea: a Go process has no single event loop to stall');
  row('ResourceImport writes (spec + status) per change', 'importWritesPerChange', (v) => v.toFixed(3));
  row('all leader writes in the churn per change', 'leaderWritesPerChange', (v) => v.toFixed(3), 'joins, leaves and status writes included');
  row('ClusterSet status writes at rest', 'statusRest', perMin);
  row('ClusterSet status writes under churn', 'statusChurn', perMin);
  row('ClusterSet status writes after the restart', 'statusAfter', perMin);
  row('ClusterSet status writes over the three phases', 'statusRun', perMin, 'ours: at once after a quiet spell, a burst in a few writes (status-coalescing.ts); Antrea: every 30 s');
  row('restart: start -> ready', 'restartReadyMs', secs, 'Antrea: to /readyz (a ping, answered before its caches sync) and its webhooks carrying its CA');
  row('restart: process spawned -> answering probes (a ping)', 'restartSpawnToPingMs', secs, 'like for like: ours /healthz, Antrea /readyz (controller-runtime\'s healthz.Ping)');
  row('restart: process spawned -> ready', 'restartSpawnToReadyMs', secs, 'ours: /readyz, caches synced; Antrea: /readyz and its webhooks carrying its CA');
  row('restart: start -> every controller working on synced caches', 'restartWorkersMs', secs, 'ours: when its /readyz turns 200; Antrea: its last "Starting workers" log line');
  row(`restart: leader writes in it and the ${String(o.afterRestartMs / 1000)} s after`, 'restartWrites', String);
  row('members\' beats lost to errors (the whole run)', 'beatErrors', String);
  row('members\' beat gaps p99', 'beatGapP99', secs);
}

await runBench(`bench:antrea --mode ${MODE}`, async () => {
  buildDist();
  antreaBins();
  if (MODE === 'member') await benchMember();
  else await benchLeader();
}, () => { tearingDown.now = true; return Promise.resolve(); });
