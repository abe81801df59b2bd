// Publishes this member's ServiceExports and Gateway to one leader as ResourceExports, for one
// ClusterSet (antrea-wire.md 2.10, 3.5, 3.6). The engine: it wires the parts below to the
// link the area drives and to one work queue.
//
// - Driven by trust, like the importer: resume(api) while the leader is connected and trusted,
//   pause(why) the moment it is not. A paused exporter writes nothing to the leader (reconciles
//   in flight check a generation before each write; queued ones do nothing); resuming runs one
//   full sync.
// - Level-based, per export: a source event only queues its key (`svc/<ns>/<name>` or
//   `clusterinfo`, export-keys.ts); the handler computes what the export should be from the
//   local caches (desired-exports.ts), compares it with what we know the leader has
//   (known-exports.ts: our REs by name, rebuilt from a list labelled `sourceClusterID=<localID>`
//   at every full sync) and writes only the differences (resource-export-writer.ts). An
//   unchanged RE is never rewritten, also after a restart.
// - Full sync (resume, and periodically): the index is rebuilt from that list, then every key
//   is reconciled, those of the listed REs included: an RE whose source is gone or no longer
//   allowed (a leftover of an earlier run) is deleted, unchanged ones are left alone. Nothing is
//   reconciled before the local caches a key reads from have synced, so an empty cache never
//   withdraws every export.
// - The ServiceExport `Valid` condition says what Antrea's member says, or why the export policy
//   refuses the namespace (with a Warning Event); `Conflict` mirrors the leader's verdict in the
//   REs' status (e.g. ports that differ from another member's), brought by the watch of our REs
//   (export-watch.ts) when the leader judges what we wrote; it counts only on the version it was
//   written over (leader-verdict.ts). The agent's one status writer (status-writer.ts) writes it.
import type { ResourceExport } from '../common/api/antrea.js';
import { RE_LABEL_SOURCE_CLUSTER_ID } from '../common/api/names.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import type { EventRecorder } from '../common/events/recorder.js';
import { describeError } from '../common/kube/errors.js';
import { WorkQueue, type WorkResult } from '../common/runtime/workqueue.js';
import { LinkLifecycle, PausedError, retryUntilDone, type LeaderLink } from '../commonarea/leaderlink/lifecycle.js';
import { desiredClusterInfo, desiredService, type ExportContext } from './desired-exports.js';
import { CLUSTER_INFO_KEY, parseServiceKey, serviceKey } from './export-keys.js';
import { ExportWatch } from './export-watch.js';
import { KnownExports } from './known-exports.js';
import { verdictOn } from './leader-verdict.js';
import { ResourceExportWriter, withdrawAll, type ExportOutcome } from './resource-export-writer.js';
import { EXPORT_REASON, ExportStatusWriter, type ServiceExportStatusWriter, type Verdict } from './status-writer.js';

export interface ExporterLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ExporterOptions extends ExportContext {
  /**
   * Where the judgement of each ServiceExport goes: the agent's one status writer, shared by
   * every ClusterSet (ExportManager), or else `writeStatus` through a writer of its own.
   */
  readonly status?: { readonly writer: ExportStatusWriter; readonly clusterSet: string };
  readonly writeStatus?: ServiceExportStatusWriter;
  readonly events: EventRecorder;
  readonly logger: ExporterLogger;
  readonly onOutcome?: (kind: string, outcome: ExportOutcome) => void;
  /** @default 4 */
  readonly concurrency?: number;
  /** Period of the full sync while active (re-lists our REs: repairs edits and reads verdicts). @default 600_000 */
  readonly resyncMs?: number;
  /** Backoff of failed reconciles. @default { baseMs: 500, maxMs: 60_000 } */
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  readonly now?: () => Date;
}

/** Delay before a name taken by another export is looked at again. */
const NAME_CONFLICT_RECHECK_MS = 60_000;

