// Admin-side helpers that tests use to set up clusters: namespaces, ServiceAccounts with
// Roles, TokenRequest tokens, CRDs.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  ApiextensionsV1Api, AuthorizationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api,
  type V1CustomResourceDefinition, type V1PolicyRule,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { k8sBins, repoRoot } from './bins.js';
import type { ControlPlane } from './control-plane.js';
import { waitFor } from './wait.js';

const execFileAsync = promisify(execFile);

function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

export async function createNamespace(kc: KubeConfig, name: string): Promise<void> {
  try {
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (statusCode(err) !== 409) throw err;
  }
}

export interface ServiceAccountAccess {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly rules: readonly V1PolicyRule[];
  readonly annotations?: Record<string, string>;
  /** Role/RoleBinding name; defaults to the ServiceAccount name. */
  readonly roleName?: string;
}

/** Creates a ServiceAccount bound to a namespaced Role with exactly `rules`. */
export async function createServiceAccountWithRole(kc: KubeConfig, access: ServiceAccountAccess): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const roleName = access.roleName ?? access.serviceAccount;
  await createNamespace(kc, access.namespace);
  await core.createNamespacedServiceAccount({
    namespace: access.namespace,
    body: { metadata: { name: access.serviceAccount, ...(access.annotations ? { annotations: access.annotations } : {}) } },
  });
  await rbac.createNamespacedRole({ namespace: access.namespace, body: { metadata: { name: roleName }, rules: [...access.rules] } });
  await rbac.createNamespacedRoleBinding({
    namespace: access.namespace,
    body: {
      metadata: { name: roleName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
      subjects: [{ kind: 'ServiceAccount', name: access.serviceAccount, namespace: access.namespace }],
    },
  });
}

/**
 * Issues a bound token through the TokenRequest API (no controller-manager needed). Thirty days
 * by default: past the 7 days from which a member's Ready message warns of the expiry.
 */
export async function issueToken(kc: KubeConfig, namespace: string, serviceAccount: string, expirationSeconds = 30 * 86_400): Promise<string> {
  const res = await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace, name: serviceAccount, body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = res.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  return token;
}

/** A client that reaches `cp` exactly the way the agent reaches a leader: URL + CA + bearer token. */
export function tokenConfig(cp: Pick<ControlPlane, 'server' | 'caPem'>, token: string, user = 'token-user', caPem = cp.caPem): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name: 'remote', server: cp.server, skipTLSVerify: false, caData: Buffer.from(caPem).toString('base64') },
    { name: user, token },
  );
  return kc;
}

/** Waits until RBAC (evaluated from the apiserver's informer cache) lets `token` do `verb`. */
export async function waitForAccess(cp: ControlPlane, token: string, attrs: { verb: string; resource: string; group?: string; namespace?: string }): Promise<void> {
  const authz = tokenConfig(cp, token).makeApiClient(AuthorizationV1Api);
  await waitFor(`RBAC to allow ${attrs.verb} ${attrs.resource}`, async () => {
    const review = await authz.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { verb: attrs.verb, resource: attrs.resource, group: attrs.group ?? '', ...(attrs.namespace ? { namespace: attrs.namespace } : {}) } } },
    });
    return review.status?.allowed === true;
  }, { timeoutMs: 20_000, intervalMs: 100 });
}

export function loadCrdFiles(dir = path.join(repoRoot, 'charts', 'clusterset-agent', 'crds')): V1CustomResourceDefinition[] {
  const crds: V1CustomResourceDefinition[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const value = doc.toJS() as V1CustomResourceDefinition | null;
      if (value) crds.push(value);
    }
  }
  return crds;
}

/** Creates the CRDs (skipping existing ones) and waits until every one is Established. */
export async function applyCrds(kc: KubeConfig, crds: readonly V1CustomResourceDefinition[]): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const raw = kc.makeApiClient(CustomObjectsApi);
  for (const crd of crds) {
    try {
      // Sent as raw JSON: the typed client's serializer only knows `x_kubernetes_*` property
      // names and would silently drop the YAML's `x-kubernetes-preserve-unknown-fields`.
      await raw.createClusterCustomObject({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', body: crd });
    } catch (err) {
      if (statusCode(err) !== 409) throw err;
    }
  }
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    await waitFor(`CRD ${name} Established`, async () => {
      const current = await api.readCustomResourceDefinition({ name });
      return current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    // Established comes before the watch cache is ready; until then lists answer 429.
    const custom = kc.makeApiClient(CustomObjectsApi);
    const version = crd.spec.versions.find((v) => v.storage)?.name ?? '';
    await waitFor(`CRD ${name} listable`, async () => {
      await custom.listCustomObjectForAllNamespaces({ group: crd.spec.group, version, resourcePlural: crd.spec.names.plural });
      return true;
    }, { timeoutMs: 30_000, intervalMs: 100 });
  }
}

/** `kubectl apply` of `manifests` (YAML, e.g. rendered by helm) against `cp`, through a throwaway file. */
export async function kubectlApply(cp: ControlPlane, manifests: string): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-apply-'));
  try {
    writeFileSync(path.join(dir, 'manifests.yaml'), manifests);
    return await kubectl(cp, ['apply', '-f', path.join(dir, 'manifests.yaml')]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the built kubectl against `cp` with admin credentials. */
export async function kubectl(cp: ControlPlane, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync(k8sBins().kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8' });
  return stdout;
}
