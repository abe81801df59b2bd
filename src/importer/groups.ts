// Admission groups and the sibling rule. An exported Service is imported whole or not at all:
// its Service, ServiceImport, Endpoints and EndpointSlices form one admission group for the cap
// (capacity.ts), and its Endpoints RI lands only next to its applied ServiceImport sibling.
// Every other kind is a group of its own, one RI's objects.
import { RESOURCE_IMPORT_KIND, type ResourceImport } from '../common/api/antrea.js';
import { ANTREA_MC_PREFIX } from '../common/api/names.js';
import type { ObjectRef } from './local-store.js';
import type { ImportOwner } from './ownership.js';
import { rejectionDetail, rejectionOf, type Rejection } from './policy.js';
import { desiredForImport, type ImportPlan } from './rules.js';
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import type { ResourceDescriptor } from '../common/api/meta.js';

/**
 * Objects of one exported Service reserved before its first write: Service antrea-mc-<name>,
 * ServiceImport <name>, Endpoints antrea-mc-<name> and one EndpointSlice (one exporting cluster,
 * one address family). Its Endpoints import raises the reservation by its further slices.
 */
export const SERVICE_GROUP_SIZE = 4;

/**
 * Every local name an exported Service's import needs, whichever of its RIs writes it. They
 * are all checked before the first of them is created (importer.ts): a name held by an object
 * that is not ours refuses the whole Service. A new kind of the group (EndpointSlices) adds
 * its names here.
 */
export function serviceGroupRefs(namespace: string, name: string, serviceImport: ResourceDescriptor = SERVICE_IMPORT): ObjectRef[] {
  const core = { group: '', version: 'v1', namespaced: true, namespace } as const;
  return [
    { ...core, plural: 'services', name: `${ANTREA_MC_PREFIX}${name}` },
    { group: serviceImport.group, version: serviceImport.version, plural: serviceImport.plural, namespaced: true, namespace, name },
    { ...core, plural: 'endpoints', name: `${ANTREA_MC_PREFIX}${name}` },
  ];
}

function serviceGroupKey(namespace: string, name: string): string {
  return `svc:${namespace}/${name}`;
}

/**
 * The admission group of a local object: the exported Service its Service, ServiceImport or
 * Endpoints belongs to, or else the RI that produced it (every other kind is one object per RI).
 */
export function groupOfObject(ref: ObjectRef, riName: string): string {
  const ns = ref.namespace ?? '';
  if (ref.group === '' && (ref.plural === 'services' || ref.plural === 'endpoints') && ref.name.startsWith(ANTREA_MC_PREFIX)) {
    return serviceGroupKey(ns, ref.name.slice(ANTREA_MC_PREFIX.length));
  }
  if (ref.group === 'multicluster.x-k8s.io' && ref.plural === 'serviceimports') return serviceGroupKey(ns, ref.name);
  // An EndpointSlice belongs to the Service of the Endpoints import `<ns>-<name>-endpoints` it came from.
  const suffix = '-endpoints';
  if (ref.group === 'discovery.k8s.io' && ref.plural === 'endpointslices' && riName.startsWith(`${ns}-`) && riName.endsWith(suffix) && riName.length > ns.length + 1 + suffix.length) {
    return serviceGroupKey(ns, riName.slice(ns.length + 1, -suffix.length));
  }
  return `ri:${riName}`;
}

/**
 * The slots a group with `objects` existing objects reserves: a service is admitted whole, so
 * any part of one holds all of its slots; any other group, what exists of it.
 */
export function slotsFor(group: string, objects: number): number {
  return group.startsWith('svc:') ? Math.max(SERVICE_GROUP_SIZE, objects) : objects;
}

export interface AdmissionGroup {
  readonly key: string;
  /** Objects admitted at once: the whole exported Service, or the RI's own objects. */
  readonly size: number;
  /** What the cap refuses, in words. */
  readonly what: string;
  /** Names that must be free (or ours) before anything of the group is created. */
  readonly claims?: readonly ObjectRef[];
}

