// Materialises one leader's ResourceImports in the member, for one ClusterSet.
//
// - Driven by trust: resume(api) while the leader is connected and trusted, pause(why) the
//   moment it is not. A paused importer issues no create, replace or delete (reconciles in
//   flight check before each write; queued ones do nothing), stops its watcher and counts the
//   lost-leader retention down; resuming repairs with one full resync.
// - Level-based, per ResourceImport: an event only queues the RI name; the handler compares
//   what the rules want with what we own (an index by RI name) and changes only the
//   differences. An unchanged object is never rewritten, deleted or recreated — also after a
//   restart, when the index of owned objects is rebuilt from a labelled list.
// - The firewall (policy.ts) runs before anything is written; an object that exists but is
//   not ours is never touched (a conflict).
// - Atomic per exported Service: an Endpoints import lands only next to its applied
//   ServiceImport sibling, and the per-leader cap admits a whole service (3 objects) or
//   nothing, by reserving its slots synchronously, so the cap holds under concurrency.
// - Rebuilding the index and purging run exclusively: reconciles wait at a gate, and the
//   exclusive work waits for reconciles in flight, so neither sees the other half-done.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ImportPolicyConfig } from '../config/config.js';
import { ANTREA_MC_PREFIX, RESOURCE_IMPORT_KIND, type ResourceImport } from '../api/types.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import type { EventRecorder, EventTarget } from '../events/recorder.js';
import { InformerStoppedError, ResilientInformer } from '../kube/informer.js';
import { apiStatus, describeError, httpStatus, isAlreadyExists, isNotFound } from '../kube/errors.js';
import { Backoff } from '../runtime/backoff.js';
import { WorkQueue, type WorkResult } from '../runtime/workqueue.js';
import type { ImportCounts } from '../status/compute.js';
import { isOwnedBy, isOwnedByAgent, ownerSelector, RESOURCE_IMPORT_ANNOTATION, type ImportOwner } from './ownership.js';
import { checkImport, missingNamespaces, rejectionDetail, rejectionOf, tooManyObjects, type Rejection } from './policy.js';
import { desiredForImport, mergeForUpdate, semanticallyEqual, withServiceImportIPs, type DesiredObject, type ImportPlan } from './rules.js';
import type { KindRef, LocalStore, ObjectRef, PlainObject } from './local-store.js';

export type ImportOutcome = 'created' | 'updated' | 'deleted' | 'unchanged' | 'rejected' | 'conflict' | 'failed';

export interface ImporterLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ImporterOptions {
  readonly owner: ImportOwner;
  readonly policy: ImportPolicyConfig;
  readonly store: LocalStore;
  readonly namespaceExists: (namespace: string) => boolean;
  readonly events: EventRecorder;
  readonly eventTarget: () => EventTarget;
  readonly logger: ImporterLogger;
  /** Called when the counts reported in ClusterSet status change. */
  readonly onCountsChanged: () => void;
  readonly onOutcome?: (kind: string, outcome: ImportOutcome) => void;
  readonly onRejection?: (rule: string) => void;
  readonly concurrency?: number;
}

type TargetKind = KindRef & { readonly agentNamespaceOnly?: boolean };

/**
 * Every local kind an import can produce. ClusterInfoImports only ever live in the agent
 * namespace, and the chart grants them only there, so they are listed there rather than
 * cluster-wide. Use {@link importTargetKinds} for the kinds a policy enables.
 */
export const IMPORT_TARGET_KINDS: readonly TargetKind[] = [
  { group: '', version: 'v1', plural: 'services', namespaced: true },
  { group: '', version: 'v1', plural: 'endpoints', namespaced: true },
  { group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespaced: true },
  { group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'clusterinfoimports', namespaced: true, agentNamespaceOnly: true },
  { group: 'crd.antrea.io', version: 'v1beta1', plural: 'clusternetworkpolicies', namespaced: false },
  { group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'labelidentities', namespaced: false },
];

/**
 * The import target kinds a policy enables: ClusterNetworkPolicies only when
 * AntreaClusterNetworkPolicy is allowed, LabelIdentities only when enabled and allowed.
 * A disabled kind is not listed (its API may not even be served or granted).
 */
export function importTargetKinds(policy: Pick<ImportPolicyConfig, 'allowedKinds' | 'enableLabelIdentity'>): readonly TargetKind[] {
  return IMPORT_TARGET_KINDS.filter((kind) => {
    if (kind.plural === 'clusternetworkpolicies') return policy.allowedKinds.includes('AntreaClusterNetworkPolicy');
    if (kind.plural === 'labelidentities') return policy.enableLabelIdentity && policy.allowedKinds.includes('LabelIdentity');
    return true;
  });
}

const GC_KEY = '\u0000gc';
const MISSING_KIND_RECHECK_MS = 60_000;
/** Objects of one exported Service: Service antrea-mc-<name>, ServiceImport <name>, Endpoints antrea-mc-<name>. */
const SERVICE_GROUP_SIZE = 3;
/** Delay before refusals for the cap are retried after slots were freed (coalesces many releases). */
const CAPACITY_RETRY_MS = 500;
/** Delay before a failed purge of a lost leader's imports is tried again. */
const PURGE_RETRY_MS = 10_000;

