// The EndpointSlices an imported Service gets besides Antrea's `antrea-mc-<name>` Endpoints
// (KEP-1645 "Using EndpointSlice objects to track endpoints"): one slice per source cluster
// and address family, labelled with the MCS labels and managed by this project, so that
// Kubernetes (and anything reading EndpointSlices) sees the imported endpoints exactly once;
// the Endpoints object carries `endpointslice.kubernetes.io/skip-mirror` so the mirroring
// controller does not publish them a second time. Pure.
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { antreaMCName } from '../common/api/names.js';

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

/** A readable, valid name part for a cluster ID (a short hash when the ID is not a DNS label). */
function clusterNamePart(cluster: string): string {
  if (/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/.test(cluster)) return cluster;
  return `c${createHash('sha256').update(cluster).digest('hex').slice(0, 10)}`;
}

export interface SliceContent {
  readonly name: string;
  readonly labels: Record<string, string>;
  /** Top-level fields besides apiVersion/kind/metadata. */
  readonly content: Json;
}

/**
 * The EndpointSlices of the imported Service `name` from an Endpoints payload's subsets: one per
 * source cluster, address family and port set (normally one port set per cluster). Without
 * sources (an Antrea leader), one per address family and port set, without the source-cluster
 * label. Named `antrea-mc-<name>-<cluster>-ipv4|ipv6[-<n>]`, deterministic for the same input.
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
    const perFamily = new Map<Family, number>();
    for (const group of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, g]) => g)) {
      const n = (perFamily.get(group.family) ?? 0) + 1;
      perFamily.set(group.family, n);
      const base = `${service}${run.cluster === undefined ? '' : `-${clusterNamePart(run.cluster)}`}-${group.family.toLowerCase()}`;
      const labels: Record<string, string> = {
        [SLICE_SERVICE_NAME_LABEL]: service,
        [MCS_SERVICE_NAME_LABEL]: name,
        [SLICE_MANAGED_BY_LABEL]: SLICE_MANAGED_BY_VALUE,
        ...(run.cluster !== undefined && { [MCS_SOURCE_CLUSTER_LABEL]: run.cluster }),
      };
      out.push({
        name: n === 1 ? base : `${base}-${String(n)}`,
        labels,
        content: { addressType: group.family, endpoints: group.endpoints, ports: group.ports },
      });
    }
  }
  return out;
}
