/**
 * Wire types and constants for the Antrea Multi-cluster CRDs (`multicluster.crd.antrea.io`)
 * and the MCS API (`multicluster.x-k8s.io`) as used by the member agent.
 *
 * This is the single source of TypeScript types for these kinds. The CRD schemas live in
 * `charts/clusterset-agent/crds/`; `test/unit/crd-types.test.ts` fails when the two drift.
 *
 * Conventions:
 * - Antrea's Go types use `omitempty` almost everywhere, so zero values (0, "", empty list,
 *   empty struct) are absent on the wire: such fields are optional here.
 * - Timestamps in these payloads (conditions, heartbeat) are RFC 3339 strings.
 * - `metadata` has the shape of client-node's V1ObjectMeta so that the kinds satisfy client-node's
 *   `KubernetesObject` (informers, Watch). Beware: objects fetched through CustomObjectsApi
 *   are plain JSON, so `metadata.creationTimestamp`/`deletionTimestamp` are really strings
 *   there despite the `Date` type.
 * - Mind the inconsistent JSON keys between ResourceImport and ResourceExport
 *   (`clusterID` array vs string, `clusterinfo` vs `clusterInfo`, ...): they are the wire format.
 */
import type {
  CoreV1EndpointPort,
  KubernetesListObject,
  V1EndpointAddress,
  V1EndpointSubset,
  V1ObjectMeta,
  V1ObjectReference,
  V1ServicePort,
} from '@kubernetes/client-node';

// ---------------------------------------------------------------------------------------
// Groups, versions, resources
// ---------------------------------------------------------------------------------------

/** API group of the Antrea Multi-cluster CRDs. */
export const ANTREA_MC_GROUP = 'multicluster.crd.antrea.io';
/** API group of the Kubernetes Multi-Cluster Services API. */
export const MCS_GROUP = 'multicluster.x-k8s.io';

/** Identifies a served resource: enough to build REST paths and `apiVersion`/`kind`. */
export interface ResourceDescriptor {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  /** `<group>/<version>` */
  readonly apiVersion: string;
  readonly namespaced: boolean;
}

export const CLUSTERSET = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha2',
  plural: 'clustersets',
  kind: 'ClusterSet',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha2',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/** Deprecated ClusterSet version, still served (no conversion: schema differs, see {@link ClusterSetV1alpha1}). */
export const CLUSTERSET_V1ALPHA1 = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha1',
  plural: 'clustersets',
  kind: 'ClusterSet',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/** Lives in the leader cluster (leader Namespace). */
export const MEMBER_CLUSTER_ANNOUNCE = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha1',
  plural: 'memberclusterannounces',
  kind: 'MemberClusterAnnounce',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/** Lives in the leader cluster (leader Namespace). */
export const RESOURCE_IMPORT = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha1',
  plural: 'resourceimports',
  kind: 'ResourceImport',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/** Lives in the leader cluster (leader Namespace). */
export const RESOURCE_EXPORT = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha1',
  plural: 'resourceexports',
  kind: 'ResourceExport',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

export const CLUSTER_INFO_IMPORT = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha1',
  plural: 'clusterinfoimports',
  kind: 'ClusterInfoImport',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/** Cluster-scoped. */
export const LABEL_IDENTITY = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha1',
  plural: 'labelidentities',
  kind: 'LabelIdentity',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
  namespaced: false,
} as const satisfies ResourceDescriptor;

export const GATEWAY = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha1',
  plural: 'gateways',
  kind: 'Gateway',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/**
 * Legacy ClusterClaim (read-only fallback for the cluster ID when `spec.clusterID` is empty).
 * Its CRD is no longer installed by Antrea (since v1.13) and is not shipped in our chart.
 */
export const CLUSTER_CLAIM = {
  group: ANTREA_MC_GROUP,
  version: 'v1alpha2',
  plural: 'clusterclaims',
  kind: 'ClusterClaim',
  apiVersion: 'multicluster.crd.antrea.io/v1alpha2',
  namespaced: true,
} as const satisfies ResourceDescriptor;

