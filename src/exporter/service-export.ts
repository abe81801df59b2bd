// What a member writes into the leader namespace for one ServiceExport (antrea-wire.md 2.10):
// the ServiceExport's `Valid` condition and the two ResourceExports `<id>-<ns>-<name>-service`
// and `<id>-<ns>-<name>-endpoints`, plus how a desired ResourceExport compares with and merges
// into the live one. Pure: nothing here talks to an API server.
//
// The checks follow Antrea's ServiceExportReconciler, in its order: Service missing,
// ExternalName, imported Service, no ready endpoints, then (ClusterIP mode only) no IPv4
// ClusterIP. Unlike Antrea, a headless Service is exported (with its Pod IPs), as KEP-1645
// wants. Everything is built deterministically (sorted, deduplicated addresses), so an
// unchanged source yields an identical spec and the exporter never rewrites an unchanged RE.
import { isIP, isIPv4 } from 'node:net';
import { sameCanonical } from '../common/kube/canonical.js';
import type { CoreServicePort, EndpointPort, EndpointSubset, ObjectMeta } from '../common/api/meta.js';
import { SERVICE_EXPORT_REASON, type ServiceExport } from '../common/api/mcs.js';
import { RESOURCE_EXPORT, RESOURCE_EXPORT_KIND, type ResourceExport, type ResourceExportSpec } from '../common/api/antrea.js';
import { EXPORTED_METADATA_ANNOTATIONS, exportedMapProblem, exportedMetadataAnnotations } from '../common/api/exported-metadata.js';
import {
  IMPORTED_SERVICE_ANNOTATION,
  RE_LABEL_SOURCE_CLUSTER_ID,
  RE_LABEL_SOURCE_KIND,
  RE_LABEL_SOURCE_NAME,
  RE_LABEL_SOURCE_NAMESPACE,
  RESOURCE_EXPORT_FINALIZER,
  RESOURCE_EXPORT_LEGACY_FINALIZER,
  resourceExportName,
} from '../common/api/names.js';

/** What the Endpoints RE carries: the Service's ClusterIP (Antrea's default) or the ready Pod IPs. */
export type EndpointIPType = 'ClusterIP' | 'PodIP';

export type ServiceExportReason = (typeof SERVICE_EXPORT_REASON)[keyof typeof SERVICE_EXPORT_REASON];

/** The ServiceExport `Valid` condition to write (only when the reason changes, like Antrea). */
export interface ServiceExportValidity {
  status: 'True' | 'False';
  reason: ServiceExportReason;
  message: string;
}

/** The fields of a core/v1 Service this module reads; client-node's V1Service is assignable. */
export interface ServiceLike {
  metadata?: { name?: string; namespace?: string; annotations?: Readonly<Record<string, string>> };
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: readonly string[];
    ports?: readonly CoreServicePort[];
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    internalTrafficPolicy?: string;
    trafficDistribution?: string;
    ipFamilies?: readonly string[];
  };
}

/** The fields of a discovery/v1 EndpointSlice this module reads; client-node's V1EndpointSlice is assignable. */
export interface EndpointSliceLike {
  metadata?: { namespace?: string; labels?: Readonly<Record<string, string>> };
  addressType?: string;
  /** null when the slice has none: the API server writes these two empty lists as null. */
  endpoints?: readonly { addresses?: readonly string[]; conditions?: { ready?: boolean }; hostname?: string | null }[] | null;
  ports?: readonly { name?: string; port?: number; protocol?: string; appProtocol?: string }[] | null;
}

