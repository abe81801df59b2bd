// The leaders a simulated fleet (bench/fleet.ts) runs against, each on its own control plane:
// ours (`leader run` from the COMPILED build with the image's memory settings, behind the chart's
// admission policies, members' tokens from the product's `leader create-member-token`) and
// Antrea v2.7's leader controller (antrea-mc-controller built by test/antrea-bins, Antrea's own
// manifests and webhooks, members' tokens as `antctl mc create membertoken` makes them).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createMemberToken } from '../src/leader/member-token.js';
import {
  ANTREA_LEADER_NS, createAntreaLeaderClusterSet, createAntreaMemberToken, installAntreaLeader, startAntreaController, type AntreaController,
} from '../test/harness/antrea.js';
import { CLUSTERSET_ID, LEADER_NS, setupLeader } from '../test/harness/clusterset.js';
import { freePort, type ControlPlane } from '../test/harness/control-plane.js';
import { CHART_LEADER_NS, CHART_LEADER_SA, installChartLeader } from '../test/harness/leader-admission.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, cpuSeconds, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, metricSum } from './common.js';

/** Where the chart installs our leader's ServiceAccount. */
export const RELEASE_NS = CHART_LEADER_NS;
export const LEADER_SA = CHART_LEADER_SA;

/** What the fleet needs of a leader under test. */
export interface LeaderUnderTest {
  readonly kind: 'ours' | 'antrea';
  /** The leader's user in the audit log. */
  readonly user: string;
  /** A token for member `id` with the rights the leader's own tooling gives a member. */
  memberToken(id: string): Promise<string>;
  /** Starts the leader process; resolves once it reports ready. */
  start(label: string): Promise<void>;
  /** What the leader started under `label` was, where it differs from start to start (bench entries). */
  describe?(label: string): string;
  stop(): Promise<void>;
  /** The leader process's pid (0 while none runs). */
  pid(): number;
  /** Event-loop lag of the last window in ms (prom-client's), where the leader has an event loop. */
  lag?(): Promise<{ p99: number; max: number } | undefined>;
  /** The leader's own count of its writes. */
  writes?(): Promise<number>;
  /**
   * When (epoch ms) every controller of the leader last started was working on synced caches:
   * ours logs it once its informers synced (its /readyz says the same), Antrea's controller-runtime
   * logs "Starting workers" per controller after its caches synced (its /readyz is a ping).
   */
  workersStarted?(): Promise<number>;
  /**
   * The last start, from its process's spawn (performance.now() ms): when it first answered its
   * probes as a ping does (ours /healthz, Antrea's /readyz: controller-runtime's healthz.Ping)
   * and when it was ready (ours /readyz: caches synced; Antrea's /readyz and its webhooks
   * carrying its CA). Both polled every 50 ms.
   */
  lastStart?(): { spawnToPingMs: number; spawnToReadyMs: number } | undefined;
  /** After a restart: when the leader logged that it had reconciled everything it found. */
  caughtUp?(): Promise<{ afterMs: number; imports: number; exports: number }>;
}

/** CPU seconds of `pid`, NaN once it has gone. */
export const cpuOf = (pid: number) => { try { return cpuSeconds(pid); } catch { return NaN; } };

/** The chart in mode=leader on `cp` and a kubeconfig of its leader's ServiceAccount (test/harness/leader-admission.ts). */
export const installOurLeader = installChartLeader;

export interface OurLeaderProcess {
  readonly proc: ChildProcess;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly logFile: string;
  /** performance.now() when the process was spawned, and when its /healthz first answered 200. */
  readonly spawnedAt: number;
  readonly healthzAt: number;
  stop(): Promise<void>;
}

