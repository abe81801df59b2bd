// `join --configure-dns` and its reversal on `leave`: the member's CoreDNS serves clusterset.local.
// Reads the `kube-system/coredns` Deployment (its image tag: CoreDNS ≥ 1.12.2) and ConfigMap
// (the Corefile), decides with the pure corefile.ts, and writes only what is missing: a
// ClusterRole + binding letting CoreDNS's ServiceAccount list/watch ServiceImports, then the
// Corefile (RBAC first, so CoreDNS can sync ServiceImports the moment it reloads; the reverse
// order on the way out). The ConfigMap is replaced with its resourceVersion, so a concurrent
// edit fails the write instead of being overwritten. Only `join`/`leave` run this, with the
// admin's kubeconfig: the agent never gets write access to kube-system (docs/dns.md).
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { apisOf } from '../../common/kube/typed-api.js';
import { isNotFound } from '../../common/kube/errors.js';
import { corefileServesClusterset, planCorefilePatch, planCorefileRevert } from './corefile.js';
import { coreDNSVersionVerdict, type CoreDNSVersionVerdict } from './coredns-version.js';

export const COREDNS_NAMESPACE = 'kube-system';
export const COREDNS_NAME = 'coredns';
export const COREFILE_KEY = 'Corefile';
/** join's own grant (the chart's `dns.coreDNSAccess` makes another, named after the release). */
export const COREDNS_ACCESS_NAME = 'clusterset-agent:coredns-serviceimports';

export interface MemberDNS {
  /** The ConfigMap, undefined when absent. */
  readonly configMap: V1ConfigMap | undefined;
  /** The CoreDNS Deployment's first container image, undefined when the Deployment is absent. */
  readonly image: string | undefined;
  readonly version: CoreDNSVersionVerdict;
}

async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** What decides whether and how to edit the member's CoreDNS. */
export async function readMemberDNS(member: KubeConfig): Promise<MemberDNS> {
  const { core, apps } = apisOf(member, 'dns (member)');
  const [configMap, deployment] = await Promise.all([
    orUndefined(() => core.readNamespacedConfigMap({ namespace: COREDNS_NAMESPACE, name: COREDNS_NAME })),
    orUndefined(() => apps.readNamespacedDeployment({ namespace: COREDNS_NAMESPACE, name: COREDNS_NAME })),
  ]);
  const image = deployment?.spec?.template.spec?.containers.find((c) => c.name === COREDNS_NAME)?.image ?? deployment?.spec?.template.spec?.containers[0]?.image;
  return { configMap, image, version: deployment === undefined ? { ok: undefined, why: `the member has no Deployment ${COREDNS_NAMESPACE}/${COREDNS_NAME}` } : coreDNSVersionVerdict(image) };
}

/** Why the member's CoreDNS cannot be configured (join refuses before writing anything), or undefined. */
export function dnsRefusal(state: MemberDNS): string | undefined {
  if (state.version.ok !== true) {
    return `--configure-dns: ${state.version.why}${state.version.ok === undefined ? '; check it is 1.12.2 or newer and configure it by hand (docs/dns.md)' : ''}`;
  }
  const corefile = state.configMap?.data?.[COREFILE_KEY];
  if (corefile === undefined) return `--configure-dns: the member has no ConfigMap ${COREDNS_NAMESPACE}/${COREDNS_NAME} with a ${COREFILE_KEY} key`;
  const plan = planCorefilePatch(corefile);
  if (plan.action === 'refuse') return `--configure-dns: the Corefile in ${COREDNS_NAMESPACE}/${COREDNS_NAME} is not a shape join edits (${plan.why}); nothing was changed. By hand: ${plan.manual}`;
  return undefined;
}

/** The ConfigMap as read (its resourceVersion included: a concurrent edit fails the write) with a new Corefile. */
function withCorefile(configMap: V1ConfigMap, corefile: string): V1ConfigMap {
  const body: V1ConfigMap = { metadata: configMap.metadata ?? {}, data: { ...configMap.data, [COREFILE_KEY]: corefile } };
  if (configMap.binaryData !== undefined) body.binaryData = configMap.binaryData;
  return body;
}

function rbacObjects(serviceAccount: { name: string; namespace: string }) {
  const metadata = { name: COREDNS_ACCESS_NAME, labels: { 'app.kubernetes.io/managed-by': 'clusterset-agent-join' } };
  return {
    role: { metadata, rules: [{ apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceimports'], verbs: ['list', 'watch'] }] },
    binding: {
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: COREDNS_ACCESS_NAME },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: serviceAccount.namespace }],
    },
  };
}