/** What a cache needs to key and compare an object by. */
export interface CacheIdentity {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export type CachedService = ServiceLike & { metadata?: CacheIdentity & NonNullable<ServiceLike['metadata']> };
export type CachedEndpointSlice = EndpointSliceLike & { metadata?: CacheIdentity & NonNullable<EndpointSliceLike['metadata']> };

/** The listed fields of `source` that are set, omitempty style, by reference. */
function present<T extends object, K extends keyof T>(source: T | undefined, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  // The API server writes an empty list as null in some kinds (an EndpointSlice's `endpoints`
  // and `ports`): null is "not set" here, as undefined is.
  if (source !== undefined) for (const key of keys) if (source[key] !== undefined && source[key] !== null) out[key] = source[key];
  return out;
}

const IDENTITY_KEYS = ['name', 'namespace', 'uid', 'resourceVersion'] as const;

/**
 * Service fields the Service RE carries besides `ports` and a headless `clusterIP: None`, so
 * the leader can import them (KEP-1645: session affinity, internal traffic policy and traffic
 * distribution of the exported Service). Antrea's leader reads only `ports` and ignores them.
 */
const CARRIED_SERVICE_FIELDS = ['sessionAffinity', 'sessionAffinityConfig', 'internalTrafficPolicy', 'trafficDistribution'] as const;

/**
 * What the export cache keeps of a Service: its identity and the fields
 * {@link serviceExportPlan} reads, nothing else. The cache holds every Service of the member,
 * the ones this agent imported included (3,334 of them took 4.7 MiB of heap whole in a
 * 10,000-object sync).
 */
export function serviceCacheEntry(service: ServiceLike & { metadata?: CacheIdentity }): CachedService {
  const imported = service.metadata?.annotations?.[IMPORTED_SERVICE_ANNOTATION];
  return {
    metadata: { ...present(service.metadata, IDENTITY_KEYS), ...(imported !== undefined && { annotations: { [IMPORTED_SERVICE_ANNOTATION]: imported } }) },
    spec: present(service.spec, ['type', 'clusterIP', 'clusterIPs', 'ipFamilies', 'ports', ...CARRIED_SERVICE_FIELDS]),
  };
}

/** What the export cache keeps of an EndpointSlice: its identity, its Service label and the fields {@link serviceExportPlan} reads. */
export function endpointSliceCacheEntry(slice: EndpointSliceLike & { metadata?: CacheIdentity }): CachedEndpointSlice {
  const serviceName = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  return {
    metadata: { ...present(slice.metadata, IDENTITY_KEYS), ...(serviceName !== undefined && { labels: { [SERVICE_NAME_LABEL]: serviceName } }) },
    ...present(slice, ['addressType', 'ports']),
    ...(slice.endpoints !== undefined && slice.endpoints !== null && {
      endpoints: slice.endpoints.map((endpoint) => ({
        // The hostname names the endpoint in DNS (<hostname>.<cluster>.<svc>.<ns>.svc.clusterset.local).
        ...present(endpoint, ['addresses', 'hostname']),
        ...(endpoint.conditions?.ready !== undefined && { conditions: { ready: endpoint.conditions.ready } }),
      })),
    }),
  };
}

export interface ServiceExportInput {
  localClusterID: string;
  leaderNamespace: string;
  /** Names the Service (same namespace and name). */
  serviceExport: ServiceExport;
  /** The Service of the same namespace/name, undefined when it does not exist. */
  service: ServiceLike | undefined;
  /** The Service's EndpointSlices (label `kubernetes.io/service-name`); slices of another Service are ignored. */
  endpointSlices: readonly EndpointSliceLike[];
  endpointIPType: EndpointIPType;
}

export interface ServiceExportPlan {
  valid: ServiceExportValidity;
  /** `[serviceRE, endpointsRE]` when valid, else `[]` (and both REs should be deleted). */
  exports: ResourceExport[];
}

/** EndpointSlice label naming the Service it belongs to. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Antrea's condition messages (member/serviceexport_controller.go `updateSvcExportStatus`). */
export const SERVICE_EXPORT_MESSAGE: Readonly<Record<ServiceExportReason, string>> = {
  ServiceNotFound: 'Service does not exist',
  ServiceTypeNotSupported: 'Service of ExternalName type is not supported',
  ServiceNoClusterIP: 'Service does not have a valid ClusterIP',
  ServiceWithoutEndpoints: 'Service has no Endpoints',
  ImportedService: 'The Service is imported, not allowed to export',
  InvalidExportedMetadata: 'The exported labels or annotations cannot be exported',
  Succeed: 'The Service is exported successfully',
};

/** Names of the two ResourceExports of a Service: `<localID>-<ns>-<name>-service|endpoints`. */
export function exportNames(localID: string, ns: string, name: string): { service: string; endpoints: string } {
  return {
    service: resourceExportName(localID, ns, name, RESOURCE_EXPORT_KIND.Service),
    endpoints: resourceExportName(localID, ns, name, RESOURCE_EXPORT_KIND.Endpoints),
  };
}

/** Code-unit order: the same on every host, unlike localeCompare. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function ipv4Number(ip: string): number {
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

/** Orders IPv4 addresses numerically, before anything else (ordered as strings). */
export function compareIPs(a: string, b: string): number {
  const a4 = isIPv4(a);
  const b4 = isIPv4(b);
  if (a4 && b4) return ipv4Number(a) - ipv4Number(b);
  if (a4 !== b4) return a4 ? -1 : 1;
  return compareStrings(a, b);
}

function sortedUnique(ips: Iterable<string>): string[] {
  return [...new Set(ips)].sort(compareIPs);
}

/**
 * A ResourceExport as a member creates it: labels, our finalizer (the ≥2.7 leader webhook
 * requires it on CREATE, and the leader needs it to clean up the derived ResourceImport).
 */
export function newResourceExport(leaderNamespace: string, name: string, labels: Record<string, string>, spec: ResourceExportSpec,
  annotations: Record<string, string> = {}): ResourceExport {
  return {
    apiVersion: RESOURCE_EXPORT.apiVersion,
    kind: RESOURCE_EXPORT.kind,
    metadata: { name, namespace: leaderNamespace, labels, ...(Object.keys(annotations).length > 0 && { annotations }), finalizers: [RESOURCE_EXPORT_FINALIZER] },
    spec,
  };
}

function refuse(reason: Exclude<ServiceExportReason, 'Succeed'>, detail?: string): ServiceExportPlan {
  return { valid: { status: 'False', reason, message: detail === undefined ? SERVICE_EXPORT_MESSAGE[reason] : `${SERVICE_EXPORT_MESSAGE[reason]}: ${detail}` }, exports: [] };
}

/**
 * KEP-1645 exported labels and annotations, as the Service RE's annotations (exported-metadata.ts),
 * or why they cannot travel: the same rules every member's firewall applies, so what would be
 * refused there is refused here, on the ServiceExport that says it.
 */
function exportedMetadataOf(serviceExport: ServiceExport): Record<string, string> | { problem: string } {
  const spec = serviceExport.spec ?? {};
  const labels = spec.exportedLabels ?? {};
  const annotations = spec.exportedAnnotations ?? {};
  const problem = exportedMapProblem('labels', labels) ?? exportedMapProblem('annotations', annotations);
  return problem !== undefined ? { problem } : exportedMetadataAnnotations({ labels, annotations });
}

/**
 * The ClusterIPs to export, IPv4 first. A dual-stack Service's IPv6 ClusterIP goes along: its
 * importers slice them per family (one MCS EndpointSlice per family of the ServiceImport,
 * KEP-1645). An IPv6-only Service exports nothing (Antrea Multi-cluster is IPv4), and Antrea's
 * clusters are IPv4 single-stack, so what they receive is unchanged.
 */
function clusterIPsOf(service: ServiceLike): string[] {
  const spec = service.spec ?? {};
  const ips = spec.clusterIPs !== undefined && spec.clusterIPs.length > 0 ? spec.clusterIPs : [spec.clusterIP ?? ''];
  if (!ips.some((ip) => isIPv4(ip))) return [];
  return sortedUnique(ips.filter((ip) => isIP(ip) !== 0));
}

type PortLike = { name?: string | undefined; port?: number | undefined; protocol?: string | undefined; appProtocol?: string | undefined };

/** A core/v1 EndpointPort, omitempty style; undefined without a port number (a core Endpoints port needs one). */
function endpointPort(p: PortLike, keepAppProtocol: boolean): EndpointPort | undefined {
  if (p.port === undefined) return undefined;
  const out: EndpointPort = { port: p.port };
  if (p.name !== undefined && p.name !== '') out.name = p.name;
  if (p.protocol !== undefined && p.protocol !== '') out.protocol = p.protocol;
  if (keepAppProtocol && p.appProtocol !== undefined && p.appProtocol !== '') out.appProtocol = p.appProtocol;
  return out;
}

function endpointPorts(ports: readonly PortLike[], keepAppProtocol: boolean): EndpointPort[] {
  return ports.map((p) => endpointPort(p, keepAppProtocol)).filter((p) => p !== undefined);
}

function comparePorts(a: EndpointPort, b: EndpointPort): number {
  return compareStrings(a.name ?? '', b.name ?? '') || a.port - b.port || compareStrings(a.protocol ?? '', b.protocol ?? '');
}

/**
 * Ready IPv4 Pod IPs of the Service's IPv4 EndpointSlices, one subset per distinct port set
 * (slices with the same ports merge), addresses sorted and deduplicated, subsets ordered by
 * their ports. An endpoint is ready unless `conditions.ready` is false (Kubernetes: "nil
 * should be interpreted as true"). Each address keeps its endpoint's `hostname` (a headless
 * Service's per-endpoint DNS name; KEP-1645 serves it as `<hostname>.<cluster>.<svc>`); an IP
 * listed twice with two hostnames keeps the smaller, so the export does not depend on order.
 */
function readySubsets(slices: readonly EndpointSliceLike[], namespace: string, name: string): EndpointSubset[] {
  const byPorts = new Map<string, { ports: EndpointPort[]; ips: Map<string, string | undefined> }>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4') continue;
    const sliceNs = slice.metadata?.namespace;
    const sliceSvc = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    if ((sliceNs !== undefined && sliceNs !== namespace) || (sliceSvc !== undefined && sliceSvc !== name)) continue;
    const ports = endpointPorts(slice.ports ?? [], true).sort(comparePorts);
    const key = JSON.stringify(ports);
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      const hostname = typeof endpoint.hostname === 'string' && endpoint.hostname !== '' ? endpoint.hostname : undefined;
      for (const ip of endpoint.addresses ?? []) {
        if (!isIPv4(ip)) continue;
        let group = byPorts.get(key);
        if (group === undefined) byPorts.set(key, (group = { ports, ips: new Map<string, string | undefined>() }));
        const seen = group.ips.get(ip);
        group.ips.set(ip, seen === undefined ? hostname : hostname === undefined || seen < hostname ? seen : hostname);
      }
    }
  }
  return [...byPorts.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([, group]) => {
      const subset: EndpointSubset = {
        addresses: sortedUnique(group.ips.keys()).map((ip) => {
          const hostname = group.ips.get(ip);
          return hostname === undefined ? { ip } : { ip, hostname };
        }),
      };
      if (group.ports.length > 0) subset.ports = group.ports;
      return subset;
    });
}

