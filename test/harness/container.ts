// The agent's OCI image for tests: built (or found cached) by scripts/image.sh, run with podman
// under the containers.conf that script writes (runc, ulimits), and Kubernetes quantities
// turned into the byte counts podman takes.
import { execFile, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './bins.js';

export const IMAGE_SCRIPT = path.join(repoRoot, 'scripts', 'image.sh');

export interface BuiltImage {
  /** What was built, e.g. localhost/clusterset-agent:0.1.0. */
  readonly image: string;
  readonly id: string;
  readonly digest: string;
  /** Bytes, as podman reports the image's size. */
  readonly size: number;
  /** The base it was built from, as `repository@digest`. */
  readonly base: string;
  /** The containers.conf podman must run with (CONTAINERS_CONF). */
  readonly containersConf: string;
  /** How long the build (or the cache check) took. */
  readonly seconds: number;
}

/**
 * Runs scripts/image.sh (installing its Debian tools when missing; seconds when nothing
 * changed). Its progress goes to this process's stderr; a failure throws with its last lines.
 */
export async function buildImage(): Promise<BuiltImage> {
  const started = Date.now();
  const child = spawn('bash', [IMAGE_SCRIPT, '--json'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    process.stderr.write(chunk);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) {
    throw new Error(`scripts/image.sh exited ${String(code)}: the image cannot be built here. Last output:\n${stderr.split('\n').slice(-30).join('\n')}`);
  }
  const built = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Omit<BuiltImage, 'seconds'>;
  return { ...built, seconds: (Date.now() - started) / 1000 };
}

export interface PodmanResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A podman bound to one containers.conf. */
export function podmanWith(containersConf: string) {
  const env = { ...process.env, CONTAINERS_CONF: containersConf };
  const run = (args: readonly string[], timeoutMs = 120_000): Promise<PodmanResult> => new Promise((resolve) => {
    execFile('podman', args, { env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1;
      resolve({ code, stdout, stderr: err !== null && stderr === '' ? err.message : stderr });
    });
  });
  return {
    run,
    /** Like run, but a non-zero exit throws with podman's stderr. */
    async ok(args: readonly string[], timeoutMs?: number): Promise<string> {
      const res = await run(args, timeoutMs);
      if (res.code !== 0) throw new Error(`podman ${args.slice(0, 3).join(' ')} ... exited ${String(res.code)}: ${res.stderr.trim()}`);
      return res.stdout;
    },
    /**
     * Synchronous, for failure reports and exit hooks; never throws. Returns stdout and stderr
     * (`podman logs` writes the container's stderr to its own).
     */
    sync(args: readonly string[]): string {
      const res = spawnSync('podman', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
      return `${res.stdout}${res.stderr}${res.error ? res.error.message : ''}`;
    },
  };
}

const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** A Kubernetes memory quantity (`256Mi`, `1G`, `268435456`, `0.5Gi`) in bytes, rounded up. */
export function quantityToBytes(quantity: string | number): number {
  const text = String(quantity).trim();
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(text);
  if (match === null) throw new Error(`unsupported memory quantity ${JSON.stringify(quantity)}`);
  const suffix = match[2] ?? '';
  const factor = BINARY_SUFFIXES[suffix] ?? DECIMAL_SUFFIXES[suffix] ?? 1;
  return Math.ceil(Number(match[1]) * factor);
}
