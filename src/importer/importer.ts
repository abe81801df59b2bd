// Materialises one leader's ResourceImports in the member, for one ClusterSet.
//
// - A restartable watcher: connect(api) (re)starts a list+watch of ResourceImports with
//   that client; the informer underneath restarts with backoff after any error and relists
//   after 410, so a disconnection never leaves it silently dead.
// - Level-based, per ResourceImport: an event only queues the RI name; the handler compares
//   what the rules want with what we own and changes only the differences. An unchanged
//   object is never rewritten, deleted or recreated — also after a restart, when the index
//   of owned objects is rebuilt from a labelled list.
// - The firewall (policy.ts) runs before anything is written; an object that exists but is
//   not ours is never touched (a conflict).
// - Lost leader: imports are kept for `lostLeaderRetentionSeconds` after the leader is lost,
//   then removed; a reconnect before that deletes nothing.
import type { ImportPolicyConfig } from '../config/config.js';
import type { ResourceImport } from '../api/types.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import type { EventRecorder, EventTarget } from '../events/recorder.js';
import { ResilientInformer } from '../kube/informer.js';
import { apiStatus, describeError, httpStatus, isAlreadyExists, isNotFound } from '../kube/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { Backoff } from '../runtime/backoff.js';
import { WorkQueue } from '../runtime/workqueue.js';
import type { ImportCounts } from '../status/compute.js';
import { isOwnedBy, isOwnedByAgent, ownerSelector, RESOURCE_IMPORT_ANNOTATION, type ImportOwner } from './ownership.js';
import { checkImport, type Rejection } from './policy.js';
import { desiredForImport, mergeForUpdate, semanticallyEqual, withServiceImportIPs, type DesiredObject } from './rules.js';
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

/**
 * Every local kind an import can produce; listed to rebuild the index of what we own.
 * ClusterInfoImports only ever live in the agent namespace, and the chart grants them only
 * there, so they are listed there rather than cluster-wide.
 */
export const IMPORT_TARGET_KINDS: readonly (KindRef & { readonly agentNamespaceOnly?: boolean })[] = [
  { group: '', version: 'v1', plural: 'services', namespaced: true },
  { group: '', version: 'v1', plural: 'endpoints', namespaced: true },
  { group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespaced: true },
  { group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'clusterinfoimports', namespaced: true, agentNamespaceOnly: true },
  { group: 'crd.antrea.io', version: 'v1beta1', plural: 'clusternetworkpolicies', namespaced: false },
  { group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'labelidentities', namespaced: false },
];

const GC_KEY = '\u0000gc';
const MISSING_KIND_RECHECK_MS = 60_000;

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

interface Owned {
  readonly ref: ObjectRef;
  readonly riName: string;
  live: PlainObject;
}