function identity(serviceExport: ServiceExport): { namespace: string; name: string } {
  const namespace = serviceExport.metadata?.namespace ?? '';
  const name = serviceExport.metadata?.name ?? '';
  if (namespace === '' || name === '') throw new TypeError('a ServiceExport needs metadata.namespace and metadata.name');
  return { namespace, name };
}

/**
 * The `Valid` condition of a ServiceExport and the ResourceExports it should have in the
 * leader namespace (none unless the condition is True).
 */
export function serviceExportPlan(input: ServiceExportInput): ServiceExportPlan {
  const { namespace, name } = identity(input.serviceExport);
  const service = input.service;
  if (service === undefined) return refuse(SERVICE_EXPORT_REASON.ServiceNotFound);
  if (service.spec?.type === 'ExternalName') return refuse(SERVICE_EXPORT_REASON.ServiceTypeNotSupported);
  // Like Antrea, the annotation's presence is enough: never re-export what was imported.
  if (service.metadata?.annotations?.[IMPORTED_SERVICE_ANNOTATION] !== undefined) return refuse(SERVICE_EXPORT_REASON.ImportedService);
  const exported = exportedMetadataOf(input.serviceExport);
  if ('problem' in exported) return refuse(SERVICE_EXPORT_REASON.InvalidExportedMetadata, exported.problem);
  const podSubsets = readySubsets(input.endpointSlices, namespace, name);
  if (podSubsets.length === 0) return refuse(SERVICE_EXPORT_REASON.ServiceWithoutEndpoints);

  const servicePorts = (service.spec?.ports ?? []).map((p) => structuredClone(p));
  // A headless Service has no ClusterIP to export: its ready Pod IPs are its endpoints
  // (KEP-1645 imports it as Headless), whatever the endpoint IP type.
  const headless = service.spec?.clusterIP === 'None';
  let subsets = podSubsets;
  if (input.endpointIPType === 'ClusterIP' && !headless) {
    const ips = clusterIPsOf(service);
    if (ips.length === 0) return refuse(SERVICE_EXPORT_REASON.ServiceNoClusterIP);
    const subset: EndpointSubset = { addresses: ips.map((ip) => ({ ip })) };
    const ports = endpointPorts(servicePorts, false);
    if (ports.length > 0) subset.ports = ports;
    subsets = [subset];
  }

  const names = exportNames(input.localClusterID, namespace, name);
  const labels = (kind: string): Record<string, string> => ({
    [RE_LABEL_SOURCE_NAME]: name,
    [RE_LABEL_SOURCE_NAMESPACE]: namespace,
    [RE_LABEL_SOURCE_CLUSTER_ID]: input.localClusterID,
    [RE_LABEL_SOURCE_KIND]: kind,
  });
  const base = { clusterID: input.localClusterID, name, namespace };
  const serviceSpec = {
    ...(servicePorts.length > 0 && { ports: servicePorts }),
    ...(headless && { clusterIP: 'None' }),
    ...structuredClone(present(service.spec, CARRIED_SERVICE_FIELDS)),
    // Only a dual-stack Service states its families: the leader imports it dual-stack
    // (KEP-1645 ipFamilies), and a single-stack export's RE stays what it was before.
    ...((service.spec?.ipFamilies?.length ?? 0) > 1 && { ipFamilies: [...(service.spec?.ipFamilies ?? [])] }),
  };
  return {
    valid: { status: 'True', reason: SERVICE_EXPORT_REASON.Succeed, message: SERVICE_EXPORT_MESSAGE.Succeed },
    exports: [
      newResourceExport(input.leaderNamespace, names.service, labels(RESOURCE_EXPORT_KIND.Service), {
        ...base, kind: RESOURCE_EXPORT_KIND.Service, service: { serviceSpec },
      }, exported),
      newResourceExport(input.leaderNamespace, names.endpoints, labels(RESOURCE_EXPORT_KIND.Endpoints), {
        ...base, kind: RESOURCE_EXPORT_KIND.Endpoints, endpoints: { subsets },
      }),
    ],
  };
}

