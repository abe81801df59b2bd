// A simulated fleet of members against one leader (ours or Antrea's, bench/fleet-leaders.ts),
// shared by bench:leader and bench:antrea --mode leader so both measure the same work.
//
// Every member has its own token (the leader's own tooling's) and is a cheap simulated client
// (one shared keep-alive connection pool, its own bearer token), not an agent: it announces
// itself and then beats every `period` as Antrea's member does (GET, then PUT with a new
// `touch-ts` in whole seconds), each member's beats starting at a random point of the period
// and each gap jittered by ±5%, so the fleet's beats are spread over the period as real
// members' are. Every Service is exported by two members (a Service and an Endpoints export
// each: 4 x services exports), written with those members' tokens. The run, members beating
// throughout:
//   1. populate: every export written, every import made;
//   2. rest: `rest` of beats only;
//   3. baseline (optional): the same pipeline by a minimal client (below);
//   4. churn: `updates` endpoint changes (one member's Endpoints export gets a new address),
//      `width` at a time, the time from each write to the ResourceImport carrying it taken from
//      a watch; meanwhile `joins` members join (token, announce, one exported Service) and
//      `leaves` members stop beating and, once the leader shows them Disconnected, leave
//      (delete their announce);
//   5. restart of the leader with the members still beating, then `afterRestart`.
// The baseline is the best a minimal client can do for the export→import pipeline in the same
// run: a watcher in another namespace that, for each export event, writes the import straight
// away (one watch hop, one write, one watch hop, nothing else).
import { createReadStream } from 'node:fs';
import { Agent, request } from 'node:https';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { CustomObjectsApi, Watch, type KubeConfig, type V1ServicePort } from '@kubernetes/client-node';
import {
  CLUSTERSET,
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ClusterSet,
  type ResourceExport,
  type ResourceImport,
} from '../src/common/api/antrea.js';
import type { AuditEvent } from '../test/harness/agent-process.js';
import { CLUSTERSET_ID, LEADER_NS } from '../test/harness/clusterset.js';
import type { ControlPlane } from '../test/harness/control-plane.js';
import { createNamespace } from '../test/harness/kube.js';
import { endpointsExport as harnessEndpointsExport, HTTP_PORT, serviceExport as harnessServiceExport } from '../test/harness/resource-export.js';
import { waitFor } from '../test/harness/wait.js';
import { pool, rssKb, waitForQuietMachine } from './common.js';
import { cpuOf, type LeaderUnderTest } from './fleet-leaders.js';

export interface FleetOptions {
  readonly members: number;
  readonly services: number;
  readonly updates: number;
  readonly width: number;
  readonly periodMs: number;
  readonly joins: number;
  readonly leaves: number;
  readonly restMs: number;
  readonly afterRestartMs: number;
  /** The leader's member timeout (ours by default and Antrea's both 30 s). */
  readonly timeoutMs: number;
  /** Run the minimal client's pipeline in the same control plane. */
  readonly baseline: boolean;
  /** Restarts of the leader, one after another (each timed): more than one measures restart -> ready alone on a noisy machine. */
  readonly restarts: number;
}

/** The fleet's options from a bench's parsed arguments (strings); throws on a bad one. */
export function fleetOptions(bench: string, v: { members?: string; services?: string; updates?: string; width?: string; period?: string; joins?: string; leaves?: string; rest?: string; 'after-restart'?: string; restarts?: string }, baseline: boolean): FleetOptions {
  const members = Number(v.members);
  const o = {
    members, services: Number(v.services), updates: Number(v.updates), width: Number(v.width), periodMs: Number(v.period) * 1000,
    // 5% of the fleet joins and 5% leaves during the churn by default (issue 31: 50 of 1,000).
    joins: Number(v.joins ?? Math.ceil(members / 20)), leaves: Number(v.leaves ?? Math.ceil(members / 20)),
    restMs: Number(v.rest) * 1000, afterRestartMs: Number(v['after-restart']) * 1000, timeoutMs: 30_000, baseline,
    restarts: Number(v.restarts ?? 1),
  };
  for (const [name, value] of Object.entries(o)) {
    if (typeof value === 'number' && (!Number.isFinite(value) || value < 0)) throw new Error(`${bench}: ${name} must be a number >= 0, got ${String(value)}`);
  }
  if (o.leaves >= o.members) throw new Error(`${bench}: --leaves must be below --members`);
  if (o.width < 1) throw new Error(`${bench}: --width must be at least 1`);
  if (!Number.isInteger(o.restarts) || o.restarts < 1) throw new Error(`${bench}: --restarts must be a whole number >= 1`);
  return o;
}

