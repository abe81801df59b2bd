// What every benchmark needs: the agent as users run it (the bundle that bin/clusterset-agent.js
// and the image start, built from dist/), with the V8 options the image gives it, and a bounded
// pool of concurrent calls.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '..');
export const agentEntry = path.join(repoRoot, 'bin', 'clusterset-agent.js');

/**
 * NODE_OPTIONS as the image runs the agent under the chart's 256Mi memory limit: the image's
 * `--max-old-space-size-percentage=60` gives the old space 60% of the container's limit, which
 * a benchmark process outside a container does not have, so it is spelt out.
 */
export const IMAGE_NODE_OPTIONS = '--max-semi-space-size=2 --max-old-space-size=153';

/** The rest of the image's environment that shapes the agent's memory (the Dockerfile's ENV). */
export const IMAGE_ENV: Readonly<Record<string, string>> = { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=32768' };

/**
 * Node's own arguments in the image's ENTRYPOINT (V8 refuses both in NODE_OPTIONS): the agents'
 * --max-opt=2 among them, so the launcher does not start Node again (node-flags.test.ts keeps
 * this equal to the Dockerfile's).
 */
export const IMAGE_NODE_ARGS: readonly string[] = ['--optimize-for-size', '--max-opt=2'];

/** Builds what the agent runs (`npm run build`: tsc, then the bundle); throws when that fails. */
export function buildDist(): void {
  for (const [command, args] of [['npx', ['tsc', '-p', 'tsconfig.build.json']], [process.execPath, ['scripts/bundle.mjs']]] as const) {
    const built = spawnSync(command, args, { cwd: repoRoot, stdio: 'inherit' });
    if (built.status !== 0) throw new Error(`the build failed (${command} exited ${String(built.status)}): the benchmark runs ${agentEntry}`);
  }
}

/** Runs `fn` over `items` with at most `width` calls in flight. */
export async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  }));
}

/** Fields of process `pid`'s /proc status in KiB, NaN for one that is missing. */
function statusKb<K extends string>(pid: number, names: readonly K[]): Record<K, number> {
  const status = readFileSync(`/proc/${String(pid)}/status`, 'utf8');
  const out = {} as Record<K, number>;
  for (const name of names) out[name] = Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return out;
}

/** Anonymous and file-backed parts of process `pid`'s RSS in KiB (the node binary's pages are file-backed). */
export function rssPartsKb(pid: number): { anon: number; file: number } {
  const { RssAnon, RssFile } = statusKb(pid, ['RssAnon', 'RssFile']);
  return { anon: RssAnon, file: RssFile };
}

/** Resident set size of process `pid` in KiB (VmRSS), NaN once it has gone. */
export function rssKb(pid: number): number {
  return statusKb(pid, ['VmRSS']).VmRSS;
}

/** CPU seconds process `pid` has used (utime + stime, in clock ticks of USER_HZ = 100 on Linux). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${String(pid)}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Sum of the agent's metric samples (from its `/metrics` on `port`) whose line starts with `prefix` and contains `having`. */
export async function metricSum(port: number, prefix: string, having = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(prefix) && line.includes(having)) sum += Number(line.split(' ').at(-1));
  return sum;
}

/** Established TCP connections that process `pid` holds to `port` (any address), from /proc. */
export function tcpConnectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${String(pid)}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${String(pid)}/fd/${fd}`))?.[1];
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // The descriptor closed while we read the directory.
    }
  }
  let count = 0;
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${String(pid)}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const [, , remote, state, , , , , , inode] = line.trim().split(/\s+/);
      // State 01 is ESTABLISHED; addresses are hex `addr:port`.
      if (state === '01' && inode !== undefined && inodes.has(inode) && parseInt(remote?.split(':')[1] ?? '', 16) === port) count += 1;
    }
  }
  return count;
}

/** Busy share of all CPUs since the last sample, from /proc/stat. */
function cpuSampler(): () => number {
  const read = () => {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { idle, total: fields.reduce((a, b) => a + b, 0) };
  };
  let last = read();
  return () => {
    const now = read();
    const total = now.total - last.total;
    const busy = total > 0 ? 1 - (now.idle - last.idle) / total : 0;
    last = now;
    return busy;
  };
}

/**
 * Waits until the machine is quiet (under `threshold` of all CPUs busy for two half-second
 * samples in a row): a fresh kube-apiserver keeps working for seconds after it reports ready
 * (OpenAPI for new CRDs, bootstrap controllers), and every timed phase must start on equal
 * terms. Gives up after `timeoutMs` and says so, rather than hang.
 */
export async function waitForQuietMachine(threshold = 0.15, timeoutMs = 60_000): Promise<void> {
  const busy = cpuSampler();
  const deadline = performance.now() + timeoutMs;
  let quiet = 0;
  while (quiet < 2) {
    if (performance.now() > deadline) {
      console.log(`(the machine did not get quiet within ${String(timeoutMs / 1000)} s; timing anyway)`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    quiet = busy() < threshold ? quiet + 1 : 0;
  }
}

/**
 * Runs a benchmark's body and ends the process: 0 when it finished, 1 with the error on stderr
 * when it failed. A bench's watches and keep-alive sockets would keep the process alive, so it
 * exits explicitly, and an explicit exit in a `finally` would swallow the error (a run that
 * printed nothing and exited 0, issue 31): this is the one place that decides.
 */
export async function runBench(name: string, body: () => Promise<void>, cleanup: () => Promise<void> = () => Promise.resolve()): Promise<never> {
  let code = 0;
  try {
    await body();
  } catch (err) {
    console.error(`${name} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    code = 1;
  }
  try {
    await cleanup();
  } catch (err) {
    console.error(`${name}: cleanup failed: ${err instanceof Error ? err.message : String(err)}`);
    code = code || 1;
  }
  process.exit(code);
}