// ---------------------------------------------------------------------------------------
// Comparing with and merging into the live ResourceExport
// ---------------------------------------------------------------------------------------

function hasOurFinalizer(finalizers: readonly string[] | undefined): boolean {
  return (finalizers ?? []).some((f) => f === RESOURCE_EXPORT_FINALIZER || f === RESOURCE_EXPORT_LEGACY_FINALIZER);
}

/**
 * The live RE already says what `desired` says: our labels (others ignored), the exported
 * labels' and annotations' annotations, the spec (omitempty-equivalent), and our finalizer (the legacy one counts) when `desired` carries it.
 * Metadata the apiserver or leader adds and `status` are ignored.
 */
export function sameExport(desired: ResourceExport, live: ResourceExport): boolean {
  const liveLabels = live.metadata?.labels ?? {};
  for (const [key, value] of Object.entries(desired.metadata?.labels ?? {})) {
    if (liveLabels[key] !== value) return false;
  }
  if (hasOurFinalizer(desired.metadata?.finalizers) && !hasOurFinalizer(live.metadata?.finalizers)) return false;
  const wanted = desired.metadata?.annotations ?? {};
  const liveAnnotations = live.metadata?.annotations ?? {};
  if (EXPORTED_METADATA_ANNOTATIONS.some((key) => wanted[key] !== liveAnnotations[key])) return false;
  return sameCanonical(desired.spec, live.spec);
}