/** Deletes every object this agent owns for the ClusterSet (leave, or a leader lost for too long). */
/** Every object the agent owns for this ClusterSet, found by its labels in every import target kind. */
async function listOwned(store: LocalStore, owner: ImportOwner): Promise<{ ref: ObjectRef; object: PlainObject }[]> {
  const found: { ref: ObjectRef; object: PlainObject }[] = [];
  for (const kind of IMPORT_TARGET_KINDS) {
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

export async function purgeOwned(store: LocalStore, owner: ImportOwner, logger: ImporterLogger): Promise<number> {
  let deleted = 0;
  for (const { ref } of await listOwned(store, owner)) {
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

export class Importer {
  private readonly queue: WorkQueue;
  private informer: ResilientInformer<ResourceImport> | undefined;
  private api: LeaderApi | undefined;
  private readonly owned = new Map<string, Owned>();
  private readonly rejections = new Map<string, Rejection>();
  private readonly conflicts = new Map<string, string>();
  private lostTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly resyncTimer: ReturnType<typeof setInterval>;
  private purged = false;
  private leaderConnected = true;
  private stopped = false;
  private indexReady: Promise<void> | undefined;

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
    this.resyncTimer = setInterval(() => { this.resync(); }, options.policy.resyncSeconds * 1000);
    this.resyncTimer.unref();
  }

  private resync(): void {
    if (this.stopped || this.purged || !this.informer?.hasSynced) return;
    this.indexReady = this.rebuildIndexUntilDone();
    void this.indexReady.then(() => {
      for (const ri of this.informer?.list() ?? []) this.queue.add(ri.metadata?.name ?? '');
      this.queue.add(GC_KEY);
    });
  }

  /** (Re)starts the watcher with `api`; a no-op when it already runs with this client. */
  connect(api: LeaderApi): void {
    if (this.stopped || this.api === api) return;
    const previous = this.informer;
    this.api = api;
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
    this.informer = informer;
    this.indexReady ??= this.rebuildIndexUntilDone();
    void (async () => {
      await previous?.stop();
      try {
        await Promise.all([informer.start(), this.indexReady]);
      } catch (err) {
        this.options.logger.warn('resource import watcher did not start', { error: describeError(err) });
        return;
      }
      if (this.informer !== informer) return;
      this.options.logger.info('watching resource imports', { count: informer.list().length });
      for (const ri of informer.list()) enqueue(ri);
      this.queue.add(GC_KEY);
    })();
  }

  /** Called on every Ready change of the leader: starts or cancels the lost-leader countdown. */
  setLeaderConnected(connected: boolean): void {
    const wasConnected = this.leaderConnected;
    this.leaderConnected = connected;
    if (connected) {
      if (this.lostTimer) clearTimeout(this.lostTimer);
      this.lostTimer = undefined;
      if (!wasConnected && this.api && !this.stopped) {
        // The watcher has been failing with a growing backoff (up to 30 s) while the leader was
        // away; the heartbeat just proved it is back, so watch again now rather than later.
        const api = this.api;
        this.api = undefined;
        this.connect(api);
      }
      if (this.purged) {
        this.purged = false;
        this.indexReady = this.rebuildIndexUntilDone();
        void this.indexReady.then(() => {
          for (const ri of this.informer?.list() ?? []) this.queue.add(ri.metadata?.name ?? '');
        });
      }
      return;
    }
    if (this.lostTimer || this.purged || this.stopped) return;
    const retentionMs = this.options.policy.lostLeaderRetentionSeconds * 1000;
    this.options.logger.warn('leader lost: imports are kept for the retention period', { retentionSeconds: this.options.policy.lostLeaderRetentionSeconds });
    this.lostTimer = setTimeout(() => {
      this.lostTimer = undefined;
      void this.purgeAll('leader lost for longer than the retention period');
    }, retentionMs);
  }

  counts(): ImportCounts {
    return { total: this.owned.size, rejected: this.rejections.size, conflicts: this.conflicts.size };
  }

  /** Resolves when no import work is queued or running. */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** Stops watching; what was imported stays (a restart is not a leave). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    if (this.lostTimer) clearTimeout(this.lostTimer);
    await this.informer?.stop();
    await this.queue.stop();
  }

  /** Stops and removes everything this ClusterSet imported. */
  async leave(): Promise<void> {
    await this.stop();
    await purgeOwned(this.options.store, this.options.owner, this.options.logger);
    this.owned.clear();
  }

  private async purgeAll(why: string): Promise<void> {
    this.purged = true;
    this.options.logger.warn(`removing imports: ${why}`);
    try {
      await purgeOwned(this.options.store, this.options.owner, this.options.logger);
      this.owned.clear();
      this.rejections.clear();
      this.conflicts.clear();
      this.options.onCountsChanged();
    } catch (err) {
      this.purged = false;
      this.options.logger.warn('could not remove imports of the lost leader', { error: describeError(err) });
    }
  }

  /**
   * Every reconcile waits for the index, so it must not fail for good on a transient error
   * (a member apiserver still initialising a CRD's storage answers 429): retry with backoff.
   */
  private async rebuildIndexUntilDone(): Promise<void> {
    const backoff = new Backoff({ baseMs: 200, maxMs: 30_000 });
    for (;;) {
      try {
        await this.rebuildIndex();
        return;
      } catch (err) {
        if (this.stopped) return;
        const delay = backoff.next();
        this.options.logger.warn('listing imported objects failed; will retry', { error: describeError(err), retryInMs: Math.round(delay) });
        await sleep(delay);
      }
    }
  }

  private async rebuildIndex(): Promise<void> {
    const found = await listOwned(this.options.store, this.options.owner);
    this.owned.clear();
    for (const { ref, object } of found) {
      this.owned.set(keyOf(ref), { ref, riName: object.metadata?.annotations?.[RESOURCE_IMPORT_ANNOTATION] ?? '', live: object });
    }
    this.options.onCountsChanged();
  }

  private ownedFor(riName: string): Map<string, Owned> {
    const result = new Map<string, Owned>();
    for (const [k, v] of this.owned) if (v.riName === riName) result.set(k, v);
    return result;
  }

  private collectGarbage(): Promise<undefined> {
    const informer = this.informer;
    if (!informer?.hasSynced) return Promise.resolve(undefined);
    const present = new Set(informer.list().map((ri) => ri.metadata?.name ?? ''));
    const orphans = new Set([...this.owned.values()].filter((o) => !present.has(o.riName)).map((o) => o.riName));
    for (const riName of orphans) this.queue.add(riName);
    return Promise.resolve(undefined);
  }

  private async reconcile(riName: string): Promise<{ requeueAfterMs: number } | undefined> {
    await this.indexReady;
    const informer = this.informer;
    if (!informer?.hasSynced || this.purged) return undefined;
    const ri = informer.get(riName, this.options.owner.leaderNamespace);
    const current = this.ownedFor(riName);
    const before = JSON.stringify(this.counts());
    try {
      if (!ri) {
        await this.removeAll(current);
        this.rejections.delete(riName);
        this.conflicts.delete(riName);
        return undefined;
      }
      const plan = desiredForImport(ri, this.options.owner, { enableLabelIdentity: this.options.policy.enableLabelIdentity });
      if (plan.kind === 'skip') {
        this.options.logger.debug('resource import skipped', { resourceImport: riName, reason: plan.reason });
        await this.removeAll(current);
        this.rejections.delete(riName);
        this.conflicts.delete(riName);
        return undefined;
      }
      const rejection = checkImport({
        ri, objects: plan.objects, policy: this.options.policy, namespaceExists: this.options.namespaceExists,
        ownedCount: this.owned.size - current.size,
      });
      if (rejection) {
        await this.removeAll(current);
        this.conflicts.delete(riName);
        if (this.rejections.get(riName)?.message !== rejection.message) {
          this.options.logger.warn('resource import rejected', { resourceImport: riName, rule: rejection.rule, detail: rejection.message });
          this.options.events.record(this.options.eventTarget(), 'Warning', `ImportRejected${rejection.rule}`, rejection.message);
          this.options.onRejection?.(rejection.rule);
          this.options.onOutcome?.(String(ri.spec?.kind), 'rejected');
        }
        this.rejections.set(riName, rejection);
        return undefined;
      }
      this.rejections.delete(riName);
      try {
        await this.apply(riName, String(ri.spec?.kind), plan.objects, current);
      } catch (err) {
        const missing = missingKind(err, plan.objects);
        if (!missing) throw err;
        // Retrying fast cannot help until someone installs the CRD; say so once and check back later.
        this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportTargetMissing',
          `ResourceImport ${this.options.owner.leaderNamespace}/${riName} needs ${missing} in this cluster, which is not installed: install it or remove the kind from imports.allowedKinds`);
        this.options.onOutcome?.(String(ri.spec?.kind), 'failed');
        return { requeueAfterMs: MISSING_KIND_RECHECK_MS };
      }
      return undefined;
    } finally {
      if (JSON.stringify(this.counts()) !== before) this.options.onCountsChanged();
    }
  }

  private async apply(riName: string, kind: string, objects: readonly DesiredObject[], current: Map<string, Owned>): Promise<void> {
    const wanted = new Set<string>();
    let serviceIPs: string[] = [];
    for (const original of objects) {
      let desired = original;
      if (desired.kind === 'ServiceImport' && serviceIPs.length > 0) desired = { ...desired, body: withServiceImportIPs(desired.body, serviceIPs) };
      const ref = desiredRef(desired);
      const key = keyOf(ref);
      wanted.add(key);
      const result = await this.applyOne(riName, ref, desired, current.get(key));
      if (result === 'conflict') {
        this.options.onOutcome?.(kind, 'conflict');
        return;
      }
      this.options.onOutcome?.(kind, result);
      if (desired.kind === 'Service') {
        const clusterIP = (this.owned.get(key)?.live['spec'] as { clusterIP?: string } | undefined)?.clusterIP;
        serviceIPs = clusterIP && clusterIP !== 'None' ? [clusterIP] : [];
      }
    }
    this.conflicts.delete(riName);
    for (const [key, stale] of current) {
      if (!wanted.has(key)) await this.removeOne(key, stale);
    }
  }

  private async applyOne(riName: string, ref: ObjectRef, desired: DesiredObject, known: Owned | undefined): Promise<ImportOutcome> {
    const store = this.options.store;
    const key = keyOf(ref);
    let live = known?.live;
    if (!live) {
      try {
        const created = await store.create(ref, desired.body);
        this.owned.set(key, { ref, riName, live: created });
        return 'created';
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        live = await store.get(ref);
        if (!isOwnedBy(live, this.options.owner)) {
          this.recordConflict(riName, ref, isOwnedByAgent(live) ? 'it belongs to another ClusterSet' : 'it was not created by clusterset-agent');
          return 'conflict';
        }
      }
    }
    if (semanticallyEqual(desired, live)) {
      this.owned.set(key, { ref, riName, live });
      return 'unchanged';
    }
    try {
      const updated = await store.replace(ref, mergeForUpdate(desired, live));
      this.owned.set(key, { ref, riName, live: updated });
      return 'updated';
    } catch (err) {
      // Our copy was stale (409) or the object vanished (404): forget it; the retry re-reads.
      this.owned.delete(key);
      throw err;
    }
  }

  private recordConflict(riName: string, ref: ObjectRef, why: string): void {
    const message = `ResourceImport ${this.options.owner.leaderNamespace}/${riName} wants ${ref.plural} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}, which exists and ${why}: left untouched`;
    if (this.conflicts.get(riName) !== message) {
      this.options.logger.warn('import conflicts with an existing object', { resourceImport: riName, object: `${ref.plural}/${ref.namespace ?? ''}/${ref.name}` });
      this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportConflict', message);
    }
    this.conflicts.set(riName, message);
  }

  private async removeAll(current: Map<string, Owned>): Promise<void> {
    for (const [key, owned] of current) await this.removeOne(key, owned);
  }

  private async removeOne(key: string, owned: Owned): Promise<void> {
    try {
      await this.options.store.delete(owned.ref);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.owned.delete(key);
    this.options.onOutcome?.(owned.ref.plural, 'deleted');
  }
}
