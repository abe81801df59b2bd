// Writes one ResourceImport's objects in the member and keeps the index of owned objects in
// step: creates what is missing, replaces only what differs, deletes what is no longer
// wanted (each object once), and never touches an object that exists but is not ours.
import { isAlreadyExists, isNotFound } from '../common/kube/errors.js';
import { isRecord } from '../common/kube/json.js';
import { PausedError } from '../commonarea/leaderlink/lifecycle.js';
import { groupOfObject } from './groups.js';
import type { LocalStore, ObjectRef, PlainObject } from './local-store.js';
import type { Owned, OwnedIndex } from './owned-index.js';
import type { TakenNames } from './taken-names.js';
import { isOwnedBy, isOwnedByAgent, type ImportOwner } from './ownership.js';
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import type { ResourceDescriptor } from '../common/api/meta.js';
import { MCS_SERVICE_NAME_LABEL, sliceServiceName, withOwnerReference } from './endpoint-slices.js';
import { mergeForUpdate, semanticallyEqual, serviceAddresses, withServiceImportIPs, type DesiredObject, type ServiceAddresses } from './rules.js';
import { reuseSliceNames } from './slice-reuse.js';
import { desiredRef, endpointsHazard, keyOf } from './targets.js';

export type ImportOutcome = 'created' | 'updated' | 'deleted' | 'unchanged' | 'rejected' | 'conflict' | 'failed';

/** Asked before every write; throws PausedError when a write must not happen any more. */
export type WriteGuard = () => void;

export interface ApplierOptions {
  readonly store: LocalStore;
  readonly owner: ImportOwner;
  readonly owned: OwnedIndex;
  /** The ServiceImport version the member serves (mcs.ts `servedMcsVersion`). @default v1beta1 */
  readonly serviceImport?: ResourceDescriptor;
  /**
   * The member's ServiceImport CRD is a v1alpha1-only one (Antrea's: one `ips`, no
   * `ipFamilies`): one VIP and no families are written. @default false
   */
  readonly oneVIP?: boolean;
  /**
   * Write `status.endpointSliceObjects: Present` on every ServiceImport (mcs-api v0.5.1; KEP-1645
   * beta: an implementation publishes it). The agent writes the EndpointSlices of every import
   * it materialises, so it is always Present. Only where the served CRD has the field (v1beta1):
   * a v1alpha1-only CRD (Antrea's, mcs-api before v0.5) would prune it, and the write would
   * repeat forever. @default false
   */
  readonly endpointSliceObjects?: boolean;
  /** Names known to be free need no GET in {@link Applier.claim}. @default every name is read */
  readonly taken?: TakenNames;
  /** An object of `group` left the index: its slots may be free now. */
  readonly released: (group: string) => void;
  /** `riName` wants `ref`, which exists and is not ours (`why`); `claimed`: found before anything was created. */
  readonly conflict: (riName: string, ref: ObjectRef, why: string, claimed?: boolean) => void;
  /** A Service of ours was not deleted because `endpoints`, which it would take along, are not ours. */
  readonly deleteHeld: (service: ObjectRef, endpoints: ObjectRef, why: string) => void;
  readonly outcome: (kind: string, outcome: ImportOutcome) => void;
  /**
   * Read an object missing from the index before creating it. With several leaders it may be
   * another leader's import this one takes over: reading it costs a GET, where a create would
   * be a refused write. @default never
   */
  readonly readBeforeCreate?: () => boolean;
}

export class Applier {
  /** The server pruned `endpointSliceObjects` (a CRD of v0.5.0, before the field): not written again. */
  private endpointSliceObjectsPruned = false;

  constructor(private readonly options: ApplierOptions) {}

  /**
   * Makes `objects` exist as desired, in order, then deletes what else of `current` (the
   * RI's objects before) is no longer wanted. Stops at the first conflict. A new EndpointSlice
   * is written into a slice of `current` that is no longer wanted (slice-reuse.ts), so that a
   * change of slice names updates slices rather than deleting them.
   */
  async apply(riName: string, kind: string, objects: readonly DesiredObject[], current: Map<string, Owned>, guard: WriteGuard): Promise<'applied' | 'conflict'> {
    const owned = this.options.owned;
    const wanted = new Set<string>();
    let addresses: ServiceAddresses | undefined = undefined;
    const slices = [...current.values()].filter((o) => o.ref.plural === 'endpointslices' && o.ref.group === 'discovery.k8s.io' && !o.deleting)
      .map((o) => ({ name: o.ref.name, namespace: o.ref.namespace, object: o.live }));
    for (const original of reuseSliceNames(objects, slices)) {
      let desired = original;
      if (desired.kind === 'ServiceImport' && addresses !== undefined && (addresses.ips.length > 0 || addresses.ipFamilies.length > 0)) {
        desired = { ...desired, body: withServiceImportIPs(desired.body, addresses.ips, addresses.ipFamilies, this.options.oneVIP === true) };
      }
      if (desired.kind === 'EndpointSlice') desired = { ...desired, body: this.ownedByServiceImport(desired) };
      const ref = desiredRef(desired);
      const key = keyOf(ref);
      wanted.add(key);
      const result = await this.applyOne(riName, ref, desired, owned.get(key), guard);
      if (result === 'conflict') {
        this.options.outcome(kind, 'conflict');
        return 'conflict';
      }
      this.options.outcome(kind, result);
      if (desired.kind === SERVICE_IMPORT.kind) await this.markEndpointSlicesPresent(key, guard);
      if (desired.kind === 'Service') addresses = serviceAddresses(owned.get(key)?.live['spec']);
    }
    for (const [key, stale] of current) {
      if (!wanted.has(key)) await this.removeOne(key, stale, guard);
    }
    return 'applied';
  }