/** `group/version plural` when `err` says the API server does not serve a kind we tried to write. */
function missingKind(err: unknown, objects: readonly DesiredObject[]): string | undefined {
  if (httpStatus(err) !== 404 || apiStatus(err)?.details?.name !== undefined) return undefined;
  const message = apiStatus(err)?.message ?? '';
  if (!/could not find the requested resource/i.test(message) && message !== '') return undefined;
  const custom = objects.find((o) => o.group !== '');
  return custom ? `${custom.plural}.${custom.group}/${custom.version}` : undefined;
}

function refOf(kind: KindRef, obj: PlainObject): ObjectRef {
  return { ...kind, name: obj.metadata?.name ?? '', ...(kind.namespaced ? { namespace: obj.metadata?.namespace ?? '' } : {}) };
}

function keyOf(ref: { group: string; plural: string; namespace?: string; name: string }): string {
  return `${ref.group}/${ref.plural}/${ref.namespace ?? ''}/${ref.name}`;
}

function desiredRef(d: DesiredObject): ObjectRef {
  return { group: d.group, version: d.version, plural: d.plural, namespaced: d.namespaced, name: d.name, ...(d.namespace !== undefined ? { namespace: d.namespace } : {}) };
}

function serviceGroupKey(namespace: string, name: string): string {
  return `svc:${namespace}/${name}`;
}

/**
 * The admission group of a local object: the exported Service its Service, ServiceImport or
 * Endpoints belongs to, or else the RI that produced it (every other kind is one object per RI).
 */
function groupOfObject(ref: ObjectRef, riName: string): string {
  const ns = ref.namespace ?? '';
  if (ref.group === '' && (ref.plural === 'services' || ref.plural === 'endpoints') && ref.name.startsWith(ANTREA_MC_PREFIX)) {
    return serviceGroupKey(ns, ref.name.slice(ANTREA_MC_PREFIX.length));
  }
  if (ref.group === 'multicluster.x-k8s.io' && ref.plural === 'serviceimports') return serviceGroupKey(ns, ref.name);
  return `ri:${riName}`;
}

function isServiceGroup(group: string): boolean {
  return group.startsWith('svc:');
}

interface Group {
  readonly key: string;
  /** Objects admitted at once: the whole exported Service, or the RI's own objects. */
  readonly size: number;
  /** What the cap refuses, in words. */
  readonly what: string;
}

function groupOfImport(ri: ResourceImport, plan: ImportPlan): Group {
  const kind = ri.spec?.kind;
  if (kind === RESOURCE_IMPORT_KIND.ServiceImport || kind === RESOURCE_IMPORT_KIND.Endpoints) {
    const ns = ri.spec?.namespace ?? '';
    const name = ri.spec?.name ?? '';
    return { key: serviceGroupKey(ns, name), size: SERVICE_GROUP_SIZE, what: `the exported Service ${ns}/${name} (Service, ServiceImport and Endpoints)` };
  }
  const riName = ri.metadata?.name ?? '';
  return { key: `ri:${riName}`, size: plan.kind === 'apply' ? plan.objects.length : 0, what: `the ${String(kind)} import` };
}

interface Owned {
  readonly ref: ObjectRef;
  readonly riName: string;
  readonly group: string;
  live: PlainObject;
  /** A delete is in flight: nobody deletes it again. */
  deleting: boolean;
  /** A replace failed: `live` may be outdated, re-read it before comparing. */
  stale?: boolean;
}

/** The last verdict on a ResourceImport, as far as its siblings are concerned. */
type Verdict = 'applied' | 'rejected' | 'conflict' | 'skipped';

interface RiInfo {
  readonly group: string;
  readonly kind: string;
}

/** Thrown inside a reconcile when the importer was paused or stopped since it began: write nothing more. */
class PausedError extends Error {
  override readonly name = 'PausedError';
}

/** Every object the agent owns for this ClusterSet, found by its labels in every enabled import target kind. */
async function listOwned(store: LocalStore, owner: ImportOwner, policy: ImportPolicyConfig): Promise<{ ref: ObjectRef; object: PlainObject }[]> {
  const found: { ref: ObjectRef; object: PlainObject }[] = [];
  for (const kind of importTargetKinds(policy)) {
    let objects: PlainObject[];
    try {
      objects = await store.list(kind, ownerSelector(owner), kind.agentNamespaceOnly ? owner.agentNamespace : undefined);
    } catch (err) {
      // A kind whose CRD is not installed, or that the chart does not grant, holds nothing of ours.
      if (httpStatus(err) === 404 || httpStatus(err) === 403) continue;
      throw err;
    }
    for (const object of objects) if (isOwnedBy(object, owner)) found.push({ ref: refOf(kind, object), object });
  }
  return found;
}

/**
 * Deletes every object this agent owns for the ClusterSet (leave, or a leader lost for too
 * long). `proceed` is asked before each delete; returning false stops early.
 */
