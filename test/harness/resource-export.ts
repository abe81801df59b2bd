// ResourceExports as a member writes them into the leader namespace (antrea-wire.md 2.10), for
// tests and benches that play a member against a leader. Service and Endpoints exports come
// from the exporter's own plan (serviceExportPlan) over a Service and its EndpointSlice, and
// ClusterInfo exports from its clusterInfoExport over a Gateway: what a test writes is what our
// member writes, names, labels and finalizer included, and a change to the member's wire format
// reaches the leader tests with it. LabelIdentity exports, which our member does not write, are
// built to Antrea's rules with the same metadata builder.
import { createHash } from 'node:crypto';
import type { V1ServicePort } from '@kubernetes/client-node';
import { RESOURCE_EXPORT_KIND, type ClusterInfo, type ResourceExport } from '../../src/common/api/antrea.js';
import { RE_LABEL_SOURCE_CLUSTER_ID, RE_LABEL_SOURCE_KIND } from '../../src/common/api/names.js';
import { clusterInfoExport } from '../../src/exporter/clusterinfo-export.js';
import { newResourceExport, serviceExportPlan } from '../../src/exporter/service-export.js';
import { LEADER_NS } from './clusterset.js';

/** The port most tests export: `http` 80/TCP to 8080. */
export const HTTP_PORT: Readonly<V1ServicePort> = { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 };

export interface ExportedService {
  /** The Service's ports (the Service RE carries them as stored, targetPort included); `http` 80/TCP by default. */
  readonly ports?: readonly V1ServicePort[];
  /**
   * Ready Pod IPs: the Endpoints RE carries them (PodIP mode), with the Service's ports minus targetPort.
   * Without them the Endpoints RE carries the Service's ClusterIP (ClusterIP mode, Antrea's default).
   */
  readonly podIPs?: readonly string[];
  /** The Service's ClusterIP; 10.96.0.10 by default. */
  readonly clusterIP?: string;
  /** The leader namespace the REs are written into; LEADER_NS by default. */
  readonly leaderNamespace?: string;
}

/** The Service and Endpoints REs member `clusterID` writes for Service `namespace/name`. */
export function serviceExports(clusterID: string, namespace: string, name: string, exported: ExportedService = {}): { service: ResourceExport; endpoints: ResourceExport } {
  // The plan copies what it keeps. The slice lists the Service's own ports (the plan reads name,
  // port, protocol and appProtocol of them), not resolved target ports as kube's EndpointSlice
  // controller would: a PodIP-mode Endpoints RE carries the Service's port numbers, which is
  // what the leader tests have always exported.
  const ports = [...(exported.ports ?? [HTTP_PORT])];
  const clusterIP = exported.clusterIP ?? '10.96.0.10';
  const plan = serviceExportPlan({
    localClusterID: clusterID,
    leaderNamespace: exported.leaderNamespace ?? LEADER_NS,
    serviceExport: { metadata: { namespace, name } },
    service: { metadata: { namespace, name }, spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports } },
    endpointSlices: [{
      metadata: { namespace, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4',
      endpoints: [{ addresses: [...(exported.podIPs ?? [clusterIP])], conditions: { ready: true } }], ports,
    }],
    endpointIPType: exported.podIPs === undefined ? 'ClusterIP' : 'PodIP',
  });
  const [service, endpoints] = plan.exports;
  // A refusal here is a test written wrong (an IPv6 ClusterIP, no address): say why.
  if (service === undefined || endpoints === undefined) throw new Error(`the member would not export ${namespace}/${name}: ${plan.valid.message}`);
  return { service, endpoints };
}

/** The Service RE of {@link serviceExports}. */
export function serviceExport(clusterID: string, namespace: string, name: string, exported: ExportedService = {}): ResourceExport {
  return serviceExports(clusterID, namespace, name, exported).service;
}

/** The Endpoints RE of {@link serviceExports}. */
export function endpointsExport(clusterID: string, namespace: string, name: string, exported: ExportedService = {}): ResourceExport {
  return serviceExports(clusterID, namespace, name, exported).endpoints;
}

/**
 * The ClusterInfo RE `<clusterID>-clusterinfo` of a member with one Gateway at `gatewayIP`, its
 * agent in kube-system. Without a gatewayIP, the same RE without `gatewayInfos`: our member
 * writes none without a Gateway, but a leader must still judge such a ClusterInfo (Antrea's
 * CRD allows it) and tests of its CIDR checks leave gateways out so that none clash.
 */
export function clusterInfoExportOf(clusterID: string, info: Omit<ClusterInfo, 'clusterID' | 'gatewayInfos'> & { gatewayIP?: string }, leaderNamespace = LEADER_NS): ResourceExport {
  const re = clusterInfoExport({
    localClusterID: clusterID, leaderNamespace, agentNamespace: 'kube-system',
    gateways: [{ metadata: { name: 'gw' }, gatewayIP: info.gatewayIP ?? '192.0.2.1', ...(info.wireGuard !== undefined && { wireGuard: info.wireGuard }) }],
    serviceCIDR: info.serviceCIDR, podCIDRs: info.podCIDRs,
  });
  if (re?.spec?.clusterInfo === undefined) throw new Error(`the member would not export a ClusterInfo for ${clusterID}`);
  if (info.gatewayIP !== undefined) return re;
  const { gatewayInfos: _gatewayInfos, ...clusterInfo } = re.spec.clusterInfo;
  return { ...re, spec: { ...re.spec, clusterInfo } };
}

/** `<clusterID>-<first 16 hex digits of sha1(label)>`: Antrea's LabelIdentity RE name. */
export function labelIdentityExportName(clusterID: string, normalizedLabel: string): string {
  return `${clusterID}-${createHash('sha1').update(normalizedLabel).digest('hex').slice(0, 16)}`;
}

/**
 * A LabelIdentity RE as Antrea's member writes it: no finalizer (spec 2.10). `name` defaults
 * to the derived one; a test may pass another (the leader's books count any name).
 */
export function labelIdentityExport(clusterID: string, normalizedLabel: string, name = labelIdentityExportName(clusterID, normalizedLabel), leaderNamespace = LEADER_NS): ResourceExport {
  const re = newResourceExport(leaderNamespace, name, { [RE_LABEL_SOURCE_KIND]: RESOURCE_EXPORT_KIND.LabelIdentity, [RE_LABEL_SOURCE_CLUSTER_ID]: clusterID },
    { clusterID, kind: RESOURCE_EXPORT_KIND.LabelIdentity, labelIdentity: { normalizedLabel } });
  const { finalizers: _finalizers, ...metadata } = re.metadata ?? {};
  return { ...re, metadata };
}

/** `re` as the API server stores it: created at `createdAt` (RFC 3339), and being deleted since `deletingAt` when given. */
export function storedExport(re: ResourceExport, createdAt: string, deletingAt?: string): ResourceExport {
  return {
    ...re,
    metadata: {
      ...re.metadata,
      // client-node types these as Date; the wire and our decoders carry RFC 3339 strings.
      creationTimestamp: createdAt as unknown as Date,
      ...(deletingAt !== undefined && { deletionTimestamp: deletingAt as unknown as Date }),
    },
  };
}
