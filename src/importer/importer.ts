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
// - With several leaders (import-board.ts), one importer per leader: an import held by
//   several is applied by its source only (import-sources.ts), the others hand over what
//   they imported for it without deleting it, and nothing another connected leader holds is
//   removed when this leader withdraws it, disconnects past the retention, or leaves.
import { RESOURCE_IMPORT_KIND, type ResourceImport } from '../common/api/antrea.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import type { ResilientInformer } from '../common/kube/informer.js';
import { describeError, isNamespaceTerminating, refusedAsInvalid } from '../common/kube/errors.js';
import { ExclusiveGate } from '../common/runtime/gate.js';
import { WorkQueue, type WorkResult } from '../common/runtime/workqueue.js';
import type { ImportCounts, ImportsSynced } from '../conditions/status/compute.js';
import { Applier, type WriteGuard } from './applier.js';
import { LinkLifecycle, PausedError, retryUntilDone, type LeaderLink } from '../commonarea/leaderlink/lifecycle.js';
import { ImportCapacity } from './capacity.js';
import { groupOfImport, groupOfObject, siblingProblem, slotsFor } from './groups.js';
import { OwnedIndex, type Owned } from './owned-index.js';
import { RESOURCE_IMPORT_ANNOTATION } from './ownership.js';
import { checkImport, invalidObject, namespaceTerminating, tooManyObjects, unavailableNamespaces, type Rejection } from './policy.js';
import { RiState } from './ri-state.js';
import { desiredForImport, type ImportPlan } from './rules.js';
import { IMPORT_WORKERS, type ImporterOptions } from './importer-options.js';
import { desiredRef, importTargetKinds, keyOf, listOwned, missingKind } from './targets.js';
import { keptForOtherLeaders, purgeOwned } from './purge.js';
import { ImportReports } from './import-reports.js';
import type { ImportSources } from './import-board.js';
import { startImportWatch, stopImportWatch, watchFailureOf, type WatchFailure } from './import-watch.js';

export type { ImportOutcome } from './applier.js';
export type { ImporterLogger, ImporterOptions } from './importer-options.js';
export { IMPORT_TARGET_KINDS, importTargetKinds } from './targets.js';

const GC_KEY = '\u0000gc';

const MISSING_KIND_RECHECK_MS = 60_000;
/** Delay before refusals for the cap are retried after slots were freed (coalesces many releases). */
const CAPACITY_RETRY_MS = 500;
/** Delay before a failed purge of a lost leader's imports is tried again. */
const PURGE_RETRY_MS = 10_000;

export class Importer implements LeaderLink {
  private readonly queue: WorkQueue;
  private informer: ResilientInformer<ResourceImport> | undefined;
  /** Why the current watcher cannot list or watch ResourceImports, and since when: imports are frozen meanwhile. */
  private watchFailure: WatchFailure | undefined;
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
  private readonly reports: ImportReports;

