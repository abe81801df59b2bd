// Which of an import's existing EndpointSlices a new set of slices is written into. Slice names
// follow what the leader sends (endpoint-slices.ts): per source cluster from this project's
// leader, without a cluster from Antrea's. When the source of an import changes from one kind
// of leader to the other (a move off Antrea's leader, issue 30), every name changes although
// the endpoints do not; writing the new names and deleting the old would delete a slice every
// consumer (kube-proxy, CoreDNS) is reading. The EndpointSlice controller itself updates the
// slices it has rather than replacing them: so does the importer. A slice of ours that the new
// set does not name is taken for a new slice of the same address family and source cluster (or
// where one side has none), so a switch costs an update, never a delete and a create.
import { antreaMCName } from '../common/api/names.js';
import { MCS_SOURCE_CLUSTER_LABEL, SLICE_SERVICE_NAME_LABEL } from './endpoint-slices.js';
import type { DesiredObject } from './rules.js';

/** What the reuse needs of an existing slice the importer owns for this import. */
export interface ExistingSlice {
  readonly name: string;
  readonly namespace: string | undefined;
  readonly object: Readonly<Record<string, unknown>>;
}

function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {};
}

function labelsOf(object: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return recordOf(recordOf(object['metadata'])['labels']);
}

/** The `kubernetes.io/service-name` of a slice: the imported Service it belongs to. */
function serviceOf(object: Readonly<Record<string, unknown>>): unknown {
  return labelsOf(object)[SLICE_SERVICE_NAME_LABEL];
}

/**
 * `objects` with each EndpointSlice whose name is not among `existing` renamed to an unused
 * existing slice of the same Service, address family and source cluster (or one side without
 * a source cluster), preferring the same source cluster, then the lowest name: deterministic, so the next reconcile of the same input picks
 * the same names and writes nothing. Only slices named by this project's scheme for that Service
 * (`antrea-mc-<svc>.…`) are taken: a slice of an older naming is replaced, as before. Other
 * objects, and slices whose name exists already, are returned as they are.
 */
export function reuseSliceNames(objects: readonly DesiredObject[], existing: readonly ExistingSlice[]): DesiredObject[] {
  const wanted = new Set(objects.filter((o) => o.kind === 'EndpointSlice').map((o) => `${o.namespace ?? ''}/${o.name}`));
  const free = existing
    .filter((e) => !wanted.has(`${e.namespace ?? ''}/${e.name}`))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (free.length === 0) return [...objects];
  const taken = new Set<ExistingSlice>();
  return objects.map((desired) => {
    if (desired.kind !== 'EndpointSlice') return desired;
    const service = serviceOf(desired.body);
    if (typeof service !== 'string' || !service.startsWith(antreaMCName(''))) return desired;
    if (existing.some((e) => e.name === desired.name && e.namespace === desired.namespace)) return desired;
    const family = desired.body['addressType'];
    const cluster = labelsOf(desired.body)[MCS_SOURCE_CLUSTER_LABEL];
    // Another cluster's slice is not taken: its name would name the wrong cluster. One without a
    // source cluster (from Antrea's leader), or a new one without (to it), may be.
    const candidates = free.filter((e) => !taken.has(e) && e.namespace === desired.namespace && e.name.startsWith(`${service}.`)
      && serviceOf(e.object) === service && e.object['addressType'] === family
      && [cluster, undefined].includes(labelsOf(e.object)[MCS_SOURCE_CLUSTER_LABEL]));
    const pick = candidates.find((e) => labelsOf(e.object)[MCS_SOURCE_CLUSTER_LABEL] === cluster) ?? candidates[0];
    if (pick === undefined) return desired;
    taken.add(pick);
    return { ...desired, name: pick.name, body: { ...desired.body, metadata: { ...recordOf(desired.body['metadata']), name: pick.name } } };
  });
}
