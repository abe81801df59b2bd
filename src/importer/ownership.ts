// Marks every object the importer creates so that it can tell its own objects from a user's
// (it never overwrites or deletes an object it does not own) and find them again by label
// selector, per ClusterSet and leader, after a restart. Pure.
//
// Antrea marks imported objects only with `multicluster.antrea.io/imported-*` annotations and
// no labels, which is why its stale sweep cannot tell its ServiceImports from a user's
// (antrea-wire.md 5.1 item 9). Those annotations are still set (rules.ts), because Antrea's
// proxy and policy controller read them, but ownership is decided only by the labels below.
import { createHash } from 'node:crypto';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'clusterset-agent';
/** ClusterSet ID (the ClusterSet's metadata.name), as a label value: see {@link toLabelValue}. */
export const CLUSTERSET_LABEL = 'multicluster.clusterset-agent.io/clusterset';
/**
 * Leader cluster ID, as a label value: see {@link toLabelValue}. The leader that wrote the
 * object: provenance, not ownership. With several leaders an import's source may move to
 * another leader, which takes the object over as it is (nothing is written when the leaders
 * agree), so the label names the leader that last wrote it.
 */
export const LEADER_LABEL = 'multicluster.clusterset-agent.io/leader';
/**
 * Name of the ResourceImport an object came from. An annotation, not a label: RI names are
 * `<ns>-<name>-service` and the like, easily longer than the 63 characters of a label value.
 */
export const RESOURCE_IMPORT_ANNOTATION = 'multicluster.clusterset-agent.io/resource-import';
/** Leader namespace the ResourceImport was read from (provenance only, not part of ownership). */
export const LEADER_NAMESPACE_ANNOTATION = 'multicluster.clusterset-agent.io/leader-namespace';

/** Whose imports these are, and where they go. Built from the ClusterSet and the agent config. */
export interface ImportOwner {
  clusterSetID: string;
  leaderClusterID: string;
  leaderNamespace: string;
  /** Namespace of the agent (ClusterInfoImports go there). */
  agentNamespace: string;
  localClusterID: string;
}

const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const HASH_CHARS = 10;
const MAX_LABEL_VALUE = 63;

/**
 * An ID as a label value. IDs are DNS subdomains of up to 253 characters, so one that is not
 * already a valid label value (63 characters at most) becomes a readable prefix plus `-` and
 * the first 10 hex digits of its SHA-256: stable across restarts and agent versions, so
 * selectors keep finding objects labelled by an earlier run. 40 bits make an accidental clash
 * between two long IDs sharing a 52-character prefix negligible.
 */
export function toLabelValue(id: string): string {
  if (id.length <= MAX_LABEL_VALUE && LABEL_VALUE.test(id)) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, HASH_CHARS);
  const prefix = id
    .replace(/[^-A-Za-z0-9_.]/g, '-')
    .slice(0, MAX_LABEL_VALUE - HASH_CHARS - 1)
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/[^A-Za-z0-9]+$/, '');
  return prefix === '' ? hash : `${prefix}-${hash}`;
}

/** Labels that mark an object as imported from this owner's leader for this ClusterSet. */
export function ownerLabels(owner: ImportOwner): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [CLUSTERSET_LABEL]: toLabelValue(owner.clusterSetID),
    [LEADER_LABEL]: toLabelValue(owner.leaderClusterID),
  };
}

/** Provenance annotations: which ResourceImport, in which leader namespace. */
export function ownerAnnotations(owner: ImportOwner, resourceImportName: string): Record<string, string> {
  return {
    [RESOURCE_IMPORT_ANNOTATION]: resourceImportName,
    [LEADER_NAMESPACE_ANNOTATION]: owner.leaderNamespace,
  };
}

/** Label selector matching exactly the objects {@link isOwnedBy} accepts for this owner. */
export function ownerSelector(owner: ImportOwner): string {
  return clusterSetSelector(owner.clusterSetID);
}

/** Label selector for every object imported for a ClusterSet, whichever leader it came from. */
export function clusterSetSelector(clusterSetID: string): string {
  return `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${CLUSTERSET_LABEL}=${toLabelValue(clusterSetID)}`;
}

/** Label selector for every object the agent imported, for any ClusterSet. */
export const AGENT_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/** Anything shaped like a Kubernetes object: a typed KubeObject or plain JSON from the API. */
export type ObjectLike = { metadata?: { labels?: Record<string, string> | undefined } | undefined } | Readonly<Record<string, unknown>>;

function labelsOf(obj: ObjectLike): Readonly<Record<string, unknown>> | undefined {
  const metadata: unknown = obj.metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const labels: unknown = (metadata as { labels?: unknown }).labels;
  return typeof labels === 'object' && labels !== null ? (labels as Record<string, unknown>) : undefined;
}

/**
 * The object was imported by this agent for this ClusterSet, from any of its leaders. The
 * leader (label) and the leader namespace are not part of ownership: they are provenance. An
 * edited leader namespace must not turn the agent's own objects into "foreign" ones it may no
 * longer clean up, and with several leaders one leader takes over what another imported.
 */
export function isOwnedBy(obj: ObjectLike, owner: ImportOwner): boolean {
  const labels = labelsOf(obj);
  if (labels === undefined) return false;
  return labels[MANAGED_BY_LABEL] === MANAGED_BY_VALUE && labels[CLUSTERSET_LABEL] === toLabelValue(owner.clusterSetID);
}

/** The object was imported by this agent, for any ClusterSet. */
export function isOwnedByAgent(obj: ObjectLike): boolean {
  return labelsOf(obj)?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
}