/** `leader run` from the compiled build as the image runs it; resolves once /healthz answers. */
export async function spawnOurLeader(kubeconfig: string, dir: string, label: string, options: { elect?: boolean; entry?: string } = {}): Promise<OurLeaderProcess> {
  const healthPort = await freePort();
  const metricsPort = await freePort();
  const logFile = path.join(dir, `${label}.log`);
  const fds = [openSync(logFile, 'w'), openSync(path.join(dir, `${label}.err`), 'w')] as const;
  // CSA_BENCH_HEAPSNAPSHOT_DIR=<dir>: `kill -USR2 <pid>` writes a heap snapshot of the leader there (memory work, issue 31).
  // Writing one left the leader ~120 MiB more RSS for good (seen in a run): that run measures no memory.
  const snapshotDir = process.env['CSA_BENCH_HEAPSNAPSHOT_DIR'];
  const snapshotArgs = snapshotDir === undefined || snapshotDir === '' ? [] : ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`];
  // CSA_BENCH_CPU_PROF_DIR=<dir>: each leader process writes a CPU profile there when it stops (where a start spends its time).
  const profileDir = process.env['CSA_BENCH_CPU_PROF_DIR'];
  if (profileDir !== undefined && profileDir !== '') snapshotArgs.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  // CSA_BENCH_LEADER_NODE_ARGS='<args>': more Node/V8 options for the leader (GC tracing, V8 settings tried for issue 31).
  snapshotArgs.push(...(process.env['CSA_BENCH_LEADER_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== ''));
  const spawnedAt = performance.now();
  const proc = spawn(process.execPath, [...IMAGE_NODE_ARGS, ...snapshotArgs, options.entry ?? agentEntry, 'leader', 'run', '--kubeconfig', kubeconfig,
    '--health-bind-address', `127.0.0.1:${String(healthPort)}`, '--metrics-bind-address', `127.0.0.1:${String(metricsPort)}`, '--log-level', 'info'],
  { stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, NODE_OPTIONS: IMAGE_NODE_OPTIONS, CSA_LEADER_NAMESPACE: LEADER_NS, CSA_NAMESPACE: RELEASE_NS, CSA_LEADER_ELECT: options.elect ? 'true' : 'false' } });
  for (const fd of fds) closeSync(fd);
  // A bench that fails must not leave a leader behind.
  const kill = () => { proc.kill('SIGKILL'); };
  process.once('exit', kill);
  await waitFor(`${label} healthz`, async () => {
    if (proc.exitCode !== null) throw new Error(`${label} exited with code ${String(proc.exitCode)}; see ${logFile}`);
    return (await fetch(`http://127.0.0.1:${String(healthPort)}/healthz`).then((r) => r.status, () => 0)) === 200;
  }, { timeoutMs: 120_000, intervalMs: 50 });
  const healthzAt = performance.now();
  return {
    proc, healthPort, metricsPort, logFile, spawnedAt, healthzAt,
    async stop() {
      process.removeListener('exit', kill);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await new Promise((resolve) => proc.once('exit', resolve));
    },
  };
}

/** Our leader on `cp` (a fresh control plane): CRDs, namespace, ClusterSet, chart. */
export async function ourLeader(cp: ControlPlane, dir: string): Promise<LeaderUnderTest> {
  const admin = cp.adminConfig();
  await setupLeader(cp);
  const kubeconfig = await installOurLeader(cp, dir);
  let current: OurLeaderProcess | undefined;
  let readyAt = NaN;
  // CSA_BENCH_LEADER_ENTRIES=<a.js>,<b.js>: the starts take these launchers in turn (a copy of
  // bin/ and dist/ from before a change, and this one): before and after interleaved in one run.
  const entries = (process.env['CSA_BENCH_LEADER_ENTRIES'] ?? '').split(',').filter((e) => e !== '');
  const starts = new Map<string, string>();
  /** The first line of the running leader's JSON log that contains `text`, parsed, once it is there. */
  const logged = <T>(what: string, text: string, timeoutMs: number) => waitFor(what, () => {
    const line = readFileSync(current?.logFile ?? '', 'utf8').split('\n').find((l) => l.includes(text));
    return line === undefined ? undefined : JSON.parse(line) as T;
  }, { timeoutMs, intervalMs: 100 });
  return {
    kind: 'ours',
    describe: (label) => starts.get(label) ?? label,
    user: `system:serviceaccount:${RELEASE_NS}:${LEADER_SA}`,
    memberToken: async (id) => (await createMemberToken(admin, { memberId: id, namespace: LEADER_NS, durationSeconds: 86_400 })).token,
    async start(label) {
      const entry = entries.length === 0 ? undefined : entries[starts.size % entries.length];
      starts.set(label, entry === undefined ? label : `${label} (${entry})`);
      current = await spawnOurLeader(kubeconfig, dir, `leader-${label}`, { ...(entry !== undefined && { entry }) });
      const port = current.healthPort;
      await waitFor('leader run ready', async () => (await fetch(`http://127.0.0.1:${String(port)}/readyz`).then((r) => r.status, () => 0)) === 200, { timeoutMs: 120_000, intervalMs: 50 });
      readyAt = performance.now();
    },
    lastStart: () => current && { spawnToPingMs: current.healthzAt - current.spawnedAt, spawnToReadyMs: readyAt - current.spawnedAt },
    stop: async () => { await current?.stop(); },
    pid: () => current?.proc.pid ?? 0,
    async lag() {
      if (current === undefined) return undefined;
      const text = await fetch(`http://127.0.0.1:${String(current.metricsPort)}/metrics`).then(async (r) => r.text(), () => '');
      const read = (name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2] ?? NaN);
      const p99 = read('nodejs_eventloop_lag_p99_seconds');
      return Number.isFinite(p99) ? { p99: p99 * 1000, max: read('nodejs_eventloop_lag_max_seconds') * 1000 } : undefined;
    },
    writes: () => metricSum(current?.metricsPort ?? 0, 'clusterset_agent_leader_writes_total'),
    workersStarted: async () => Date.parse((await logged<{ timestamp: string }>('leader controllers started', '"leader controllers started"', 60_000)).timestamp),
    caughtUp: () => logged<{ afterMs: number; imports: number; exports: number }>('leader caught up after the restart', 'leader caught up', 10 * 60_000),
  };
}

