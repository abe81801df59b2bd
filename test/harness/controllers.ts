// The fuller control plane a test opts into (ControlPlaneOptions.controllers): beside
// kube-apiserver + etcd, kube-controller-manager (Deployments, EndpointSlice and
// EndpointSlice-mirroring controllers, namespace finalisation, garbage collection, default
// ServiceAccounts), kube-scheduler, and one kwok node that "runs" scheduled Pods without
// containers (Running, Ready, a Pod IP), driven by kwok's own default stages.
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { controlBins } from './bins.js';
import { type ManagedProcess, startProcess, tail } from './processes.js';
import { waitFor } from './wait.js';

export interface ControllersOptions {
  readonly name: string;
  readonly dir: string;
  readonly kubeconfigPath: string;
  readonly pkiDir: string;
  readonly adminConfig: () => KubeConfig;
  /** Pod IPs kwok hands out (pick distinct ranges for clusters whose endpoints meet). */
  readonly podCIDR: string;
  readonly startTimeoutMs: number;
}

export interface Controllers {
  readonly nodeName: string;
  logs(lines?: number): string;
  stop(): Promise<void>;
}

export const KWOK_NODE_NAME = 'kwok-node-0';

export async function startControllers(options: ControllersOptions): Promise<Controllers> {
  const bins = controlBins();
  const { name, dir, kubeconfigPath, pkiDir } = options;
  const logFile = (component: string) => path.join(dir, `${component}.log`);
  const processes: ManagedProcess[] = [];
  const logs = (lines = 40) => ['kube-controller-manager', 'kube-scheduler', 'kwok']
    .map((c) => `--- ${name} ${c} ---\n${tail(logFile(c), lines)}`).join('\n');
  const stop = async () => {
    for (const p of processes.reverse()) await p.stop();
  };
  try {
    processes.push(startProcess(`kube-controller-manager-${name}`, bins.kubeControllerManager, [
      `--kubeconfig=${kubeconfigPath}`,
      '--leader-elect=false', '--secure-port=0',
      `--service-account-private-key-file=${path.join(pkiDir, 'sa.key')}`,
      `--root-ca-file=${path.join(pkiDir, 'ca.crt')}`,
      // Tests wait on controllers: do not throttle them to a real cluster's defaults.
      '--kube-api-qps=200', '--kube-api-burst=400',
      '--concurrent-deployment-syncs=10', '--concurrent-service-endpoint-syncs=10', '--concurrent-namespace-syncs=10',
    ], logFile('kube-controller-manager')));
    processes.push(startProcess(`kube-scheduler-${name}`, bins.kubeScheduler, [
      `--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--secure-port=0',
      '--kube-api-qps=200', '--kube-api-burst=400',
    ], logFile('kube-scheduler')));
    processes.push(startProcess(`kwok-${name}`, bins.kwok, [
      `--kubeconfig=${kubeconfigPath}`, `--config=${bins.kwokStages}`,
      '--manage-all-nodes=false', '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      `--cidr=${options.podCIDR}`, '--node-ip=127.0.0.1', '--node-lease-duration-seconds=40',
    ], logFile('kwok')));

    const core = options.adminConfig().makeApiClient(CoreV1Api);
    await core.createNode({
      body: {
        metadata: {
          name: KWOK_NODE_NAME,
          annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
          labels: { 'kubernetes.io/hostname': KWOK_NODE_NAME, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
        },
      },
    });
    await waitFor(`kwok node Ready on ${name}`, async () => {
      for (const p of processes) if (!p.isRunning()) throw new Error(`${p.name} exited early`);
      const node = await core.readNode({ name: KWOK_NODE_NAME });
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    }, { timeoutMs: options.startTimeoutMs, intervalMs: 250 });
    // The serviceaccount controller is up once "default" has its ServiceAccount.
    await waitFor(`kube-controller-manager on ${name} (default ServiceAccount)`, async () => {
      for (const p of processes) if (!p.isRunning()) throw new Error(`${p.name} exited early`);
      return core.readNamespacedServiceAccount({ namespace: 'default', name: 'default' }).then(() => true, () => false);
    }, { timeoutMs: options.startTimeoutMs, intervalMs: 250 });
  } catch (err) {
    const message = `${(err as Error).message}\n${logs(60)}`;
    await stop();
    throw new Error(message, { cause: err });
  }
  return { nodeName: KWOK_NODE_NAME, logs, stop };
}
