// The leader's controllers over one leader namespace, wired to one work queue. Each concern
// lives in its own module, with its decisions in pure modules next to it:
//   import:<ResourceImport name>  imports.ts      aggregate the exports feeding it, release finalizers
//   announce:<name>               announces.ts    finalizer, member GC (announce deleted or stale)
//   status                        status.ts       liveness → every leader ClusterSet's status
//                                 (and duplicates.ts: members' DuplicateClusterID Events → a condition, Event, metric)
//   memberids                     member-ids-reconciler.ts  ServiceAccount cluster IDs → the admission parameter
//   sweep                         books.ts        at start and every sweep period: labelled imports no
//                                                 export feeds, exports whose member has no announce
// Each handler is level-triggered from the informer caches: after a crash or restart the same
// keys, run again, pick up where the last run stopped.
import type { CoreV1Event, KubeConfig, V1ConfigMap, V1ServiceAccount } from '@kubernetes/client-node';
import { createJsonClient } from '../common/kube/json-client.js';
import type winston from 'winston';
import type { KubeList, KubeObject } from '../common/api/meta.js';
import {
  CLUSTERSET,
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_EXPORT_KIND,
  RESOURCE_IMPORT,
  type ClusterSet,
  type ClusterSetList,
  type MemberClusterAnnounce,
  type MemberClusterAnnounceList,
  type ResourceExport,
  type ResourceExportList,
  type ResourceImport,
  type ResourceImportList,
} from '../common/api/antrea.js';
import type { EventRecorder } from '../common/events/recorder.js';
import { describeError } from '../common/kube/errors.js';
import { ResilientInformer, type WatchLike } from '../common/kube/informer.js';
import { WorkQueue } from '../common/runtime/workqueue.js';
import { countVerdicts, importKeyOf } from './decisions/aggregate.js';
import { AnnounceReconciler } from './announces.js';
import { LEADER_SELECTOR, MANAGED_BY_LABEL, MANAGED_BY_LEADER, orphanImports } from './decisions/books.js';
import { nameOf, refOf, type LeaderContext, type LeaderMetrics, type Ref } from './context.js';
import { compactDuplicateEvent, DEFAULT_MAX_DUPLICATE_EVENTS, DUPLICATE_EVENTS_SELECTOR } from './decisions/duplicates.js';
import { ExportCap } from './decisions/export-cap.js';
import { ExportIndex } from './decisions/export-index.js';
import { ImportReconciler } from './imports.js';
import { MemberIdsReconciler } from './member-ids-reconciler.js';
import { StatusReconciler } from './status.js';
import { BeatSightings } from './decisions/observed-beats.js';
import { Deadlines, pacedRunAt, STATUS_INTERVAL_MS } from './decisions/deadlines.js';
import { compactServiceAccount } from './decisions/member-ids.js';
import { kubeApis } from '../common/kube/typed-api.js';
import { jsonList, type ListSelectors } from './lists.js';

export { MANAGED_BY_LABEL, MANAGED_BY_LEADER };
export const MEMBER_IDS_CONFIGMAP = 'clusterset-member-ids';
/** How often the books are swept when no setting says otherwise. */
export const DEFAULT_SWEEP_INTERVAL_MS = 300_000;
/** Exports of one member the leader takes in when no setting says otherwise. */
export const DEFAULT_MAX_EXPORTS_PER_MEMBER = 10_000;
/** The largest import spec the leader writes when no setting says otherwise: well below etcd's ~1.5 MiB request limit. */
export const DEFAULT_MAX_IMPORT_BYTES = 1_048_576;

const STATUS_KEY = 'status';
const MEMBER_IDS_KEY = 'memberids';
const SWEEP_KEY = 'sweep';

