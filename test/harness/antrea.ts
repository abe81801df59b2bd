// The real Antrea v2.7 multicluster controller (antrea-mc-controller) beside the harness's
// control planes: built from its Go module (or the vendored archives) by
// test/antrea-bins/build-antrea-bins.sh, installed with Antrea's own manifests as they are, and
// run as a process with its own ServiceAccount's token, the way its Deployment would run it.
// Its webhook configurations are re-pointed from the in-cluster Service to the process on
// loopback, and it gets a private mount namespace with its own /run, so the self-signed webhook
// certificate it writes under /var/run/antrea stays out of the machine's /run.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AdmissionregistrationV1Api, CustomObjectsApi, RbacAuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { CLUSTERSET } from '../../src/common/api/antrea.js';
import { CLUSTER_ID_ANNOTATION } from '../../src/common/api/names.js';
import { builtFiles, repoRoot } from './bins.js';
import { freePort, type ControlPlane } from './control-plane.js';
import { createNamespace, issueToken, kubectl } from './kube.js';
import { type ManagedProcess, startProcess, tail } from './processes.js';
import { waitFor } from './wait.js';

export const ANTREA_BUILD_SCRIPT = path.join(repoRoot, 'test', 'antrea-bins', 'build-antrea-bins.sh');
/** Where Antrea's leader manifests put its controller (antrea-multicluster-leader-namespaced.yml hard-codes it). */
export const ANTREA_LEADER_NS = 'antrea-multicluster';
/** Where Antrea's member manifests put its controller. */
export const ANTREA_MEMBER_NS = 'kube-system';
const CONTROLLER_SA = 'antrea-mc-controller';
/** The Role Antrea's leader manifests give members (what `antctl mc create membertoken` binds). */
export const ANTREA_MEMBER_ROLE = 'antrea-mc-member-cluster-role';

export interface AntreaBins {
  readonly dir: string;
  readonly controller: string;
  yaml(file: string): string;
}

let cached: AntreaBins | undefined;

/** antrea-mc-controller and Antrea's manifests, built on first use (progress on stderr) and cached. */
export function antreaBins(): AntreaBins {
  if (cached) return cached;
  const { dir, controller } = builtFiles('ANTREA_BINS_DIR', ANTREA_BUILD_SCRIPT, { controller: 'antrea-mc-controller' });
  const yamls = path.join(dir, 'yamls');
  cached = { dir, controller, yaml: (file) => readFileSync(path.join(yamls, file), 'utf8') };
  return cached;
}

type Doc = { kind?: string; metadata?: { name?: string; namespace?: string }; data?: Record<string, string>; webhooks?: { name: string; clientConfig: { service?: { path?: string } } }[] };
const docs = (text: string): Doc[] => parseAllDocuments(text).map((d) => d.toJS() as Doc | null).filter((d): d is Doc => d !== null);

async function applyFile(cp: ControlPlane, file: string): Promise<void> {
  // Server-side: the CRDs are too large for client-side apply's last-applied annotation.
  await kubectl(cp, ['apply', '--server-side', '-f', path.join(antreaBins().dir, 'yamls', file)]);
}

async function waitForCrds(cp: ControlPlane, file: string): Promise<void> {
  const names = docs(antreaBins().yaml(file)).filter((d) => d.kind === 'CustomResourceDefinition').map((d) => `crd/${d.metadata?.name ?? ''}`);
  if (names.length > 0) await kubectl(cp, ['wait', '--for=condition=Established', '--timeout=60s', ...names]);
}

/** Antrea's leader manifests, as they are: the global one (CRDs, ClusterRoles), then the namespaced one. */
export async function installAntreaLeader(cp: ControlPlane): Promise<void> {
  await createNamespace(cp.adminConfig(), ANTREA_LEADER_NS);
  await applyFile(cp, 'antrea-multicluster-leader-global.yml');
  await waitForCrds(cp, 'antrea-multicluster-leader-global.yml');
  await applyFile(cp, 'antrea-multicluster-leader-namespaced.yml');
}

/** Antrea's member manifests and Antrea's own CRDs (the member watches Tiers and ClusterNetworkPolicies). */
export async function installAntreaMember(cp: ControlPlane): Promise<void> {
  await applyFile(cp, 'antrea-crds.yml');
  await applyFile(cp, 'antrea-multicluster-member.yml');
  await waitForCrds(cp, 'antrea-crds.yml');
  await waitForCrds(cp, 'antrea-multicluster-member.yml');
}