/**
 * Antrea's leader on `cp` (a fresh control plane): its manifests as they are, its ClusterSet
 * (created once the controller runs, as Antrea's docs order it). Its process is started with
 * the harness's startAntreaController, which resolves once /readyz answers and its webhooks
 * carry its CA (a few API calls more than ours: token, webhook re-pointing).
 */
// The fleet writes in LEADER_NS for both leaders: Antrea's manifests hard-code ANTREA_LEADER_NS, the same name.
export async function antreaLeader(cp: ControlPlane): Promise<LeaderUnderTest> {
  await installAntreaLeader(cp);
  let current: AntreaController | undefined;
  let readyAt = NaN;
  let clusterSet = false;
  return {
    kind: 'antrea',
    user: `system:serviceaccount:${ANTREA_LEADER_NS}:antrea-mc-controller`,
    memberToken: (id) => createAntreaMemberToken(cp, id),
    async start() {
      current = await startAntreaController(cp, 'leader', { verbosity: 0 });
      readyAt = performance.now();
      if (!clusterSet) {
        await createAntreaLeaderClusterSet(cp, CLUSTERSET_ID, 'leader');
        clusterSet = true;
      }
    },
    stop: async () => { await current?.stop(); },
    pid: () => current?.pid ?? 0,
    lastStart: () => current && { spawnToPingMs: current.readyzAt - current.spawnedAt, spawnToReadyMs: readyAt - current.spawnedAt },
    workersStarted: () => waitFor('Antrea\'s controllers working on synced caches', () => klogWorkersStarted(readFileSync(current?.logFile ?? '', 'utf8')), { timeoutMs: 60_000, intervalMs: 100 }),
  };
}

/**
 * From controller-runtime's klog output: when the last of its controllers (each named by its
 * "Starting EventSource" lines) logged "Starting workers", which it does once that controller's
 * caches synced; undefined while one has not. klog's times are local, without a year.
 */
export function klogWorkersStarted(log: string, year = new Date().getFullYear()): number | undefined {
  const controllers = new Set<string>();
  const started = new Map<string, number>();
  for (const line of log.split('\n')) {
    const name = /controller="([^"]+)"/.exec(line)?.[1];
    if (name === undefined) continue;
    if (line.includes('"Starting EventSource"')) controllers.add(name);
    const at = /^I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})/.exec(line);
    if (line.includes('"Starting workers"') && at !== null) {
      const [, mo, d, h, mi, s, ms] = at.map(Number) as [number, number, number, number, number, number, number];
      started.set(name, new Date(year, mo - 1, d, h, mi, s, ms).getTime());
    }
  }
  if (controllers.size === 0 || [...controllers].some((c) => !started.has(c))) return undefined;
  return Math.max(...started.values());
}
