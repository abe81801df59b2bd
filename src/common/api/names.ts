/**
 * Every name of the wire in one place: the rules a name must follow (the API server's
 * DNS-1123 checks, the cluster-ID grammar), namespaces, annotations, labels, finalizers, Secret
 * keys, and the functions that derive object names (`member-announce-from-<id>`,
 * `antrea-mc-<name>`, ResourceImport and ResourceExport names). Antrea's names are
 * load-bearing: its controllers find objects by them (`../shared/spec/antrea-wire.md`).
 */
import type { RESOURCE_EXPORT_KIND } from './antrea.js';

// ---------------------------------------------------------------------------------------
// Name rules: Kubernetes object names, with the API server's exact rules (apimachinery's
// IsDNS1123Label and IsDNS1123Subdomain), and the cluster-ID grammar
// ---------------------------------------------------------------------------------------

export const DNS_LABEL_MAX_LENGTH = 63;
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

const LABEL = '[a-z0-9](?:[-a-z0-9]*[a-z0-9])?';
const DNS_LABEL = new RegExp(`^${LABEL}$`);
// Dot-separated labels: no empty label (`a..b`), none starting or ending with '-'. Like
// Kubernetes, only the whole name is length-limited, not each label in it.
const DNS_SUBDOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** A DNS-1123 label: lower-case letters, digits and '-', alphanumeric at both ends, 1-63 characters (e.g. a namespace). */
export function isDnsLabel(value: unknown): value is string {
  // Length first: it also bounds the regex's backtracking on long hostile input.
  return typeof value === 'string' && value.length <= DNS_LABEL_MAX_LENGTH && DNS_LABEL.test(value);
}

/** A DNS-1123 subdomain: DNS labels joined by '.', 1-253 characters (most object names). */
export function isDnsSubdomain(value: unknown): value is string {
  return typeof value === 'string' && value.length <= DNS_SUBDOMAIN_MAX_LENGTH && DNS_SUBDOMAIN.test(value);
}

/**
 * The one cluster-ID grammar (README, "Cluster IDs"), shared by the member's ClusterSet spec,
 * `leader create-member-token`, the leader's ServiceAccount → cluster-ID map and the admission
 * policies: a DNS-1123 label. An ID is embedded in object names (`member-announce-from-<id>`,
 * `<id>-<ns>-<name>-service`) and Antrea's leader requires a label, so dots are refused.
 */
export const CLUSTER_ID_RULE = "a cluster ID is a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit (no dots)";

export function isClusterId(value: unknown): value is string {
  return isDnsLabel(value);
}

/** Why `value` is not a cluster ID, in the same words everywhere; undefined when it is one. */
export function clusterIdProblem(value: unknown): string | undefined {
  return isClusterId(value) ? undefined : `cluster ID ${JSON.stringify(value)} is not valid: ${CLUSTER_ID_RULE}`;
}

/** Whether two cluster IDs form a dash-prefix pair (`east`, `east-1`): their export names can collide. */
export function dashPrefixPair(a: string, b: string): boolean {
  return a !== b && (a.startsWith(`${b}-`) || b.startsWith(`${a}-`));
}

// ---------------------------------------------------------------------------------------
// Names, annotations, labels, finalizers
// ---------------------------------------------------------------------------------------

/** Default leader Namespace (holds the leader's ClusterSet, MCAs, REs, RIs). */
export const DEFAULT_LEADER_NAMESPACE = 'antrea-multicluster';
/** Default member Namespace (Antrea's member controller runs in kube-system). */
export const DEFAULT_MEMBER_NAMESPACE = 'kube-system';

/** MCA heartbeat annotation (RFC 3339 time), key `touch-ts`. Must change on every heartbeat write. */
export const TIMESTAMP_ANNOTATION = 'touch-ts';
/** Name prefix of a MemberClusterAnnounce: `member-announce-from-<memberClusterID>`. */
export const MEMBER_ANNOUNCE_PREFIX = 'member-announce-from-';
/** Finalizer prefix the leader adds to MCAs: `memberclusterannounce.finalizer.antrea.io/<clusterID>`. */
export const MEMBER_ANNOUNCE_FINALIZER_PREFIX = 'memberclusterannounce.finalizer.antrea.io/';