/** The leader's own ClusterSet, in Antrea's v1alpha2 shape (what Antrea's docs have the admin create). */
export async function createAntreaLeaderClusterSet(cp: ControlPlane, clusterSetID: string, leaderClusterID: string): Promise<void> {
  await cp.adminConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: ANTREA_LEADER_NS,
    body: { apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: clusterSetID },
      spec: { clusterID: leaderClusterID, leaders: [{ clusterID: leaderClusterID }] } },
  });
}

/**
 * What `antctl mc create membertoken` does on Antrea's leader: a ServiceAccount annotated with
 * the member's cluster ID, bound to Antrea's member Role; returns a token for it.
 */
export async function createAntreaMemberToken(cp: ControlPlane, clusterID: string): Promise<string> {
  const kc = cp.adminConfig();
  const name = `member-${clusterID}`;
  await unlessExists(() => kc.makeApiClient(CoreV1Api).createNamespacedServiceAccount({
    namespace: ANTREA_LEADER_NS, body: { metadata: { name, annotations: { [CLUSTER_ID_ANNOTATION]: clusterID } } },
  }));
  await unlessExists(() => kc.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
    namespace: ANTREA_LEADER_NS,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ANTREA_MEMBER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ANTREA_LEADER_NS }],
    },
  }));
  return issueToken(kc, ANTREA_LEADER_NS, name);
}