/**
 * Makes the member's CoreDNS serve clusterset.local; returns what was written, one line each
 * (empty when all was in place). Throws with {@link dnsRefusal}'s text when it cannot.
 */
export async function configureMemberDNS(member: KubeConfig, progress: (line: string) => void): Promise<string[]> {
  const state = await readMemberDNS(member);
  const refusal = dnsRefusal(state);
  if (refusal !== undefined) throw new Error(refusal);
  const wrote: string[] = [];
  const note = (line: string) => { wrote.push(line); progress(line); };
  const { rbac, core } = apisOf(member, 'dns (member)');
  const { role, binding } = rbacObjects({ name: COREDNS_NAME, namespace: COREDNS_NAMESPACE });
  if (await orUndefined(() => rbac.readClusterRole({ name: COREDNS_ACCESS_NAME })) === undefined) {
    await rbac.createClusterRole({ body: role });
    note(`member: created ClusterRole ${COREDNS_ACCESS_NAME} (list/watch ServiceImports)`);
  }
  if (await orUndefined(() => rbac.readClusterRoleBinding({ name: COREDNS_ACCESS_NAME })) === undefined) {
    await rbac.createClusterRoleBinding({ body: binding });
    note(`member: created ClusterRoleBinding ${COREDNS_ACCESS_NAME} for ServiceAccount ${COREDNS_NAMESPACE}/${COREDNS_NAME}`);
  }
  const configMap = state.configMap as V1ConfigMap;
  const plan = planCorefilePatch(configMap.data?.[COREFILE_KEY] ?? '');
  if (plan.action === 'write') {
    await core.replaceNamespacedConfigMap({ namespace: COREDNS_NAMESPACE, name: COREDNS_NAME, body: withCorefile(configMap, plan.corefile) });
    note(`member: ConfigMap ${COREDNS_NAMESPACE}/${COREDNS_NAME}: the kubernetes plugin serves clusterset.local (CoreDNS ${state.version.ok === true ? state.version.version : '?'} reloads it with its reload plugin)`);
  }
  return wrote;
}

/** Undoes {@link configureMemberDNS}: only its marked Corefile line and its own RBAC; returns what was changed. */
export async function unconfigureMemberDNS(member: KubeConfig, progress: (line: string) => void): Promise<string[]> {
  const removed: string[] = [];
  const note = (line: string) => { removed.push(line); progress(line); };
  const { core, rbac } = apisOf(member, 'dns (member)');
  const configMap = await orUndefined(() => core.readNamespacedConfigMap({ namespace: COREDNS_NAMESPACE, name: COREDNS_NAME }));
  const corefile = configMap?.data?.[COREFILE_KEY];
  if (configMap !== undefined && corefile !== undefined) {
    const plan = planCorefileRevert(corefile);
    if (plan.action === 'write') {
      await core.replaceNamespacedConfigMap({ namespace: COREDNS_NAMESPACE, name: COREDNS_NAME, body: withCorefile(configMap, plan.corefile) });
      note(`member: ConfigMap ${COREDNS_NAMESPACE}/${COREDNS_NAME}: removed clusterset.local (added by join --configure-dns)`);
    } else if (corefileServesClusterset(corefile).served) {
      progress(`member: ConfigMap ${COREDNS_NAMESPACE}/${COREDNS_NAME} serves clusterset.local by someone else's configuration: left as it is`);
    }
  }
  // Read first: a leave on a member join never configured sends no delete at all.
  if (await orUndefined(() => rbac.readClusterRoleBinding({ name: COREDNS_ACCESS_NAME })) !== undefined
    && await orUndefined(() => rbac.deleteClusterRoleBinding({ name: COREDNS_ACCESS_NAME })) !== undefined) note(`member: deleted ClusterRoleBinding ${COREDNS_ACCESS_NAME}`);
  if (await orUndefined(() => rbac.readClusterRole({ name: COREDNS_ACCESS_NAME })) !== undefined
    && await orUndefined(() => rbac.deleteClusterRole({ name: COREDNS_ACCESS_NAME })) !== undefined) note(`member: deleted ClusterRole ${COREDNS_ACCESS_NAME}`);
  return removed;
}