/** Name prefix of objects created locally from imports (`antrea-mc-<name>`); load-bearing for Antrea. */
export const ANTREA_MC_PREFIX = 'antrea-mc-';
/** Annotation (value {@link ANNOTATION_TRUE}) on imported Services/Endpoints `antrea-mc-<svc>`. */
export const IMPORTED_SERVICE_ANNOTATION = 'multicluster.antrea.io/imported-service';
/** Annotation (value {@link ANNOTATION_TRUE}) on imported Antrea ClusterNetworkPolicies `antrea-mc-<name>`. */
export const IMPORTED_ACNP_ANNOTATION = 'multicluster.antrea.io/imported-acnp';
export const ANNOTATION_TRUE = 'true';
/**
 * On an Endpoints ResourceImport written by this project's leader: which exporting cluster each
 * run of `spec.endpoints.subsets` came from, in order, as `<clusterID>=<count>,...` (e.g.
 * `east=1,west=2`: the first subset is east's, the next two west's). Members use it to label
 * the EndpointSlices they derive (KEP-1645 `multicluster.kubernetes.io/source-cluster`);
 * Antrea's member ignores it, Antrea's leader never writes it.
 */
export const ENDPOINT_SOURCES_ANNOTATION = 'multicluster.clusterset-agent.io/endpoint-sources';

/**
 * On a MemberClusterAnnounce written by this project's member: which Kubernetes cluster wrote it
 * (the UID of that cluster's `kube-system` Namespace, which lives as long as the cluster). Two
 * clusters configured with one cluster ID share the announce's name; this tells them apart.
 * Antrea's leader and member ignore it. Also on the `DuplicateClusterID` Event a member records.
 */
export const CLUSTER_UID_ANNOTATION = 'multicluster.clusterset-agent.io/cluster-uid';
/** On a `DuplicateClusterID` Event: the identity ({@link CLUSTER_UID_ANNOTATION}) of the cluster that holds the announce. */
export const HOLDER_CLUSTER_UID_ANNOTATION = 'multicluster.clusterset-agent.io/holder-cluster-uid';
/** Reason of the member's Ready condition, and of the Events member and leader record, for two clusters with one cluster ID. */
export const DUPLICATE_CLUSTER_ID_REASON = 'DuplicateClusterID';

/** Annotation on the member's ServiceAccount in the leader Namespace binding it to a cluster ID (leaders ≥ v2.7). */
export const CLUSTER_ID_ANNOTATION = 'multicluster.antrea.io/cluster-id';
/** Annotation set by antctl on ServiceAccounts it created (value "true"). */
export const CREATED_BY_ANTCTL_ANNOTATION = 'multicluster.antrea.io/created-by-antctl';

/** Node annotation marking a Multi-cluster Gateway Node. */
export const GATEWAY_ANNOTATION = 'multicluster.antrea.io/gateway';
/** Node annotation overriding the Gateway IP. */
export const GATEWAY_IP_ANNOTATION = 'multicluster.antrea.io/gateway-ip';

/** Keys of the leader-access Secret named by `spec.leaders[0].secret`. */
export const LEADER_SECRET_CA_KEY = 'ca.crt';
export const LEADER_SECRET_TOKEN_KEY = 'token';

/** Labels on ResourceExports; the leader relies on them (≥ v2.7 validates them). */
export const RE_LABEL_SOURCE_NAME = 'sourceName';
export const RE_LABEL_SOURCE_NAMESPACE = 'sourceNamespace';
export const RE_LABEL_SOURCE_CLUSTER_ID = 'sourceClusterID';
export const RE_LABEL_SOURCE_KIND = 'sourceKind';
/** Finalizer a member puts on Service/Endpoints/ClusterInfo ResourceExports at create time. */
export const RESOURCE_EXPORT_FINALIZER = 'resourceexport.antrea.io/finalizer';
/** Legacy ResourceExport finalizer, still honoured by leaders. */
export const RESOURCE_EXPORT_LEGACY_FINALIZER = 'resourceexport.finalizers.antrea.io';

