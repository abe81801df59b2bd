// Stock CoreDNS (v1.15.0, built from the Go module proxy by test/coredns/build-coredns.sh) run out
// of cluster against a member control plane, the way a member's own CoreDNS would serve
// clusterset.local: the kubernetes plugin with `kubeconfig` pointing at the member and
// `multicluster clusterset.local`, on a loopback port, with only CoreDNS's own RBAC (kubeadm's
// `system:coredns`) plus what the chart grants it (`dns.coreDNSAccess`), through a
// ServiceAccount token. Tests query it with Node's own resolver.
import { execFileSync } from 'node:child_process';
import { promises as dns } from 'node:dns';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RbacAuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { builtFiles, k8sBins, repoRoot } from './bins.js';
import { freePort, type ControlPlane } from './control-plane.js';
import { createNamespace, issueToken, kubectlApply } from './kube.js';
import { startProcess, type ManagedProcess } from './processes.js';
import { waitFor } from './wait.js';

export const COREDNS_BUILD_SCRIPT = path.join(repoRoot, 'test', 'coredns', 'build-coredns.sh');
export const COREDNS_NAMESPACE = 'kube-system';
export const COREDNS_SERVICE_ACCOUNT = 'coredns';

let cachedBinary: string | undefined;
let instances = 0;

/** The CoreDNS binary, built on first use into its own cache (see build-coredns.sh). */
export function coreDNSBinary(): string {
  if (cachedBinary !== undefined) return cachedBinary;
  cachedBinary = builtFiles('COREDNS_DIR', COREDNS_BUILD_SCRIPT, { coredns: 'coredns' }).coredns;
  return cachedBinary;
}

