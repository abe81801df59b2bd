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
//   not ours is never touched (a conflict; applier.ts writes).
// - Atomic per exported Service: every name it needs is checked before the first is created
//   (a user's object holding one refuses it whole); an Endpoints import lands only next to its applied
//   ServiceImport sibling, and the per-leader cap admits a whole service (3 objects) or
//   nothing, by reserving its slots synchronously, so the cap holds under concurrency
//   (groups.ts: admission groups and the sibling rule; capacity.ts: the reservations).
// - Rebuilding the index and purging run exclusively: reconciles wait at a gate, and the
//   exclusive work waits for reconciles in flight, so neither sees the other half-done
//   (runtime/gate.ts).
import type { ImportPolicyConfig } from '../common/config/config.js';
import { RESOURCE_IMPORT, RESOURCE_IMPORT_KIND, type ResourceImport } from '../common/api/antrea.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import type { EventRecorder, EventTarget } from '../common/events/recorder.js';
import { InformerStoppedError, ResilientInformer } from '../common/kube/informer.js';
import { apiStatus, describeError, httpStatus, isNamespaceTerminating, isNotFound } from '../common/kube/errors.js';
import { ExclusiveGate } from '../common/runtime/gate.js';
import { WorkQueue, type WorkResult } from '../common/runtime/workqueue.js';
import type { ImportCounts, ImportsSynced } from '../conditions/status/compute.js';
import { classifyLeaderError } from '../conditions/classify.js';
import { Applier, type ImportOutcome, type WriteGuard } from './applier.js';
import { LinkLifecycle, PausedError, retryUntilDone, type LeaderLink } from '../commonarea/leaderlink/lifecycle.js';
import { ImportCapacity } from './capacity.js';
import { groupOfImport, groupOfObject, siblingProblem, slotsFor } from './groups.js';
import type { LocalStore, ObjectRef } from './local-store.js';
import { OwnedIndex } from './owned-index.js';
import { RESOURCE_IMPORT_ANNOTATION, type ImportOwner } from './ownership.js';
import { checkImport, invalidObject, namespaceTerminating, tooManyObjects, unavailableNamespaces, type Rejection } from './policy.js';
import { RiState } from './ri-state.js';
import { desiredForImport, type ImportPlan } from './rules.js';
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import type { ResourceDescriptor } from '../common/api/meta.js';
import type { TakenNames } from './taken-names.js';
import { desiredRef, endpointsHazard, keyOf, listOwned, missingKind } from './targets.js';

export type { ImportOutcome } from './applier.js';
export { IMPORT_TARGET_KINDS, importTargetKinds } from './targets.js';

export interface ImporterLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ImporterOptions {
  readonly owner: ImportOwner;
  readonly policy: ImportPolicyConfig;
  readonly store: LocalStore;
  /** Which claimed names are taken, without a GET (taken-names.ts). @default each is read */
  readonly takenNames?: TakenNames;
  readonly namespaceExists: (namespace: string) => boolean;
  /** Whether an existing namespace is being deleted. @default never */
  readonly namespaceTerminating?: (namespace: string) => boolean;
  readonly events: EventRecorder;
  readonly eventTarget: () => EventTarget;
  readonly logger: ImporterLogger;
  /** Called when the counts reported in ClusterSet status change. */
  readonly onCountsChanged: () => void;
  readonly onOutcome?: (kind: string, outcome: ImportOutcome) => void;
  readonly onRejection?: (rule: string) => void;
  readonly concurrency?: number;
  /** The ServiceImport version the member serves (mcs.ts `servedMcsVersion`). @default v1beta1 */
  readonly serviceImport?: ResourceDescriptor;
  /** One VIP and no ipFamilies on ServiceImports (a v1alpha1-only CRD, Antrea's shape). @default false */
  readonly oneVIP?: boolean;
}

const GC_KEY = '\u0000gc';

/**
 * What kube-apiserver refused as invalid (422 Invalid, 400 BadRequest): the same object is
 * refused again, so retrying cannot help; undefined for every other error.
 */