  /**
   * Checks, before anything is created, that every name in `refs` is free or ours: the first
   * one held by an object that is not ours is recorded as the conflict and 'conflict' returned.
   * Names already indexed as ours, or that the watched names say are free, cost nothing;
   * `refs[0]` is skipped when `firstCreates` (creating it comes first and checks it: a 409
   * there creates nothing either). Only a taken name is read, to learn whose it is.
   */
  async claim(riName: string, refs: readonly ObjectRef[], guard: WriteGuard, firstCreates: boolean): Promise<'free' | 'conflict'> {
    const { owned, taken } = this.options;
    const unknown = refs.filter((ref, i) => !(firstCreates && i === 0) && !(owned.get(keyOf(ref))?.deleting === false) && taken?.holds(ref) !== false);
    if (unknown.length === 0) return 'free';
    guard();
    const found = await Promise.all(unknown.map(async (ref) => {
      try {
        return { ref, live: await this.options.store.get(ref) };
      } catch (err) {
        if (isNotFound(err)) return { ref, live: undefined };
        throw err;
      }
    }));
    for (const { ref, live } of found) {
      if (!live || isOwnedBy(live, this.options.owner)) continue;
      this.options.conflict(riName, ref, isOwnedByAgent(live) ? 'it belongs to another ClusterSet' : 'it was not created by clusterset-agent', true);
      return 'conflict';
    }
    return 'free';
  }

  /**
   * The slice with its ServiceImport's owner reference (KEP-1645). The Endpoints import lands
   * only next to its applied ServiceImport sibling (groups.ts), so the ServiceImport is indexed
   * as ours with its uid; when it is not (being deleted or created again), the slice waits:
   * the error retries the import with backoff.
   */
  private ownedByServiceImport(desired: DesiredObject): Record<string, unknown> {
    const name = sliceImportName(desired.body) ?? '';
    const serviceImportKind = this.options.serviceImport ?? SERVICE_IMPORT;
    const ref = { group: serviceImportKind.group, version: serviceImportKind.version, plural: serviceImportKind.plural, namespaced: true, namespace: desired.namespace ?? '', name };
    const serviceImport = this.options.owned.get(keyOf(ref));
    const uid = serviceImport?.deleting === false ? serviceImport.live.metadata?.uid : undefined;
    if (uid === undefined || uid === '') {
      throw new Error(`EndpointSlice ${ref.namespace}/${desired.name} waits for its owner, ServiceImport ${ref.namespace}/${name}, to be imported`);
    }
    return withOwnerReference(desired.body, name, uid, serviceImportKind.apiVersion);
  }

  /** `status.endpointSliceObjects: Present` on the owned ServiceImport `key`, written only when it says otherwise (a restart writes nothing). */
  private async markEndpointSlicesPresent(key: string, guard: WriteGuard): Promise<void> {
    const { store, owned } = this.options;
    if (this.options.endpointSliceObjects !== true || this.endpointSliceObjectsPruned || store.replaceStatus === undefined) return;
    const entry = owned.get(key);
    if (entry === undefined || entry.deleting) return;
    const status = isRecord(entry.live['status']) ? entry.live['status'] : {};
    if (status['endpointSliceObjects'] === 'Present') return;
    guard();
    try {
      const updated = await store.replaceStatus(entry.ref, { ...entry.live, status: { ...status, endpointSliceObjects: 'Present' } });
      if (owned.get(key) === entry) entry.live = updated;
      if (!isRecord(updated['status']) || updated['status']['endpointSliceObjects'] !== 'Present') this.endpointSliceObjectsPruned = true;
    } catch (err) {
      if (isNotFound(err)) return;
      // Our copy was stale (409): the retry re-reads it.
      if (!(err instanceof PausedError)) entry.stale = true;
      throw err;
    }
  }