export class Exporter implements LeaderLink {
  private readonly queue: WorkQueue;
  /** new, active (connected and trusted) or paused (write nothing); its generation fences writes. */
  private readonly link = new LinkLifecycle<LeaderApi>();
  /** The last client given by resume, for leave() (also after a pause). */
  private lastApi: LeaderApi | undefined;
  /** The index was rebuilt since the last resume: reconciles may run. */
  private ready = false;
  private syncSeq = 0;
  private syncing: Promise<void> | undefined;
  /** Reconciles in flight, which a full sync waits for before it rebuilds the index. */
  private writers = 0;
  private drainWaiters: (() => void)[] = [];
  private readonly resyncTimer: ReturnType<typeof setInterval>;
  /** Our REs on the leader, watched (by their sourceClusterID label) while active. */
  private readonly watch: ExportWatch;
  /** Our REs on the leader as last seen. */
  private readonly known: KnownExports;
  private readonly writer: ResourceExportWriter;
  private readonly statusWriter: ExportStatusWriter;
  private readonly clusterSet: string;
  /** A writer of its own (no shared one given): stopped with the exporter. */
  private readonly ownStatusWriter: boolean;

  constructor(private readonly options: ExporterOptions) {
    const write = options.writeStatus;
    if (options.status) {
      this.statusWriter = options.status.writer;
      this.clusterSet = options.status.clusterSet;
      this.ownStatusWriter = false;
    } else if (write) {
      this.statusWriter = new ExportStatusWriter({
        serviceExport: (namespace, name) => options.sources.serviceExport(namespace, name), write, events: options.events, logger: options.logger,
        ...(options.now !== undefined && { now: options.now }),
      });
      this.clusterSet = '';
      this.ownStatusWriter = true;
    } else {
      throw new TypeError('an Exporter needs `status` or `writeStatus`');
    }
    this.known = new KnownExports(options.localClusterID);
    this.writer = new ResourceExportWriter({
      leaderNamespace: options.leaderNamespace,
      known: this.known,
      api: () => this.link.api,
      writable: (generation) => this.link.writable(generation, 'exports'),
      logger: options.logger,
      onOutcome: options.onOutcome,
    });
    this.watch = new ExportWatch({
      leaderNamespace: options.leaderNamespace,
      labelSelector: this.selector(),
      logger: options.logger,
      changed: (re, deleted) => { this.leaderChanged(re, deleted); },
    });
    this.queue = new WorkQueue({
      concurrency: options.concurrency ?? 4,
      backoff: options.backoff ?? { baseMs: 500, maxMs: 60_000 },
      onError: (key, error, retry) => {
        options.logger.warn('export failed; will retry', { export: key, error: describeError(error), retryInMs: Math.round(retry.delayMs) });
      },
    });
    this.queue.start((key) => this.reconcile(key));
    this.resyncTimer = setInterval(() => { this.periodicSync(); }, options.resyncMs ?? 600_000);
    this.resyncTimer.unref();
  }

  // -------------------------------------------------------------------------------------
  // Driving: resume, pause, stop, leave, source events
  // -------------------------------------------------------------------------------------

  /**
   * The leader is connected and trusted. After a pause (or on the first call) one full sync
   * runs; while active, a new client (rotated credentials) is simply used from now on.
   */
  resume(api: LeaderApi): void {
    const change = this.link.resume(api);
    if (change === 'stopped') return;
    this.lastApi = api;
    this.statusWriter.setConnected(this.clusterSet, true);
    this.watch.start(api);
    if (change !== 'started' && change !== 'resumed') return;
    if (change === 'resumed') this.options.logger.info('exports resumed');
    this.ready = false;
    void this.fullSync();
  }

  /** Trust or leader lost: nothing more is written to the leader until the next resume. */
  pause(why: string): void {
    const left = this.link.pause(why);
    if (left === undefined) return;
    // What this leader said is stale until it is back: it no longer counts for Conflict.
    this.statusWriter.setConnected(this.clusterSet, false);
    this.ready = false;
    this.watch.stop();
    if (left === 'active') this.options.logger.warn('exports paused: nothing is written to the leader', { why });
  }