  constructor(private readonly options: ImporterOptions) {
    this.reports = new ImportReports(options);
    this.capacity = new ImportCapacity(options.policy.maxObjectsPerLeader);
    this.owned = new OwnedIndex(this.capacity);
    this.applier = new Applier({
      store: options.store,
      owner: options.owner,
      owned: this.owned,
      ...(options.serviceImport !== undefined && { serviceImport: options.serviceImport }),
      ...(options.oneVIP !== undefined && { oneVIP: options.oneVIP }),
      ...(options.endpointSliceObjects !== undefined && { endpointSliceObjects: options.endpointSliceObjects }),
      ...(options.takenNames !== undefined && { taken: options.takenNames }),
      released: (group) => { this.releaseIfUnused(group); },
      conflict: (riName, ref, why, claimed) => { this.reports.conflict(riName, ref, why, claimed === true, (message) => this.riState.conflict(riName, message)); },
      deleteHeld: (service, endpoints, why) => { this.reports.deleteHeld(service, endpoints, why); },
      outcome: (kind, outcome) => { options.onOutcome?.(kind, outcome); },
      readBeforeCreate: () => options.sources?.several() === true,
    });
    this.riState = new RiState({
      // Ahead of the backlog: an initial sync queues every RI, and an Endpoints RI that waits
      // for its ServiceImport sibling was requeued behind all the others, so every imported
      // Service lacked its Endpoints until the whole sync was done.
      requeue: (riName) => { this.queue.addNext(riName); },
      leftGroup: (riName, group) => { this.unadmit(riName, group); },
    });
    this.queue = new WorkQueue({
      concurrency: options.concurrency ?? IMPORT_WORKERS,
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
    if (previous) void stopImportWatch(previous, this.options.logger);
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
    if (informer) void stopImportWatch(informer, this.options.logger);
    // The other leaders take over what this one was the source of.
    this.options.sources?.sourceChanged();
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
    const counts = { total: this.owned.size, rejected: this.riState.rejectedCount, conflicts: this.riState.conflictCount };
    return this.options.sources?.several() === true ? { ...counts, divergent: this.reports.divergentCount } : counts;
  }

  /** This leader's view of an import, for the ClusterSet's other leaders (import-board.ts). */
  sourceView(riName: string): { state: 'connected' | 'syncing' | 'absent'; ri: ResourceImport | undefined } {
    const informer = this.informer;
    if (informer === undefined || !this.link.active) return { state: 'absent', ri: undefined };
    if (!informer.hasSynced) return { state: 'syncing', ri: undefined };
    return { state: 'connected', ri: informer.get(riName, this.options.owner.leaderNamespace) };
  }

  /** Another leader's copy of this import changed: its source may have changed. */
  recheck(riName: string): void {
    if (this.canWork()) this.queue.add(riName);
  }

  /** Another leader connected, disconnected or went: every import's source may have changed. */
  recheckAll(): void {
    const informer = this.informer;
    if (this.canWork() && informer?.hasSynced) this.requeueAll(informer);
  }

  /**
   * Another leader's importer of this ClusterSet went: what it left for the others (held here
   * too) is in no index, and an object of it this leader would not write (an EndpointSlice
   * named per source cluster here, not there) would stay until the periodic resync. A full
   * resync indexes it now; the reconcile then deletes it once this leader's objects are written.
   */
  takeOver(): void {
    if (this.canWork() && this.informer?.hasSynced) void this.fullResync();
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
      this.options.sources?.sourceChanged();
    }
    const informer = this.informer;
    this.informer = undefined;
    if (informer) await stopImportWatch(informer, this.options.logger);
    await this.queue.stop();
    await this.gate.settled();
  }

  /** Stops and removes everything this ClusterSet imported (what another of its leaders holds stays). */
  async leave(): Promise<void> {
    await this.stop();
    await purgeOwned(this.options.store, this.options.owner, this.options.logger, this.options.policy,
      { keep: (riName, writer) => keptForOtherLeaders(this.options.sources, riName, writer), serviceImport: this.options.serviceImport });
    const sources = this.options.sources;
    if (sources?.several() === true) for (const riName of [...this.owned.riNames()].filter((n) => sources.heldElsewhere(n))) sources.leaveBehind(this.handOver(riName));
    this.clearState();
  }

  // -------------------------------------------------------------------------------------
  // Watcher, resyncs, retention
  // -------------------------------------------------------------------------------------

  private startWatcher(api: LeaderApi): ResilientInformer<ResourceImport> {
    const informer: ResilientInformer<ResourceImport> = startImportWatch(api, this.options.owner.leaderClusterID, {
      logger: this.options.logger,
      changed: (name) => {
        this.queue.add(name);
        this.options.sources?.changed(name);
      },
      healthChanged: (err) => {
        if (this.informer !== informer) return;
        const before = this.watchFailure?.message;
        this.watchFailure = watchFailureOf(err, api, this.watchFailure);
        if (this.watchFailure?.message !== before) this.options.onCountsChanged();
      },
      synced: () => {
        if (this.informer !== informer || !this.link.active) return;
        // What this leader holds is known now: the others look again at what it may be the source of.
        this.options.sources?.sourceChanged();
        this.options.onCountsChanged();
        this.options.logger.info('watching resource imports', { count: informer.list().length });
        if (this.needsResync) void this.fullResync();
        else this.requeueAll(informer);
      },
    });
    return informer;
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
    if (this.canWork() && this.resyncing === undefined) void this.fullResync();
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
          { proceed: () => this.stillPaused(), keep: (riName, writer) => keptForOtherLeaders(this.options.sources, riName, writer), serviceImport: this.options.serviceImport });
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
  // The index of owned objects, the reservations, refusals
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
    const sources = this.options.sources?.several() === true ? this.options.sources : undefined;
    for (const { ref, object } of found) {
      const riName = object.metadata?.annotations?.[RESOURCE_IMPORT_ANNOTATION] ?? '';
      // Another leader is the source of this import: its objects are that leader's to keep.
      if (sources?.decide(riName).kind === 'yield') continue;
      this.owned.set(keyOf(ref), { ref, riName, group: groupOfObject(ref, riName), live: object, deleting: false });
    }
    if (!this.link.stopped) this.options.sources?.rebuilt({ kinds: importTargetKinds(this.options.policy, this.options.serviceImport), found, indexed: (key) => this.owned.get(key) !== undefined });
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

  /** A refusal, said once per message. `awaited`: the namespaces whose (re)creation retries it; by default, those the plan cannot land in now. */
  private reject(riName: string, kind: string, rejection: Rejection, quiet: boolean, plan: ImportPlan, awaited?: readonly string[]): void {
    const waitsForNamespace = rejection.rule === 'NamespaceNotFound' || rejection.rule === 'NamespaceTerminating';
    const previous = this.riState.reject(riName, rejection, awaited ?? (waitsForNamespace && plan.kind === 'apply'
      ? unavailableNamespaces(plan.objects, this.options.namespaceExists, this.options.namespaceTerminating) : []));
    if (previous?.message === rejection.message) return;
    this.reports.rejected(riName, kind, rejection, quiet);
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
    const sources = this.options.sources?.several() === true ? this.options.sources : undefined;
    if (sources !== undefined) {
      const decision = sources.decide(riName);
      // Another connected leader is the source: it takes what this one imported over as it is.
      if (decision.kind === 'yield') {
        sources.leaveBehind(this.handOver(riName));
        return undefined;
      }
      // No connected leader holds it, but one still listing may: nothing is removed before it says.
      if (decision.kind === 'wait') return undefined;
      if (ri) this.reports.divergence(riName, sources.differing(riName));
    }
    const current = this.owned.ofRI(riName);
    if (!ri) {
      this.reports.forgetDivergence(riName);
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
      // Another leader holds it: what was written for it stays (handed over), nothing deleted while this one refuses.
      const keep = sources?.heldElsewhere(riName) === true ? this.handOver(riName, true) : undefined;
      this.unadmit(riName, group.key);
      this.reject(riName, kind, rejection, quiet, plan);
      if (keep) sources?.leaveBehind(keep);
      else await this.applier.removeAll(current, guard);
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
      // Only once it lands: an import held back or refused must not delete what another leader wrote.
      const result = await this.applier.apply(riName, kind, plan.objects, sources ? this.adopt(riName, sources) : current, guard);
      this.riState.setVerdict(riName, result === 'conflict' ? 'conflict' : 'applied');
      // An Endpoints import is whole or nothing: slices written before the one in the way go
      // (its Service and ServiceImport stay, with the ImportConflict Event naming the object).
      if (result === 'conflict' && kind === RESOURCE_IMPORT_KIND.Endpoints) await this.applier.removeAll(this.owned.ofRI(riName), guard);
    } catch (err) {
      const refused = refusedAsInvalid(err);
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

  /** Another leader is the source of `riName` (or holds what this one refuses: `keepState`, its refusal kept): forgets it, returns what this leader wrote for it. */
  handOver(riName: string, keepState = false): Owned[] {
    if (!keepState) {
      this.refusedAt.delete(riName);
      this.reports.forgetDivergence(riName);
      this.riState.forget(riName);
    }
    const given = [...this.owned.ofRI(riName)].filter(([, entry]) => !entry.deleting).map(([, entry]) => entry);
    for (const [key, entry] of this.owned.ofRI(riName)) {
      this.owned.drop(key);
      this.releaseIfUnused(entry.group);
    }
    return given;
  }

  /** What other leaders wrote for an import this leader is the source of, with its own: written into, not beside (re-read first: another index may be old). */
  private adopt(riName: string, sources: ImportSources): Map<string, Owned> {
    for (const entry of sources.adopt(riName)) if (this.owned.get(keyOf(entry.ref)) === undefined) this.owned.set(keyOf(entry.ref), { ...entry, deleting: false, stale: true });
    return this.owned.ofRI(riName);
  }
}
