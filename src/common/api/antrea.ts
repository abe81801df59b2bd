/**
 * Wire types of the Antrea Multi-cluster CRDs (`multicluster.crd.antrea.io`): ClusterSet,
 * MemberClusterAnnounce, ResourceExport, ResourceImport and the member-side import targets,
 * byte-compatible with Antrea v2.7 (`../shared/spec/antrea-wire.md`). Names, annotations,
 * labels and finalizers of the wire are in `names.ts`.
 *
 * The CRD schemas live in `charts/clusterset-agent/crds/`; `test/unit/crd-types.test.ts` fails
 * when the two drift.
 *
 * Conventions:
 * - Antrea's Go types use `omitempty` almost everywhere, so zero values (0, "", empty list,
 *   empty struct) are absent on the wire: such fields are optional here.
 * - Timestamps in these payloads (conditions, heartbeat) are RFC 3339 strings.
 * - Mind the inconsistent JSON keys between ResourceImport and ResourceExport
 *   (`clusterID` array vs string, `clusterinfo` vs `clusterInfo`, ...): they are the wire format.
 */
import type { Condition, CoreServicePort, EndpointSubset, KubeList, KubeObject, ResourceDescriptor } from './meta.js';
import type { ServiceImportSpec, ServiceImportStatus } from './mcs.js';

/** API group of the Antrea Multi-cluster CRDs. */
export const ANTREA_MC_GROUP = 'multicluster.crd.antrea.io';

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

/** ClusterSet / ClusterStatus condition types. `ClusterConnected` is declared by Antrea but never produced. */
export const CONDITION_TYPE = {
  Ready: 'Ready',
  IsLeader: 'IsLeader',
  ClusterConnected: 'ClusterConnected',
} as const;
export type ClusterConditionType = (typeof CONDITION_TYPE)[keyof typeof CONDITION_TYPE];

/** Reason of ClusterStatus `Ready=False` after a failed heartbeat. */
export const REASON_DISCONNECTED = 'Disconnected';

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
  /** One or more leaders, each live (Antrea's own CRD allows one; the chart's up to 5). */
  leaders: LeaderClusterInfo[];
  /** Leader Namespace (member side only). */
  namespace?: string;
}

/** Member-side addition (not in Antrea): counters of the import firewall. */
export interface ClusterSetImportCounters {
  total?: number;
  rejected?: number;
  conflicts?: number;
  /** With several leaders: imports whose copies on the connected leaders differ. */
  divergent?: number;
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
  /** Member-side addition (not in Antrea), with several leaders: connected out of listed, e.g. "2/3". */
  leaders?: string;
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
// ResourceImport (leader cluster, written by the leader)
// ---------------------------------------------------------------------------------------

/** ServiceImport spec as embedded in a ResourceImport (Antrea's schema has every field of mcs-api v0.5's). */
export type ResourceImportServiceImportSpec = ServiceImportSpec;

/** The ServiceImport status as Antrea's ResourceImport schema embeds it: only the clusters. */
export interface ResourceImportServiceImportStatus {
  clusters?: ServiceImportStatus['clusters'];
}

/** mcs-api ServiceImport embedded in a ResourceImport; only `spec` is meaningful. */
export interface ResourceImportServiceImport {
  apiVersion?: string;
  kind?: string;
  /** The schema declares no fields here: the apiserver prunes its content. */
  metadata?: Record<string, never>;
  spec?: ResourceImportServiceImportSpec;
  status?: ResourceImportServiceImportStatus;
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