/** kubeadm's `system:coredns` ClusterRole (what stock CoreDNS's kubernetes plugin reads). */
const KUBEADM_COREDNS_RULES = [
  { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
];

/**
 * `kube-system/coredns` as kubeadm creates it (ServiceAccount, `system:coredns` ClusterRole and
 * binding) plus the chart's CoreDNS RBAC rendered by the real helm from the chart
 * (`dns.coreDNSAccess=true`) when `chartAccess`; returns a kubeconfig file with only that
 * ServiceAccount's token.
 */
export async function coreDNSServiceAccountKubeconfig(cp: ControlPlane, dir: string, options: { chartAccess?: boolean } = {}): Promise<string> {
  const kc = cp.adminConfig();
  await createNamespace(kc, COREDNS_NAMESPACE);
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const ignoreExists = (err: unknown) => { if ((err as { code?: number }).code !== 409) throw err; };
  await core.createNamespacedServiceAccount({ namespace: COREDNS_NAMESPACE, body: { metadata: { name: COREDNS_SERVICE_ACCOUNT } } }).catch(ignoreExists);
  await rbac.createClusterRole({ body: { metadata: { name: 'system:coredns' }, rules: KUBEADM_COREDNS_RULES } }).catch(ignoreExists);
  await rbac.createClusterRoleBinding({ body: {
    metadata: { name: 'system:coredns' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
    subjects: [{ kind: 'ServiceAccount', name: COREDNS_SERVICE_ACCOUNT, namespace: COREDNS_NAMESPACE }],
  } }).catch(ignoreExists);
  if (options.chartAccess !== false) {
    const rendered = execFileSync(k8sBins().helm, ['template', 'csa', path.join(repoRoot, 'charts', 'clusterset-agent'), '-n', 'clusterset-agent',
      '--set', 'dns.coreDNSAccess=true', '--show-only', 'templates/coredns-rbac.yaml'], { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: path.join(dir, 'helm'), HELM_CONFIG_HOME: path.join(dir, 'helm'), HELM_DATA_HOME: path.join(dir, 'helm') } });
    await kubectlApply(cp, rendered);
  }
  const token = await issueToken(kc, COREDNS_NAMESPACE, COREDNS_SERVICE_ACCOUNT);
  const file = path.join(dir, `${cp.name}-coredns.kubeconfig`);
  writeFileSync(file, `apiVersion: v1
kind: Config
clusters: [ { name: cluster, cluster: { server: ${cp.server}, certificate-authority: ${cp.caFile} } } ]
users: [ { name: coredns, user: { token: ${token} } } ]
contexts: [ { name: coredns, context: { cluster: cluster, user: coredns } } ]
current-context: coredns
`, { mode: 0o600 });
  return file;
}

export interface CoreDNSPorts {
  readonly dns: number;
  readonly ready: number;
}

/** The Corefile the issue names: `kubernetes cluster.local clusterset.local { multicluster clusterset.local }`. */
export function minimalCorefile(kubeconfig: string, ports: CoreDNSPorts): string {
  return `.:${String(ports.dns)} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:${String(ports.ready)}
    kubernetes cluster.local clusterset.local {
        kubeconfig ${kubeconfig} coredns
        multicluster clusterset.local
    }
}
`;
}

export interface CoreDNS {
  readonly port: number;
  readonly process: ManagedProcess;
  readonly corefile: string;
  /** The last lines of its log, for failure messages. */
  logTail(lines?: number): string;
  /** A resolver asking only this CoreDNS (no search list, no cache). */
  resolver(): dns.Resolver;
  stop(): Promise<void>;
}

/**
 * Starts CoreDNS on loopback ports against `cp` and waits for its `ready` plugin (the kubernetes
 * plugin has synced its caches). `corefile` builds the configuration from the ports; the default
 * is {@link minimalCorefile}.
 */
export async function startCoreDNS(cp: ControlPlane, options: { corefile?: (kubeconfig: string, ports: CoreDNSPorts) => string; chartAccess?: boolean } = {}): Promise<CoreDNS> {
  const binary = coreDNSBinary();
  // A directory per instance: a Corefile with `reload` re-reads its file, which must stay its own.
  const dir = path.join(cp.dir, `coredns-${String(++instances)}`);
  mkdirSync(dir, { recursive: true });
  const kubeconfig = await coreDNSServiceAccountKubeconfig(cp, dir, options.chartAccess === undefined ? {} : { chartAccess: options.chartAccess });
  const ports: CoreDNSPorts = { dns: await freePort(), ready: await freePort() };
  const corefile = (options.corefile ?? minimalCorefile)(kubeconfig, ports);
  const corefilePath = path.join(dir, 'Corefile');
  writeFileSync(corefilePath, corefile);
  const proc = startProcess(`coredns-${cp.name}`, binary, ['-conf', corefilePath], path.join(dir, 'coredns.log'));
  await waitFor(`CoreDNS for ${cp.name} ready on 127.0.0.1:${String(ports.ready)}`, async () => {
    if (!proc.isRunning()) throw new Error(`CoreDNS exited early; see ${proc.logFile}`);
    try {
      return (await fetch(`http://127.0.0.1:${String(ports.ready)}/ready`)).ok;
    } catch {
      return false;
    }
  }, { timeoutMs: 30_000, intervalMs: 100 });
  // `ready` can answer before the DNS listener is up (seen: ECONNREFUSED right after /ready was
  // 200): wait for any DNS answer at all, whatever its code.
  const probe = new dns.Resolver({ timeout: 500, tries: 1 });
  probe.setServers([`127.0.0.1:${String(ports.dns)}`]);
  await waitFor(`CoreDNS for ${cp.name} answering on 127.0.0.1:${String(ports.dns)}`, async () => {
    if (!proc.isRunning()) throw new Error(`CoreDNS exited early; see ${proc.logFile}`);
    const answer = await lookup(() => probe.resolveTxt('dns-version.cluster.local'));
    return !('error' in answer) || !['ECONNREFUSED', 'ETIMEOUT'].includes(answer.error);
  }, { timeoutMs: 30_000, intervalMs: 100 });
  return {
    port: ports.dns,
    process: proc,
    corefile,
    logTail: (lines = 40) => {
      try {
        return `--- ${proc.logFile} (running: ${String(proc.isRunning())}) ---\n${readFileSync(proc.logFile, 'utf8').split('\n').slice(-lines).join('\n')}`;
      } catch {
        return `(no log at ${proc.logFile})`;
      }
    },
    resolver() {
      const resolver = new dns.Resolver({ timeout: 1000, tries: 2 });
      resolver.setServers([`127.0.0.1:${String(ports.dns)}`]);
      return resolver;
    },
    stop: () => proc.stop(),
  };
}

/** The answer to one query: the records, or the DNS error code (ENOTFOUND is NXDOMAIN, ENODATA an empty answer). */
export async function lookup<T>(query: () => Promise<T>): Promise<T | { readonly error: string }> {
  try {
    return await query();
  } catch (err) {
    return { error: (err as { code?: string }).code ?? String(err) };
  }
}