export interface LeaderControllerOptions {
  readonly kubeConfig: KubeConfig;
  /** The leader namespace (common area). */
  readonly namespace: string;
  readonly memberTimeoutMs: number;
  readonly staleMemberMs: number;
  /** The sweep of orphaned imports and exports, at start and then this often. @default 300 000 */
  readonly sweepIntervalMs?: number;
  /** Exports of one member taken in, oldest first; the rest get Failure TooManyExports. @default 10 000 */
  readonly maxExportsPerMember?: number;
  /** The largest import spec written; the newest contributors beyond it get Failure ImportTooLarge. @default 1 MiB */
  readonly maxImportBytes?: number;
  /** Members' DuplicateClusterID Events read at most, the newest. @default 1000 */
  readonly maxDuplicateEvents?: number;
  /** Deletes in flight at once while collecting a member's exports. @default 8 */
  readonly gcParallelism?: number;
  readonly logger: winston.Logger;
  readonly events?: EventRecorder;
  readonly metrics?: LeaderMetrics;
  readonly memberIdsConfigMap?: string;
  /** @default 4 */
  readonly concurrency?: number;
  /** The wall clock (members' beats are judged against it). @default Date.now */
  readonly now?: () => number;
  /** Tests only: wraps the ResourceImport informer's watch (to hold its events back and force the withdraw-before-seen race). */
  readonly wrapImportWatch?: (watch: WatchLike) => WatchLike;
  /** The leader ClusterSet's status is recomputed (and written) at most once per this interval. @default 1000 */
  readonly statusIntervalMs?: number;
}

// Node clamps longer delays to 1 ms; a deadline further out is re-armed when this one fires.
const MAX_TIMER_MS = 2 ** 31 - 1;

export class LeaderController {
  readonly #ctx: LeaderContext;
  readonly announces: ResilientInformer<MemberClusterAnnounce>;
  readonly exports: ResilientInformer<ResourceExport>;
  readonly imports: ResilientInformer<ResourceImport>;
  readonly clusterSets: ResilientInformer<ClusterSet>;
  readonly serviceAccounts: ResilientInformer<V1ServiceAccount>;
  readonly configMaps: ResilientInformer<V1ConfigMap>;
  readonly duplicateEvents: ResilientInformer<CoreV1Event>;
  readonly #queue: WorkQueue;
  readonly #index = new ExportIndex();
  readonly #cap: ExportCap;
  readonly #importReconciler: ImportReconciler;
  readonly #announceReconciler: AnnounceReconciler;
  readonly #statusReconciler: StatusReconciler;
  readonly #memberIdsReconciler: MemberIdsReconciler;
  readonly #sweepIntervalMs: number;
  readonly #settings: Record<string, number>;
  #started = false;
  #stopped = false;
  /** Announce rechecks (stale members) of the whole fleet, behind one timer at the earliest. */
  readonly #deadlines = new Deadlines();
  #deadlineTimer: { readonly at: number; readonly handle: ReturnType<typeof setTimeout> } | undefined;
  readonly #statusIntervalMs: number;
  /**
   * When (monotonic clock) the last status run started; the next may not start before one
   * interval later. Pacing is a duration: on the wall clock, a step back after a run held
   * every status run back by the size of the step.
   */
  #statusRanMono: number | undefined;
  /** The one pending status run: paced after a recent run, or at the earliest liveness expiry. */
  #statusTimer: { readonly at: number; readonly handle: ReturnType<typeof setTimeout> } | undefined;
  #statusWaiters: (() => void)[] = [];