export const SERVICE_IMPORT = {
  group: MCS_GROUP,
  version: 'v1alpha1',
  plural: 'serviceimports',
  kind: 'ServiceImport',
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

export const SERVICE_EXPORT = {
  group: MCS_GROUP,
  version: 'v1alpha1',
  plural: 'serviceexports',
  kind: 'ServiceExport',
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

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

/** `spec.kind` values of ResourceImports. */
export const RESOURCE_IMPORT_KIND = {
  ServiceImport: 'ServiceImport',
  Endpoints: 'Endpoints',
  ClusterInfo: 'ClusterInfo',
  AntreaClusterNetworkPolicy: 'AntreaClusterNetworkPolicy',
  LabelIdentity: 'LabelIdentity',
} as const;
export type ResourceImportKind = (typeof RESOURCE_IMPORT_KIND)[keyof typeof RESOURCE_IMPORT_KIND];

/** `spec.kind` values of ResourceExports. */
export const RESOURCE_EXPORT_KIND = {
  Service: 'Service',
  Endpoints: 'Endpoints',
  ClusterInfo: 'ClusterInfo',
  LabelIdentity: 'LabelIdentity',
  AntreaClusterNetworkPolicy: 'AntreaClusterNetworkPolicy',
} as const;
export type ResourceExportKind = (typeof RESOURCE_EXPORT_KIND)[keyof typeof RESOURCE_EXPORT_KIND];

export function isResourceImportKind(kind: unknown): kind is ResourceImportKind {
  return typeof kind === 'string' && Object.values<string>(RESOURCE_IMPORT_KIND).includes(kind);
}

// ---------------------------------------------------------------------------------------
// Conditions
// ---------------------------------------------------------------------------------------

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export function isConditionStatus(value: unknown): value is ConditionStatus {
  return value === 'True' || value === 'False' || value === 'Unknown';
}

/** ClusterSet / ClusterStatus condition types. `ClusterConnected` is declared by Antrea but never produced. */
export const CONDITION_TYPE = {
  Ready: 'Ready',
  IsLeader: 'IsLeader',
  ClusterConnected: 'ClusterConnected',
} as const;
export type ClusterConditionType = (typeof CONDITION_TYPE)[keyof typeof CONDITION_TYPE];

/** Reason of ClusterStatus `Ready=False` after a failed heartbeat. */
export const REASON_DISCONNECTED = 'Disconnected';

/**
 * Antrea-style condition (ClusterSetCondition, ClusterCondition, ResourceCondition,
 * ResourceImportCondition, ResourceExportCondition): every field omitempty on the wire.
 */
export interface Condition<T extends string = string> {
  type?: T;
  status?: ConditionStatus;
  /** RFC 3339. */
  lastTransitionTime?: string;
  message?: string;
  reason?: string;
}

/** metav1.Condition (used by ServiceExport): all but observedGeneration are required. */
export interface MetaCondition {
  type: string;
  status: ConditionStatus;
  /** RFC 3339. */
  lastTransitionTime: string;
  /** May be empty. */
  message: string;
  /** CamelCase, non-empty. */
  reason: string;
  observedGeneration?: number;
}

/** ServiceExport condition type written by Antrea, and its reasons. */
export const SERVICE_EXPORT_CONDITION_VALID = 'Valid';
export const SERVICE_EXPORT_REASON = {
  ServiceNotFound: 'ServiceNotFound',
  ServiceTypeNotSupported: 'ServiceTypeNotSupported',
  ServiceNoClusterIP: 'ServiceNoClusterIP',
  ServiceWithoutEndpoints: 'ServiceWithoutEndpoints',
  ImportedService: 'ImportedService',
  Succeed: 'Succeed',
} as const;

// ---------------------------------------------------------------------------------------
// Object envelope
// ---------------------------------------------------------------------------------------

/**
 * client-node's ObjectMeta as a plain object type (same fields, but not the class, so object
 * literals are fine). See the note on timestamps at the top of this file.
 */
export type ObjectMeta = Pick<V1ObjectMeta, keyof V1ObjectMeta>;

/** `{apiVersion?, kind?, metadata?}`; assignable to client-node's `KubernetesObject`. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A list response (`<Kind>List`): `{apiVersion?, kind?, metadata?: {resourceVersion, continue}, items}`. */
export type KubeList<T extends KubeObject> = KubernetesListObject<T>;

// ---------------------------------------------------------------------------------------
// ClusterSet (member cluster; the leader holds its own copy)
// ---------------------------------------------------------------------------------------

export interface LeaderClusterInfo {
  /** Leader cluster ID (immutable once set). */
  clusterID?: string;
  /** Leader API server URL, e.g. `https://172.18.0.1:6443`. Absent in the leader's own copy. */
  server?: string;
  /** Name of a Secret in the ClusterSet's Namespace with keys `ca.crt` and `token`. Absent in the leader's own copy. */
  secret?: string;
}

export interface ClusterSetSpec {
  /** Local cluster ID (required by the schema; may be "" and then resolved from a ClusterClaim). */
  clusterID: string;
  /** Exactly one leader. */
  leaders: LeaderClusterInfo[];
  /** Leader Namespace (member side only). */
  namespace?: string;
}

/** Member-side addition (not in Antrea): counters of the import firewall. */
export interface ClusterSetImportCounters {
  total?: number;
  rejected?: number;
  conflicts?: number;
}

export interface ClusterStatus {
  clusterID?: string;
  conditions?: Condition[];
  /** Member-side addition (not in Antrea): RFC 3339 time of the last successful heartbeat. */
  lastHeartbeatTime?: string;
}

export interface ClusterSetStatus {
  totalClusters?: number;
  readyClusters?: number;
  observedGeneration?: number;
  /** Overall condition(s); type `Ready`. */
  conditions?: Condition[];
  clusterStatuses?: ClusterStatus[];
  /** Member-side addition (not in Antrea). */
  imports?: ClusterSetImportCounters;
}

/** ClusterSet v1alpha2. `metadata.name` is the ClusterSet ID (must equal the leader's ClusterSet name). */
export interface ClusterSet extends KubeObject {
  spec?: ClusterSetSpec;
  status?: ClusterSetStatus;
}

/** v1alpha1 `MemberCluster` (used for both leaders and members). */
export interface MemberClusterV1alpha1 {
  clusterID?: string;
  server?: string;
  secret?: string;
  serviceAccount?: string;
}

/** ClusterSet v1alpha1 spec: no `clusterID` (pruned if set). */
export interface ClusterSetSpecV1alpha1 {
  leaders: MemberClusterV1alpha1[];
  members?: MemberClusterV1alpha1[];
  namespace?: string;
}

export interface ClusterSetV1alpha1 extends KubeObject {
  spec?: ClusterSetSpecV1alpha1;
  status?: ClusterSetStatus;
}

/** Legacy ClusterClaim (v1alpha2): top-level `value`, no spec/status. */
export interface ClusterClaim extends KubeObject {
  value: string;
}

// ---------------------------------------------------------------------------------------
// MemberClusterAnnounce (leader cluster)
// ---------------------------------------------------------------------------------------

/** Named `member-announce-from-<clusterID>`; heartbeat = annotation {@link TIMESTAMP_ANNOTATION}. */
export interface MemberClusterAnnounce extends KubeObject {
  clusterID?: string;
  clusterSetID?: string;
  leaderClusterID?: string;
}

// ---------------------------------------------------------------------------------------
// Shared payloads
// ---------------------------------------------------------------------------------------

export interface GatewayInfo {
  gatewayIP?: string;
}

export interface WireGuardInfo {
  publicKey?: string;
}

export interface ClusterInfo {
  clusterID?: string;
  serviceCIDR?: string;
  gatewayInfos?: GatewayInfo[];
  podCIDRs?: string[];
  wireGuard?: WireGuardInfo;
}

/** core/v1 types used verbatim in RI/RE payloads. */
export type EndpointSubset = V1EndpointSubset;
export type EndpointAddress = V1EndpointAddress;
export type EndpointPort = CoreV1EndpointPort;
export type ObjectReference = V1ObjectReference;
/** core/v1 ServicePort (`targetPort` is int-or-string). */
export type CoreServicePort = V1ServicePort;

export interface EndpointsPayload {
  subsets?: EndpointSubset[];
}

/**
 * Antrea `crd.antrea.io/v1beta1` ClusterNetworkPolicySpec. Only the top level is typed;
 * the CRD keeps every other field (x-kubernetes-preserve-unknown-fields).
 */
export interface AntreaClusterNetworkPolicySpec {
  priority: number;
  tier?: string;
  appliedTo?: Record<string, unknown>[];
  ingress?: Record<string, unknown>[];
  egress?: Record<string, unknown>[];
  [field: string]: unknown;
}

export interface ExternalEntityEndpoint {
  ip?: string;
  name?: string;
}

export interface NamedPort {
  name?: string;
  port?: number;
  protocol?: string;
}

/** Antrea `crd.antrea.io/v1alpha2` ExternalEntitySpec. */
export interface ExternalEntitySpec {
  endpoints?: ExternalEntityEndpoint[];
  externalNode?: string;
  ports?: NamedPort[];
}

export interface RawPayload {
  /** base64. */
  data?: string;
}

// ---------------------------------------------------------------------------------------
// MCS API: ServiceImport / ServiceExport
// ---------------------------------------------------------------------------------------

export type ServiceImportType = 'ClusterSetIP' | 'Headless';

export interface ServiceImportPort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
}

export interface ClientIPConfig {
  timeoutSeconds?: number;
}

export interface SessionAffinityConfig {
  clientIP?: ClientIPConfig;
}

export interface ServiceImportSpec {
  ports: ServiceImportPort[];
  /** At most one VIP (member CRD). */
  ips?: string[];
  type: ServiceImportType;
  sessionAffinity?: string;
  sessionAffinityConfig?: SessionAffinityConfig;
  /** mcs-api v0.4.1 (KEP-1645 "Internal Traffic Policy"): carried over from the exported Service. */
  internalTrafficPolicy?: string;
  /** mcs-api v0.4.1 (KEP-1645 "Traffic Distribution"): carried over from the exported Service. */
  trafficDistribution?: string;
}

export interface ServiceImportClusterStatus {
  cluster: string;
}

export interface ServiceImportStatus {
  clusters?: ServiceImportClusterStatus[];
}

export interface ServiceImport extends KubeObject {
  spec?: ServiceImportSpec;
  status?: ServiceImportStatus;
}

export interface ServiceExportStatus {
  conditions?: MetaCondition[];
}

/** No spec. */
export interface ServiceExport extends KubeObject {
  status?: ServiceExportStatus;
}

// ---------------------------------------------------------------------------------------
// ResourceImport (leader cluster, written by the leader)
// ---------------------------------------------------------------------------------------

/**
 * ServiceImport spec as embedded in a ResourceImport. The RI schema also carries the
 * mcs-api v0.5.0 ipFamilies, which the member's ServiceImport CRD does not have (pruned there).
 */
export interface ResourceImportServiceImportSpec extends ServiceImportSpec {
  ipFamilies?: string[];
}

/** mcs-api ServiceImport embedded in a ResourceImport; only `spec` is meaningful. */
export interface ResourceImportServiceImport {
  apiVersion?: string;
  kind?: string;
  /** The schema declares no fields here: the apiserver prunes its content. */
  metadata?: Record<string, never>;
  spec?: ResourceImportServiceImportSpec;
  status?: ServiceImportStatus;
}

export interface ResourceImportLabelIdentity {
  label?: string;
  id?: number;
}

/** Lower-case keys on purpose: `externalentity.externalentityspec`. */
export interface ResourceImportExternalEntity {
  externalentityspec?: ExternalEntitySpec;
}

export interface ResourceImportSpec {
  /** Target member cluster IDs (JSON key `clusterID`, but an ARRAY); empty = all. */
  clusterID?: string[];
  name?: string;
  namespace?: string;
  /** One of {@link RESOURCE_IMPORT_KIND} for kinds a member acts on; anything else is ignored. */
  kind?: string;
  serviceImport?: ResourceImportServiceImport;
  endpoints?: EndpointsPayload;
  /** Lower-case key on purpose. */
  clusterinfo?: ClusterInfo;
  /** Lower-case key on purpose. */
  clusternetworkpolicy?: AntreaClusterNetworkPolicySpec;
  labelIdentity?: ResourceImportLabelIdentity;
  externalentity?: ResourceImportExternalEntity;
  raw?: RawPayload;
}

export interface ResourceImportClusterStatus {
  /** ID of the *exporting* cluster. */
  clusterID?: string;
  conditions?: Condition[];
}

export interface ResourceImportStatus {
  clusterStatuses?: ResourceImportClusterStatus[];
}

export interface ResourceImport extends KubeObject {
  spec?: ResourceImportSpec;
  status?: ResourceImportStatus;
}

// ---------------------------------------------------------------------------------------
// ResourceExport (leader cluster, written by members)
// ---------------------------------------------------------------------------------------

/**
 * core/v1 ServiceSpec of an exported Service. Members fill only `ports`; the CRD keeps
 * every other field (x-kubernetes-preserve-unknown-fields).
 */
export interface ResourceExportServiceSpec {
  ports?: CoreServicePort[];
  [field: string]: unknown;
}

export interface ResourceExportService {
  serviceSpec?: ResourceExportServiceSpec;
}

export interface ResourceExportLabelIdentity {
  normalizedLabel?: string;
}

/** Camel-case keys on purpose: `externalEntity.externalEntitySpec`. */
export interface ResourceExportExternalEntity {
  externalEntitySpec?: ExternalEntitySpec;
}

export interface ResourceExportSpec {
  /** Exporting cluster ID (a STRING here). */
  clusterID?: string;
  name?: string;
  namespace?: string;
  /** One of {@link RESOURCE_EXPORT_KIND}. */
  kind?: string;
  service?: ResourceExportService;
  endpoints?: EndpointsPayload;
  /** Camel-case key on purpose. */
  clusterInfo?: ClusterInfo;
  /** Camel-case key on purpose. */
  clusterNetworkPolicy?: AntreaClusterNetworkPolicySpec;
  labelIdentity?: ResourceExportLabelIdentity;
  externalEntity?: ResourceExportExternalEntity;
  raw?: RawPayload;
}

export interface ResourceExportStatus {
  /** Types `Succeeded` / `Failure`, leader-written. */
  conditions?: Condition[];
}

export interface ResourceExport extends KubeObject {
  spec?: ResourceExportSpec;
  status?: ResourceExportStatus;
}

// ---------------------------------------------------------------------------------------
// Member-cluster import targets
// ---------------------------------------------------------------------------------------

export interface ClusterInfoImportStatus {
  conditions?: Condition[];
}

/** Named after the ClusterInfo ResourceImport (`<exportingClusterID>-clusterinfo`), in the member Namespace. */
export interface ClusterInfoImport extends KubeObject {
  spec?: ClusterInfo;
  status?: ClusterInfoImportStatus;
}

export interface LabelIdentitySpec {
  /** Normalized label `ns:<k=v,..>&pod:<k=v,..>`. */
  label?: string;
  /** uint32 allocated by the leader. */
  id?: number;
}

/** Cluster-scoped, named after the LabelIdentity ResourceImport. */
export interface LabelIdentity extends KubeObject {
  spec?: LabelIdentitySpec;
}

/** Top-level fields, no spec/status. */
export interface Gateway extends KubeObject {
  gatewayIP?: string;
  internalIP?: string;
  serviceCIDR?: string;
  wireGuard?: WireGuardInfo;
}

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

// ---------------------------------------------------------------------------------------
// List types
// ---------------------------------------------------------------------------------------

export type ClusterSetList = KubeList<ClusterSet>;
export type ClusterSetV1alpha1List = KubeList<ClusterSetV1alpha1>;
export type ClusterClaimList = KubeList<ClusterClaim>;
export type MemberClusterAnnounceList = KubeList<MemberClusterAnnounce>;
export type ResourceImportList = KubeList<ResourceImport>;
export type ResourceExportList = KubeList<ResourceExport>;
export type ClusterInfoImportList = KubeList<ClusterInfoImport>;
export type LabelIdentityList = KubeList<LabelIdentity>;
export type GatewayList = KubeList<Gateway>;
export type ServiceImportList = KubeList<ServiceImport>;
export type ServiceExportList = KubeList<ServiceExport>;