function refusedObject(err: unknown): { object: string; reason: string } | undefined {
  const status = httpStatus(err);
  if (status !== 422 && status !== 400) return undefined;
  const details = apiStatus(err)?.details;
  return {
    object: details?.name !== undefined ? `${details.kind ?? 'object'} ${details.name}` : 'an object',
    reason: apiStatus(err)?.message ?? `HTTP ${String(status)}`,
  };
}
const MISSING_KIND_RECHECK_MS = 60_000;
/** Delay before refusals for the cap are retried after slots were freed (coalesces many releases). */
const CAPACITY_RETRY_MS = 500;
/** Delay before a failed purge of a lost leader's imports is tried again. */
const PURGE_RETRY_MS = 10_000;

/**
 * Deletes every object this agent owns for the ClusterSet (leave, or a leader lost for too
 * long). `proceed` is asked before each delete; returning false stops early.
 */
export async function purgeOwned(store: LocalStore, owner: ImportOwner, logger: ImporterLogger, policy: ImportPolicyConfig,
  proceed: () => boolean = () => true, serviceImport: ResourceDescriptor = SERVICE_IMPORT): Promise<number> {
  let deleted = 0;
  const found = await listOwned(store, owner, policy, serviceImport);
  const ownedEndpoints = new Set(found.filter(({ ref }) => ref.group === '' && ref.plural === 'endpoints').map(({ ref }) => keyOf(ref)));
  for (const { ref } of found) {
    if (!proceed()) break;
    const hazard = await endpointsHazard(store, owner, ref, ownedEndpoints);
    if (hazard) {
      logger.warn('imported Service kept: deleting it would delete Endpoints that are not ours', {
        service: `${ref.namespace ?? ''}/${ref.name}`, endpoints: `${hazard.ref.namespace ?? ''}/${hazard.ref.name}`, why: hazard.why,
      });
      continue;
    }
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

export class Importer implements LeaderLink {
  private readonly queue: WorkQueue;
  private informer: ResilientInformer<ResourceImport> | undefined;
  /** Why the current watcher cannot list or watch ResourceImports, and since when: imports are frozen meanwhile. */
  private watchFailure: { readonly reason: string; readonly message: string; readonly sinceMs: number } | undefined;
  /** new, active (connected and trusted) or paused (apply nothing); its generation fences writes. */
  private readonly link = new LinkLifecycle<LeaderApi>();
  /** The index was rebuilt and every RI requeued since the last resume: reconciles may run. */
  private ready = false;
  private needsResync = true;
  private resyncSeq = 0;
  private resyncing: Promise<void> | undefined;
  private purged = false;
  private lostTimer: ReturnType<typeof setTimeout> | undefined;
  private capacityTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly resyncTimer: ReturnType<typeof setInterval>;

  private readonly capacity: ImportCapacity;
  private readonly owned: OwnedIndex;
  private readonly applier: Applier;
  private readonly riState: RiState;
  /** Index rebuilds and purges take it exclusively; reconciles share it. */
  private readonly gate = new ExclusiveGate();
  /** The resourceVersion of each RI whose objects kube-apiserver refused as invalid. */
  private readonly refusedAt = new Map<string, string>();

  constructor(private readonly options: ImporterOptions) {
    this.capacity = new ImportCapacity(options.policy.maxObjectsPerLeader);
    this.owned = new OwnedIndex(this.capacity);
    this.applier = new Applier({
      store: options.store,
      owner: options.owner,
      owned: this.owned,
      ...(options.serviceImport !== undefined && { serviceImport: options.serviceImport }),
      ...(options.oneVIP !== undefined && { oneVIP: options.oneVIP }),
      ...(options.takenNames !== undefined && { taken: options.takenNames }),
      released: (group) => { this.releaseIfUnused(group); },
      conflict: (riName, ref, why, claimed) => { this.recordConflict(riName, ref, why, claimed === true); },
      deleteHeld: (service, endpoints, why) => { this.recordDeleteHeld(service, endpoints, why); },
      outcome: (kind, outcome) => { options.onOutcome?.(kind, outcome); },
    });
    this.riState = new RiState({
      // Ahead of the backlog: an initial sync queues every RI, and an Endpoints RI that waits
      // for its ServiceImport sibling was requeued behind all the others, so every imported
      // Service lacked its Endpoints until the whole sync was done.
      requeue: (riName) => { this.queue.addNext(riName); },
      leftGroup: (riName, group) => { this.unadmit(riName, group); },
    });
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
    const pausedBecause = this.link.pauseReason;
    const change = this.link.resume(api);
    if (change === 'stopped') return;
    this.cancelCountdown();
    if (change === 'unchanged') return;
    if (change === 'started' || change === 'resumed') {
      if (change === 'resumed') this.options.logger.info('imports resumed', { pausedBecause });
      this.ready = false;
      this.needsResync = true;
      this.purged = false;
    }
    const previous = this.informer;
    this.watchFailure = undefined;
    this.informer = this.startWatcher(api);
    if (previous) this.stopWatcher(previous);
  }

  /**
   * Trust or leader lost: from now on nothing is created, replaced or deleted from the
   * leader's word; the watcher stops and the retention countdown starts (also on an importer
   * that never ran). Further calls while paused only keep the first reason.
   */
  pause(why: string): void {
    if (this.link.pause(why) === undefined) return;
    this.ready = false;
    this.needsResync = true;
    const informer = this.informer;
    this.informer = undefined;
    if (informer) this.stopWatcher(informer);
    const retentionSeconds = this.options.policy.lostLeaderRetentionSeconds;
    this.options.logger.warn('imports paused: nothing is applied from the leader; imports are kept for the retention period', { why, retentionSeconds });
    if (!this.purged) this.startCountdown(retentionSeconds * 1000);
  }

  /** A namespace appeared: retries the imports refused because it did not exist. */
  namespaceAdded(namespace: string): void {
    for (const riName of this.riState.waitingFor(namespace)) this.queue.add(riName);
  }

  /** The watcher's health for the ClusterSet status (ImportsSynced); undefined while not watching. */
  importsSynced(): ImportsSynced | undefined {
    const informer = this.informer;
    if (informer === undefined) return undefined;
    if (this.watchFailure !== undefined) return { status: 'False', ...this.watchFailure };
    return informer.hasSynced ? { status: 'True', reason: 'Synced', message: 'ResourceImports listed and watched' } : { status: 'Unknown', reason: 'Syncing', message: 'listing ResourceImports' };
  }

  counts(): ImportCounts {
    return { total: this.owned.size, rejected: this.riState.rejectedCount, conflicts: this.riState.conflictCount };
  }

  /** Resolves when no import work is queued or running (a pending full resync included). */
  onIdle(): Promise<void> {
    return this.link.drain({ resyncing: () => this.resyncing, queue: this.queue });
  }

  /** Stops watching; what was imported stays (a restart is not a leave). */
  async stop(): Promise<void> {
    if (this.link.stop()) {
      clearInterval(this.resyncTimer);
      this.cancelCountdown();
      if (this.capacityTimer) clearTimeout(this.capacityTimer);
      this.capacityTimer = undefined;
      this.gate.open();
    }
    const informer = this.informer;
    this.informer = undefined;
    if (informer) await this.stopInformer(informer);
    await this.queue.stop();
    await this.gate.settled();
  }

  /** Stops and removes everything this ClusterSet imported. */
  async leave(): Promise<void> {
    await this.stop();
    await purgeOwned(this.options.store, this.options.owner, this.options.logger, this.options.policy, undefined, this.options.serviceImport);
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
      // A watcher that keeps failing (a list too large, `watch` taken from the Role) freezes
      // imports while the heartbeat keeps Ready True: the status says so, and since when.
      onHealthChange: (err) => {
        if (this.informer !== informer) return;
        const before = this.watchFailure?.message;
        if (err === undefined) {
          this.watchFailure = undefined;
        } else {
          const why = classifyLeaderError(err, { verb: 'list/watch', resource: 'resourceimports', group: RESOURCE_IMPORT.group, namespace: api.namespace, server: api.server });
          this.watchFailure = { reason: why.reason, message: `the ResourceImport watcher fails, imports are frozen: ${why.message}`, sinceMs: this.watchFailure?.sinceMs ?? Date.now() };
        }
        if (this.watchFailure?.message !== before) this.options.onCountsChanged();
      },
    });
    const enqueue = (ri: ResourceImport) => { this.queue.add(ri.metadata?.name ?? ''); };
    informer.on('add', enqueue);
    informer.on('update', enqueue);
    informer.on('delete', enqueue);
    informer.start().then(() => {
      if (this.informer !== informer || !this.link.active) return;
      this.options.onCountsChanged();
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
    const run = this.gate.exclusive(() => this.rebuildIndexUntilDone()).then(() => {
      const informer = this.informer;
      if (seq !== this.resyncSeq || !this.link.active || !informer?.hasSynced) return;
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
    if (this.lostTimer || this.link.stopped) return;
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
    return this.gate.exclusive(async () => {
      if (!this.stillPaused()) return;
      this.options.logger.warn(`removing imports: ${why}`, { pausedBecause: this.link.pauseReason });
      try {
        await purgeOwned(this.options.store, this.options.owner, this.options.logger, this.options.policy,
          () => this.stillPaused(), this.options.serviceImport);
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
    this.capacity.clear();
    this.riState.clear();
  }

  // -------------------------------------------------------------------------------------
  // The index of owned objects and the reservations
  // -------------------------------------------------------------------------------------

  /**
   * Every reconcile waits for the index, so it must not fail for good on a transient error
   * (a member apiserver still initialising a CRD's storage answers 429): retry with backoff.
   */
  private async rebuildIndexUntilDone(): Promise<void> {
    await retryUntilDone(() => this.rebuildIndex(), {
      backoff: { baseMs: 200, maxMs: 30_000 },
      proceed: () => !this.link.stopped,
      signal: this.link.stopSignal,
      failed: (err, retryInMs) => {
        this.options.logger.warn('listing imported objects failed; will retry', { error: describeError(err), retryInMs: Math.round(retryInMs) });
      },
    });
  }

  private async rebuildIndex(): Promise<void> {
    const found = await listOwned(this.options.store, this.options.owner, this.options.policy, this.options.serviceImport);
    this.owned.clear();
    for (const { ref, object } of found) {
      const riName = object.metadata?.annotations?.[RESOURCE_IMPORT_ANNOTATION] ?? '';
      this.owned.set(keyOf(ref), { ref, riName, group: groupOfObject(ref, riName), live: object, deleting: false });
    }
    // Reservations follow what exists and who is admitted.
    if (this.capacity.settle(slotsFor)) this.scheduleCapacityRetry();
    if (this.capacity.reservedTotal > this.capacity.limit) {
      this.options.logger.warn('this leader already has more imported objects than imports.maxObjectsPerLeader: no new import is admitted until some go',
        { objects: this.owned.size, reservedSlots: this.capacity.reservedTotal, maxObjectsPerLeader: this.capacity.limit });
    }
    this.options.onCountsChanged();
  }

  private unadmit(riName: string, group: string): void {
    if (this.capacity.unadmit(riName, group)) this.scheduleCapacityRetry();
  }

  private releaseIfUnused(group: string): void {
    if (this.capacity.releaseIfUnused(group)) this.scheduleCapacityRetry();
  }

  private scheduleCapacityRetry(): void {
    if (this.capacityTimer || this.riState.waitingForCapacity.size === 0 || this.link.stopped) return;
    this.capacityTimer = setTimeout(() => {
      this.capacityTimer = undefined;
      for (const riName of this.riState.waitingForCapacity) this.queue.add(riName);
    }, CAPACITY_RETRY_MS);
    this.capacityTimer.unref();
  }

  // -------------------------------------------------------------------------------------
  // Refusals
  // -------------------------------------------------------------------------------------

  /** `awaited`: the namespaces whose (re)creation retries it; by default, those the plan cannot land in now. */
  private reject(riName: string, kind: string, rejection: Rejection, quiet: boolean, plan: ImportPlan, awaited?: readonly string[]): void {
    const waitsForNamespace = rejection.rule === 'NamespaceNotFound' || rejection.rule === 'NamespaceTerminating';
    const previous = this.riState.reject(riName, rejection, awaited ?? (waitsForNamespace && plan.kind === 'apply'
      ? unavailableNamespaces(plan.objects, this.options.namespaceExists, this.options.namespaceTerminating) : []));
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

  // -------------------------------------------------------------------------------------
  // Reconcile
  // -------------------------------------------------------------------------------------

  // Method calls, so that checks after an await are not narrowed away.
  private stillPaused(): boolean {
    return !this.link.stopped && this.link.state === 'paused';
  }

  private canWork(): boolean {
    return this.link.active && this.ready;
  }

  /** Throws PausedError when a write must not happen any more. */
  private checkWritable(generation: number): void {
    this.link.writable(generation, 'imports');
  }

  private collectGarbage(): Promise<undefined> {
    const informer = this.informer;
    if (!this.canWork() || !informer?.hasSynced) return Promise.resolve(undefined);
    const leaderNs = this.options.owner.leaderNamespace;
    for (const riName of [...this.owned.riNames(), ...this.riState.known()]) {
      if (informer.get(riName, leaderNs) === undefined) this.queue.add(riName);
    }
    return Promise.resolve(undefined);
  }

  private async reconcile(riName: string): Promise<WorkResult> {
    // Paused or not resynced yet: nothing is lost, the resync on resume requeues everything.
    if (!this.canWork()) return undefined;
    return this.gate.shared(async () => {
      const informer = this.informer;
      if (!this.canWork() || !informer?.hasSynced) return undefined;
      const generation = this.link.generation;
      const before = JSON.stringify(this.counts());
      try {
        return await this.reconcileOne(riName, informer, () => { this.checkWritable(generation); });
      } catch (err) {
        if (err instanceof PausedError) return undefined;
        throw err;
      } finally {
        if (JSON.stringify(this.counts()) !== before) this.options.onCountsChanged();
      }
    });
  }

  private async reconcileOne(riName: string, informer: ResilientInformer<ResourceImport>, guard: WriteGuard): Promise<WorkResult> {
    const ri = informer.get(riName, this.options.owner.leaderNamespace);
    const current = this.owned.ofRI(riName);
    if (!ri) {
      this.refusedAt.delete(riName);
      this.riState.forget(riName);
      await this.applier.removeAll(current, guard);
      return undefined;
    }
    const kind = String(ri.spec?.kind);
    const serviceImport = this.options.serviceImport;
    const plan = desiredForImport(ri, this.options.owner, { enableLabelIdentity: this.options.policy.enableLabelIdentity, ...(serviceImport !== undefined && { serviceImport }) });
    const group = groupOfImport(ri, plan, serviceImport);
    this.riState.joinGroup(riName, { group: group.key, kind });
    if (plan.kind === 'skip') {
      this.options.logger.debug('resource import skipped', { resourceImport: riName, reason: plan.reason });
      this.unadmit(riName, group.key);
      this.riState.setVerdict(riName, 'skipped');
      await this.applier.removeAll(current, guard);
      return undefined;
    }

    // Everything up to the admission is synchronous, so that the cap holds under concurrency.
    let rejection = checkImport({
      ri, objects: plan.objects, policy: this.options.policy, namespaceExists: this.options.namespaceExists,
      ...(this.options.namespaceTerminating !== undefined && { namespaceTerminating: this.options.namespaceTerminating }),
    });
    let quiet = false;
    if (!rejection && kind === RESOURCE_IMPORT_KIND.Endpoints) {
      const held = siblingProblem(ri, {
        owner: this.options.owner,
        enableLabelIdentity: this.options.policy.enableLabelIdentity,
        ...(serviceImport !== undefined && { serviceImport }),
        members: this.riState.members(group.key),
        get: (name) => informer.get(name, this.options.owner.leaderNamespace),
        verdict: (name) => this.riState.verdict(name),
        rejection: (name) => this.riState.rejection(name),
      });
      if (held === 'wait') return undefined;
      if (held) ({ rejection, quiet } = held);
    }
    if (!rejection && !this.capacity.admit(riName, group.key, group.size)) rejection = tooManyObjects(ri, group.what, group.size, this.options.policy);
    if (rejection) {
      this.unadmit(riName, group.key);
      this.reject(riName, kind, rejection, quiet, plan);
      await this.applier.removeAll(current, guard);
      return undefined;
    }

    const first = plan.objects[0];
    const firstCreates = first !== undefined && group.claims?.[0] !== undefined && keyOf(desiredRef(first)) === keyOf(group.claims[0]);
    if (group.claims && await this.applier.claim(riName, group.claims, guard, firstCreates) === 'conflict') {
      // Nothing of the Service may land: what of it exists and is ours goes (a Service only
      // where that costs nobody's Endpoints).
      this.options.onOutcome?.(kind, 'conflict');
      this.riState.setVerdict(riName, 'conflict');
      await this.applier.removeAll(current, guard);
      return undefined;
    }
    const resourceVersion = ri.metadata?.resourceVersion ?? '';
    if (this.refusedAt.get(riName) === resourceVersion && this.riState.rejection(riName)?.rule === 'InvalidObject') {
      // The API server refused this very version: trying again would create and delete its
      // first objects at every resync. A new version of the ResourceImport is tried again.
      return undefined;
    }
    this.refusedAt.delete(riName);
    try {
      const result = await this.applier.apply(riName, kind, plan.objects, current, guard);
      this.riState.setVerdict(riName, result === 'conflict' ? 'conflict' : 'applied');
      // An Endpoints import is whole or nothing: slices written before the one in the way go
      // (its Service and ServiceImport stay, with the ImportConflict Event naming the object).
      if (result === 'conflict' && kind === RESOURCE_IMPORT_KIND.Endpoints) await this.applier.removeAll(this.owned.ofRI(riName), guard);
    } catch (err) {
      const refused = refusedObject(err);
      if (refused !== undefined) {
        this.refusedAt.set(riName, resourceVersion);
        this.unadmit(riName, group.key);
        this.reject(riName, kind, invalidObject(ri, refused.object, refused.reason), false, plan);
        await this.applier.removeAll(this.owned.ofRI(riName), guard);
        return undefined;
      }
      if (isNamespaceTerminating(err)) {
        // The namespace cache has not seen the deletion yet: the same refusal, waiting for the
        // namespace to be created again (no retry until then).
        const namespace = unavailableNamespaces(plan.objects, () => true, () => true)[0] ?? '';
        this.unadmit(riName, group.key);
        this.reject(riName, kind, namespaceTerminating(ri, namespace), false, plan, [namespace]);
        return undefined;
      }
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

  private recordConflict(riName: string, ref: ObjectRef, why: string, claimed: boolean): void {
    const object = `${ref.plural} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
    const message = claimed
      ? `ResourceImport ${this.options.owner.leaderNamespace}/${riName} needs ${object}, which exists and ${why}: nothing of the imported Service was created, and ${object} is left untouched (rename or remove it to let the import land)`
      : `ResourceImport ${this.options.owner.leaderNamespace}/${riName} wants ${object}, which exists and ${why}: left untouched`;
    if (this.riState.conflict(riName, message)) {
      this.options.logger.warn('import conflicts with an existing object', { resourceImport: riName, object: `${ref.plural}/${ref.namespace ?? ''}/${ref.name}` });
      this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportConflict', message);
    }
  }

  private recordDeleteHeld(service: ObjectRef, endpoints: ObjectRef, why: string): void {
    const name = `${service.namespace ?? ''}/${service.name}`;
    const message = `imported Service ${name} is no longer wanted but was not deleted: kube-apiserver would delete Endpoints ${endpoints.namespace ?? ''}/${endpoints.name} with it, and ${why}; remove or rename those Endpoints to let the agent clean up`;
    this.options.logger.warn('imported Service kept: deleting it would delete Endpoints that are not ours', { service: name, why });
    this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportConflict', message);
  }
}
