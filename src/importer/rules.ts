// What a leader's ResourceImport becomes in the member cluster (antrea-wire.md 2.7), and how
// a desired object compares with and merges into the live one, so that the apply engine
// writes only real changes. Pure: nothing here talks to an API server, and nothing here
// decides whether an import is acceptable (that is policy.ts, the firewall).
import { canonical, sameCanonical } from '../common/kube/canonical.js';
//
// Fields are copied by name, never wholesale, for the member-side kinds: the member CRDs and
// core types prune unknown fields, and an unknown field kept in the desired object would make
// it differ from the live one forever. The ACNP spec is the exception (its CRD preserves
// unknown fields, and Antrea adds new policy fields often).
import { hash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ResourceDescriptor } from '../common/api/meta.js';
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import {
  CLUSTER_INFO_IMPORT,
  LABEL_IDENTITY,
  RESOURCE_IMPORT_KIND,
  type ResourceImport,
  type ResourceImportKind,
} from '../common/api/antrea.js';
import {
  ANNOTATION_TRUE,
  antreaMCName,
  ENDPOINT_SOURCES_ANNOTATION,
  IMPORTED_ACNP_ANNOTATION,
  IMPORTED_SERVICE_ANNOTATION,
} from '../common/api/names.js';
import { endpointSlicesFor, parseEndpointSources, serviceImportReferences, SKIP_MIRROR_LABEL, withOwnerReference } from './endpoint-slices.js';
import { LEADER_LABEL, ownerAnnotations, ownerLabels, type ImportOwner } from './ownership.js';
import { dropStaleExportedKeys, exportedAnnotationsWithKeys, hasStaleExportedKeys, importedMetadata } from './exported-metadata.js';
import type { ExportedMetadata } from '../common/api/exported-metadata.js';
import { cloneJson, isRecord, type Json } from '../common/kube/json.js';

export interface ImportRuleOptions {
  readonly enableLabelIdentity: boolean;
  /** The ServiceImport version the member serves (mcs.ts `servedMcsVersion`). @default v1beta1 */
  readonly serviceImport?: ResourceDescriptor;
}

/** One object the importer wants to exist, with what the engine needs to address it. */
export interface DesiredObject {
  apiVersion: string;
  kind: string;
  plural: string;
  /** '' for the core group. */
  group: string;
  version: string;
  namespaced: boolean;
  /** Set exactly when `namespaced`; may be '' or invalid when the leader sent garbage (policy.ts rejects it). */
  namespace?: string;
  name: string;
  /** The full object, metadata labels and annotations included, ready to create. */
  body: Record<string, unknown>;
  /**
   * `spec.kind` of the ResourceImport it came from. Any string is possible on the wire; the
   * intersection keeps the known kinds visible to editors instead of collapsing to `string`.
   */
  sourceKind: ResourceImportKind | (string & Record<never, never>);
}

/**
 * `apply`: these objects, and only these, should exist for the ResourceImport; an empty list
 * (unknown kinds) still goes through checkImport, which rejects it. `skip`: nothing should
 * exist for it (objects created for an earlier version of the RI are stale).
 */
export type ImportPlan = { kind: 'apply'; objects: DesiredObject[] } | { kind: 'skip'; reason: string };