/** ClusterClaim names (legacy). */
export const CLUSTER_CLAIM_ID = 'id.k8s.io';
export const CLUSTER_CLAIM_CLUSTERSET = 'clusterset.k8s.io';

// ---------------------------------------------------------------------------------------
// Name helpers
// ---------------------------------------------------------------------------------------

/** Name of the MemberClusterAnnounce of a member: `member-announce-from-<clusterID>`. */
export function mcaName(clusterID: string): string {
  return `${MEMBER_ANNOUNCE_PREFIX}${clusterID}`;
}

/** Name of a locally created imported object (Service, Endpoints, ACNP): `antrea-mc-<name>`. */
export function antreaMCName(name: string): string {
  return `${ANTREA_MC_PREFIX}${name}`;
}

/**
 * Name of the ResourceImport the leader derives from a ResourceExport
 * (`GetResourceImportName`): `<namespace>-<name>-<lower(reKind)>`, or `<name>-<lower(reKind)>`
 * when the namespace is empty. E.g. Service RE `default/nginx` ⇒ RI `default-nginx-service`.
 */
export function resourceImportName(namespace: string, name: string, exportKind: string): string {
  const suffix = `${name}-${exportKind.toLowerCase()}`;
  return namespace === '' ? suffix : `${namespace}-${suffix}`;
}

/**
 * Name of a Service/Endpoints ResourceExport written by a member:
 * `<clusterID>-<namespace>-<name>-<service|endpoints>`.
 */
export function resourceExportName(
  clusterID: string,
  namespace: string,
  name: string,
  kind: typeof RESOURCE_EXPORT_KIND.Service | typeof RESOURCE_EXPORT_KIND.Endpoints,
): string {
  return `${clusterID}-${namespace}-${name}-${kind.toLowerCase()}`;
}

/** Name of a member's ClusterInfo ResourceExport (and of the derived RI / ClusterInfoImport): `<clusterID>-clusterinfo`. */
export function clusterInfoExportName(clusterID: string): string {
  return `${clusterID}-clusterinfo`;
}

/** Label this project's commands write at create on what they make (`join`, `leader create-member-token`); `leave` deletes only what carries it. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'clusterset-agent';
/**
 * On the member ClusterSet and Secret `join` writes: the member's ServiceAccount on the leader
 * (its name in the leader namespace), so `leave` finds it without being told again.
 */
export const LEADER_SERVICE_ACCOUNT_ANNOTATION = 'multicluster.clusterset-agent.io/leader-service-account';
/**
 * On the member ClusterSet `join` writes: the UID of the leader's own ClusterSet it joined, so
 * `leave` proves its leader context is that leader before it deletes anything there.
 */
export const LEADER_CLUSTERSET_UID_ANNOTATION = 'multicluster.clusterset-agent.io/leader-clusterset-uid';
/**
 * On the member ClusterSet `join` writes, with several leaders: a JSON object from each leader's
 * cluster ID to the UID of its ClusterSet join joined, so `leave --leader` proves each leader
 * context on its own ({@link LEADER_CLUSTERSET_UID_ANNOTATION} is the first leader's).
 */
export const LEADER_CLUSTERSET_UIDS_ANNOTATION = 'multicluster.clusterset-agent.io/leader-clusterset-uids';
/**
 * Label (value: the member's cluster ID) on the leader-side Secret `join` binds each member token
 * to: deleting the Secret revokes the token, which is how a rotation voids the previous one.
 */
export const MEMBER_TOKEN_LABEL = 'multicluster.clusterset-agent.io/member-token';
