// The EndpointSlices an imported Service gets besides Antrea's `antrea-mc-<name>` Endpoints
// (KEP-1645 "Using EndpointSlice objects to track endpoints"): per source cluster and address
// family, at most MAX_ENDPOINTS_PER_SLICE endpoints each, labelled with the MCS labels, managed
// by this project and owned by the ServiceImport, so that Kubernetes (and anything reading
// EndpointSlices) sees the imported endpoints exactly once; the Endpoints object carries
// `endpointslice.kubernetes.io/skip-mirror` so the mirroring controller does not publish them a
// second time. Pure.
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import { antreaMCName, isDnsLabel } from '../common/api/names.js';
import { cloneJson } from '../common/kube/json.js';

/** KEP-1645 / mcs-api well-known labels. */
export const MCS_SERVICE_NAME_LABEL = 'multicluster.kubernetes.io/service-name';
export const MCS_SOURCE_CLUSTER_LABEL = 'multicluster.kubernetes.io/source-cluster';
/** discovery/v1 labels. */
export const SLICE_SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const SLICE_MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';
/** Never the Kubernetes controllers' values: their controllers would adopt or delete our slices. */
export const SLICE_MANAGED_BY_VALUE = 'clusterset-agent.multicluster.clusterset-agent.io';

export type Json = Record<string, unknown>;

export interface EndpointSource {
  readonly cluster: string;
  /** How many consecutive subsets of the Endpoints payload came from this cluster. */
  readonly subsets: number;
}

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/**
 * Parses the leader's `<clusterID>=<count>,...` annotation against the payload: undefined when
 * absent; a string (what is wrong) when malformed, i.e. a cluster ID that is not a label value,
 * a count that is not a positive integer, or counts not adding up to `subsetCount`.
 */
export function parseEndpointSources(value: string | undefined, subsetCount: number): EndpointSource[] | string | undefined {
  if (value === undefined) return undefined;
  const sources: EndpointSource[] = [];
  let total = 0;
  for (const part of value === '' ? [] : value.split(',')) {
    const eq = part.lastIndexOf('=');
    const cluster = part.slice(0, eq);
    const count = part.slice(eq + 1);
    if (eq < 1 || !LABEL_VALUE.test(cluster)) return `entry ${JSON.stringify(part.slice(0, 80))} does not name a cluster ID usable as a label value`;
    if (!/^[1-9][0-9]{0,5}$/.test(count)) return `entry for cluster ${cluster} has count ${JSON.stringify(count.slice(0, 20))}, not a positive integer`;
    if (sources.some((s) => s.cluster === cluster)) return `cluster ${cluster} is listed twice`;
    sources.push({ cluster, subsets: Number(count) });
    total += Number(count);
  }
  if (total !== subsetCount) return `counts add up to ${String(total)} subsets, the payload has ${String(subsetCount)}`;
  return sources;
}

