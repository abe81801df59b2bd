// Locates (and on first use builds) the real kube-apiserver, etcd, kubectl and helm
// binaries. They are built from Go modules by test/k8s-bins/build-k8s-bins.sh into a
// cache keyed by their inputs, so only the first run on a machine pays the build.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface K8sBins {
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubectl: string;
  readonly helm: string;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUILD_SCRIPT = path.join(repoRoot, 'test', 'k8s-bins', 'build-k8s-bins.sh');

let cached: K8sBins | undefined;

/**
 * The files a build script under test/ caches, by path, and their folder. The folder is
 * `envVar` when set (a parent test process, or the caller, already asked), else the script's
 * answer on stdout (it builds on a cold cache, its progress on stderr), then kept in `envVar`
 * so that child test processes inherit it instead of hashing the inputs again. Throws, naming
 * the script to rerun, when one of `files` (key: file name in the folder) is not there.
 */
export function builtFiles<K extends string>(envVar: string, script: string, files: Readonly<Record<K, string>>): { readonly dir: string } & Readonly<Record<K, string>> {
  let dir = process.env[envVar];
  if (!dir) {
    dir = execFileSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
    process.env[envVar] = dir;
  }
  const paths: Record<string, string> = {};
  for (const [key, file] of Object.entries<string>(files)) {
    const full = path.join(dir, file);
    if (!existsSync(full)) throw new Error(`${file} missing: ${full} (${envVar}=${dir}); rerun ${script}`);
    paths[key] = full;
  }
  return { dir, ...(paths as Record<K, string>) };
}

/** Returns the binaries, building them when the cache is cold (progress goes to stderr). */
export function k8sBins(): K8sBins {
  cached ??= builtFiles('K8S_BINS_DIR', BUILD_SCRIPT, { etcd: 'etcd', kubeApiserver: 'kube-apiserver', kubectl: 'kubectl', helm: 'helm' });
  return cached;
}

export { repoRoot };

/** kube-controller-manager, kube-scheduler, kwok and kwok's default stages (a fuller control plane). */
export interface ControlBins {
  readonly dir: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kwok: string;
  readonly kwokStages: string;
}

export const CONTROL_BUILD_SCRIPT = path.join(repoRoot, 'test', 'k8s-control', 'build-control-bins.sh');

let cachedControl: ControlBins | undefined;

/** The fuller control plane's binaries, built on first use into their own cache (see build-control-bins.sh). */
export function controlBins(): ControlBins {
  cachedControl ??= builtFiles('K8S_CONTROL_BINS_DIR', CONTROL_BUILD_SCRIPT,
    { kubeControllerManager: 'kube-controller-manager', kubeScheduler: 'kube-scheduler', kwok: 'kwok', kwokStages: 'kwok-stages.yaml' });
  return cachedControl;
}
