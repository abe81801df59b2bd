// What imports write in the member cluster: the target kinds, how their objects are referred
// to and keyed, and the objects this agent owns there.
import type { ImportPolicyConfig } from '../common/config/config.js';
import { apiStatus, httpStatus } from '../common/kube/errors.js';
import type { KindRef, LocalStore, ObjectRef, PlainObject } from './local-store.js';
import { isNotFound } from '../common/kube/errors.js';
import { isOwnedBy, isOwnedByAgent, ownerSelector, type ImportOwner } from './ownership.js';
import type { DesiredObject } from './rules.js';
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import type { ResourceDescriptor } from '../common/api/meta.js';

export type TargetKind = KindRef & { readonly agentNamespaceOnly?: boolean };

/**
 * Every local kind an import can produce. ClusterInfoImports only ever live in the agent
 * namespace, and the chart grants them only there, so they are listed there rather than
 * cluster-wide. Use {@link importTargetKinds} for the kinds a policy enables.
 */
export const IMPORT_TARGET_KINDS: readonly TargetKind[] = [
  { group: '', version: 'v1', plural: 'services', namespaced: true },
  { group: '', version: 'v1', plural: 'endpoints', namespaced: true },
  { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', namespaced: true },
  { group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespaced: true },
  { group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'clusterinfoimports', namespaced: true, agentNamespaceOnly: true },
  { group: 'crd.antrea.io', version: 'v1beta1', plural: 'clusternetworkpolicies', namespaced: false },
  { group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'labelidentities', namespaced: false },
];

/**
 * The import target kinds a policy enables: ClusterNetworkPolicies only when
 * AntreaClusterNetworkPolicy is allowed, LabelIdentities only when enabled and allowed.
 * A disabled kind is not listed (its API may not even be served or granted). ServiceImports
 * are addressed in the version the member serves.
 */
export function importTargetKinds(policy: Pick<ImportPolicyConfig, 'allowedKinds' | 'enableLabelIdentity'>,
  serviceImport: ResourceDescriptor = SERVICE_IMPORT): readonly TargetKind[] {
  return IMPORT_TARGET_KINDS.map((kind) => kind.group === serviceImport.group && kind.plural === serviceImport.plural ? { ...kind, version: serviceImport.version } : kind).filter((kind) => {
    if (kind.plural === 'clusternetworkpolicies') return policy.allowedKinds.includes('AntreaClusterNetworkPolicy');
    if (kind.plural === 'labelidentities') return policy.enableLabelIdentity && policy.allowedKinds.includes('LabelIdentity');
    return true;
  });
}

/** `group/version plural` when `err` says the API server does not serve a kind we tried to write. */
export function missingKind(err: unknown, objects: readonly DesiredObject[]): string | undefined {
  if (httpStatus(err) !== 404 || apiStatus(err)?.details?.name !== undefined) return undefined;
  const message = apiStatus(err)?.message ?? '';
  if (!/could not find the requested resource/i.test(message) && message !== '') return undefined;
  const custom = objects.find((o) => o.group !== '');
  return custom ? `${custom.plural}.${custom.group}/${custom.version}` : undefined;
}

function refOf(kind: KindRef, obj: PlainObject): ObjectRef {
  return { ...kind, name: obj.metadata?.name ?? '', ...(kind.namespaced ? { namespace: obj.metadata?.namespace ?? '' } : {}) };
}

export function keyOf(ref: { group: string; plural: string; namespace?: string; name: string }): string {
  return `${ref.group}/${ref.plural}/${ref.namespace ?? ''}/${ref.name}`;
}

export function desiredRef(d: DesiredObject): ObjectRef {
  return { group: d.group, version: d.version, plural: d.plural, namespaced: d.namespaced, name: d.name, ...(d.namespace !== undefined ? { namespace: d.namespace } : {}) };
}

/** Every object the agent owns for this ClusterSet, found by its labels in every enabled import target kind. */
export async function listOwned(store: LocalStore, owner: ImportOwner, policy: ImportPolicyConfig,
  serviceImport: ResourceDescriptor = SERVICE_IMPORT): Promise<{ ref: ObjectRef; object: PlainObject }[]> {
  // The kinds at once: every reconcile waits for this index, so the first write of an initial
  // sync waited for one list after the other.
  const kinds = importTargetKinds(policy, serviceImport);
  const lists = await Promise.all(kinds.map(async (kind) => {
    try {
      return await store.list(kind, ownerSelector(owner), kind.agentNamespaceOnly ? owner.agentNamespace : undefined);
    } catch (err) {
      // A kind whose CRD is not installed, or that the chart does not grant, holds nothing of ours.
      if (httpStatus(err) === 404 || httpStatus(err) === 403) return [];
      throw err;
    }
  }));
  return kinds.flatMap((kind, i) => (lists[i] ?? []).filter((object) => isOwnedBy(object, owner)).map((object) => ({ ref: refOf(kind, object), object })));
}

/** The same-named Endpoints of a Service ref, which kube-apiserver deletes along with the Service. */
export function endpointsOf(service: ObjectRef): ObjectRef | undefined {
  if (service.group !== '' || service.plural !== 'services') return undefined;
  return { ...service, plural: 'endpoints' };
}

/**
 * Why deleting `ref` would cost an object that is not ours: kube-apiserver deletes a Service's
 * same-named Endpoints with it, whoever created them. Undefined when `ref` is no Service, or
 * its Endpoints are absent or ours (`ownedEndpoints`: keys known to be ours without a read).
 */
export async function endpointsHazard(store: LocalStore, owner: ImportOwner, ref: ObjectRef,
  ownedEndpoints?: ReadonlySet<string>): Promise<{ ref: ObjectRef; why: string } | undefined> {
  const endpoints = endpointsOf(ref);
  if (!endpoints || ownedEndpoints?.has(keyOf(endpoints))) return undefined;
  let live: PlainObject;
  try {
    live = await store.get(endpoints);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  if (isOwnedBy(live, owner)) return undefined;
  return { ref: endpoints, why: isOwnedByAgent(live) ? 'they belong to another ClusterSet' : 'they were not created by clusterset-agent' };
}