export const FLOOR_NS = 'bench-floor';
const group = RESOURCE_EXPORT.group;
const ref = (d: { plural: string }, namespace = LEADER_NS) => ({ group, version: 'v1alpha1', plural: d.plural, namespace });

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Member `clusterID`'s Endpoints RE of Service bench/`service`, with ClusterIP `ip` (ClusterIP mode). */
export function endpointsExport(clusterID: string, service: string, ip: string, namespace = LEADER_NS): ResourceExport {
  return harnessEndpointsExport(clusterID, 'bench', service, { clusterIP: ip, leaderNamespace: namespace });
}

/** Member `clusterID`'s Service RE of Service bench/`service`. */
export function serviceExport(clusterID: string, service: string, ports: readonly V1ServicePort[] = [HTTP_PORT]): ResourceExport {
  return harnessServiceExport(clusterID, 'bench', service, { ports });
}

/** An announce as a member first writes it. */
export function announceOf(id: string, touchTs: string) {
  return {
    apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind,
    metadata: { name: `member-announce-from-${id}`, annotations: { 'touch-ts': touchTs } },
    clusterID: id, clusterSetID: CLUSTERSET_ID, leaderClusterID: 'leader',
  };
}

/** Set once a bench ends: watches are not reopened against a control plane being stopped. */
export const tearingDown = { now: false };