function recordOf(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

type Family = 'IPv4' | 'IPv6';

function familyOf(ip: unknown): Family | undefined {
  if (typeof ip !== 'string') return undefined;
  return isIPv4(ip) ? 'IPv4' : isIPv6(ip) ? 'IPv6' : undefined;
}

function slicePorts(ports: unknown): Json[] {
  return arrayOf(ports).map((p) => {
    const src = recordOf(p);
    const out: Json = {};
    if (typeof src['name'] === 'string' && src['name'] !== '') out['name'] = src['name'];
    if (src['port'] !== undefined) out['port'] = src['port'];
    out['protocol'] = src['protocol'] ?? 'TCP';
    if (typeof src['appProtocol'] === 'string') out['appProtocol'] = src['appProtocol'];
    return out;
  }).sort((a, b) => JSON.stringify(a) < JSON.stringify(b) ? -1 : 1);
}

/** An endpoint of a remote cluster: no nodeName or targetRef (they name objects of that cluster). */
function endpoint(address: unknown, ready: boolean): Json {
  const src = recordOf(address);
  const out: Json = { addresses: [src['ip']], conditions: { ready, serving: ready, terminating: false } };
  if (typeof src['hostname'] === 'string' && src['hostname'] !== '') out['hostname'] = src['hostname'];
  return out;
}

/**
 * At most this many endpoints per slice, as the EndpointSlice controller writes them
 * (`--max-endpoints-per-slice` defaults to 100); kube-apiserver refuses more than 1,000.
 */
export const MAX_ENDPOINTS_PER_SLICE = 100;

/**
 * A readable name part for a cluster ID: the ID itself when it is a DNS label (every cluster
 * ID this project accepts), else a short hash (only a foreign leader sends such IDs; a hash
 * that equals another cluster's ID only costs a counter suffix, see {@link endpointSlicesFor}).
 */
function clusterNamePart(cluster: string): string {
  if (isDnsLabel(cluster)) return cluster;
  return `c${createHash('sha256').update(cluster).digest('hex').slice(0, 10)}`;
}

/**
 * The name of the `n`th slice (from 1) with this service, cluster and family:
 * `antrea-mc-<name>[.<cluster>].ipv4|ipv6[-<n>]`. The parts are joined by '.', which neither a
 * Service name nor a cluster ID (DNS labels) can contain, so the first part names exactly one
 * Service: no two Services share a slice name (with '-', `web` of cluster `prod-east` and
 * `web-prod` of cluster `east` did). An EndpointSlice name is a DNS subdomain: 10 + 53 (the
 * `antrea-mc-<name>` Service is a DNS label) + 1 + 63 + 1 + 4 + a counter stays far below 253.
 */
function sliceName(service: string, cluster: string | undefined, family: Family, n: number): string {
  const base = `${service}${cluster === undefined ? '' : `.${clusterNamePart(cluster)}`}.${family.toLowerCase()}`;
  return n === 1 ? base : `${base}-${String(n)}`;
}

export interface SliceContent {
  readonly name: string;
  readonly labels: Record<string, string>;
  /** Top-level fields besides apiVersion/kind/metadata. */
  readonly content: Json;
}

/**
 * The EndpointSlices of the imported Service `name` from an Endpoints payload's subsets: per
 * source cluster, address family and port set (normally one port set per cluster), split into
 * slices of at most {@link MAX_ENDPOINTS_PER_SLICE} endpoints in payload order. Without sources
 * (an Antrea leader), per address family and port set, without the source-cluster label. Named
 * by {@link sliceName}, the counter running over the port sets and chunks of a (cluster,
 * family): deterministic for the same input, and distinct within one call by construction.
 */
export function endpointSlicesFor(name: string, subsets: readonly unknown[], sources: readonly EndpointSource[] | undefined): SliceContent[] {
  const runs: { cluster: string | undefined; subsets: readonly unknown[] }[] = [];
  if (sources === undefined) runs.push({ cluster: undefined, subsets });
  else {
    let at = 0;
    for (const source of sources) {
      runs.push({ cluster: source.cluster, subsets: subsets.slice(at, at + source.subsets) });
      at += source.subsets;
    }
  }
  const out: SliceContent[] = [];
  const service = antreaMCName(name);
  const used = new Set<string>();
  for (const run of runs) {
    const groups = new Map<string, { family: Family; ports: Json[]; endpoints: Json[]; seen: Set<string> }>();
    for (const subset of run.subsets) {
      const src = recordOf(subset);
      const ports = slicePorts(src['ports']);
      for (const [list, ready] of [[src['addresses'], true], [src['notReadyAddresses'], false]] as const) {
        for (const address of arrayOf(list)) {
          const ip = recordOf(address)['ip'];
          const family = familyOf(ip);
          if (family === undefined) continue;
          const key = `${family} ${JSON.stringify(ports)}`;
          let group = groups.get(key);
          if (group === undefined) groups.set(key, (group = { family, ports, endpoints: [], seen: new Set() }));
          if (group.seen.has(ip as string)) continue;
          group.seen.add(ip as string);
          group.endpoints.push(endpoint(address, ready));
        }
      }
    }
    const labels: Record<string, string> = {
      [SLICE_SERVICE_NAME_LABEL]: service,
      [MCS_SERVICE_NAME_LABEL]: name,
      [SLICE_MANAGED_BY_LABEL]: SLICE_MANAGED_BY_VALUE,
      ...(run.cluster !== undefined && { [MCS_SOURCE_CLUSTER_LABEL]: run.cluster }),
    };
    for (const group of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, g]) => g)) {
      for (let at = 0; at < group.endpoints.length; at += MAX_ENDPOINTS_PER_SLICE) {
        // The next free name of this (cluster, family): two cluster IDs with the same name part
        // (a hashed foreign ID equal to a real one) continue each other's count.
        let n = 1;
        while (used.has(sliceName(service, run.cluster, group.family, n))) n += 1;
        const sliceN = sliceName(service, run.cluster, group.family, n);
        used.add(sliceN);
        out.push({
          name: sliceN,
          labels: { ...labels },
          content: { addressType: group.family, endpoints: group.endpoints.slice(at, at + MAX_ENDPOINTS_PER_SLICE), ports: group.ports },
        });
      }
    }
  }
  return out;
}

/**
 * KEP-1645: "EndpointSlices will have an owner reference to their associated ServiceImport".
 * `controller: false` as in the KEP's example: the ServiceImport does not manage them, this
 * agent does (it writes and deletes them itself; garbage collection only removes slices whose
 * ServiceImport is gone). `blockOwnerDeletion` is left unset: setting it true needs `update`
 * on `serviceimports/finalizers` where OwnerReferencesPermissionEnforcement is enabled, and a
 * foreground delete of a ServiceImport has no reason to wait for its slices. `apiVersion` is
 * the version the member serves: the garbage collector resolves the owner through it.
 */
export function serviceImportOwnerReference(name: string, uid: string, apiVersion: string = SERVICE_IMPORT.apiVersion): Json {
  return { apiVersion, kind: SERVICE_IMPORT.kind, name, uid, controller: false };
}

function isServiceImportReference(ref: unknown): boolean {
  const r = recordOf(ref);
  return r['kind'] === SERVICE_IMPORT.kind && typeof r['apiVersion'] === 'string' && r['apiVersion'].startsWith(`${SERVICE_IMPORT.group}/`);
}

/** `body` (a slice) owned by its ServiceImport `name` of `uid`: any other ServiceImport reference replaced, other owners kept. */
export function withOwnerReference(body: Readonly<Json>, name: string, uid: string, apiVersion: string = SERVICE_IMPORT.apiVersion): Json {
  const out = cloneJson(body) as Json;
  const metadata = recordOf(out['metadata']);
  const others = arrayOf(metadata['ownerReferences']).filter((ref) => !isServiceImportReference(ref));
  metadata['ownerReferences'] = [...others, serviceImportOwnerReference(name, uid, apiVersion)];
  out['metadata'] = metadata;
  return out;
}

/** The ServiceImport references of an object's metadata, as written (to compare desired with live). */
export function serviceImportReferences(object: Readonly<Json>): unknown[] {
  return arrayOf(recordOf(object['metadata'])['ownerReferences']).filter(isServiceImportReference);
}

/** The Service an EndpointSlice belongs to (its `kubernetes.io/service-name` label), if any. */
export function sliceServiceName(object: Readonly<Json>): string | undefined {
  const value = recordOf(recordOf(object['metadata'])['labels'])[SLICE_SERVICE_NAME_LABEL];
  return typeof value === 'string' ? value : undefined;
}
