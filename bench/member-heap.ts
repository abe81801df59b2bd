// Where the member's memory goes: bench:antrea --mode member's run of OUR agent alone (the
// compiled build, the image's Node options, N ResourceImports from one leader), with V8's heap
// spaces read from the agent's /metrics when idle and at rest, and a heap snapshot taken at rest
// (--heapsnapshot-signal) for bench/heap-summary.ts to read:
//
//   node --import tsx bench/member-heap.ts [--n 2000] [--rest 30] [--no-snapshot] [--no-build] [--idle-only] [--try='--v8-flag ...|glibc tunables']...
//
// Prints RSS (anonymous and file-backed), the heap spaces and where the snapshot is.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { AGENT_NS, createClusterSet, createMemberAccess, installCrds, setupLeader, writeLeaderSecret } from '../test/harness/clusterset.js';
import { startControlPlane } from '../test/harness/control-plane.js';
import { endpointsRI, leaderImports, serviceImportRI } from '../test/harness/imports.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, cpuSeconds, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, pool, rssKb, rssPartsKb, runBench } from './common.js';

const { values } = parseArgs({ options: {
  n: { type: 'string', default: '2000' },
  rest: { type: 'string', default: '30' },
  'no-snapshot': { type: 'boolean', default: false },
  'no-build': { type: 'boolean', default: false },
  // Only the idle figures (started, no ClusterSet): what the code itself costs.
  'idle-only': { type: 'boolean', default: false },
  // Another build's launcher (a copy of bin/ beside its own dist/bundle/), to compare builds.
  entry: { type: 'string', default: agentEntry },
  // Settings to try against the image's, one run each on the same leader (repeatable):
  // '<more node options, space-separated>' or '<options>|<GLIBC_TUNABLES instead of the image's>'.
  try: { type: 'string', multiple: true, default: [''] },
} });
const NS = 'bench';
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident KiB per mapping of process `pid` (file path, or [heap], [anon], ...), the biggest first. */
function smaps(pid: number): string {
  const by = new Map<string, number>();
  let current = '';
  for (const line of readFileSync(`/proc/${String(pid)}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) { current = head[1] || '[anon]'; continue; }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) by.set(current, (by.get(current) ?? 0) + Number(rss[1]));
  }
  return [...by].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${path.basename(k)} ${mib(v)}`).join(', ');
}

/** V8's heap spaces (used and size, MiB) and the heap totals from the agent's /metrics. */
async function heapFigures(port: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
  const used = new Map<string, number>();
  const size = new Map<string, number>();
  const totals: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^nodejs_heap_space_size_(used|total)_bytes\{space="([^"]+)"\} (\S+)/.exec(line);
    if (m) (m[1] === 'used' ? used : size).set(m[2] ?? '', Number(m[3]));
    const t = /^(nodejs_heap_size_(?:used|total)_bytes|nodejs_external_memory_bytes) (\S+)/.exec(line);
    if (t) totals.push(`${t[1] ?? ''} ${(Number(t[2]) / 2 ** 20).toFixed(1)}`);
  }
  const spaces = [...size].map(([space, total]) => `${space} ${((used.get(space) ?? 0) / 2 ** 20).toFixed(1)}/${(total / 2 ** 20).toFixed(1)}`);
  return `${totals.join(', ')}\n    spaces (used/size MiB): ${spaces.join(', ')}`;
}