  /** Stops; what was exported stays on the leader (a restart is not a leave). */
  async stop(): Promise<void> {
    if (this.link.stop()) {
      this.ready = false;
      clearInterval(this.resyncTimer);
      this.releaseDrainWaiters();
      this.watch.stop();
    }
    await this.queue.stop();
    await this.syncing;
    if (this.ownStatusWriter) await this.statusWriter.stop();
  }

  /**
   * Stops, then deletes every RE of this member on the leader (listed by label), through the
   * client it last worked with or, if it never resumed, the area's. Best effort:
   * failures are logged, not thrown; the leader also deletes the REs of a member whose
   * announce is deleted (antrea-wire.md 3.4).
   */
  async leave(areaApi?: LeaderApi): Promise<void> {
    await this.stop();
    const api = this.lastApi ?? areaApi;
    if (!api) {
      this.options.logger.info('leaving a leader this exporter never reached: nothing to delete there');
      return;
    }
    const withdrawn = await withdrawAll(api, this.selector(), this.options.logger);
    if (!withdrawn) return;
    this.known.clear();
    this.options.logger.info('withdrew exports from the leader', withdrawn);
  }

  /** A ServiceExport, its Service or one of its EndpointSlices changed. */
  serviceChanged(namespace: string, name: string): void {
    const key = serviceKey(namespace, name);
    // Only what is exported, or was: EndpointSlice churn of other Services costs nothing.
    if (this.options.sources.serviceExport(namespace, name) !== undefined || this.known.has(key) || this.statusWriter.judges(this.clusterSet, key)) this.queue.add(key);
  }

  /**
   * The leader may have dropped everything we published (our announce had to be created
   * again, and a leader deletes the exports of a member whose announce is deleted): publish
   * everything again now rather than at the next periodic sync.
   */
  announceRecreated(): void {
    this.resync();
  }

  resync(): void {
    if (!this.link.active || this.syncing !== undefined) return;
    this.options.logger.info('full export sync: our announce was created again on the leader');
    void this.fullSync();
  }

  /** A Gateway of the agent namespace changed. */
  clusterInfoChanged(): void {
    this.queue.add(CLUSTER_INFO_KEY);
  }

  /** Reconciles every export (e.g. once the local caches have synced). */
  enqueueAll(): void {
    for (const key of this.allKeys()) this.queue.add(key);
  }

  /** Resolves when no export work is queued or running (a pending full sync included). */
  onIdle(): Promise<void> {
    return this.link.drain({ resyncing: () => this.syncing, queue: this.queue, handedOn: () => this.statusWriter.onIdle() });
  }

  // -------------------------------------------------------------------------------------
  // Full sync
  // -------------------------------------------------------------------------------------

  private selector(): string {
    return `${RE_LABEL_SOURCE_CLUSTER_ID}=${this.options.localClusterID}`;
  }

  private allKeys(): Set<string> {
    const keys = new Set<string>(this.known.keys());
    keys.add(CLUSTER_INFO_KEY);
    for (const se of this.options.sources.serviceExports()) {
      const ns = se.metadata?.namespace;
      const name = se.metadata?.name;
      if (ns && name) keys.add(serviceKey(ns, name));
    }
    return keys;
  }

  private periodicSync(): void {
    if (!this.canWork() || this.syncing !== undefined) return;
    void this.fullSync();
  }

  /** Waits for reconciles in flight, rebuilds the index from a labelled list (retrying), requeues every key. */
  private fullSync(): Promise<void> {
    this.syncSeq += 1;
    const seq = this.syncSeq;
    this.ready = false;
    const signal = this.link.activeSignal;
    const run = (async () => {
      await this.writersDrained();
      const listed = await retryUntilDone(async () => {
        const api = this.link.api;
        if (!api) return;
        const list = await api.listResourceExports(this.selector());
        if (this.current(seq)) this.known.rebuild(list.items);
      }, {
        backoff: { baseMs: 500, maxMs: 30_000 },
        proceed: () => this.current(seq) && this.link.api !== undefined,
        signal,
        failed: (err, retryInMs) => {
          this.options.logger.warn('listing our resource exports on the leader failed; will retry', { error: describeError(err), retryInMs: Math.round(retryInMs) });
        },
      });
      if (!listed) return;
      this.ready = true;
      this.options.logger.info('exports synced with the leader', { resourceExports: this.known.size });
      this.enqueueAll();
    })().catch((err: unknown) => {
      this.options.logger.warn('export sync failed', { error: describeError(err) });
    }).finally(() => {
      if (this.syncing === run) this.syncing = undefined;
    });
    this.syncing = run;
    return run;
  }

