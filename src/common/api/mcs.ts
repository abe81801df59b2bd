/**
 * The Kubernetes Multi-Cluster Services API (`multicluster.x-k8s.io`, KEP-1645): ServiceImport
 * and ServiceExport as this project reads and writes them in member clusters.
 *
 * The CRDs in `charts/clusterset-agent/crds/` are upstream's (sigs.k8s.io/mcs-api v0.5.2, copied
 * by `test/mcs-api/sync-crds.sh`): `v1beta1` is stored, `v1alpha1` still served, with the same
 * schema. `test/unit/crd-types.test.ts` fails when these types and the CRDs drift.
 *
 * A member may serve only `v1alpha1` (Antrea's own member CRDs, older clusters), so the agent
 * never hard-codes a version: it discovers the one served (`servedMcsVersion`, preferring
 * `v1beta1`) and addresses ServiceImports and ServiceExports through `mcsResources(version)`.
 */
import type { KubeList, KubeObject, MetaCondition, ResourceDescriptor } from './meta.js';

/** API group of the Kubernetes Multi-Cluster Services API. */
export const MCS_GROUP = 'multicluster.x-k8s.io';

/** The versions of the MCS API this agent speaks, most preferred first (identical schemas). */
export const MCS_VERSIONS = ['v1beta1', 'v1alpha1'] as const;
export type McsVersion = (typeof MCS_VERSIONS)[number];

/** The storage version of the chart's CRDs (mcs-api v0.5). */
export const SERVICE_IMPORT = {
  group: MCS_GROUP,
  version: 'v1beta1',
  plural: 'serviceimports',
  kind: 'ServiceImport',
  apiVersion: 'multicluster.x-k8s.io/v1beta1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

export const SERVICE_EXPORT = {
  group: MCS_GROUP,
  version: 'v1beta1',
  plural: 'serviceexports',
  kind: 'ServiceExport',
  apiVersion: 'multicluster.x-k8s.io/v1beta1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/** The version every MCS CRD so far serves (Antrea's member CRDs serve only this one). */
export const SERVICE_IMPORT_V1ALPHA1 = { ...SERVICE_IMPORT, version: 'v1alpha1', apiVersion: 'multicluster.x-k8s.io/v1alpha1' } as const satisfies ResourceDescriptor;
export const SERVICE_EXPORT_V1ALPHA1 = { ...SERVICE_EXPORT, version: 'v1alpha1', apiVersion: 'multicluster.x-k8s.io/v1alpha1' } as const satisfies ResourceDescriptor;

/** ServiceImport and ServiceExport as one member serves them. */
export interface McsResources {
  readonly version: McsVersion;
  readonly serviceImport: ResourceDescriptor;
  readonly serviceExport: ResourceDescriptor;
}

export function mcsResources(version: McsVersion): McsResources {
  return version === 'v1beta1'
    ? { version, serviceImport: SERVICE_IMPORT, serviceExport: SERVICE_EXPORT }
    : { version, serviceImport: SERVICE_IMPORT_V1ALPHA1, serviceExport: SERVICE_EXPORT_V1ALPHA1 };
}

/**
 * The version to use, from the versions the member's discovery lists for the group
 * (`/apis/multicluster.x-k8s.io`): `v1beta1` when served, else `v1alpha1`. When the group is
 * not served at all (no CRDs yet) `v1alpha1`, the one every MCS CRD so far serves.
 */
export function servedMcsVersion(served: readonly string[]): McsVersion {
  return MCS_VERSIONS.find((v) => served.includes(v)) ?? 'v1alpha1';
}

/** ServiceExport condition type written by Antrea, and its reasons. */
export const SERVICE_EXPORT_CONDITION_VALID = 'Valid';
export const SERVICE_EXPORT_REASON = {
  ServiceNotFound: 'ServiceNotFound',
  ServiceTypeNotSupported: 'ServiceTypeNotSupported',
  ServiceNoClusterIP: 'ServiceNoClusterIP',
  ServiceWithoutEndpoints: 'ServiceWithoutEndpoints',
  ImportedService: 'ImportedService',
  /** This project's: the ServiceExport's exportedLabels/exportedAnnotations break the rules every member applies (common/api/exported-metadata.ts). */
  InvalidExportedMetadata: 'InvalidExportedMetadata',
  Succeed: 'Succeed',
} as const;

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

export type IPFamily = 'IPv4' | 'IPv6';

export interface ServiceImportSpec {
  ports: ServiceImportPort[];
  /** At most two VIPs, one per family, in the order of `ipFamilies` (KEP-1645 ClusterSetIP). */
  ips?: string[];
  type: ServiceImportType;
  sessionAffinity?: string;
  sessionAffinityConfig?: SessionAffinityConfig;
  /** mcs-api v0.4.0: the families of `ips`, at most two, no duplicates. */
  ipFamilies?: string[];
  /** mcs-api v0.4.0 (KEP-1645 "Internal Traffic Policy"): carried over from the exported Service. */
  internalTrafficPolicy?: string;
  /** mcs-api v0.4.0 (KEP-1645 "Traffic Distribution"): carried over from the exported Service. */
  trafficDistribution?: string;
}

export interface ServiceImportClusterStatus {
  cluster: string;
}

/** mcs-api v0.5.1: whether imported EndpointSlices exist for the ServiceImport (KEP-1645 beta: must be published). */
export type EndpointSliceObjects = 'Present' | 'Absent';

export interface ServiceImportStatus {
  clusters?: ServiceImportClusterStatus[];
  conditions?: MetaCondition[];
  endpointSliceObjects?: EndpointSliceObjects;
}

export interface ServiceImport extends KubeObject {
  spec?: ServiceImportSpec;
  status?: ServiceImportStatus;
}

export interface ServiceExportSpec {
  /** Labels for the ServiceImport (never the Service's own); optional for implementations. */
  exportedLabels?: Record<string, string>;
  /** Annotations for the ServiceImport (never the Service's own); optional for implementations. */
  exportedAnnotations?: Record<string, string>;
}

export interface ServiceExportStatus {
  conditions?: MetaCondition[];
}

export interface ServiceExport extends KubeObject {
  spec?: ServiceExportSpec;
  status?: ServiceExportStatus;
}

export type ServiceImportList = KubeList<ServiceImport>;
export type ServiceExportList = KubeList<ServiceExport>;
