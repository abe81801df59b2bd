/**
 * The Kubernetes Multi-Cluster Services API (`multicluster.x-k8s.io`, KEP-1645): ServiceImport
 * and ServiceExport as this project reads and writes them in member clusters.
 *
 * The CRD schemas live in `charts/clusterset-agent/crds/`; `test/unit/crd-types.test.ts` fails
 * when the two drift.
 */
import type { KubeList, KubeObject, MetaCondition, ResourceDescriptor } from './meta.js';

/** API group of the Kubernetes Multi-Cluster Services API. */
export const MCS_GROUP = 'multicluster.x-k8s.io';

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

export type ServiceImportList = KubeList<ServiceImport>;
export type ServiceExportList = KubeList<ServiceExport>;