  /** Still the sync to run: not superseded, paused or stopped. A method, so checks after an await are not narrowed away. */
  private current(seq: number): boolean {
    return seq === this.syncSeq && this.link.active;
  }

  // -------------------------------------------------------------------------------------
  // Reconcile
  // -------------------------------------------------------------------------------------

  private canWork(): boolean {
    return this.link.active && this.ready && this.link.api !== undefined;
  }

  private async reconcile(key: string): Promise<WorkResult> {
    // Paused or not synced yet: nothing is lost, the full sync requeues every key.
    if (!this.canWork()) return undefined;
    const generation = this.link.generation;
    this.writers += 1;
    try {
      if (key === CLUSTER_INFO_KEY) return await this.reconcileClusterInfo(generation);
      const ref = parseServiceKey(key);
      if (!ref) return undefined;
      return await this.reconcileService(key, ref.namespace, ref.name, generation);
    } catch (err) {
      if (err instanceof PausedError) return undefined;
      throw err;
    } finally {
      this.leaveWriters();
    }
  }

  private async reconcileClusterInfo(generation: number): Promise<WorkResult> {
    if (!this.options.sources.synced('clusterinfo')) return undefined;
    const result = await this.writer.apply(CLUSTER_INFO_KEY, desiredClusterInfo(this.options), generation);
    if (result.conflict !== undefined) {
      this.options.logger.warn('cannot export ClusterInfo', { detail: result.conflict });
      return { requeueAfterMs: NAME_CONFLICT_RECHECK_MS };
    }
    return undefined;
  }

  private async reconcileService(key: string, namespace: string, name: string, generation: number): Promise<WorkResult> {
    if (!this.options.sources.synced('service')) return undefined;
    const { serviceExport, desired, valid, refused, source } = desiredService(this.options, namespace, name);
    const result = await this.writer.apply(key, desired, generation);
    let verdict: Verdict;
    let requeue: WorkResult = undefined;
    if (result.conflict !== undefined) {
      verdict = { kind: 'failed', reason: EXPORT_REASON.NameConflict, message: result.conflict };
      requeue = { requeueAfterMs: NAME_CONFLICT_RECHECK_MS };
    } else if (desired.length === 0) {
      verdict = { kind: 'ok' };
    } else {
      // The watch brings the leader's verdict when it judges what we wrote: no polling.
      verdict = verdictOn(desired, this.known.entriesOf(key), this.options.leaderNamespace);
    }
    this.statusWriter.report(this.clusterSet, key, serviceExport && valid ? { valid, refused, verdict, source } : undefined);
    return requeue;
  }

  // -------------------------------------------------------------------------------------
  // What the watch of our exports brings
  // -------------------------------------------------------------------------------------

  /**
   * One of our REs changed on the leader: deleted or edited by someone else, or judged by the
   * leader. Our own writes come back with the version we already hold and change nothing.
   */
  private leaderChanged(re: ResourceExport, deleted: boolean): void {
    if (!this.canWork()) return;
    const observed = this.known.observe(re, deleted);
    if (!observed) return;
    if (observed.dropped) this.options.logger.info('one of our exports is being deleted on the leader; it is published again', { resourceExport: re.metadata?.name ?? '' });
    this.queue.add(observed.key);
  }

  // -------------------------------------------------------------------------------------
  // Reconciles in flight
  // -------------------------------------------------------------------------------------

  private writersDrained(): Promise<void> {
    if (this.writers === 0) return Promise.resolve();
    return new Promise((resolve) => { this.drainWaiters.push(resolve); });
  }

  private leaveWriters(): void {
    this.writers -= 1;
    if (this.writers === 0) this.releaseDrainWaiters();
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