await runBench('member-heap', async () => {
  if (!values['no-build']) buildDist();
  const N = Number(values.n);
  const HALF = Math.floor(N / 2);
  const leader = await startControlPlane('heap-leader');
  try {
    await setupLeader(leader);
    const access = await createMemberAccess(leader, 'east');
    const ri = leaderImports(leader.adminConfig());
    if (!values['idle-only']) await pool(Array.from({ length: HALF }, (_, i) => `svc-${String(i)}`), 16, async (name) => {
      await ri.create(serviceImportRI(NS, name, [{ name: 'http', port: 80 }]));
      await ri.create(endpointsRI(NS, name, ['10.1.0.1']));
    });
    for (const trial of values.try) {
    const [extraArgs = '', tunables] = trial.split('|');
    console.log(`\n== agent with the image's settings${extraArgs === '' ? '' : ` + ${extraArgs}`}${tunables === undefined ? '' : `, GLIBC_TUNABLES=${tunables}`}`);
    const cp = await startControlPlane('heap-member');
    try {
      await createNamespace(cp.adminConfig(), NS);
      await installCrds(cp);
      await createNamespace(cp.adminConfig(), AGENT_NS);
      const dir = mkdtempSync(path.join(tmpdir(), 'member-heap-'));
      const out = path.join(dir, 'stdout.log');
      const fds = [openSync(out, 'w'), openSync(path.join(dir, 'stderr.log'), 'w')] as const;
      const child = spawn(process.execPath, [...IMAGE_NODE_ARGS, ...extraArgs.split(' ').filter(Boolean), '--heapsnapshot-signal=SIGUSR2', values.entry, 'run', '--kubeconfig', cp.kubeconfigPath, '--namespace', AGENT_NS,
        '--heartbeat-interval', '10', '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0', '--log-level', 'info'],
      { cwd: dir, stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, ...(tunables === undefined ? {} : { GLIBC_TUNABLES: tunables }), NODE_OPTIONS: IMAGE_NODE_OPTIONS, CSA_IMPORT_MAX_OBJECTS_PER_LEADER: '100000' } });
      for (const fd of fds) closeSync(fd);
      process.on('exit', () => { child.kill('SIGKILL'); });
      const pid = child.pid ?? 0;
      try {
        const metricsPort = await waitFor('the agent to listen', () => Number(/"metricsPort":(\d+)/.exec(readFileSync(out, 'utf8'))?.[1] ?? 0) || undefined, { timeoutMs: 60_000, intervalMs: 50 });
        await pause(3_000);
        const parts = () => { const p = rssPartsKb(pid); return `RSS ${mib(rssKb(pid))} (anon ${mib(p.anon)}, file ${mib(p.file)})`; };
        console.log(`idle: ${parts()}\n    ${await heapFigures(metricsPort)}\n    mappings: ${smaps(pid)}`);
        if (values['idle-only']) continue;
        await writeLeaderSecret(cp, 'leader-token', { caPem: leader.caPem, token: access.token });
        const start = Date.now();
        const cpuStart = cpuSeconds(pid);
        await createClusterSet(cp, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
        const core = cp.adminConfig().makeApiClient(CoreV1Api);
        await waitFor(`${String(HALF)} Endpoints imported`, async () => (await core.listNamespacedEndpoints({ namespace: NS })).items.length >= HALF, { timeoutMs: 30 * 60_000, intervalMs: 1000 });
        console.log(`synced in ~${((Date.now() - start) / 1000).toFixed(1)} s, ${(cpuSeconds(pid) - cpuStart).toFixed(1)} s of CPU: ${parts()}`);
        await pause(Number(values.rest) * 1000);
        console.log(`at rest (${values.rest} s): ${parts()}\n    ${await heapFigures(metricsPort)}\n    mappings: ${smaps(pid)}`);
        if (!values['no-snapshot']) {
          child.kill('SIGUSR2');
          const snapshot = await waitFor('the heap snapshot', async () => {
            const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
            if (file === undefined) return undefined;
            // Written synchronously on the main thread: /metrics answers once it is complete.
            await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`);
            return path.join(dir, file);
          }, { timeoutMs: 5 * 60_000, intervalMs: 500 });
          console.log(`snapshot: ${snapshot}`);
        }
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => { if (child.exitCode !== null) resolve(undefined); else child.once('exit', resolve); });
      }
    } finally {
      await cp.stop();
    }
    }
  } finally {
    await leader.stop();
  }
});