/**
 * Why the live RE of this name cannot be updated into `desired`, or undefined: it exports
 * another object (cluster, kind, namespace or name differ; e.g. cluster `east`, Service
 * `a-b/c` and Service `a/b-c` share the name `east-a-b-c-service`). ≥ v2.7 leaders deny such
 * an update (the tuple is immutable), and overwriting it would hijack another export.
 */
export function exportConflict(desired: ResourceExport, live: ResourceExport): string | undefined {
  const d = desired.spec ?? {};
  const l = live.spec ?? {};
  if (d.clusterID === l.clusterID && d.kind === l.kind && (d.namespace ?? '') === (l.namespace ?? '') && (d.name ?? '') === (l.name ?? '')) return undefined;
  const describe = (s: ResourceExportSpec): string =>
    `${s.kind ?? '?'} ${s.namespace !== undefined && s.namespace !== '' ? `${s.namespace}/` : ''}${s.name ?? '?'} of cluster ${JSON.stringify(s.clusterID ?? '')}`;
  return `ResourceExport ${live.metadata?.namespace ?? ''}/${live.metadata?.name ?? ''} already exports ${describe(l)}, not ${describe(d)}`;
}

/**
 * The body to PUT over `live`: the live metadata (resourceVersion, uid, finalizers, foreign
 * labels and annotations; managedFields dropped) with our labels laid over it and our
 * finalizer ensured, and the desired spec. `status` is left out (a subresource: the server
 * keeps it).
 */