export const SERVICE_RESOURCE = {
  group: '',
  version: 'v1',
  plural: 'services',
  kind: 'Service',
  apiVersion: 'v1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

export const ENDPOINT_SLICE_RESOURCE = {
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  kind: 'EndpointSlice',
  apiVersion: 'discovery.k8s.io/v1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

export const ENDPOINTS_RESOURCE = {
  group: '',
  version: 'v1',
  plural: 'endpoints',
  kind: 'Endpoints',
  apiVersion: 'v1',
  namespaced: true,
} as const satisfies ResourceDescriptor;

/** Antrea ClusterNetworkPolicy (cluster-scoped; CRD installed by Antrea, not by this chart). */
export const ACNP_RESOURCE = {
  group: 'crd.antrea.io',
  version: 'v1beta1',
  plural: 'clusternetworkpolicies',
  kind: 'ClusterNetworkPolicy',
  apiVersion: 'crd.antrea.io/v1beta1',
  namespaced: false,
} as const satisfies ResourceDescriptor;

/**
 * Hash of the leader-derived content of an object. It lets semanticallyEqual accept fields
 * that admission adds to a live object (Antrea's ACNP webhook fills in `tier` and rule names)
 * without missing a field the leader removed: a removal changes the hash.
 */
export const IMPORT_HASH_ANNOTATION = 'multicluster.clusterset-agent.io/import-hash';

/** `spec.kind` values Antrea defines that members deliberately ignore (antrea-wire.md 2.7.6). */
export const IGNORED_IMPORT_KINDS: readonly string[] = ['ExternalEntity'];

export type { Json };

/** A JSON object (not an array, not null). */

function recordOf(value: unknown): Json {
  return isRecord(value) ? value : {};
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Copies the listed keys that are present, deep-cloned so the body shares nothing with the RI. */
function pick(source: unknown, keys: readonly string[]): Json {
  const out: Json = {};
  if (!isRecord(source)) return out;
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined) out[key] = cloneJson(value);
  }
  return out;
}

function skip(reason: string): ImportPlan {
  return { kind: 'skip', reason };
}

// spec.clusterID is a list on the wire; a hostile or hand-written RI may carry a bare string.
function targetClusters(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return arrayOf(value).filter((v): v is string => typeof v === 'string');
}

function servicePort(port: unknown, keepAppProtocol: boolean): Json {
  const src = recordOf(port);
  const out: Json = {};
  if (src['name'] !== undefined && src['name'] !== '') out['name'] = src['name'];
  if (src['port'] !== undefined) out['port'] = src['port'];
  // The RI CRD defaults protocol to TCP; writing it explicitly keeps desired and live alike.
  out['protocol'] = src['protocol'] ?? 'TCP';
  if (keepAppProtocol && src['appProtocol'] !== undefined) out['appProtocol'] = src['appProtocol'];
  return out;
}

const TARGET_REF_KEYS = ['apiVersion', 'fieldPath', 'kind', 'name', 'namespace', 'resourceVersion', 'uid'] as const;
const ENDPOINT_PORT_KEYS = ['name', 'port', 'protocol', 'appProtocol'] as const;

function endpointAddress(address: unknown): Json {
  const out = pick(address, ['ip', 'hostname', 'nodeName']);
  const ref = recordOf(address)['targetRef'];
  if (isRecord(ref)) out['targetRef'] = pick(ref, TARGET_REF_KEYS);
  return out;
}

function endpointSubset(subset: unknown): Json {
  const src = recordOf(subset);
  const out: Json = {};
  if (Array.isArray(src['addresses'])) out['addresses'] = src['addresses'].map(endpointAddress);
  if (Array.isArray(src['notReadyAddresses'])) out['notReadyAddresses'] = src['notReadyAddresses'].map(endpointAddress);
  if (Array.isArray(src['ports'])) out['ports'] = src['ports'].map((p) => pick(p, ENDPOINT_PORT_KEYS));
  return out;
}

function clusterInfoSpec(info: unknown): Json {
  const src = recordOf(info);
  const out = pick(src, ['clusterID', 'serviceCIDR', 'podCIDRs']);
  if (Array.isArray(src['gatewayInfos'])) out['gatewayInfos'] = src['gatewayInfos'].map((g) => pick(g, ['gatewayIP']));
  if (isRecord(src['wireGuard'])) out['wireGuard'] = pick(src['wireGuard'], ['publicKey']);
  return out;
}

function serviceImportSpec(spec: unknown): Json {
  const src = recordOf(spec);
  // `ips` and `ipFamilies` are left to the engine, which sets the local Service's ClusterIPs
  // and families (withServiceImportIPs): what this member serves, not what the leader says.
  // Antrea's member CRD has no ipFamilies; the engine leaves them out where it is absent.
  const out: Json = { ports: arrayOf(src['ports']).map((p) => servicePort(p, true)) };
  for (const key of ['type', 'sessionAffinity', 'internalTrafficPolicy', 'trafficDistribution']) {
    if (typeof src[key] === 'string') out[key] = src[key];
  }
  const affinity = src['sessionAffinityConfig'];
  if (isRecord(affinity)) {
    out['sessionAffinityConfig'] = isRecord(affinity['clientIP']) ? { clientIP: pick(affinity['clientIP'], ['timeoutSeconds']) } : {};
  }
  return out;
}

/** JSON with every object's keys sorted (undefined members left out, as JSON.stringify does); concatenated, not mapped and joined, as it runs for every desired object. */
export function stableStringify(value: unknown): string {
  if (value === undefined) return 'null';
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + stableStringify(value[i]);
    return `${out}]`;
  }
  const record = value as Json;
  let out = '{';
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${stableStringify(item)}`;
  }
  return `${out}}`;
}

function contentHash(kind: string, content: Json): string {
  return hash('sha256', stableStringify({ kind, content })).slice(0, 16);
}

interface Build {
  resource: ResourceDescriptor;
  name: string;
  namespace?: string;
  annotations?: Record<string, string>;
  /** Labels besides the ownership labels. */
  labels?: Record<string, string>;
  /** KEP-1645 exported labels and annotations (ServiceImport): under everything the agent sets itself. */
  exported?: ExportedMetadata;
  /** Top-level fields besides apiVersion/kind/metadata (`spec`, or `subsets` for Endpoints). */
  content: Json;
}

function build(ri: ResourceImport, owner: ImportOwner, sourceKind: string, b: Build): DesiredObject {
  const { resource } = b;
  const annotations: Record<string, string> = {
    ...(b.exported !== undefined && exportedAnnotationsWithKeys(b.exported)),
    ...ownerAnnotations(owner, ri.metadata?.name ?? ''),
    ...b.annotations,
    [IMPORT_HASH_ANNOTATION]: contentHash(resource.kind, b.content),
  };
  const metadata: Json = { name: b.name };
  if (resource.namespaced) metadata['namespace'] = b.namespace ?? '';
  metadata['labels'] = { ...b.exported?.labels, ...b.labels, ...ownerLabels(owner) };
  metadata['annotations'] = annotations;
  const object: DesiredObject = {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    plural: resource.plural,
    group: resource.group,
    version: resource.version,
    namespaced: resource.namespaced,
    name: b.name,
    body: { apiVersion: resource.apiVersion, kind: resource.kind, metadata, ...b.content },
    sourceKind,
  };
  if (resource.namespaced) object.namespace = b.namespace ?? '';
  return object;
}

/**
 * The local objects a ResourceImport stands for, per antrea-wire.md 2.7, plus ownership labels
 * and provenance annotations on each. Same input, deep-equal output. Never throws on a
 * malformed RI: missing payload fields give incomplete objects that checkImport rejects.
 */
export function desiredForImport(ri: ResourceImport, owner: ImportOwner, options: ImportRuleOptions): ImportPlan {
  const spec = ri.spec;
  if (spec === undefined) return skip('the ResourceImport has no spec');
  // Antrea ignores this targeting (antrea-wire.md 5.1 item 8); honouring it is the point.
  const targets = targetClusters(spec.clusterID);
  if (targets.length > 0 && !targets.includes(owner.localClusterID)) {
    const shown = targets.length > 5 ? `${targets.slice(0, 5).join(', ')}, ... (${targets.length} clusters)` : targets.join(', ');
    return skip(`targeted at cluster(s) ${shown}, not at ${owner.localClusterID}`);
  }
  const kind = spec.kind ?? '';
  const name = spec.name ?? '';
  const namespace = spec.namespace ?? '';
  const riName = ri.metadata?.name ?? '';
  switch (kind) {
    case RESOURCE_IMPORT_KIND.ServiceImport: {
      const siSpec = spec.serviceImport?.spec;
      const ports = arrayOf(siSpec?.ports).map((p) => servicePort(p, false));
      // No selector: the Service must select nothing locally; Antrea's proxy routes it through
      // the Endpoints below because of the imported-service annotation. A Headless import
      // (KEP-1645) gets a headless Service, so its ServiceImport has no IP.
      const headless = siSpec?.type === 'Headless';
      // A dual-stack export (KEP-1645 ipFamilies) gets a local Service of every family this
      // member serves: PreferDualStack is single-stack on a single-stack member.
      const dualStack = arrayOf(siSpec?.ipFamilies).length > 1;
      const service = build(ri, owner, kind, {
        resource: SERVICE_RESOURCE,
        name: antreaMCName(name),
        namespace,
        annotations: { [IMPORTED_SERVICE_ANNOTATION]: ANNOTATION_TRUE },
        content: { spec: { type: 'ClusterIP', ...(headless && { clusterIP: 'None' }), ...(dualStack && { ipFamilyPolicy: 'PreferDualStack' }), ports } },
      });
      const serviceImport = build(ri, owner, kind, {
        resource: options.serviceImport ?? SERVICE_IMPORT,
        name,
        namespace,
        exported: importedMetadata(ri),
        content: { spec: serviceImportSpec(siSpec) },
      });
      return { kind: 'apply', objects: [service, serviceImport] };
    }
    case RESOURCE_IMPORT_KIND.Endpoints: {
      const endpoints = spec.endpoints as unknown;
      const content: Json = {};
      const subsets = recordOf(endpoints)['subsets'];
      if (Array.isArray(subsets)) content['subsets'] = subsets.map(endpointSubset);
      // Antrea's Endpoints stay (Antrea's proxy reads them) but are not mirrored: the
      // EndpointSlices are the one set Kubernetes sees. The slices come first, so that
      // skip-mirror Endpoints never stand without them (a refused slice stops the apply).
      const objects: DesiredObject[] = [];
      const sources = parseEndpointSources(ri.metadata?.annotations?.[ENDPOINT_SOURCES_ANNOTATION], arrayOf(content['subsets']).length);
      // A malformed sources annotation is refused by the firewall (policy.ts); here it only must not throw.
      for (const slice of endpointSlicesFor(name, arrayOf(content['subsets']), typeof sources === 'string' ? undefined : sources)) {
        objects.push(build(ri, owner, kind, { resource: ENDPOINT_SLICE_RESOURCE, name: slice.name, namespace, labels: slice.labels, content: slice.content }));
      }
      objects.push(build(ri, owner, kind, {
        resource: ENDPOINTS_RESOURCE,
        name: antreaMCName(name),
        namespace,
        annotations: { [IMPORTED_SERVICE_ANNOTATION]: ANNOTATION_TRUE },
        labels: { [SKIP_MIRROR_LABEL]: ANNOTATION_TRUE },
        content,
      }));
      return { kind: 'apply', objects };
    }
    case RESOURCE_IMPORT_KIND.ClusterInfo: {
      const info = spec.clusterinfo as unknown;
      if (!isRecord(info)) return skip('ClusterInfo ResourceImport without a clusterinfo payload');
      if (info['clusterID'] === owner.localClusterID) return skip(`ClusterInfo of the local cluster ${owner.localClusterID}`);
      // Lands in the agent's namespace whatever spec.namespace says: the leader does not choose it.
      return {
        kind: 'apply',
        objects: [build(ri, owner, kind, {
          resource: CLUSTER_INFO_IMPORT,
          name: riName,
          namespace: owner.agentNamespace,
          content: { spec: clusterInfoSpec(info) },
        })],
      };
    }
    case RESOURCE_IMPORT_KIND.AntreaClusterNetworkPolicy: {
      const policy = spec.clusternetworkpolicy as unknown;
      if (!isRecord(policy)) return skip('AntreaClusterNetworkPolicy ResourceImport without a clusternetworkpolicy payload');
      return {
        kind: 'apply',
        objects: [build(ri, owner, kind, {
          resource: ACNP_RESOURCE,
          name: antreaMCName(name),
          annotations: { [IMPORTED_ACNP_ANNOTATION]: ANNOTATION_TRUE },
          content: { spec: cloneJson(policy) },
        })],
      };
    }
    case RESOURCE_IMPORT_KIND.LabelIdentity: {
      if (!options.enableLabelIdentity) return skip('LabelIdentity imports are disabled (imports.enableLabelIdentity)');
      return {
        kind: 'apply',
        objects: [build(ri, owner, kind, {
          resource: LABEL_IDENTITY,
          name: riName,
          content: { spec: pick(spec.labelIdentity, ['label', 'id']) },
        })],
      };
    }
    default:
      if (IGNORED_IMPORT_KINDS.includes(kind)) return skip(`${kind} ResourceImports are not imported by members`);
      return { kind: 'apply', objects: [] };
  }
}

/** What a ServiceImport carries of its local `antrea-mc-<name>` Service. */
export interface ServiceAddresses {
  /** The ClusterIPs, one per family in the order of `ipFamilies`; none for a headless Service. */
  readonly ips: readonly string[];
  /** The Service's families (a headless Service has them too); none when unknown. */
  readonly ipFamilies: readonly string[];
}

/**
 * The addresses of a live Service as its ServiceImport states them (KEP-1645 ClusterSetIP:
 * "the IPs field must correspond to the protocols defined in the ipFamilies field"): its
 * `clusterIPs` (else `clusterIP`) and `ipFamilies`, at most two, in the Service's order.
 */
export function serviceAddresses(spec: unknown): ServiceAddresses {
  const s = recordOf(spec);
  const clusterIPs = arrayOf(s['clusterIPs']).filter((ip): ip is string => typeof ip === 'string');
  const all = clusterIPs.length > 0 ? clusterIPs : typeof s['clusterIP'] === 'string' ? [s['clusterIP']] : [];
  const ips = all.filter((ip) => ip !== '' && ip !== 'None').slice(0, 2);
  const ipFamilies = arrayOf(s['ipFamilies']).filter((f): f is string => f === 'IPv4' || f === 'IPv6').slice(0, 2);
  return { ips, ipFamilies };
}

/**
 * The ServiceImport body with `spec.ips` and `spec.ipFamilies` of the local `antrea-mc-<name>`
 * Service (Antrea's rule, one VIP per family). `oneVIP`: the member's CRD is Antrea's (one
 * `ips`, no `ipFamilies`), so only the first address is kept and no families are written.
 * An empty list removes the field.
 */
export function withServiceImportIPs(body: Record<string, unknown>, ips: readonly string[], ipFamilies: readonly string[] = [], oneVIP = false): Record<string, unknown> {
  const out = cloneJson(body);
  const spec = recordOf(out['spec']);
  const kept = oneVIP ? ips.slice(0, 1) : ips.slice(0, 2);
  if (kept.length === 0) delete spec['ips'];
  else spec['ips'] = [...kept];
  if (oneVIP || ipFamilies.length === 0) delete spec['ipFamilies'];
  else spec['ipFamilies'] = [...ipFamilies.slice(0, 2)];
  out['spec'] = spec;
  return out;
}

/** Every field of `desired` is in `live` with the same value; `live` may have more. */
function covers(desired: unknown, live: unknown): boolean {
  if (Array.isArray(desired)) {
    return Array.isArray(live) && live.length === desired.length && desired.every((d, i) => covers(d, live[i]));
  }
  if (isRecord(desired)) {
    return isRecord(live) && Object.entries(desired).every(([k, v]) => covers(v, live[k]));
  }
  return isDeepStrictEqual(desired, live);
}

/**
 * The leader label is left out: it names the leader that wrote the object, and another leader
 * of the ClusterSet that takes an import over with the same content has nothing to write.
 */
function metadataCovers(desired: Json, live: Json): boolean {
  const d = recordOf(desired['metadata']);
  const l = recordOf(live['metadata']);
  const { [LEADER_LABEL]: _writer, ...labels } = recordOf(d['labels']);
  return covers(labels, l['labels'] ?? {}) && covers(d['annotations'] ?? {}, l['annotations'] ?? {});
}

function comparablePorts(ports: unknown): unknown {
  return canonical(arrayOf(ports).map((p) => {
    const src = recordOf(p);
    return { name: src['name'], port: src['port'], protocol: src['protocol'] ?? 'TCP' };
  }));
}

/**
 * Endpoints as the API server stores them: it repacks subsets on write (RepackSubsets: one
 * subset per port set, addresses sorted and deduplicated by IP and targetRef UID, the first
 * copy of an address kept, ready winning over not-ready), so two Endpoints are the same when
 * they map the same (port, address) pairs with the same readiness, in any layout.
 */
function endpointPairs(subsets: unknown): string[] {
  const addresses = new Map<string, string>();
  const byPort = new Map<string, Map<string, boolean>>();
  const note = (address: unknown, port: string, ready: boolean): void => {
    const src = recordOf(address);
    const uid = recordOf(src['targetRef'])['uid'];
    const key = `${String(src['ip'])}\u0000${typeof uid === 'string' ? uid : ''}`;
    if (!addresses.has(key)) addresses.set(key, stableStringify(canonical(endpointAddress(address)) ?? {}));
    let readiness = byPort.get(port);
    if (readiness === undefined) byPort.set(port, (readiness = new Map<string, boolean>()));
    if (readiness.get(key) !== true) readiness.set(key, ready);
  };
  for (const subset of arrayOf(subsets)) {
    const src = recordOf(subset);
    const ports = arrayOf(src['ports']).map((p) => {
      const port = pick(p, ENDPOINT_PORT_KEYS);
      port['protocol'] ??= 'TCP';
      return stableStringify(canonical(port) ?? {});
    });
    for (const port of ports.length > 0 ? ports : ['(no port)']) {
      for (const a of arrayOf(src['addresses'])) note(a, port, true);
      for (const a of arrayOf(src['notReadyAddresses'])) note(a, port, false);
    }
  }
  const pairs: string[] = [];
  for (const [port, readiness] of byPort) {
    for (const [key, ready] of readiness) pairs.push(`${port} ${addresses.get(key) ?? ''} ${ready ? 'ready' : 'not-ready'}`);
  }
  return pairs.sort();
}

/** What the importer writes of an EndpointSlice (top-level fields; the apiserver adds none we read). */
const SLICE_FIELDS = ['addressType', 'endpoints', 'ports'] as const;

function serviceImportComparable(spec: unknown, dropIPs: boolean, dropFamilies: boolean): unknown {
  const src = { ...recordOf(spec) };
  if (dropIPs) delete src['ips'];
  if (dropFamilies) delete src['ipFamilies'];
  src['ports'] = arrayOf(src['ports']).map((p) => ({ ...recordOf(p), protocol: recordOf(p)['protocol'] ?? 'TCP' }));
  return canonical(src);
}

/**
 * The live object already holds what the importer manages: our labels and annotations (other
 * labels and annotations are ignored) and the managed fields of its kind. Server-filled fields
 * (Service clusterIP, targetPort, sessionAffinity; Endpoints repacking; ACNP defaults) are not
 * differences, so the engine never rewrites an unchanged object.
 */
export function semanticallyEqual(desired: DesiredObject, live: Record<string, unknown>): boolean {
  if (!metadataCovers(desired.body, live)) return false;
  const want = recordOf(desired.body['spec']);
  const have = recordOf(live['spec']);
  switch (desired.kind) {
    case SERVICE_RESOURCE.kind:
      return (have['type'] ?? 'ClusterIP') === 'ClusterIP' &&
        canonical(have['selector']) === undefined &&
        (want['ipFamilyPolicy'] === undefined || want['ipFamilyPolicy'] === have['ipFamilyPolicy']) &&
        isDeepStrictEqual(comparablePorts(want['ports']), comparablePorts(have['ports']));
    case ENDPOINTS_RESOURCE.kind:
      return isDeepStrictEqual(endpointPairs(desired.body['subsets']), endpointPairs(live['subsets']));
    case ENDPOINT_SLICE_RESOURCE.kind:
      // The owner reference carries the ServiceImport's uid: a ServiceImport created again
      // must be referenced again, or the garbage collector takes the slice.
      return SLICE_FIELDS.every((key) => sameCanonical(desired.body[key], live[key])) &&
        sameCanonical(serviceImportReferences(desired.body), serviceImportReferences(live));
    case SERVICE_IMPORT.kind: {
      if (hasStaleExportedKeys(desired.body, live)) return false;
      const dropIPs = canonical(want['ips']) === undefined;
      const dropFamilies = canonical(want['ipFamilies']) === undefined;
      return isDeepStrictEqual(serviceImportComparable(want, dropIPs, dropFamilies), serviceImportComparable(have, dropIPs, dropFamilies));
    }
    case ACNP_RESOURCE.kind:
      // The hash annotation (checked above) catches leader-side removals; covers() tolerates
      // what Antrea's mutating webhook adds and still catches a user editing our fields.
      return covers(canonical(want) ?? {}, canonical(have) ?? {});
    default:
      return sameCanonical(want, have);
  }
}

/**
 * The object to PUT over `live`: live metadata (resourceVersion, uid, finalizers, foreign
 * labels and annotations) with ours laid over it, and the managed fields replaced. Service:
 * type ClusterIP, our ports (targetPort and nodePort dropped, the server re-defaults them),
 * selector removed, clusterIP and other server-side fields kept. ServiceImport: spec replaced,
 * live `ips` kept when the desired object has none yet.
 */
export function mergeForUpdate(desired: DesiredObject, live: Record<string, unknown>): Record<string, unknown> {
  const out = cloneJson(live);
  const body = desired.body;
  out['apiVersion'] = body['apiVersion'];
  out['kind'] = body['kind'];
  const liveMeta = recordOf(live['metadata']);
  const wantMeta = recordOf(body['metadata']);
  out['metadata'] = {
    ...cloneJson(liveMeta),
    labels: { ...recordOf(liveMeta['labels']), ...recordOf(wantMeta['labels']) },
    annotations: { ...recordOf(liveMeta['annotations']), ...recordOf(wantMeta['annotations']) },
  };
  const want = cloneJson(recordOf(body['spec']));
  switch (desired.kind) {
    case SERVICE_RESOURCE.kind: {
      const spec = { ...recordOf(out['spec']) };
      delete spec['selector'];
      delete spec['externalName'];
      spec['type'] = 'ClusterIP';
      spec['ports'] = want['ports'] ?? [];
      // SingleStack to PreferDualStack is a valid update; the other way is left as it is.
      if (want['ipFamilyPolicy'] !== undefined) spec['ipFamilyPolicy'] = want['ipFamilyPolicy'];
      out['spec'] = spec;
      break;
    }
    case ENDPOINTS_RESOURCE.kind:
      if (body['subsets'] === undefined) delete out['subsets'];
      else out['subsets'] = cloneJson(body['subsets']);
      break;
    case ENDPOINT_SLICE_RESOURCE.kind: {
      for (const key of SLICE_FIELDS) out[key] = cloneJson(body[key]);
      // Our ServiceImport reference replaces any earlier one (an older uid); other owners stay.
      const reference = recordOf(serviceImportReferences(body)[0]);
      if (typeof reference['name'] === 'string' && typeof reference['uid'] === 'string') {
        return withOwnerReference(out, reference['name'], reference['uid'], typeof reference['apiVersion'] === 'string' ? reference['apiVersion'] : undefined);
      }
      break;
    }
    case SERVICE_IMPORT.kind: {
      const liveIPs = recordOf(live['spec'])['ips'];
      if (want['ips'] === undefined && liveIPs !== undefined) want['ips'] = cloneJson(liveIPs);
      const liveFamilies = recordOf(live['spec'])['ipFamilies'];
      if (want['ipFamilies'] === undefined && liveFamilies !== undefined) want['ipFamilies'] = cloneJson(liveFamilies);
      out['spec'] = want;
      dropStaleExportedKeys(out, body, live);
      break;
    }
    default:
      out['spec'] = want;
  }
  return out;
}