/** The IPs of an Endpoints import. */
function ipsOf(ri: ResourceImport): string[] {
  return (ri.spec?.endpoints?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
}

/**
 * Watches `plural` in `namespace` and hands every event to `onEvent`; a watch the apiserver ends
 * is opened again at once (its initial events bring the current state). Returns start and stop.
 */
function watchAll(kc: KubeConfig, namespace: string, plural: string, onEvent: (phase: string, obj: unknown) => void) {
  let stopped = false;
  let current: AbortController | undefined;
  const start = async (): Promise<void> => {
    if (tearingDown.now || stopped) return;
    current = await new Watch(kc).watch(`/apis/${group}/v1alpha1/namespaces/${namespace}/${plural}`, {}, (phase, obj) => { onEvent(phase, obj); }, () => {
      if (!tearingDown.now && !stopped) void start().catch(() => { setTimeout(() => { void start().catch(() => undefined); }, 500); });
    });
  };
  return { start, stop: () => { stopped = true; current?.abort(); } };
}

/** Watches imports in `namespace`, resolving waiters for an IP to appear in a named import. */
function importWatcher(kc: KubeConfig, namespace: string) {
  const waiters = new Map<string, () => void>();
  const latest = new Map<string, ResourceImport>();
  const watch = watchAll(kc, namespace, 'resourceimports', (phase, obj) => {
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
    ...watch,
    /** The last copy of import `name` the watch delivered. */
    latest: (name: string) => latest.get(name),
    /** A promise for `ip` to appear in import `name`; register before writing. */
    expect: (name: string, ip: string) => new Promise<void>((resolve) => { waiters.set(`${name} ${ip}`, resolve); }),
  };
}

/** A failed request of a simulated member: the HTTP status and the API's message. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string) { super(`HTTP ${String(status)}: ${message}`); }
}

/**
 * Simulated members' client: one keep-alive connection pool for the whole fleet, each request
 * with the member's own bearer token (admission and RBAC see the member's ServiceAccount). A
 * thousand KubeConfig clients would be a thousand pools and TLS handshakes: that is the bench's
 * cost, not the leader's.
 */
export function fleetClient(server: string, caPem: string) {
  const url = new URL(server);
  const agent = new Agent({ keepAlive: true, maxSockets: 128, ca: caPem });
  const send = async <T>(token: string, method: string, pathname: string, body?: unknown): Promise<T> => {
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
  return Object.assign(send, { close: () => { agent.destroy(); } });
}

/** One phase of the run: its wall-clock window, the leader's CPU seconds over it, event-loop lag samples. */
export interface Phase {
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

/** One restart of the leader: start -> ready, and from the process's spawn where the leader tells (LeaderUnderTest.lastStart). */
export interface RestartTimes {
  readonly label: string;
  readonly readyMs: number;
  readonly workersMs?: number;
  readonly spawnToPingMs?: number;
  readonly spawnToReadyMs?: number;
}

/** What one fleet run measured; bench/fleet-report.ts prints it. */
export interface FleetFigures {
  readonly kind: LeaderUnderTest['kind'];
  readonly options: FleetOptions;
  readonly fleetMs: number;
  readonly beatErrors: number;
  /** The gaps between each member's successful beats (last 20 of each). */
  readonly beatGaps: number[];
  readonly populateMs: number;
  readonly latencies: number[];
  /** Of each latency, the member's own write (GET + PUT). */
  readonly sends: number[];
  readonly lost: number;
  readonly floor: number[] | undefined;
  readonly falseDisconnected: string[];
  readonly statusEvents: number;
  readonly liveAtEnd: number;
  readonly disconnectLag: number[];
  readonly stopped: number;
  readonly removedAfter: number[];
  readonly joinReady: number[];
  readonly leaveProblems: number;
  readonly rss: { populated: number; rest: number; churnPeak: number; afterChurn: number; restarted: number };
  readonly phases: readonly Phase[];
  readonly writes: Map<string, Map<string, number>>;
  /** When the endpoint changes ended (joins and leaves may have gone on after). */
  readonly churnChangesMs: number;
  /** The leader's own count of its writes over the endpoint changes, where it has one. */
  readonly churnWritesMetric: number | undefined;
  /** The first restart's; every restart's (with the label of the leader started) in `restarts`. */
  readonly restartReadyMs: number;
  readonly restarts: readonly RestartTimes[];
  /** The first restart's: its start -> every controller working on synced caches (workersStarted). */
  readonly restartWorkersMs: number;
  readonly caughtUp: { afterMs: number; imports: number; exports: number } | undefined;
  readonly restartWindowMs: number;
  /**
   * From the leavers' first last beat to their last one. Wider than one period, their
   * Disconnected verdicts cannot all be shown in one status write within timeout + one period.
   */
  readonly leaversLastBeatSpanMs: number;
}

/**
 * Runs the fleet against `leader` on `cp` (a control plane with an audit log, the leader set up
 * on it but not started) and returns what it measured. Stops the leader process at the end
 * (the caller stops the control plane).
 */
export async function runFleet(cp: ControlPlane, leader: LeaderUnderTest, o: FleetOptions): Promise<FleetFigures> {
  const admin = cp.adminConfig();
  const phases: Phase[] = [];
  let current: Phase | undefined;
  const beginPhase = (name: string) => {
    endPhase();
    current = { name, startMs: Date.now(), endMs: Infinity, cpuStart: cpuOf(leader.pid()), cpuEnd: NaN, lagP99: [], lagMax: [] };
    phases.push(current);
  };
  function endPhase(): void {
    if (current === undefined) return;
    current.endMs = Date.now();
    current.cpuEnd = cpuOf(leader.pid());
    current = undefined;
  }
  // Sampled throughout: the leader's RSS, and its event-loop lag where it has one (prom-client's
  // monitorEventLoopDelay, whose histogram resets at every scrape: each sample is one 5 s window).
  let rssPeak = 0;
  const sampler = setInterval(() => {
    try { rssPeak = Math.max(rssPeak, rssKb(leader.pid())); } catch { /* the leader is restarting */ }
  }, 200);
  const lagSampler = setInterval(() => {
    const phase = current;
    void leader.lag?.().then((lag) => { if (phase !== undefined && lag !== undefined) { phase.lagP99.push(lag.p99); phase.lagMax.push(lag.max); } }, () => undefined);
  }, 5000);
  const fleet = fleetClient(cp.server, cp.caPem);
  const tokens = new Map<string, string>();
  const beating = new Set<string>();
  const beatTimers = new Map<string, ReturnType<typeof setTimeout>>();
  const watches: { stop(): void }[] = [];
  try {
    await leader.start('first');
    const tokenOf = (id: string) => tokens.get(id) ?? (() => { throw new Error(`no token for ${id}`); })();
    const base = (d: { plural: string }, namespace = LEADER_NS) => `/apis/${group}/v1alpha1/namespaces/${namespace}/${d.plural}`;
    const announceName = (id: string) => `member-announce-from-${id}`;
    // touch-ts in whole seconds, as Antrea's member writes it (time.RFC3339).
    const touchNow = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const makeMember = async (id: string) => { tokens.set(id, await leader.memberToken(id)); };
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
        await fleet(tokenOf(id), 'POST', base(MEMBER_CLUSTER_ANNOUNCE), announceOf(id, stamp));
        recordBeat(id, stamp);
        return true;
      }, { timeoutMs: 60_000, intervalMs: 250 });
    };

    // Every member beats every period as Antrea's member does (GET, then PUT with a new
    // touch-ts), starting at a random point of the period, each gap jittered by ±5%.
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
        // A beat lost to a conflict with the leader's finalizer write (or, on Antrea's leader,
        // its webhook down during the restart): the next one comes in one period.
        beatErrors += 1;
      }
    };
    const startBeating = (id: string, firstInMs = Math.random() * o.periodMs) => {
      beating.add(id);
      const next = (inMs: number) => {
        beatTimers.set(id, setTimeout(() => {
          if (!beating.has(id)) return;
          void beatOnce(id).finally(() => { if (beating.has(id)) next(o.periodMs * (0.95 + Math.random() * 0.1)); });
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
    const statusWatch = watchAll(admin, LEADER_NS, CLUSTERSET.plural, (phase, obj) => {
      const cs = obj as ClusterSet;
      if (phase === 'DELETED' || cs.metadata?.name !== CLUSTERSET_ID) return;
      statusEvents += 1;
      const seen = Date.now();
      const listed = new Set<string>();
      for (const s of cs.status?.clusterStatuses ?? []) {
        const id = s.clusterID ?? '';
        listed.add(id);
        const c = s.conditions?.find((x) => x.type === 'Ready') ?? s.conditions?.[0];
        const ready = c?.status === 'True';
        shownReady.set(id, ready);
        if (ready) { if (!readySeenAt.has(id)) readySeenAt.set(id, seen); continue; }
        if (!disconnectedSeenAt.has(id)) disconnectedSeenAt.set(id, seen);
        // A verdict is false when, at its transition time (whole seconds, so up to 1 s later in
        // truth), the member's last beat was less than the timeout old. Only beats stamped 2 s
        // before it count: a beat is stamped before its PUT is sent (whole seconds too), so one
        // stamped just before the verdict may not have landed yet. Counting it called a member
        // that had not beaten for 32 s, then beat a second before the verdict, "false" (a
        // 300-member run on a loaded machine: its leader logged "No update after 19:04:51" at
        // 19:05:24.6, the bench's last beat was stamped 19:05:23).
        const at = Date.parse(c?.lastTransitionTime ?? '');
        const key = `${id} ${c?.lastTransitionTime ?? ''}`;
        if (judged.has(key) || Number.isNaN(at)) continue;
        judged.add(key);
        const last = (beatsOf.get(id) ?? []).filter((b) => b <= at - 2000).at(-1);
        if (last !== undefined && at - last < o.timeoutMs - 1000) falseDisconnected.push(`${id} at ${c?.lastTransitionTime ?? ''} (last beat ${new Date(last).toISOString()})`);
      }
      for (const id of [...shownReady.keys()]) if (!listed.has(id)) shownReady.delete(id);
    });
    watches.push(statusWatch);
    await statusWatch.start();

    // The fleet: tokens, announces, beats.
    const ids = Array.from({ length: o.members }, (_, i) => `m${String(i).padStart(4, '0')}`);
    const fleetStart = performance.now();
    await pool(ids, 4, makeMember);
    await pool(ids, 8, async (id) => { await announce(id); startBeating(id); });
    const fleetMs = performance.now() - fleetStart;

    // Every Service exported by two members: 4 exports per Service. The members that leave
    // during the churn export nothing (their exports would be collected under the churn's writes).
    const leavers = ids.slice(o.members - o.leaves);
    const stayers = ids.slice(0, o.members - o.leaves);
    const services = Array.from({ length: o.services }, (_, i) => `svc-${String(i)}`);
    const exportersOf = (i: number) => [stayers[i % stayers.length] ?? '', stayers[(i + 1) % stayers.length] ?? ''];
    const ipOf = (i: number, k: number) => `10.${String(k + 1)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
    beginPhase('populate');
    const populateStart = performance.now();
    await pool(services.flatMap((s, i) => exportersOf(i).map((id, k) => ({ s, i, id, k }))), 16, async ({ s, i, id, k }) => {
      await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), serviceExport(id, s));
      await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), endpointsExport(id, s, ipOf(i, k)));
    });
    const watcher = importWatcher(admin, LEADER_NS);
    watches.push(watcher);
    await watcher.start();
    await waitFor(`${String(2 * o.services)} imports`, async () => {
      const list = (await admin.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ ...ref(RESOURCE_IMPORT) })) as { items: ResourceImport[] };
      return list.items.filter((ri) => ri.spec?.kind === 'ServiceImport' || ipsOf(ri).length === 2).length === 2 * o.services;
    }, { timeoutMs: 30 * 60_000, intervalMs: 2000 });
    const populateMs = performance.now() - populateStart;
    const rssPopulated = rssKb(leader.pid());

    // At rest: the fleet beats, nothing else changes.
    await waitForQuietMachine(0.5, 30_000);
    beginPhase('rest');
    await delay(o.restMs);
    endPhase();
    const rssRest = rssKb(leader.pid());

    const churn = async (count: number, write: (n: number) => { name: string; ip: string; send: () => Promise<unknown> }, watch: ReturnType<typeof importWatcher>) => {
      const latencies: number[] = [];
      const sends: number[] = [];
      const lost: string[] = [];
      await pool(Array.from({ length: count }, (_, n) => n), o.width, async (n) => {
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

    const floor = o.baseline ? await runBaseline(admin, services, o, churn, beginPhase, endPhase) : undefined;

    // Churn through the leader: one member's Endpoints export of one Service gets a new address.
    // Meanwhile members join and leave.
    const writesBefore = await leader.writes?.();
    beginPhase('churn');
    rssPeak = 0;
    const joiners = Array.from({ length: o.joins }, (_, i) => `j${String(i).padStart(4, '0')}`);
    const joinedAt = new Map<string, number>();
    const joining = pool(joiners, 2, async (id) => {
      await delay(Math.random() * o.periodMs);
      await makeMember(id);
      joinedAt.set(id, Date.now());
      await announce(id);
      startBeating(id, o.periodMs * (0.95 + Math.random() * 0.1));
      await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), serviceExport(id, `join-${id}`));
      await fleet(tokenOf(id), 'POST', base(RESOURCE_EXPORT), endpointsExport(id, `join-${id}`, '10.250.0.1'));
    });
    // A leaver stops beating (spread over one period); once the leader shows it Disconnected it
    // leaves as `clusterset-agent leave` does (its announce deleted) and must vanish from the status.
    const stoppedAt = new Map<string, number>();
    const removedAfter: number[] = [];
    let leaveProblems = 0;
    const leaving = pool(leavers, leavers.length || 1, async (id) => {
      await delay(Math.random() * o.periodMs);
      stopBeating(id);
      stoppedAt.set(id, Date.now());
      // Antrea's leader judges every 10 s and publishes its status every 30 s: up to 70 s.
      await waitFor(`${id} shown Disconnected`, () => disconnectedSeenAt.has(id) && shownReady.get(id) === false, { timeoutMs: o.timeoutMs + 3 * o.periodMs + 60_000, intervalMs: 200 })
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
    const leaderChurn = await churn(o.updates, (n) => {
      const i = (n * 7919) % services.length;
      const s = services[i] ?? '';
      const k = n % 2;
      const id = exportersOf(i)[k] ?? '';
      const ip = `10.${String(100 + k)}.${String(Math.floor(n / 250))}.${String((n % 250) + 1)}`;
      return { name: `bench-${s}-endpoints`, ip, send: async () => {
        const name = `${base(RESOURCE_EXPORT)}/${id}-bench-${s}-endpoints`;
        for (let attempt = 1; ; attempt++) {
          const stored = await fleet<ResourceExport>(tokenOf(id), 'GET', name);
          try {
            await fleet(tokenOf(id), 'PUT', name, { ...stored, spec: { ...stored.spec, endpoints: endpointsExport(id, s, ip).spec?.endpoints } });
            return;
          } catch (err) {
            if (attempt >= 5) throw err;
          }
        }
      } };
    }, watcher);
    await delay(2000);
    const churnWritesMetric = writesBefore === undefined ? undefined : (await leader.writes?.() ?? NaN) - writesBefore;
    const churnDoneMs = Date.now();
    await Promise.all([joining, leaving]);
    // Joiners shown Ready: from the join (token made) to the leader's status saying so.
    await waitFor('every joiner shown Ready', () => joiners.every((id) => shownReady.get(id) === true), { timeoutMs: 120_000, intervalMs: 200 }).catch(() => undefined);
    endPhase();
    const rssChurnPeak = rssPeak;
    const rssAfterChurn = rssKb(leader.pid());

    // Restart in the middle of the run, the fleet beating throughout: what it writes and how long
    // until it is ready (and, ours, caught up: every object seen at start reconciled once).
    beginPhase('restart');
    const restartAt = Date.now();
    const restarts: RestartTimes[] = [];
    let caughtUp: FleetFigures['caughtUp'];
    for (let i = 0; i < o.restarts; i++) {
      await leader.stop();
      const label = i === 0 ? 'restart' : `restart-${String(i + 1)}`;
      const r0 = performance.now();
      const r0Wall = Date.now();
      await leader.start(label);
      const readyMs = performance.now() - r0;
      const workersAt = await leader.workersStarted?.();
      restarts.push({ label: leader.describe?.(label) ?? label, readyMs, ...(workersAt !== undefined && { workersMs: workersAt - r0Wall }), ...leader.lastStart?.() });
      // Each restart catches up before the next: the next one then starts from the same state.
      const caught = await leader.caughtUp?.();
      caughtUp ??= caught;
    }
    const restartReadyMs = restarts[0]?.readyMs ?? NaN;
    // The phase's CPU is the new process's, from its start.
    const restartPhase = phases.at(-1);
    if (restartPhase) restartPhase.cpuStart = 0;
    beginPhase('after-restart');
    rssPeak = 0;
    await delay(o.afterRestartMs);
    endPhase();
    const rssRestarted = rssKb(leader.pid());
    const restartWindowMs = Date.now() - restartAt;
    const liveAtEnd = [...beating].filter((id) => shownReady.get(id) !== true).length;

    const lastBeatOf = (id: string) => (beatsOf.get(id) ?? []).at(-1) ?? NaN;
    const stopped = [...stoppedAt.keys()];
    const leaversLastBeats = stopped.map(lastBeatOf).filter((t) => Number.isFinite(t));
    const leaversLastBeatSpanMs = leaversLastBeats.length === 0 ? NaN : Math.max(...leaversLastBeats) - Math.min(...leaversLastBeats);
    const disconnectLag = stopped.filter((id) => disconnectedSeenAt.has(id)).map((id) => (disconnectedSeenAt.get(id) ?? NaN) - lastBeatOf(id));
    const joinReady = joiners.filter((id) => readySeenAt.has(id)).map((id) => (readySeenAt.get(id) ?? NaN) - (joinedAt.get(id) ?? NaN));
    // The gaps between each member's successful beats: when the API server cannot take the
    // fleet's beats, members beat late and the liveness figures measure the machine, not the leader.
    const beatGaps = [...beatsOf.values()].flatMap((list) => list.slice(1).map((b, i) => b - (list[i] ?? b)));
    for (const id of [...beating]) stopBeating(id);
    const writes = await auditWrites(cp.auditLogPath ?? '', phases, leader.user);
    return {
      kind: leader.kind, options: o, fleetMs, beatErrors, beatGaps, populateMs, latencies: leaderChurn.latencies, sends: leaderChurn.sends, lost: leaderChurn.lost, floor,
      falseDisconnected, statusEvents, liveAtEnd, disconnectLag, stopped: stopped.length, removedAfter, joinReady, leaveProblems,
      rss: { populated: rssPopulated, rest: rssRest, churnPeak: rssChurnPeak, afterChurn: rssAfterChurn, restarted: rssRestarted },
      phases, writes, churnChangesMs: churnDoneMs - (phases.find((p) => p.name === 'churn')?.startMs ?? churnDoneMs), churnWritesMetric,
      restartReadyMs, restartWorkersMs: restarts[0]?.workersMs ?? NaN, restarts, caughtUp, restartWindowMs, leaversLastBeatSpanMs,
    };
  } finally {
    clearInterval(sampler);
    clearInterval(lagSampler);
    for (const id of [...beating]) { beating.delete(id); clearTimeout(beatTimers.get(id)); }
    for (const w of watches) w.stop();
    fleet.close();
    await leader.stop();
  }
}

/** The baseline: the same pipeline by a minimal client (export event -> import write), in another namespace. */
async function runBaseline(
  admin: KubeConfig, services: readonly string[], o: FleetOptions,
  churn: (count: number, write: (n: number) => { name: string; ip: string; send: () => Promise<unknown> }, watch: ReturnType<typeof importWatcher>) => Promise<{ latencies: number[] }>,
  beginPhase: (name: string) => void, endPhase: () => void,
): Promise<number[]> {
  await createNamespace(admin, FLOOR_NS);
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
  const exportWatch = watchAll(admin, FLOOR_NS, 'resourceexports', (phase, obj) => {
    if (phase === 'MODIFIED') void floorWrite(obj as ResourceExport);
  });
  await exportWatch.start();
  try {
    beginPhase('baseline');
    const floor = (await churn(o.updates, (n) => {
      const s = floorServices[n % floorServices.length] ?? '';
      const ip = `10.200.${String(Math.floor(n / 250))}.${String((n % 250) + 1)}`;
      return { name: `bench-${s}-endpoints`, ip, send: async () => {
        const stored = (await floorApi.getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), name: `m0000-bench-${s}-endpoints` })) as ResourceExport;
        await floorApi.replaceNamespacedCustomObject({ ...ref(RESOURCE_EXPORT, FLOOR_NS), name: `m0000-bench-${s}-endpoints`, body: { ...stored, spec: { ...stored.spec, endpoints: endpointsExport('m0000', s, ip).spec?.endpoints } } });
      } };
    }, floorWatcher)).latencies;
    endPhase();
    await waitForQuietMachine(0.5, 30_000);
    return floor;
  } finally {
    exportWatch.stop();
    floorWatcher.stop();
  }
}