  async removeAll(current: Map<string, Owned>, guard: WriteGuard): Promise<void> {
    for (const [key, owned] of current) await this.removeOne(key, owned, guard);
  }

  private async applyOne(riName: string, ref: ObjectRef, desired: DesiredObject, known: Owned | undefined, guard: WriteGuard): Promise<ImportOutcome> {
    const { store, owned } = this.options;
    const key = keyOf(ref);
    const group = groupOfObject(ref, riName);
    let live = known?.deleting ? undefined : known?.live;
    if (known?.stale || (known === undefined && this.options.readBeforeCreate?.() === true && this.options.taken?.holds(ref) !== false)) {
      const reread = await this.readOwned(riName, key, ref);
      if (reread === 'conflict') return 'conflict';
      live = reread;
    }
    if (!live) {
      try {
        guard();
        const created = await store.create(ref, desired.body);
        owned.set(key, { ref, riName, group, live: created, deleting: false });
        return 'created';
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await this.readOwned(riName, key, ref);
        if (existing === 'conflict') return 'conflict';
        // Gone again meanwhile: the retry creates it.
        if (!existing) throw err;
        live = existing;
      }
    }
    const otherService = foreignSlice(desired, live);
    if (otherService !== undefined) {
      // Ours, but another imported Service's: rewriting it would take that Service's endpoints.
      this.options.conflict(riName, ref, `it holds the endpoints of Service ${otherService}`);
      return 'conflict';
    }
    if (semanticallyEqual(desired, live)) {
      owned.set(key, { ref, riName, group, live, deleting: false });
      return 'unchanged';
    }
    try {
      guard();
      const updated = await store.replace(ref, mergeForUpdate(desired, live));
      owned.set(key, { ref, riName, group, live: updated, deleting: false });
      return 'updated';
    } catch (err) {
      // Our copy was stale (409) or the object vanished (404): the retry re-reads it. It stays
      // indexed (and counted against the cap) as long as it may exist.
      const entry = owned.get(key);
      if (entry && !(err instanceof PausedError)) entry.stale = true;
      throw err;
    }
  }

  /** The live object, read again: undefined when gone, 'conflict' (recorded) when not ours. */
  private async readOwned(riName: string, key: string, ref: ObjectRef): Promise<PlainObject | undefined | 'conflict'> {
    let live: PlainObject;
    try {
      live = await this.options.store.get(ref);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.unindex(key);
      return undefined;
    }
    if (isOwnedBy(live, this.options.owner)) return live;
    this.unindex(key);
    this.options.conflict(riName, ref, isOwnedByAgent(live) ? 'it belongs to another ClusterSet' : 'it was not created by clusterset-agent');
    return 'conflict';
  }

  /** Drops the entry of an object that is gone or not ours, unless its delete is in flight (which drops it). */
  private unindex(key: string): void {
    const entry = this.options.owned.get(key);
    if (entry && !entry.deleting) {
      this.options.owned.drop(key);
      this.options.released(entry.group);
    }
  }

  /** Deletes an owned object once: not again while a delete is in flight, nor once it left the index. */
  private async removeOne(key: string, owned: Owned, guard: WriteGuard): Promise<void> {
    if (owned.deleting || this.options.owned.get(key) !== owned) return;
    guard();
    const hazard = await endpointsHazard(this.options.store, this.options.owner, owned.ref);
    if (hazard) {
      // Deleting the Service would take the user's Endpoints along: it stays (indexed, so that
      // a later resync tries again once the Endpoints are gone or renamed).
      this.options.deleteHeld(owned.ref, hazard.ref, hazard.why);
      return;
    }
    guard();
    owned.deleting = true;
    try {
      await this.options.store.delete(owned.ref);
    } catch (err) {
      if (!isNotFound(err)) {
        owned.deleting = false;
        throw err;
      }
    }
    if (this.options.owned.get(key) === owned) this.options.owned.drop(key);
    this.options.outcome(owned.ref.plural, 'deleted');
    this.options.released(owned.group);
  }
}

/** The imported Service (the ServiceImport's name) a desired slice belongs to. */
function sliceImportName(body: Record<string, unknown>): string | undefined {
  const labels = (body['metadata'] as { labels?: Record<string, string> } | undefined)?.labels;
  return labels?.[MCS_SERVICE_NAME_LABEL];
}

/** The other Service a live slice belongs to (its `kubernetes.io/service-name` label), when the desired slice is not its. */
function foreignSlice(desired: DesiredObject, live: PlainObject): string | undefined {
  if (desired.kind !== 'EndpointSlice') return undefined;
  const theirs = sliceServiceName(live);
  return theirs !== undefined && theirs !== sliceServiceName(desired.body) ? `${desired.namespace ?? ''}/${theirs}` : undefined;
}
