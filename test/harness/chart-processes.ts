// What a kubelet would do for the chart's Deployments on a bare control plane: run the agent
// (or `leader run`) as a local process with nothing but the token of the ServiceAccount the
// chart created and the config the chart rendered. Used by the demo and by the docs test, so
// every process they start proves the chart's RBAC is enough.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { repoRoot } from './bins.js';
import type { ControlPlane } from './control-plane.js';
import { issueToken } from './kube.js';
import { startProcess, type ManagedProcess } from './processes.js';

export const CLI = ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts')];

/** A kubeconfig file holding only the token of the ServiceAccount the release `instance` created in `namespace`. */
export async function chartServiceAccountKubeconfig(cp: ControlPlane, namespace: string, instance: string, dir: string): Promise<{ sa: string; file: string }> {
  const sa = (await cp.adminConfig().makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace, labelSelector: `app.kubernetes.io/instance=${instance}` })).items[0]?.metadata?.name;
  if (!sa) throw new Error(`the chart created no ServiceAccount in ${cp.name}/${namespace}`);
  const token = await issueToken(cp.adminConfig(), namespace, sa);
  const file = path.join(dir, `${cp.name}-${sa}.kubeconfig`);
  writeFileSync(file, `apiVersion: v1
kind: Config
clusters: [ { name: cluster, cluster: { server: ${cp.server}, certificate-authority: ${cp.caFile} } } ]
users: [ { name: ${sa}, user: { token: ${token} } } ]
contexts: [ { name: sa, context: { cluster: cluster, user: ${sa} } } ]
current-context: sa
`, { mode: 0o600 });
  return { sa, file };
}

/** The agent config the release rendered into its ConfigMap, written to a file. */
export async function chartAgentConfig(cp: ControlPlane, namespace: string, instance: string, dir: string): Promise<string> {
  const list = await cp.adminConfig().makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace, labelSelector: `app.kubernetes.io/instance=${instance}` });
  const text = Object.values(list.items[0]?.data ?? {})[0];
  if (!text) throw new Error(`release ${instance} rendered no agent config in ${cp.name}/${namespace}`);
  const file = path.join(dir, `${cp.name}-${instance}-config.yaml`);
  writeFileSync(file, text);
  return file;
}

export interface ChartRelease {
  readonly cp: ControlPlane;
  readonly namespace: string;
  readonly instance: string;
  readonly role: 'member' | 'leader';
  /** The container's environment as the kubelet would set it (plain values and the Pod's namespace). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Finds the releases of this chart on `cp` by their Deployments: a member agent, or a leader
 * controller (component=leader).
 */
export async function chartReleases(cp: ControlPlane): Promise<ChartRelease[]> {
  const deployments = await cp.adminConfig().makeApiClient(AppsV1Api).listDeploymentForAllNamespaces({ labelSelector: 'app.kubernetes.io/name=clusterset-agent' });
  return deployments.items.map((d) => {
    const namespace = d.metadata?.namespace ?? '';
    const env: Record<string, string> = {};
    for (const e of d.spec?.template.spec?.containers[0]?.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = namespace;
    }
    return {
      cp, namespace, env,
      instance: d.metadata?.labels?.['app.kubernetes.io/instance'] ?? '',
      role: d.metadata?.labels?.['app.kubernetes.io/component'] === 'leader' ? 'leader' as const : 'member' as const,
    };
  });
}

/** Starts a release's process the way its Deployment would run it, with the chart's ServiceAccount token. */
export async function startChartProcess(release: ChartRelease, dir: string, extraArgs: readonly string[] = []): Promise<ManagedProcess> {
  const { cp, namespace, instance, role } = release;
  const { file } = await chartServiceAccountKubeconfig(cp, namespace, instance, dir);
  const common = ['--kubeconfig', file, '--namespace', namespace, '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0', ...extraArgs];
  const args = role === 'leader'
    ? ['leader', 'run', ...common]
    : ['run', '--config', await chartAgentConfig(cp, namespace, instance, dir), ...common];
  const logFile = path.join(dir, `${cp.name}-${instance}.log`);
  return startProcess(`${cp.name} ${instance}`, process.execPath, [...CLI, ...args], logFile, { ...process.env, ...release.env });
}