export function groupOfImport(ri: ResourceImport, plan: ImportPlan, serviceImport: ResourceDescriptor = SERVICE_IMPORT): AdmissionGroup {
  const kind = ri.spec?.kind;
  if (kind === RESOURCE_IMPORT_KIND.ServiceImport || kind === RESOURCE_IMPORT_KIND.Endpoints) {
    const ns = ri.spec?.namespace ?? '';
    const name = ri.spec?.name ?? '';
    // The Endpoints import knows its slices: Service and ServiceImport plus its own objects.
    const size = kind === RESOURCE_IMPORT_KIND.Endpoints && plan.kind === 'apply' ? Math.max(SERVICE_GROUP_SIZE, 2 + plan.objects.length) : SERVICE_GROUP_SIZE;
    return {
      key: serviceGroupKey(ns, name), size, what: `the exported Service ${ns}/${name} (Service, ServiceImport, Endpoints and EndpointSlices)`,
      // The ServiceImport RI lands first (its Endpoints sibling waits for it): it claims every name.
      ...(kind === RESOURCE_IMPORT_KIND.ServiceImport ? { claims: serviceGroupRefs(ns, name, serviceImport) } : {}),
    };
  }
  const riName = ri.metadata?.name ?? '';
  return { key: `ri:${riName}`, size: plan.kind === 'apply' ? plan.objects.length : 0, what: `the ${String(kind)} import` };
}

/** The last verdict on a ResourceImport, as far as its siblings are concerned. */
export type Verdict = 'applied' | 'rejected' | 'conflict' | 'skipped';

/** What the sibling rule reads: the leader's RIs (the informer cache) and the importer's verdicts. */
export interface SiblingLookup {
  readonly owner: ImportOwner;
  readonly enableLabelIdentity: boolean;
  /** The ServiceImport version the member serves. @default v1beta1 */
  readonly serviceImport?: ResourceDescriptor;
  /** The RIs last seen in the Endpoints RI's group. */
  readonly members: Iterable<string>;
  get(riName: string): ResourceImport | undefined;
  verdict(riName: string): Verdict | undefined;
  rejection(riName: string): Rejection | undefined;
}

/**
 * Why the Endpoints RI `ri` may not land now: its ServiceImport sibling (same spec.namespace
 * and spec.name) is not in the cache, or not applied by us; `quiet` (no Event) when the
 * sibling is absent, a normal transient state. `'wait'` while the sibling is in the cache but
 * not judged yet (after a restart the two are reconciled in any order: holding back would
 * delete Endpoints that are about to be confirmed; the sibling's verdict requeues this RI),
 * or undefined when the sibling has landed.
 */
export function siblingProblem(ri: ResourceImport, lookup: SiblingLookup): { rejection: Rejection; quiet: boolean } | 'wait' | undefined {
  const leaderNs = lookup.owner.leaderNamespace;
  const riName = ri.metadata?.name ?? '';
  const ns = ri.spec?.namespace ?? '';
  const name = ri.spec?.name ?? '';
  const conventional = `${ns}-${name}-service`;
  let found: { name: string; ri: ResourceImport } | undefined;
  for (const candidate of new Set([conventional, ...lookup.members])) {
    if (candidate === riName) continue;
    const sibling = lookup.get(candidate);
    if (sibling?.spec?.kind !== RESOURCE_IMPORT_KIND.ServiceImport || sibling.spec.namespace !== ns || sibling.spec.name !== name) continue;
    if (lookup.verdict(candidate) === 'applied') return undefined;
    if (!found || (lookup.verdict(candidate) !== undefined && lookup.verdict(found.name) === undefined)) found = { name: candidate, ri: sibling };
  }
  const held = (detail: string, quiet: boolean) => ({
    rejection: rejectionOf(ri, 'ServiceNotImported', `Endpoints for ${ns}/${name} are held back: ${detail}`), quiet,
  });
  // Quiet while the sibling is merely missing or not judged yet: the leader publishes the two
  // RIs in any order and withdraws them in any order; the sibling's verdict requeues this RI.
  if (!found) return held(`ResourceImport ${leaderNs}/${conventional} has not been imported yet (the leader has not published it)`, true);
  const sibling = `ResourceImport ${leaderNs}/${found.name}`;
  switch (lookup.verdict(found.name)) {
    case 'rejected': {
      const refusal = lookup.rejection(found.name);
      return held(`${sibling} was refused${refusal ? ` (${refusal.rule}: ${rejectionDetail(refusal)})` : ''}`, false);
    }
    case 'conflict':
      // Quiet: the sibling's one ImportConflict Event already names the object in the way.
      return held(`${sibling} was not imported: it conflicts with an existing object`, true);
    case 'skipped': {
      const plan = desiredForImport(found.ri, lookup.owner, { enableLabelIdentity: lookup.enableLabelIdentity, ...(lookup.serviceImport !== undefined && { serviceImport: lookup.serviceImport }) });
      return held(`${sibling} is not imported here${plan.kind === 'skip' ? ` (${plan.reason})` : ''}`, false);
    }
    case 'applied':
    case undefined:
      return 'wait';
  }
}