export function mergeForUpdate(desired: ResourceExport, live: ResourceExport): ResourceExport {
  const metadata: ObjectMeta = structuredClone(live.metadata ?? {});
  delete metadata.managedFields;
  const wanted = desired.metadata ?? {};
  if (wanted.name !== undefined) metadata.name = wanted.name;
  if (wanted.namespace !== undefined) metadata.namespace = wanted.namespace;
  metadata.labels = { ...(live.metadata?.labels ?? {}), ...(wanted.labels ?? {}) };
  // The exported labels and annotations: set as desired, removed when no longer exported.
  const annotations = Object.fromEntries(Object.entries(live.metadata?.annotations ?? {}).filter(([key]) => !EXPORTED_METADATA_ANNOTATIONS.includes(key)));
  for (const key of EXPORTED_METADATA_ANNOTATIONS) {
    const value = wanted.annotations?.[key];
    if (value !== undefined) annotations[key] = value;
  }
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const finalizers = [...(live.metadata?.finalizers ?? [])];
  if (hasOurFinalizer(wanted.finalizers) && !hasOurFinalizer(finalizers)) finalizers.push(RESOURCE_EXPORT_FINALIZER);
  if (finalizers.length > 0) metadata.finalizers = finalizers;
  const out: ResourceExport = { apiVersion: RESOURCE_EXPORT.apiVersion, kind: RESOURCE_EXPORT.kind, metadata };
  if (desired.spec !== undefined) out.spec = structuredClone(desired.spec);
  return out;
}