export async function purgeOwned(store: LocalStore, owner: ImportOwner, logger: ImporterLogger, policy: ImportPolicyConfig,
  proceed: () => boolean = () => true): Promise<number> {
  let deleted = 0;
  for (const { ref } of await listOwned(store, owner, policy)) {
    if (!proceed()) break;
    try {
      await store.delete(ref);
      deleted += 1;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  if (deleted > 0) logger.info('removed imported objects', { count: deleted });
  return deleted;
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

export class Importer {
  private readonly queue: WorkQueue;
  private informer: ResilientInformer<ResourceImport> | undefined;
  private api: LeaderApi | undefined;
  /** 'new': never resumed; 'active': connected and trusted; 'paused': apply nothing. */
  private state: 'new' | 'active' | 'paused' = 'new';
  private pauseReason: string | undefined;
  /** Bumped by every pause: a reconcile that began before it must not write. */
  private generation = 0;
  /** The index was rebuilt and every RI requeued since the last resume: reconciles may run. */
  private ready = false;
  private needsResync = true;
  private resyncSeq = 0;
  private resyncing: Promise<void> | undefined;
  private purged = false;
  private stopped = false;
  private readonly stopSignal = new AbortController();
  private lostTimer: ReturnType<typeof setTimeout> | undefined;
  private capacityTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly resyncTimer: ReturnType<typeof setInterval>;

  // Owned objects, by object key, by RI name and counted per admission group.
  private readonly owned = new Map<string, Owned>();
  private readonly ownedByRI = new Map<string, Set<string>>();
  private readonly groupObjects = new Map<string, number>();

  // Per-RI state: short strings only, never RI payloads (those live in the informer cache).
  private readonly rejections = new Map<string, Rejection>();
  private readonly conflicts = new Map<string, string>();
  private readonly verdicts = new Map<string, Verdict>();
  private readonly riInfo = new Map<string, RiInfo>();
  /** Group → the RIs last seen in it (a service's ServiceImport and Endpoints RIs). */
  private readonly groupMembers = new Map<string, Set<string>>();
  /** Group → the RIs that hold its reservation (admitted, applying or applied). */
  private readonly admitted = new Map<string, Set<string>>();
  /** Group → reserved slots; the sum never exceeds the cap when a group is admitted. */
  private readonly reserved = new Map<string, number>();
  private reservedTotal = 0;
  private readonly waitingForNamespace = new Map<string, Set<string>>();
  private readonly namespacesAwaited = new Map<string, readonly string[]>();
  private readonly waitingForCapacity = new Set<string>();

  // The exclusive gate (index rebuilds, purges) against reconciles (writers).
  private exclusiveDepth = 0;
  private exclusiveTail: Promise<void> = Promise.resolve();
  private writers = 0;
  private gateWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];

  constructor(private readonly options: ImporterOptions) {
    this.queue = new WorkQueue({
      concurrency: options.concurrency ?? 8,
      backoff: { baseMs: 200, maxMs: 60_000 },
      onError: (key, error, retry) => {
        options.logger.warn('import failed; will retry', { resourceImport: key, error: describeError(error), retryInMs: Math.round(retry.delayMs) });
      },
    });
    this.queue.start((key) => (key === GC_KEY ? this.collectGarbage() : this.reconcile(key)));
    // Level-triggered safety net: events say what the leader changed, not what someone
    // changed in the member; a periodic re-list of our objects catches that too.
    this.resyncTimer = setInterval(() => { this.periodicResync(); }, options.policy.resyncSeconds * 1000);
    this.resyncTimer.unref();
  }

  // -------------------------------------------------------------------------------------
  // Driving: resume, pause, namespaceAdded, stop, leave
  // -------------------------------------------------------------------------------------

  /**
   * The leader is connected and trusted: (re)starts the watcher with `api` (a no-op when it
   * already runs with this client) and cancels the lost-leader countdown. After a pause (or on
   * the first call) one full resync runs once the watcher has synced.
   */
  resume(api: LeaderApi): void {
    if (this.stopped) return;
    this.cancelCountdown();
    if (this.state === 'active' && this.api === api) return;
    if (this.state !== 'active') {
      if (this.state === 'paused') this.options.logger.info('imports resumed', { pausedBecause: this.pauseReason });
      this.ready = false;
      this.needsResync = true;
      this.purged = false;
      this.state = 'active';
      this.pauseReason = undefined;
    }
    const previous = this.informer;
    this.api = api;
    this.informer = this.startWatcher(api);
    if (previous) this.stopWatcher(previous);
  }

  /**
   * Trust or leader lost: from now on nothing is created, replaced or deleted from the
   * leader's word; the watcher stops and the retention countdown starts (also on an importer
   * that never ran). Further calls while paused only keep the first reason.
   */
  pause(why: string): void {
    if (this.stopped || this.state === 'paused') return;
    this.state = 'paused';
    this.pauseReason = why;
    this.generation += 1;
    this.ready = false;
    this.needsResync = true;
    this.api = undefined;
    const informer = this.informer;
    this.informer = undefined;
    if (informer) this.stopWatcher(informer);
    const retentionSeconds = this.options.policy.lostLeaderRetentionSeconds;
    this.options.logger.warn('imports paused: nothing is applied from the leader; imports are kept for the retention period', { why, retentionSeconds });
    if (!this.purged) this.startCountdown(retentionSeconds * 1000);
  }

  /** A namespace appeared: retries the imports refused because it did not exist. */
  namespaceAdded(namespace: string): void {
    for (const riName of this.waitingForNamespace.get(namespace) ?? []) this.queue.add(riName);
  }

  counts(): ImportCounts {
    return { total: this.owned.size, rejected: this.rejections.size, conflicts: this.conflicts.size };
  }

  /** Resolves when no import work is queued or running (a pending full resync included). */
  async onIdle(): Promise<void> {
    for (;;) {
      const resyncing = this.resyncing;
      if (resyncing) {
        await resyncing;
        continue;
      }
      await this.queue.onIdle();
      if (this.resyncing === undefined && this.queue.size === 0 && this.queue.inFlight === 0) return;
    }
  }

  /** Stops watching; what was imported stays (a restart is not a leave). */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.stopSignal.abort();
      clearInterval(this.resyncTimer);
      this.cancelCountdown();
      if (this.capacityTimer) clearTimeout(this.capacityTimer);
      this.capacityTimer = undefined;
      this.openGate();
    }
    const informer = this.informer;
    this.informer = undefined;
    if (informer) await this.stopInformer(informer);
    await this.queue.stop();
    await this.exclusiveTail;
  }

  /** Stops and removes everything this ClusterSet imported. */
  async leave(): Promise<void> {
    await this.stop();
    await purgeOwned(this.options.store, this.options.owner, this.options.logger, this.options.policy);
    this.clearState();
  }

  // -------------------------------------------------------------------------------------
  // Watcher, resyncs, retention
  // -------------------------------------------------------------------------------------

  private startWatcher(api: LeaderApi): ResilientInformer<ResourceImport> {
    const informer = new ResilientInformer<ResourceImport>({
      name: `resourceimports@${this.options.owner.leaderClusterID}`,
      path: api.resourceImportsPath,
      list: () => api.listResourceImports(),
      watch: api.watch,
      logger: this.options.logger,
    });
    const enqueue = (ri: ResourceImport) => { this.queue.add(ri.metadata?.name ?? ''); };
    informer.on('add', enqueue);
    informer.on('update', enqueue);
    informer.on('delete', enqueue);
    informer.start().then(() => {
      if (this.stopped || this.informer !== informer || this.state !== 'active') return;
      this.options.logger.info('watching resource imports', { count: informer.list().length });
      if (this.needsResync) void this.fullResync();
      else this.requeueAll(informer);
    }, (err: unknown) => {
      // Stopped before it synced: a reconnect, a pause or a stop, all normal.
      if (err instanceof InformerStoppedError) return;
      this.options.logger.warn('resource import watcher did not start', { error: describeError(err) });
    });
    return informer;
  }

  /** Fire and forget. */
  private stopWatcher(informer: ResilientInformer<ResourceImport>): void {
    void this.stopInformer(informer);
  }

  private async stopInformer(informer: ResilientInformer<ResourceImport>): Promise<void> {
    try {
      await informer.stop();
    } catch (err) {
      if (err instanceof InformerStoppedError) this.options.logger.debug('resource import watcher stopped before it synced');
      else this.options.logger.warn('resource import watcher did not stop cleanly', { error: describeError(err) });
    }
  }

  private requeueAll(informer: ResilientInformer<ResourceImport>): void {
    for (const ri of informer.list()) this.queue.add(ri.metadata?.name ?? '');
    this.queue.add(GC_KEY);
  }

  /** Rebuilds the index of owned objects (exclusively), then requeues every RI and collects garbage. */
  private fullResync(): Promise<void> {
    this.resyncSeq += 1;
    const seq = this.resyncSeq;
    const run = this.exclusively(() => this.rebuildIndexUntilDone()).then(() => {
      const informer = this.informer;
      if (seq !== this.resyncSeq || this.stopped || this.state !== 'active' || !informer?.hasSynced) return;
      this.ready = true;
      this.needsResync = false;
      this.requeueAll(informer);
    }, (err: unknown) => {
      this.options.logger.warn('import resync failed', { error: describeError(err) });
    }).finally(() => {
      if (this.resyncing === run) this.resyncing = undefined;
    });
    this.resyncing = run;
    return run;
  }

  private periodicResync(): void {
    if (!this.canWork() || this.resyncing !== undefined) return;
    void this.fullResync();
  }

  private startCountdown(ms: number): void {
    if (this.lostTimer || this.stopped) return;
    this.lostTimer = setTimeout(() => {
      this.lostTimer = undefined;
      void this.purgeAll('the leader was lost or untrusted for longer than the retention period');
    }, ms);
  }

  private cancelCountdown(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
  }

  private purgeAll(why: string): Promise<void> {
    return this.exclusively(async () => {
      if (this.stopped || this.state !== 'paused') return;
      this.options.logger.warn(`removing imports: ${why}`, { pausedBecause: this.pauseReason });
      try {
        await purgeOwned(this.options.store, this.options.owner, this.options.logger, this.options.policy,
          () => this.stillPaused());
      } catch (err) {
        this.options.logger.warn('could not remove the imports of the lost leader; will retry', { error: describeError(err), retryInMs: PURGE_RETRY_MS });
        if (this.stillPaused()) this.startCountdown(PURGE_RETRY_MS);
        return;
      }
      // Resumed meanwhile: what is left stays, and the resync repairs the rest.
      if (!this.stillPaused()) return;
      this.clearState();
      this.purged = true;
      this.options.onCountsChanged();
    }).catch((err: unknown) => {
      this.options.logger.warn('removing imports failed', { error: describeError(err) });
    });
  }

  private clearState(): void {
    this.owned.clear();
    this.ownedByRI.clear();
    this.groupObjects.clear();
    this.rejections.clear();
    this.conflicts.clear();
    this.verdicts.clear();
    this.riInfo.clear();
    this.groupMembers.clear();
    this.admitted.clear();
    this.reserved.clear();
    this.reservedTotal = 0;
    this.waitingForNamespace.clear();
    this.namespacesAwaited.clear();
    this.waitingForCapacity.clear();
  }

  // -------------------------------------------------------------------------------------
  // The exclusive gate
  // -------------------------------------------------------------------------------------

  /** Runs `work` once no reconcile is writing; reconciles wait until it is done. Serialised. */
  private exclusively<T>(work: () => Promise<T>): Promise<T> {
    this.exclusiveDepth += 1;
    const run = this.exclusiveTail.then(async () => {
      await this.writersDrained();
      return work();
    });
    this.exclusiveTail = run.then(() => undefined, () => undefined);
    return run.finally(() => {
      this.exclusiveDepth -= 1;
      if (this.exclusiveDepth === 0) this.openGate();
    });
  }

  private writersDrained(): Promise<void> {
    if (this.writers === 0) return Promise.resolve();
    return new Promise((resolve) => { this.drainWaiters.push(resolve); });
  }

  private async passGate(): Promise<void> {
    while (this.exclusiveDepth > 0 && !this.stopped) {
      await new Promise<void>((resolve) => { this.gateWaiters.push(resolve); });
    }
  }

  private openGate(): void {
    const waiters = this.gateWaiters;
    this.gateWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private leaveWriters(): void {
    this.writers -= 1;
    if (this.writers > 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  // -------------------------------------------------------------------------------------
  // The index of owned objects and the reservations
  // -------------------------------------------------------------------------------------

  /**
   * Every reconcile waits for the index, so it must not fail for good on a transient error
   * (a member apiserver still initialising a CRD's storage answers 429): retry with backoff.
   */
  private async rebuildIndexUntilDone(): Promise<void> {
    const backoff = new Backoff({ baseMs: 200, maxMs: 30_000 });
    for (;;) {
      if (this.stopped) return;
      try {
        await this.rebuildIndex();
        return;
      } catch (err) {
        if (this.isStopped()) return;
        const delay = backoff.next();
        this.options.logger.warn('listing imported objects failed; will retry', { error: describeError(err), retryInMs: Math.round(delay) });
        try {
          await sleep(delay, undefined, { signal: this.stopSignal.signal });
        } catch {
          return;
        }
      }
    }
  }

  private async rebuildIndex(): Promise<void> {
    const found = await listOwned(this.options.store, this.options.owner, this.options.policy);
    this.owned.clear();
    this.ownedByRI.clear();
    this.groupObjects.clear();
    for (const { ref, object } of found) {
      const riName = object.metadata?.annotations?.[RESOURCE_IMPORT_ANNOTATION] ?? '';
      this.setOwned(keyOf(ref), { ref, riName, group: groupOfObject(ref, riName), live: object, deleting: false });
    }
    // Reservations follow what exists and who is admitted.
    for (const group of [...this.reserved.keys()]) this.releaseIfUnused(group);
    for (const [group, count] of this.groupObjects) {
      const size = isServiceGroup(group) ? SERVICE_GROUP_SIZE : count;
      const have = this.reserved.get(group) ?? 0;
      if (have < size) this.setReservation(group, size);
    }
    if (this.reservedTotal > this.options.policy.maxObjectsPerLeader) {
      this.options.logger.warn('this leader already has more imported objects than imports.maxObjectsPerLeader: no new import is admitted until some go',
        { objects: this.owned.size, reservedSlots: this.reservedTotal, maxObjectsPerLeader: this.options.policy.maxObjectsPerLeader });
    }
    this.options.onCountsChanged();
  }

  private setOwned(key: string, entry: Owned): void {
    const previous = this.owned.get(key);
    if (previous) this.untrack(key, previous);
    this.owned.set(key, entry);
    addTo(this.ownedByRI, entry.riName, key);
    this.groupObjects.set(entry.group, (this.groupObjects.get(entry.group) ?? 0) + 1);
  }

  private dropOwned(key: string): Owned | undefined {
    const entry = this.owned.get(key);
    if (!entry) return undefined;
    this.owned.delete(key);
    this.untrack(key, entry);
    return entry;
  }

  private untrack(key: string, entry: Owned): void {
    removeFrom(this.ownedByRI, entry.riName, key);
    const left = (this.groupObjects.get(entry.group) ?? 1) - 1;
    if (left > 0) this.groupObjects.set(entry.group, left);
    else this.groupObjects.delete(entry.group);
  }

  private ownedOf(riName: string): Map<string, Owned> {
    const result = new Map<string, Owned>();
    for (const key of this.ownedByRI.get(riName) ?? []) {
      const entry = this.owned.get(key);
      if (entry) result.set(key, entry);
    }
    return result;
  }

  private setReservation(group: string, size: number): void {
    this.reservedTotal += size - (this.reserved.get(group) ?? 0);
    this.reserved.set(group, size);
  }

  /** Admits `riName` into its group, reserving the group's slots if it holds none. Synchronous. */
  private admit(riName: string, group: Group): boolean {
    const have = this.reserved.get(group.key);
    if (have === undefined || have < group.size) {
      const extra = group.size - (have ?? 0);
      if (this.reservedTotal + extra > this.options.policy.maxObjectsPerLeader) return false;
      this.setReservation(group.key, group.size);
    }
    addTo(this.admitted, group.key, riName);
    return true;
  }

  private unadmit(riName: string, group: string): void {
    removeFrom(this.admitted, group, riName);
    this.releaseIfUnused(group);
  }

  /** Frees a group's slots once no RI holds it and none of its objects exists. */
  private releaseIfUnused(group: string): void {
    if (!this.reserved.has(group) || (this.admitted.get(group)?.size ?? 0) > 0 || (this.groupObjects.get(group) ?? 0) > 0) return;
    this.setReservation(group, 0);
    this.reserved.delete(group);
    this.scheduleCapacityRetry();
  }

  private scheduleCapacityRetry(): void {
    if (this.capacityTimer || this.waitingForCapacity.size === 0 || this.stopped) return;
    this.capacityTimer = setTimeout(() => {
      this.capacityTimer = undefined;
      for (const riName of this.waitingForCapacity) this.queue.add(riName);
    }, CAPACITY_RETRY_MS);
    this.capacityTimer.unref();
  }

  // -------------------------------------------------------------------------------------
  // Per-RI bookkeeping
  // -------------------------------------------------------------------------------------

  /** Records which group `riName` is in now; leaving a group gives up its hold there. */
  private joinGroup(riName: string, info: RiInfo): void {
    const previous = this.riInfo.get(riName);
    if (previous && previous.group !== info.group) {
      removeFrom(this.groupMembers, previous.group, riName);
      this.unadmit(riName, previous.group);
    }
    this.riInfo.set(riName, info);
    addTo(this.groupMembers, info.group, riName);
  }

  /** The RI is gone: forgets everything about it (its objects were removed). */
  private forget(riName: string): void {
    const info = this.riInfo.get(riName);
    this.setVerdict(riName, undefined);
    this.conflicts.delete(riName);
    this.riInfo.delete(riName);
    if (info) {
      removeFrom(this.groupMembers, info.group, riName);
      this.unadmit(riName, info.group);
    }
  }

  /**
   * Sets the verdict (and with it, clears the rejection unless rejected); a ServiceImport RI
   * whose verdict or refusal changed requeues its group's Endpoints RIs.
   */
  private setVerdict(riName: string, verdict: Verdict | undefined, rejection?: Rejection): void {
    const previous = this.verdicts.get(riName);
    const previousMessage = this.rejections.get(riName)?.message;
    if (verdict === undefined) this.verdicts.delete(riName);
    else this.verdicts.set(riName, verdict);
    if (rejection) {
      this.rejections.set(riName, rejection);
    } else {
      this.rejections.delete(riName);
      this.awaitNamespaces(riName, []);
      this.waitingForCapacity.delete(riName);
    }
    if (verdict !== 'conflict') this.conflicts.delete(riName);
    const info = this.riInfo.get(riName);
    if (info?.kind === RESOURCE_IMPORT_KIND.ServiceImport && (previous !== verdict || previousMessage !== rejection?.message)) {
      for (const member of this.groupMembers.get(info.group) ?? []) if (member !== riName) this.queue.add(member);
    }
  }

  private awaitNamespaces(riName: string, namespaces: readonly string[]): void {
    for (const ns of this.namespacesAwaited.get(riName) ?? []) removeFrom(this.waitingForNamespace, ns, riName);
    if (namespaces.length === 0) {
      this.namespacesAwaited.delete(riName);
      return;
    }
    this.namespacesAwaited.set(riName, namespaces);
    for (const ns of namespaces) addTo(this.waitingForNamespace, ns, riName);
  }

  private reject(riName: string, kind: string, rejection: Rejection, quiet: boolean, plan: ImportPlan): void {
    const previous = this.rejections.get(riName);
    this.setVerdict(riName, 'rejected', rejection);
    this.awaitNamespaces(riName, rejection.rule === 'NamespaceNotFound' && plan.kind === 'apply'
      ? missingNamespaces(plan.objects, this.options.namespaceExists) : []);
    if (rejection.rule === 'TooManyObjects') this.waitingForCapacity.add(riName);
    else this.waitingForCapacity.delete(riName);
    if (previous?.message === rejection.message) return;
    if (quiet) {
      this.options.logger.debug('resource import held back', { resourceImport: riName, rule: rejection.rule, detail: rejection.message });
      return;
    }
    this.options.logger.warn('resource import rejected', { resourceImport: riName, rule: rejection.rule, detail: rejection.message });
    this.options.events.record(this.options.eventTarget(), 'Warning', `ImportRejected${rejection.rule}`, rejection.message);
    this.options.onRejection?.(rejection.rule);
    this.options.onOutcome?.(kind, 'rejected');
  }

  /**
   * Why an Endpoints RI may not land now: its ServiceImport sibling (same spec.namespace and
   * spec.name) is not in the cache, or not applied by us. `quiet` (no Event) when the sibling
   * is absent or not judged yet, a normal transient state.
   */
  /**
   * Why the Endpoints RI `ri` may not land now, `'wait'` while its ServiceImport sibling is in
   * the cache but not judged yet (after a restart the two are reconciled in any order: holding
   * back would delete Endpoints that are about to be confirmed; the sibling's verdict requeues
   * this RI), or undefined when the sibling has landed.
   */
  private siblingProblem(ri: ResourceImport, group: string, informer: ResilientInformer<ResourceImport>): { rejection: Rejection; quiet: boolean } | 'wait' | undefined {
    const leaderNs = this.options.owner.leaderNamespace;
    const riName = ri.metadata?.name ?? '';
    const ns = ri.spec?.namespace ?? '';
    const name = ri.spec?.name ?? '';
    const conventional = `${ns}-${name}-service`;
    let found: { name: string; ri: ResourceImport } | undefined;
    for (const candidate of new Set([conventional, ...(this.groupMembers.get(group) ?? [])])) {
      if (candidate === riName) continue;
      const sibling = informer.get(candidate, leaderNs);
      if (sibling?.spec?.kind !== RESOURCE_IMPORT_KIND.ServiceImport || sibling.spec.namespace !== ns || sibling.spec.name !== name) continue;
      if (this.verdicts.get(candidate) === 'applied') return undefined;
      if (!found || (this.verdicts.has(candidate) && !this.verdicts.has(found.name))) found = { name: candidate, ri: sibling };
    }
    const held = (detail: string, quiet: boolean) => ({
      rejection: rejectionOf(ri, 'ServiceNotImported', `Endpoints for ${ns}/${name} are held back: ${detail}`), quiet,
    });
    // Quiet while the sibling is merely missing or not judged yet: the leader publishes the two
    // RIs in any order and withdraws them in any order; the sibling's verdict requeues this RI.
    if (!found) return held(`ResourceImport ${leaderNs}/${conventional} has not been imported yet (the leader has not published it)`, true);
    const sibling = `ResourceImport ${leaderNs}/${found.name}`;
    switch (this.verdicts.get(found.name)) {
      case 'rejected': {
        const refusal = this.rejections.get(found.name);
        return held(`${sibling} was refused${refusal ? ` (${refusal.rule}: ${rejectionDetail(refusal)})` : ''}`, false);
      }
      case 'conflict':
        return held(`${sibling} was not imported: it conflicts with an existing object`, false);
      case 'skipped': {
        const plan = desiredForImport(found.ri, this.options.owner, { enableLabelIdentity: this.options.policy.enableLabelIdentity });
        return held(`${sibling} is not imported here${plan.kind === 'skip' ? ` (${plan.reason})` : ''}`, false);
      }
      case 'applied':
      case undefined:
        return 'wait';
    }
  }

  // -------------------------------------------------------------------------------------
  // Reconcile
  // -------------------------------------------------------------------------------------

  // Method calls, so that checks after an await are not narrowed away.
  private stillPaused(): boolean {
    return !this.stopped && this.state === 'paused';
  }

  private isStopped(): boolean {
    return this.stopped;
  }

  private canWork(): boolean {
    return !this.stopped && this.state === 'active' && this.ready;
  }

  /** Throws PausedError when a write must not happen any more. */
  private checkWritable(generation: number): void {
    if (this.stopped || this.state !== 'active' || this.generation !== generation) throw new PausedError('imports were paused');
  }

  private collectGarbage(): Promise<undefined> {
    const informer = this.informer;
    if (!this.canWork() || !informer?.hasSynced) return Promise.resolve(undefined);
    const leaderNs = this.options.owner.leaderNamespace;
    for (const riName of [...this.ownedByRI.keys(), ...this.riInfo.keys(), ...this.rejections.keys()]) {
      if (informer.get(riName, leaderNs) === undefined) this.queue.add(riName);
    }
    return Promise.resolve(undefined);
  }

  private async reconcile(riName: string): Promise<WorkResult> {
    // Paused or not resynced yet: nothing is lost, the resync on resume requeues everything.
    if (!this.canWork()) return undefined;
    await this.passGate();
    const informer = this.informer;
    if (!this.canWork() || !informer?.hasSynced) return undefined;
    const generation = this.generation;
    const before = JSON.stringify(this.counts());
    this.writers += 1;
    try {
      return await this.reconcileOne(riName, informer, generation);
    } catch (err) {
      if (err instanceof PausedError) return undefined;
      throw err;
    } finally {
      this.leaveWriters();
      if (JSON.stringify(this.counts()) !== before) this.options.onCountsChanged();
    }
  }

  private async reconcileOne(riName: string, informer: ResilientInformer<ResourceImport>, generation: number): Promise<WorkResult> {
    const ri = informer.get(riName, this.options.owner.leaderNamespace);
    const current = this.ownedOf(riName);
    if (!ri) {
      this.forget(riName);
      await this.removeObjects(current, generation);
      return undefined;
    }
    const kind = String(ri.spec?.kind);
    const plan = desiredForImport(ri, this.options.owner, { enableLabelIdentity: this.options.policy.enableLabelIdentity });
    const group = groupOfImport(ri, plan);
    this.joinGroup(riName, { group: group.key, kind });
    if (plan.kind === 'skip') {
      this.options.logger.debug('resource import skipped', { resourceImport: riName, reason: plan.reason });
      this.unadmit(riName, group.key);
      this.setVerdict(riName, 'skipped');
      await this.removeObjects(current, generation);
      return undefined;
    }

    // Everything up to the admission is synchronous, so that the cap holds under concurrency.
    let rejection = checkImport({ ri, objects: plan.objects, policy: this.options.policy, namespaceExists: this.options.namespaceExists });
    let quiet = false;
    if (!rejection && kind === RESOURCE_IMPORT_KIND.Endpoints) {
      const held = this.siblingProblem(ri, group.key, informer);
      if (held === 'wait') return undefined;
      if (held) ({ rejection, quiet } = held);
    }
    if (!rejection && !this.admit(riName, group)) rejection = tooManyObjects(ri, group.what, group.size, this.options.policy);
    if (rejection) {
      this.unadmit(riName, group.key);
      this.reject(riName, kind, rejection, quiet, plan);
      await this.removeObjects(current, generation);
      return undefined;
    }

    try {
      const result = await this.apply(riName, kind, plan.objects, current, generation);
      this.setVerdict(riName, result === 'conflict' ? 'conflict' : 'applied');
    } catch (err) {
      const missing = missingKind(err, plan.objects);
      if (!missing) throw err;
      // Retrying fast cannot help until someone installs the CRD; say so once and check back later.
      this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportTargetMissing',
        `ResourceImport ${this.options.owner.leaderNamespace}/${riName} needs ${missing} in this cluster, which is not installed: install it or remove the kind from imports.allowedKinds`);
      this.options.onOutcome?.(kind, 'failed');
      return { requeueAfterMs: MISSING_KIND_RECHECK_MS };
    }
    return undefined;
  }

  private async apply(riName: string, kind: string, objects: readonly DesiredObject[], current: Map<string, Owned>, generation: number): Promise<'applied' | 'conflict'> {
    const wanted = new Set<string>();
    let serviceIPs: string[] = [];
    for (const original of objects) {
      let desired = original;
      if (desired.kind === 'ServiceImport' && serviceIPs.length > 0) desired = { ...desired, body: withServiceImportIPs(desired.body, serviceIPs) };
      const ref = desiredRef(desired);
      const key = keyOf(ref);
      wanted.add(key);
      const result = await this.applyOne(riName, ref, desired, this.owned.get(key), generation);
      if (result === 'conflict') {
        this.options.onOutcome?.(kind, 'conflict');
        return 'conflict';
      }
      this.options.onOutcome?.(kind, result);
      if (desired.kind === 'Service') {
        const clusterIP = (this.owned.get(key)?.live['spec'] as { clusterIP?: string } | undefined)?.clusterIP;
        serviceIPs = clusterIP && clusterIP !== 'None' ? [clusterIP] : [];
      }
    }
    for (const [key, stale] of current) {
      if (!wanted.has(key)) await this.removeOne(key, stale, generation);
    }
    return 'applied';
  }

  private async applyOne(riName: string, ref: ObjectRef, desired: DesiredObject, known: Owned | undefined, generation: number): Promise<ImportOutcome> {
    const store = this.options.store;
    const key = keyOf(ref);
    const group = groupOfObject(ref, riName);
    let live = known?.deleting ? undefined : known?.live;
    if (known?.stale) {
      const reread = await this.readOwned(riName, key, ref);
      if (reread === 'conflict') return 'conflict';
      live = reread;
    }
    if (!live) {
      try {
        this.checkWritable(generation);
        const created = await store.create(ref, desired.body);
        this.setOwned(key, { ref, riName, group, live: created, deleting: false });
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
    if (semanticallyEqual(desired, live)) {
      this.setOwned(key, { ref, riName, group, live, deleting: false });
      return 'unchanged';
    }
    try {
      this.checkWritable(generation);
      const updated = await store.replace(ref, mergeForUpdate(desired, live));
      this.setOwned(key, { ref, riName, group, live: updated, deleting: false });
      return 'updated';
    } catch (err) {
      // Our copy was stale (409) or the object vanished (404): the retry re-reads it. It stays
      // indexed (and counted against the cap) as long as it may exist.
      const entry = this.owned.get(key);
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
      const entry = this.owned.get(key);
      if (entry && !entry.deleting) {
        this.dropOwned(key);
        this.releaseIfUnused(entry.group);
      }
      return undefined;
    }
    if (isOwnedBy(live, this.options.owner)) return live;
    const entry = this.owned.get(key);
    if (entry && !entry.deleting) {
      this.dropOwned(key);
      this.releaseIfUnused(entry.group);
    }
    this.recordConflict(riName, ref, isOwnedByAgent(live) ? 'it belongs to another ClusterSet' : 'it was not created by clusterset-agent');
    return 'conflict';
  }

  private recordConflict(riName: string, ref: ObjectRef, why: string): void {
    const message = `ResourceImport ${this.options.owner.leaderNamespace}/${riName} wants ${ref.plural} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}, which exists and ${why}: left untouched`;
    if (this.conflicts.get(riName) !== message) {
      this.options.logger.warn('import conflicts with an existing object', { resourceImport: riName, object: `${ref.plural}/${ref.namespace ?? ''}/${ref.name}` });
      this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportConflict', message);
    }
    this.conflicts.set(riName, message);
  }

  private async removeObjects(current: Map<string, Owned>, generation: number): Promise<void> {
    for (const [key, owned] of current) await this.removeOne(key, owned, generation);
  }

  /** Deletes an owned object once: not again while a delete is in flight, nor once it left the index. */
  private async removeOne(key: string, owned: Owned, generation: number): Promise<void> {
    if (owned.deleting || this.owned.get(key) !== owned) return;
    this.checkWritable(generation);
    owned.deleting = true;
    try {
      await this.options.store.delete(owned.ref);
    } catch (err) {
      if (!isNotFound(err)) {
        owned.deleting = false;
        throw err;
      }
    }
    if (this.owned.get(key) === owned) this.dropOwned(key);
    this.options.onOutcome?.(owned.ref.plural, 'deleted');
    this.releaseIfUnused(owned.group);
  }
}