async function unlessExists(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

export interface AntreaController {
  readonly role: 'leader' | 'member';
  readonly process: ManagedProcess;
  readonly pid: number;
  readonly healthPort: number;
  /** performance.now() when its process was spawned. */
  readonly spawnedAt: number;
  /** performance.now() when its /readyz (controller-runtime's ping) first answered 200, polled every 50 ms. */
  readonly readyzAt: number;
  /** klog's output, one line per entry, each with its time. */
  readonly logFile: string;
  logs(lines?: number): string;
  stop(): Promise<void>;
  /** SIGKILL, like a crash. */
  kill(): Promise<void>;
}

/** Re-points every webhook of the manifests' webhook configurations at the process on loopback. */
async function repointWebhooks(cp: ControlPlane, manifestFile: string, port: number): Promise<string[]> {
  const api = cp.adminConfig().makeApiClient(AdmissionregistrationV1Api);
  const names: string[] = [];
  for (const doc of docs(antreaBins().yaml(manifestFile))) {
    const name = doc.metadata?.name ?? '';
    if (doc.kind !== 'MutatingWebhookConfiguration' && doc.kind !== 'ValidatingWebhookConfiguration') continue;
    names.push(`${doc.kind}/${name}`);
    const patch = (doc.webhooks ?? []).map((w, i) => ({
      op: 'replace', path: `/webhooks/${String(i)}/clientConfig`,
      value: { url: `https://127.0.0.1:${String(port)}${w.clientConfig.service?.path ?? ''}` },
    }));
    if (doc.kind === 'MutatingWebhookConfiguration') await api.patchMutatingWebhookConfiguration({ name, body: patch });
    else await api.patchValidatingWebhookConfiguration({ name, body: patch });
  }
  return names;
}

async function webhooksHaveCa(cp: ControlPlane, names: readonly string[]): Promise<boolean> {
  const api = cp.adminConfig().makeApiClient(AdmissionregistrationV1Api);
  for (const ref of names) {
    const [kind, name = ''] = ref.split('/');
    const config = kind === 'MutatingWebhookConfiguration' ? await api.readMutatingWebhookConfiguration({ name }) : await api.readValidatingWebhookConfiguration({ name });
    if (!(config.webhooks ?? []).every((w) => (w.clientConfig.caBundle ?? '') !== '')) return false;
  }
  return true;
}

let isolation: readonly string[] | undefined;

/**
 * The `unshare` arguments that give a process a private mount namespace here: as root, a plain
 * mount namespace; otherwise inside a user namespace that maps the caller to root.
 */
function mountNamespaceArgs(): readonly string[] {
  if (isolation) return isolation;
  const candidates = [['--mount', '--propagation', 'private'], ['--user', '--map-root-user', '--mount', '--propagation', 'private']];
  const errors: string[] = [];
  for (const args of candidates) {
    try {
      execFileSync('unshare', [...args, '--', 'sh', '-c', 'mount -t tmpfs antrea-run /run'], { stdio: ['ignore', 'ignore', 'pipe'] });
      isolation = args;
      return args;
    } catch (err) {
      errors.push(`unshare ${args.join(' ')}: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}`);
    }
  }
  throw new Error(`cannot give antrea-mc-controller a private /run (it writes its webhook certificate under /var/run/antrea): ${errors.join('; ')}`);
}

export interface AntreaControllerOptions {
  /** Extra fields merged into its MultiClusterConfig (the ConfigMap's controller_manager_config.yaml). */
  readonly config?: Record<string, unknown>;
  /** klog verbosity. */
  readonly verbosity?: number;
}

/**
 * Starts `antrea-mc-controller leader|member` against `cp`, as its Deployment would: with its
 * ServiceAccount's token, POD_NAMESPACE, and the MultiClusterConfig of its ConfigMap (health and
 * webhook on loopback ports). Resolves once it is ready and its webhooks carry its CA.
 */
export async function startAntreaController(cp: ControlPlane, role: 'leader' | 'member', options: AntreaControllerOptions = {}): Promise<AntreaController> {
  const bins = antreaBins();
  const namespace = role === 'leader' ? ANTREA_LEADER_NS : ANTREA_MEMBER_NS;
  const manifest = role === 'leader' ? 'antrea-multicluster-leader-namespaced.yml' : 'antrea-multicluster-member.yml';
  const [healthPort, webhookPort] = [await freePort(), await freePort()];
  const configMap = docs(bins.yaml(manifest)).find((d) => d.kind === 'ConfigMap' && d.metadata?.name === 'antrea-mc-controller-config');
  const base = parseAllDocuments(configMap?.data?.['controller_manager_config.yaml'] ?? '')[0]?.toJS() as Record<string, unknown> | undefined;
  if (!base) throw new Error(`no controller_manager_config.yaml in ${manifest}`);
  const config = {
    ...base, ...(options.config ?? {}),
    health: { healthProbeBindAddress: `127.0.0.1:${String(healthPort)}` },
    metrics: { bindAddress: '0' },
    webhook: { host: '127.0.0.1', port: webhookPort },
  };
  const tag = `antrea-${role}-${cp.name}-${String(healthPort)}`;
  const configFile = path.join(cp.dir, `${tag}.yaml`);
  writeFileSync(configFile, stringify(config));
  const token = await issueToken(cp.adminConfig(), namespace, CONTROLLER_SA, 24 * 3600);
  const kubeconfig = path.join(cp.dir, `${tag}.kubeconfig`);
  writeFileSync(kubeconfig, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: cp.server, 'certificate-authority': cp.caFile } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  const webhooks = await repointWebhooks(cp, manifest, webhookPort);
  const logFile = path.join(cp.dir, `${tag}.log`);
  const spawnedAt = performance.now();
  let readyzAt = NaN;
  const proc = startProcess(tag, 'env', [
    `KUBECONFIG=${kubeconfig}`, `POD_NAMESPACE=${namespace}`,
    'unshare', ...mountNamespaceArgs(), '--',
    'sh', '-c', 'mount -t tmpfs antrea-run /run && exec "$0" "$@"',
    bins.controller, role, `--config=${configFile}`, `--v=${String(options.verbosity ?? 2)}`,
  ], logFile);
  const logs = (lines = 60) => `--- ${tag} (${logFile}) ---\n${tail(logFile, lines)}`;
  try {
    await waitFor(`${tag} ready`, async () => {
      if (!proc.isRunning()) throw new Error(`${tag} exited early`);
      const ready = await fetch(`http://127.0.0.1:${String(healthPort)}/readyz`).then((r) => r.ok, () => false);
      if (ready && Number.isNaN(readyzAt)) readyzAt = performance.now();
      return ready && await webhooksHaveCa(cp, webhooks);
    }, { timeoutMs: 120_000, intervalMs: 50 });
  } catch (err) {
    await proc.stop();
    throw new Error(`${(err as Error).message}\n${logs(80)}`, { cause: err });
  }
  return {
    role, process: proc, pid: proc.pid, healthPort, spawnedAt, readyzAt, logFile, logs,
    stop: () => proc.stop(),
    kill: () => proc.kill(),
  };
}

