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

/** Returns the binaries, building them when the cache is cold (progress goes to stderr). */
export function k8sBins(): K8sBins {
  if (cached) return cached;
  let dir = process.env['K8S_BINS_DIR'];
  if (!dir) {
    dir = execFileSync('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
    // Child test processes inherit the answer instead of re-hashing the inputs.
    process.env['K8S_BINS_DIR'] = dir;
  }
  const bins: K8sBins = {
    dir,
    etcd: path.join(dir, 'etcd'),
    kubeApiserver: path.join(dir, 'kube-apiserver'),
    kubectl: path.join(dir, 'kubectl'),
    helm: path.join(dir, 'helm'),
  };
  for (const file of [bins.etcd, bins.kubeApiserver, bins.kubectl, bins.helm]) {
    if (!existsSync(file)) throw new Error(`k8s binary missing: ${file} (K8S_BINS_DIR=${dir}); rerun ${BUILD_SCRIPT}`);
  }
  cached = bins;
  return bins;
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
  if (cachedControl) return cachedControl;
  let dir = process.env['K8S_CONTROL_BINS_DIR'];
  if (!dir) {
    dir = execFileSync('bash', [CONTROL_BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
    process.env['K8S_CONTROL_BINS_DIR'] = dir;
  }
  const bins: ControlBins = {
    dir,
    kubeControllerManager: path.join(dir, 'kube-controller-manager'),
    kubeScheduler: path.join(dir, 'kube-scheduler'),
    kwok: path.join(dir, 'kwok'),
    kwokStages: path.join(dir, 'kwok-stages.yaml'),
  };
  for (const file of [bins.kubeControllerManager, bins.kubeScheduler, bins.kwok, bins.kwokStages]) {
    if (!existsSync(file)) throw new Error(`control-plane binary missing: ${file} (K8S_CONTROL_BINS_DIR=${dir}); rerun ${CONTROL_BUILD_SCRIPT}`);
  }
  cachedControl = bins;
  return bins;
}