  constructor(options: LeaderControllerOptions) {
    const ns = options.namespace;
    const log = options.logger.child({ leaderNamespace: ns });
    // The project's JSON client: every request, the informers' lists (lists.ts) and watches
    // (bookmarks and a server-side timeout, as client-go watches).
    const watch = createJsonClient(options.kubeConfig, { who: 'leader' });
    const { custom: objects, core } = kubeApis(watch);
    // An informer's collection: its path and selectors, and the list of exactly that collection.
    const listed = <T extends KubeObject>(path: string, selectors: ListSelectors = {}) => ({ path, list: jsonList<T>(watch, path, selectors), ...selectors });
    const custom = <L extends KubeList<KubeObject>>(d: Ref, through: WatchLike = watch) => ({
      name: d.plural,
      ...listed<L['items'][number]>(`/apis/${d.group}/${d.version}/namespaces/${ns}/${d.plural}`),
      watch: through,
      logger: log,
    });
    this.announces = new ResilientInformer(custom<MemberClusterAnnounceList>(refOf(MEMBER_CLUSTER_ANNOUNCE)));
    this.exports = new ResilientInformer(custom<ResourceExportList>(refOf(RESOURCE_EXPORT)));
    this.imports = new ResilientInformer(custom<ResourceImportList>(refOf(RESOURCE_IMPORT), options.wrapImportWatch?.(watch)));
    this.clusterSets = new ResilientInformer(custom<ClusterSetList>(refOf(CLUSTERSET)));
    this.serviceAccounts = new ResilientInformer<V1ServiceAccount>({
      name: 'serviceaccounts',
      ...listed<V1ServiceAccount>(`/api/v1/namespaces/${ns}/serviceaccounts`),
      // One per member, read for one annotation: the rest (secrets, other annotations, labels) is not kept.
      transform: compactServiceAccount,
      watch,
      logger: log,
    });
    this.configMaps = new ResilientInformer<V1ConfigMap>({
      name: 'configmaps',
      ...listed<V1ConfigMap>(`/api/v1/namespaces/${ns}/configmaps`, { labelSelector: LEADER_SELECTOR }),
      watch,
      logger: log,
    });
    // Only the Events members record about a duplicate cluster ID: a cheap watch however busy the namespace.
    this.duplicateEvents = new ResilientInformer<CoreV1Event>({
      name: 'duplicate-cluster-id-events',
      ...listed<CoreV1Event>(`/api/v1/namespaces/${ns}/events`, { fieldSelector: DUPLICATE_EVENTS_SELECTOR }),
      // Member-written: only the fields read are cached.
      transform: compactDuplicateEvent,
      watch,
      logger: log,
    });
    this.#ctx = {
      ns, log, objects, core,
      events: options.events, metrics: options.metrics, now: options.now ?? (() => Date.now()),
      announces: this.announces, exports: this.exports, imports: this.imports,
      clusterSets: this.clusterSets, serviceAccounts: this.serviceAccounts, configMaps: this.configMaps,
      duplicateEvents: this.duplicateEvents,
    };
    this.#sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    this.#statusIntervalMs = options.statusIntervalMs ?? STATUS_INTERVAL_MS;
    const gcParallelism = options.gcParallelism ?? 8;
    this.#settings = { memberTimeoutSeconds: options.memberTimeoutMs / 1000, staleMemberSeconds: options.staleMemberMs / 1000, sweepIntervalSeconds: this.#sweepIntervalMs / 1000, gcParallelism };
    this.#cap = new ExportCap(options.maxExportsPerMember ?? DEFAULT_MAX_EXPORTS_PER_MEMBER);
    const maxImportBytes = options.maxImportBytes ?? DEFAULT_MAX_IMPORT_BYTES;
    this.#settings['maxExportsPerMember'] = this.#cap.limit;
    this.#settings['maxImportBytes'] = maxImportBytes;
    this.#importReconciler = new ImportReconciler(this.#ctx, this.#index, this.#cap, maxImportBytes);
    options.metrics?.leaderExportsFrom(() => countVerdicts(this.exports.list(ns)));
    // When this leader first saw each touch-ts: liveness and reaping count a beat from no later than that.
    const sightings = new BeatSightings();
    this.#announceReconciler = new AnnounceReconciler(this.#ctx, { staleMemberMs: options.staleMemberMs, gcParallelism, orphanGraceMs: options.memberTimeoutMs, sightings });
    this.#statusReconciler = new StatusReconciler(this.#ctx, options.memberTimeoutMs, sightings, options.maxDuplicateEvents ?? DEFAULT_MAX_DUPLICATE_EVENTS);
    this.#memberIdsReconciler = new MemberIdsReconciler(this.#ctx, options.memberIdsConfigMap ?? MEMBER_IDS_CONFIGMAP);
    this.#queue = new WorkQueue({
      concurrency: options.concurrency ?? 4,
      backoff: { baseMs: 200, maxMs: 60_000 },
      onError: (key, error, retry) => {
        log.warn('leader reconcile failed; will retry', { key, error: describeError(error), retryInMs: Math.round(retry.delayMs), attempts: retry.attempts });
      },
    });
    this.#wire();
  }

  #informers() {
    return [this.announces, this.exports, this.imports, this.clusterSets, this.serviceAccounts, this.configMaps, this.duplicateEvents];
  }

  /** Starts the informers, waits until they synced, then starts the queue (the first sweep included). */
  async start(): Promise<void> {
    // Where a restart's time goes (issue 31: restart → ready): the process's start up to here, then the lists.
    const listsFrom = performance.now();
    await Promise.all(this.#informers().map((i) => i.start()));
    this.#started = true;
    this.#queue.start((key) => this.#handle(key));
    this.#requestStatus();
    this.#queue.add(MEMBER_IDS_KEY);
    this.#queue.add(SWEEP_KEY);
    const startup = { processToListsMs: Math.round(listsFrom), listsMs: Math.round(performance.now() - listsFrom) };
    this.#ctx.log.info('leader controllers started', { ...this.#settings, ...startup });
    const startedAt = performance.now();
    // Every object seen at start has been reconciled once: what a restart costs (bench:leader reads it).
    void this.#queue.onIdle().then(() => {
      this.#ctx.log.info('leader caught up: every object seen at start reconciled', { afterMs: Math.round(performance.now() - startedAt), imports: this.imports.list(this.#ctx.ns).length, exports: this.exports.list(this.#ctx.ns).length });
    });
  }

  ready(): boolean {
    return this.#started;
  }

  /**
   * Resolves when no key is queued or in flight (tests, graceful stop), and no status run is
   * held back by the pacing or a status write by its coalescing (a liveness expiry further
   * out than one interval does not count).
   */
  async idle(): Promise<void> {
    for (;;) {
      await this.#queue.onIdle();
      const pending = this.#statusTimer;
      // A status write held back to coalesce a burst is pending work, however far out.
      if (this.#stopped || pending === undefined || (pending.at - this.#ctx.now() > this.#statusIntervalMs && !this.#statusReconciler.heldBack)) return;
      await new Promise<void>((resolve) => { this.#statusWaiters.push(resolve); });
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of [this.#deadlineTimer, this.#statusTimer]) if (timer !== undefined) clearTimeout(timer.handle);
    this.#deadlineTimer = undefined;
    this.#statusTimer = undefined;
    for (const resolve of this.#statusWaiters.splice(0)) resolve();
    await this.#queue.stop();
    await Promise.all(this.#informers().map((i) => i.stop()));
  }

  #wire(): void {
    for (const event of ['add', 'update', 'delete'] as const) {
      this.announces.on(event, (a) => {
        this.#statusReconciler.observe(a, event === 'delete');
        this.#queue.add(`announce:${nameOf(a)}`);
        // A Connected member's beat changes no status: no run for it (status.ts, changesStatus).
        if (event !== 'update' || this.#statusReconciler.changesStatus(a)) this.#requestStatus();
        // Gone without the leader's collection (a stripped finalizer): its exports are orphans now.
        if (event === 'delete') this.#queue.add(SWEEP_KEY);
      });
      this.exports.on(event, (re) => { this.#onExport(re, event === 'delete'); });
      this.imports.on(event, (ri) => { this.#queue.add(`import:${nameOf(ri)}`); });
      this.clusterSets.on(event, () => {
        this.#requestStatus();
        this.#queue.add(MEMBER_IDS_KEY);
      });
      this.serviceAccounts.on(event, () => { this.#queue.add(MEMBER_IDS_KEY); });
      this.configMaps.on(event, () => { this.#queue.add(MEMBER_IDS_KEY); });
      this.duplicateEvents.on(event, () => { this.#requestStatus(); });
    }
  }

  #onExport(re: ResourceExport, deleted: boolean): void {
    for (const key of this.#index.update(re, deleted)) this.#queue.add(`import:${key}`);
    if (!deleted && importKeyOf(re) === undefined) this.#queue.add(`verdict:${nameOf(re)}`);
    // Exports that crossed their member's cap because this one came or went: judged again.
    for (const name of this.#cap.update(re, deleted)) {
      const other = this.exports.get(name, this.#ctx.ns);
      const key = other === undefined ? undefined : importKeyOf(other);
      this.#queue.add(key === undefined ? `verdict:${name}` : `import:${key}`);
    }
    // A ClusterInfo's CIDRs are judged against every other member's: re-judge them all.
    if (re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo) {
      for (const other of this.exports.list(this.#ctx.ns)) {
        if (other.spec?.kind !== RESOURCE_EXPORT_KIND.ClusterInfo) continue;
        const key = importKeyOf(other);
        if (key !== undefined) this.#queue.add(`import:${key}`);
      }
    }
  }

  /**
   * Asks for a status run at `atMs` (default now), paced: not before one interval after the last
   * run started. One timer holds the earliest pending run, however many members beat.
   */
  #requestStatus(atMs = this.#ctx.now()): void {
    if (this.#stopped) return;
    const now = this.#ctx.now();
    // The last run's start as the wall clock reads now (deadlines are wall-clock times).
    const lastRun = this.#statusRanMono === undefined ? undefined : now - (performance.now() - this.#statusRanMono);
    const at = pacedRunAt(atMs, lastRun, this.#statusIntervalMs);
    if (at <= now) {
      this.#queue.add(STATUS_KEY);
      return;
    }
    if (this.#statusTimer !== undefined) {
      if (this.#statusTimer.at <= at) return;
      clearTimeout(this.#statusTimer.handle);
    }
    const handle = setTimeout(() => {
      this.#statusTimer = undefined;
      this.#queue.add(STATUS_KEY);
      for (const resolve of this.#statusWaiters.splice(0)) resolve();
    }, Math.min(at - now, MAX_TIMER_MS));
    this.#statusTimer = { at, handle };
  }

  /** (Re)arms the one deadline timer at the earliest announce recheck. */
  #armDeadlines(): void {
    const earliest = this.#deadlines.earliest();
    if (this.#stopped || this.#deadlineTimer?.at === earliest) return;
    if (this.#deadlineTimer !== undefined) clearTimeout(this.#deadlineTimer.handle);
    this.#deadlineTimer = undefined;
    if (earliest === undefined) return;
    const handle = setTimeout(() => {
      this.#deadlineTimer = undefined;
      for (const key of this.#deadlines.takeDue(this.#ctx.now())) this.#queue.add(key);
      this.#armDeadlines();
    }, Math.max(0, Math.min(earliest - this.#ctx.now(), MAX_TIMER_MS)));
    this.#deadlineTimer = { at: earliest, handle };
  }

  async #handle(key: string): Promise<undefined | { requeueAfterMs: number }> {
    if (key === STATUS_KEY) {
      this.#statusRanMono = performance.now();
      const result = await this.#statusReconciler.reconcile();
      // The next liveness expiry: through the same paced timer, not a timer of the queue's.
      if (result !== undefined) this.#requestStatus(this.#ctx.now() + result.requeueAfterMs);
      return undefined;
    }
    if (key === MEMBER_IDS_KEY) return this.#memberIdsReconciler.reconcile();
    if (key === SWEEP_KEY) return this.#sweep();
    const sep = key.indexOf(':');
    const kind = key.slice(0, sep);
    const name = key.slice(sep + 1);
    if (kind === 'import') return this.#importReconciler.reconcile(name);
    if (kind === 'announce') {
      const result = await this.#announceReconciler.reconcile(name);
      // Recomputed from the announce as it is now: the new recheck replaces the old one.
      if (result === undefined) this.#deadlines.delete(key);
      else this.#deadlines.set(key, this.#ctx.now() + result.requeueAfterMs);
      this.#armDeadlines();
      return undefined;
    }
    if (kind === 'verdict') return this.#importReconciler.judgeUnaggregated(name);
    return undefined;
  }

  /** The books' sweep: orphaned imports go through their own key; orphaned exports are deleted. */
  async #sweep(): Promise<{ requeueAfterMs: number }> {
    const ctx = this.#ctx;
    const imports = orphanImports(ctx.imports.list(ctx.ns), (name) => this.#index.feeds(name));
    for (const name of imports) this.#queue.add(`import:${name}`);
    if (imports.length > 0) ctx.log.info('sweep: labelled imports no export feeds are being deleted', { resourceImports: imports.length, first: imports.slice(0, 5) });
    await this.#announceReconciler.sweepOrphanExports();
    return { requeueAfterMs: this.#sweepIntervalMs };
  }
}
