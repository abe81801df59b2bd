// Publishes this member's ServiceExports and Gateway to one leader as ResourceExports, for one
// ClusterSet (antrea-wire.md 2.10, 3.5, 3.6).
//
// - Driven by trust, like the importer: resume(api) while the leader is connected and trusted,
//   pause(why) the moment it is not. A paused exporter writes nothing to the leader (reconciles
//   in flight check a generation before each write; queued ones do nothing); resuming runs one
//   full sync.
// - Level-based, per export: a source event only queues its key (`svc/<ns>/<name>` or
//   `clusterinfo`); the handler computes the plan from the local caches, compares it with what
//   we know the leader has (an index of our REs by name, rebuilt from a list labelled
//   `sourceClusterID=<localID>` at every full sync) and writes only the differences. An
//   unchanged RE is never rewritten, also after a restart.
// - Full sync (resume, and periodically): the index is rebuilt from that list, then every key
//   is reconciled, those of the listed REs included: an RE whose source is gone or no longer
//   allowed (a leftover of an earlier run) is deleted, unchanged ones are left alone. Nothing is
//   reconciled before the local caches a key reads from have synced, so an empty cache never
//   withdraws every export.
// - The ServiceExport `Valid` condition says what Antrea's member says, or why the export policy
//   refuses the namespace (with a Warning Event); `Conflict` mirrors the leader's verdict in the
//   REs' status (e.g. ports that differ from another member's), brought by the watch of our REs
//   when the leader judges what we wrote. A status is a verdict only on the version of the RE it
//   sits on (the leader writes it with that version's resourceVersion), so it counts only when
//   that version has the spec we export now and is not our own write (which keeps the previous
//   spec's status).
import {
  RE_LABEL_SOURCE_CLUSTER_ID, RE_LABEL_SOURCE_KIND, RE_LABEL_SOURCE_NAME, RE_LABEL_SOURCE_NAMESPACE, RESOURCE_EXPORT_KIND,
  SERVICE_EXPORT_CONDITION_VALID, type Condition, type Gateway, type ResourceExport, type ServiceExport,
} from '../common/api/types.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import type { ExportPolicyConfig } from '../common/config/config.js';
import type { EventRecorder } from '../common/events/recorder.js';
import { describeError, isAlreadyExists, isConflict, isNotFound } from '../common/kube/errors.js';
import { WorkQueue, type WorkResult } from '../common/runtime/workqueue.js';
import { InformerStoppedError, ResilientInformer } from '../common/kube/informer.js';
import { clusterInfoExport } from './clusterinfo-export.js';
import { exportAllowed } from './export-policy.js';
import { exportConflict, mergeForUpdate, sameExport, serviceExportPlan, type EndpointSliceLike, type ServiceLike } from './service-export.js';
import { EXPORT_REASON, ExportStatusWriter, type ServiceExportStatusWriter, type Verdict, type WantedCondition } from './status-writer.js';
import { LinkLifecycle, PausedError, retryUntilDone, type LeaderLink } from '../commonarea/leaderlink/lifecycle.js';

/** Queue key of the ClusterInfo export. */
export const CLUSTER_INFO_KEY = 'clusterinfo';
export { EXPORT_REASON, SERVICE_EXPORT_CONDITION_CONFLICT, type ServiceExportStatusWriter } from './status-writer.js';

/** Queue key of a ServiceExport (and its Service): `svc/<ns>/<name>`. */
export function serviceKey(namespace: string, name: string): string {
  return `svc/${namespace}/${name}`;
}

function parseServiceKey(key: string): { namespace: string; name: string } | undefined {
  const parts = key.split('/');
  if (parts.length !== 3 || parts[0] !== 'svc' || !parts[1] || !parts[2]) return undefined;
  return { namespace: parts[1], name: parts[2] };
}

/** The key of the export a listed RE belongs to; undefined for kinds this exporter does not manage. */
function keyOfExport(re: ResourceExport): string | undefined {
  const labels = re.metadata?.labels ?? {};
  const kind = labels[RE_LABEL_SOURCE_KIND] ?? re.spec?.kind;
  if (kind === RESOURCE_EXPORT_KIND.ClusterInfo) return CLUSTER_INFO_KEY;
  if (kind !== RESOURCE_EXPORT_KIND.Service && kind !== RESOURCE_EXPORT_KIND.Endpoints) return undefined;
  const namespace = labels[RE_LABEL_SOURCE_NAMESPACE] ?? re.spec?.namespace ?? '';
  const name = labels[RE_LABEL_SOURCE_NAME] ?? re.spec?.name ?? '';
  return namespace === '' || name === '' ? undefined : serviceKey(namespace, name);
}

function isTerminating(obj: { metadata?: { deletionTimestamp?: unknown } }): boolean {
  return obj.metadata?.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
}

function nameOf(re: ResourceExport): string {
  return re.metadata?.name ?? '';
}

/** What the exporter reads: the member's caches. All lookups are synchronous. */
export interface ExportSources {
  /**
   * Whether the caches an export kind reads from have synced. Nothing of that kind is
   * reconciled before: an empty cache would withdraw every export.
   */
  synced(kind: 'service' | 'clusterinfo'): boolean;
  serviceExport(namespace: string, name: string): ServiceExport | undefined;
  serviceExports(): readonly ServiceExport[];
  service(namespace: string, name: string): ServiceLike | undefined;
  /** EndpointSlices labelled `kubernetes.io/service-name=<name>` in `namespace`. */
  endpointSlices(namespace: string, name: string): readonly EndpointSliceLike[];
  /** Gateways of the agent namespace. */
  gateways(): readonly Gateway[];
}

export interface ExporterLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export type ExportOutcome = 'created' | 'updated' | 'deleted' | 'conflict';

export interface ExporterOptions {
  readonly localClusterID: string;
  readonly leaderNamespace: string;
  /** The agent's namespace: where Gateways live, `spec.namespace` of the ClusterInfo RE. */
  readonly agentNamespace: string;
  readonly policy: ExportPolicyConfig;
  readonly sources: ExportSources;
  /**
   * Where the judgement of each ServiceExport goes: the agent's one status writer, shared by
   * every ClusterSet (ExportManager), or else `writeStatus` through a writer of its own.
   */
  readonly status?: { readonly writer: ExportStatusWriter; readonly clusterSet: string };
  readonly writeStatus?: ServiceExportStatusWriter;
  readonly events: EventRecorder;
  readonly logger: ExporterLogger;
  /** The cluster's Service CIDR (its ServiceCIDR objects), used when neither `policy.serviceCIDR` nor a Gateway gives one. */
  readonly serviceCIDR?: () => string | undefined;
  readonly onOutcome?: (kind: string, outcome: ExportOutcome) => void;
  /** @default 4 */
  readonly concurrency?: number;
  /** Period of the full sync while active (re-lists our REs: repairs edits and reads verdicts). @default 600_000 */
  readonly resyncMs?: number;
  /** Backoff of failed reconciles. @default { baseMs: 500, maxMs: 60_000 } */
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  readonly now?: () => Date;
}

interface Known {
  readonly key: string;
  live: ResourceExport;
  /**
   * The resourceVersion our own last create or replace returned: while `live` is still that
   * version, its status is what the leader said about the spec before (or nothing), not a
   * verdict on what we wrote.
   */
  readonly writtenVersion?: string | undefined;
  /** A write failed: `live` may be outdated, re-read it before using it. */
  stale?: boolean;
}

const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
/** Delay before a name taken by another export is looked at again. */
const NAME_CONFLICT_RECHECK_MS = 60_000;

/** The leader's verdict on the REs of one export: Antrea writes `Failure`/`False` (or `Succeeded`/`True`). */
function verdictOf(res: readonly ResourceExport[], leaderNamespace: string): Verdict {
  let judged = false;
  for (const re of res) {
    const conditions: readonly Condition[] = re.status?.conditions ?? [];
    if (conditions.length > 0) judged = true;
    const failed = conditions.find((c) => c.type === 'Failure' || (c.type === 'Succeeded' && c.status === 'False'));
    if (failed) {
      const reason = failed.reason !== undefined && CONDITION_REASON.test(failed.reason) ? failed.reason : EXPORT_REASON.LeaderRejected;
      const detail = failed.message !== undefined && failed.message !== '' ? failed.message : (failed.reason ?? 'no reason given');
      return { kind: 'failed', reason, message: `the leader rejected ResourceExport ${leaderNamespace}/${nameOf(re)}: ${detail}` };
    }
  }
  return judged ? { kind: 'ok' } : { kind: 'unknown' };
}

/**
 * The leader's verdict on `desired` (the REs of one export as they should be now), from what we
 * know of those REs on the leader: `live`, and `writtenVersion`, the resourceVersion of our own
 * last write of it. Unknown while the leader has not judged them. The RE status carries no
 * generation (antrea-wire.md: conditions only), but the leader writes it over the version it
 * judged (a status update with that resourceVersion), so a status is a verdict on the spec of
 * the version it sits on. It counts only when that spec is `desired`'s and the version is not
 * our own write (which keeps the status the leader wrote about the spec before). A refusal of
 * any RE stands; an acceptance only once the leader judged all of them. Pure.
 */
export function verdictOn(
  desired: readonly ResourceExport[],
  known: readonly { readonly live: ResourceExport; readonly writtenVersion?: string | undefined }[],
  leaderNamespace: string,
): Verdict {
  const wanted = new Map(desired.map((re) => [nameOf(re), re]));
  const judgedSomething = (live: ResourceExport) => (live.status?.conditions?.length ?? 0) > 0;
  const pending = (e: (typeof known)[number]): boolean => {
    if (!judgedSomething(e.live)) return false;
    const want = wanted.get(nameOf(e.live));
    // Judged another spec (an older one, or someone's edit the reconcile repairs): not about `desired`.
    if (want !== undefined && !sameExport(want, e.live)) return true;
    // Still the answer to our own write, with the status of the spec before it.
    return e.writtenVersion !== undefined && e.writtenVersion === e.live.metadata?.resourceVersion;
  };
  const judged = verdictOf(known.filter((e) => !pending(e)).map((e) => e.live), leaderNamespace);
  if (judged.kind === 'failed' || !known.some(pending)) return judged;
  return { kind: 'unknown' };
}

/**
 * Whether resourceVersion `a` is older than `b`. Kubernetes calls them opaque, but
 * kube-apiserver's are etcd revisions, one counter for every object of the cluster; anything
 * else is never called older (the event is then taken, as before).
 */
export function olderVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || !/^[0-9]{1,30}$/.test(a) || !/^[0-9]{1,30}$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

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
  private writers = 0;
  private drainWaiters: (() => void)[] = [];
  private readonly resyncTimer: ReturnType<typeof setInterval>;
  /** Our REs on the leader, watched (by their sourceClusterID label) while active. */
  private watcher: ResilientInformer<ResourceExport> | undefined;
  private watcherApi: LeaderApi | undefined;

  /** Our REs on the leader as last seen, by name. */
  private readonly known = new Map<string, Known>();
  private readonly byKey = new Map<string, Set<string>>();
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
    this.startWatcher(api);
    if (change !== 'started' && change !== 'resumed') return;
    if (change === 'resumed') this.options.logger.info('exports resumed');
    this.ready = false;
    void this.fullSync();
  }

  /** Trust or leader lost: nothing more is written to the leader until the next resume. */
  pause(why: string): void {
    const left = this.link.pause(why);
    if (left === undefined) return;
    this.ready = false;
    this.stopWatcher();
    if (left === 'active') this.options.logger.warn('exports paused: nothing is written to the leader', { why });
  }

  /** Stops; what was exported stays on the leader (a restart is not a leave). */
  async stop(): Promise<void> {
    if (this.link.stop()) {
      this.ready = false;
      clearInterval(this.resyncTimer);
      this.releaseDrainWaiters();
      this.stopWatcher();
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
    let exports: ResourceExport[];
    try {
      exports = (await api.listResourceExports(this.selector())).items;
    } catch (err) {
      this.options.logger.warn('could not list our resource exports on the leader to delete them (the leader removes them with our announce)', { error: describeError(err) });
      return;
    }
    let deleted = 0;
    let failed = 0;
    for (const re of exports) {
      if (isTerminating(re)) continue;
      try {
        await api.deleteResourceExport(nameOf(re), re.metadata?.uid);
        deleted += 1;
      } catch (err) {
        if (isNotFound(err)) continue;
        failed += 1;
        this.options.logger.warn('could not delete a resource export on the leader (the leader removes it with our announce)', { resourceExport: nameOf(re), error: describeError(err) });
      }
    }
    this.known.clear();
    this.byKey.clear();
    this.options.logger.info('withdrew exports from the leader', { deleted, failed });
  }

  /** A ServiceExport, its Service or one of its EndpointSlices changed. */
  serviceChanged(namespace: string, name: string): void {
    const key = serviceKey(namespace, name);
    // Only what is exported, or was: EndpointSlice churn of other Services costs nothing.
    if (this.options.sources.serviceExport(namespace, name) !== undefined || this.byKey.has(key) || this.statusWriter.judges(this.clusterSet, key)) this.queue.add(key);
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
    const keys = new Set<string>(this.byKey.keys());
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
        if (this.current(seq)) this.rebuildIndex(list.items);
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

  private rebuildIndex(items: readonly ResourceExport[]): void {
    this.known.clear();
    this.byKey.clear();
    for (const re of items) {
      // Only ours: the label selector says so, the spec must agree.
      if (re.spec?.clusterID !== undefined && re.spec.clusterID !== this.options.localClusterID) continue;
      const key = keyOfExport(re);
      if (key === undefined || isTerminating(re)) continue;
      this.setKnown(nameOf(re), key, re);
    }
  }

  // -------------------------------------------------------------------------------------
  // Reconcile
  // -------------------------------------------------------------------------------------

  private canWork(): boolean {
    return this.link.active && this.ready && this.link.api !== undefined;
  }

  private checkWritable(generation: number): LeaderApi {
    return this.link.writable(generation, 'exports');
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
    const { policy } = this.options;
    const gateways = this.options.sources.gateways();
    // Configured, else the Gateway's (what Antrea publishes), else the cluster's ServiceCIDR.
    const gatewayHasCIDR = gateways.some((gw) => gw.serviceCIDR !== undefined && gw.serviceCIDR !== '');
    const desired = policy.enabled
      ? clusterInfoExport({
        localClusterID: this.options.localClusterID,
        leaderNamespace: this.options.leaderNamespace,
        agentNamespace: this.options.agentNamespace,
        gateways,
        serviceCIDR: policy.serviceCIDR ?? (gatewayHasCIDR ? undefined : this.options.serviceCIDR?.()),
        podCIDRs: policy.podCIDRs,
      })
      : undefined;
    const result = await this.applyKey(CLUSTER_INFO_KEY, desired ? [desired] : [], generation);
    if (result.conflict !== undefined) {
      this.options.logger.warn('cannot export ClusterInfo', { detail: result.conflict });
      return { requeueAfterMs: NAME_CONFLICT_RECHECK_MS };
    }
    return undefined;
  }

  private async reconcileService(key: string, namespace: string, name: string, generation: number): Promise<WorkResult> {
    const { sources, policy } = this.options;
    if (!sources.synced('service')) return undefined;
    const found = sources.serviceExport(namespace, name);
    const serviceExport = found && !isTerminating(found) ? found : undefined;
    let desired: ResourceExport[] = [];
    let valid: WantedCondition | undefined;
    let refused = false;
    if (serviceExport) {
      const refusal = exportAllowed(namespace, { ...policy, agentNamespace: this.options.agentNamespace });
      if (refusal) {
        valid = { type: SERVICE_EXPORT_CONDITION_VALID, status: 'False', reason: refusal.reason, message: refusal.message };
        refused = true;
      } else {
        const plan = serviceExportPlan({
          localClusterID: this.options.localClusterID,
          leaderNamespace: this.options.leaderNamespace,
          serviceExport,
          service: sources.service(namespace, name),
          endpointSlices: sources.endpointSlices(namespace, name),
          endpointIPType: policy.endpointIPType,
        });
        desired = plan.exports;
        valid = { type: SERVICE_EXPORT_CONDITION_VALID, ...plan.valid };
      }
    }

    const result = await this.applyKey(key, desired, generation);
    let verdict: Verdict;
    let requeue: WorkResult = undefined;
    if (result.conflict !== undefined) {
      verdict = { kind: 'failed', reason: EXPORT_REASON.NameConflict, message: result.conflict };
      requeue = { requeueAfterMs: NAME_CONFLICT_RECHECK_MS };
    } else if (desired.length === 0) {
      verdict = { kind: 'ok' };
    } else {
      // The watch brings the leader's verdict when it judges what we wrote: no polling.
      verdict = this.verdictOfKey(key, desired);
    }

    this.statusWriter.report(this.clusterSet, key, serviceExport && valid ? { valid, refused, verdict } : undefined);
    return requeue;
  }

  // -------------------------------------------------------------------------------------
  // Writes to the leader
  // -------------------------------------------------------------------------------------

  /** Brings the leader's REs of `key` to `desired`: creates, replaces, deletes only differences. */
  private async applyKey(key: string, desired: readonly ResourceExport[], generation: number): Promise<{ wrote: boolean; conflict?: string }> {
    let wrote = false;
    const wanted = new Set(desired.map(nameOf));
    for (const re of desired) {
      const result = await this.applyOne(key, re, generation);
      if (typeof result === 'object') {
        this.options.onOutcome?.(re.spec?.kind ?? '', 'conflict');
        return { wrote, conflict: result.conflict };
      }
      if (result !== 'unchanged') {
        wrote = true;
        this.options.onOutcome?.(re.spec?.kind ?? '', result);
      }
    }
    for (const name of [...(this.byKey.get(key) ?? [])]) {
      if (wanted.has(name)) continue;
      if (await this.removeOne(name, generation)) wrote = true;
    }
    return { wrote };
  }

  private async applyOne(key: string, desired: ResourceExport, generation: number): Promise<'created' | 'updated' | 'unchanged' | { conflict: string }> {
    const name = nameOf(desired);
    let entry = this.known.get(name);
    if (entry?.stale) entry = await this.reread(name, key);
    let live = entry?.live;
    if (!live) {
      const api = this.checkWritable(generation);
      try {
        const created = await api.createResourceExport(desired);
        this.setKnown(name, key, created, true);
        this.options.logger.info('exported', { resourceExport: name, kind: desired.spec?.kind });
        return 'created';
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await this.getLive(name);
        // Gone again meanwhile: the retry creates it.
        if (!existing) throw err;
        const conflict = exportConflict(desired, existing);
        if (conflict !== undefined) return { conflict };
        if (isTerminating(existing)) {
          throw new Error(`ResourceExport ${this.options.leaderNamespace}/${name} is still being deleted on the leader; it is created again once it is gone`, { cause: err });
        }
        this.setKnown(name, key, existing);
        live = existing;
      }
    }
    if (sameExport(desired, live)) return 'unchanged';
    const conflict = exportConflict(desired, live);
    if (conflict !== undefined) return { conflict };
    const api = this.checkWritable(generation);
    try {
      const updated = await api.replaceResourceExport(mergeForUpdate(desired, live));
      this.setKnown(name, key, updated, true);
      this.options.logger.info('export updated', { resourceExport: name, kind: desired.spec?.kind });
      return 'updated';
    } catch (err) {
      // Our copy was stale (409) or the RE vanished (404): the retry re-reads it.
      const known = this.known.get(name);
      if (known) known.stale = true;
      throw err;
    }
  }

  /** Deletes one of our REs (with a uid precondition); true when a delete was sent. */
  private async removeOne(name: string, generation: number): Promise<boolean> {
    let entry = this.known.get(name);
    if (entry?.stale) entry = await this.reread(name, entry.key);
    if (!entry) return false;
    if (isTerminating(entry.live)) {
      this.dropKnown(name);
      return false;
    }
    const api = this.checkWritable(generation);
    try {
      await api.deleteResourceExport(name, entry.live.metadata?.uid);
    } catch (err) {
      if (isNotFound(err)) {
        this.dropKnown(name);
        return false;
      }
      // A failed uid precondition: another object holds the name now; re-read it first.
      if (isConflict(err)) entry.stale = true;
      throw err;
    }
    this.dropKnown(name);
    this.options.logger.info('export withdrawn', { resourceExport: name, kind: entry.live.spec?.kind });
    this.options.onOutcome?.(entry.live.spec?.kind ?? '', 'deleted');
    return true;
  }

  /** The live RE read again and indexed; undefined (and forgotten) when gone or not ours. */
  private async reread(name: string, key: string): Promise<Known | undefined> {
    const live = await this.getLive(name);
    if (!live || (live.spec?.clusterID !== undefined && live.spec.clusterID !== this.options.localClusterID)) {
      this.dropKnown(name);
      return undefined;
    }
    return this.setKnown(name, key, live);
  }

  private async getLive(name: string): Promise<ResourceExport | undefined> {
    const api = this.link.api;
    if (!api) throw new PausedError('exports were paused');
    try {
      return await api.getResourceExport(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  // -------------------------------------------------------------------------------------
  // Index and bookkeeping
  // -------------------------------------------------------------------------------------

  /** `written`: `live` is the answer to our own write (see {@link Known.writtenVersion}). */
  private setKnown(name: string, key: string, live: ResourceExport, written = false): Known {
    const previous = this.known.get(name);
    if (previous && previous.key !== key) this.unindex(name, previous.key);
    const writtenVersion = written ? live.metadata?.resourceVersion : previous?.key === key ? previous.writtenVersion : undefined;
    const entry: Known = { key, live, ...(writtenVersion !== undefined && { writtenVersion }) };
    this.known.set(name, entry);
    let names = this.byKey.get(key);
    if (!names) {
      names = new Set();
      this.byKey.set(key, names);
    }
    names.add(name);
    return entry;
  }

  private dropKnown(name: string): void {
    const entry = this.known.get(name);
    if (!entry) return;
    this.known.delete(name);
    this.unindex(name, entry.key);
  }

  private unindex(name: string, key: string): void {
    const names = this.byKey.get(key);
    if (!names) return;
    names.delete(name);
    if (names.size === 0) this.byKey.delete(key);
  }

  /** The leader's verdict on `desired`, the REs of `key` as they should be now (see {@link verdictOn}). */
  private verdictOfKey(key: string, desired: readonly ResourceExport[]): Verdict {
    const entries = [...(this.byKey.get(key) ?? [])].map((name) => this.known.get(name)).filter((e) => e !== undefined);
    return verdictOn(desired, entries, this.options.leaderNamespace);
  }

  // -------------------------------------------------------------------------------------
  // The watch of our exports on the leader
  // -------------------------------------------------------------------------------------

  /** Watches our REs through `api` (a no-op when already watching through it). */
  private startWatcher(api: LeaderApi): void {
    const source = api.exportsWatch;
    if (this.watcherApi === api) return;
    this.stopWatcher();
    const informer = new ResilientInformer<ResourceExport>({
      name: `resourceexports@${this.options.leaderNamespace}`,
      path: source.path,
      labelSelector: this.selector(),
      list: () => api.listResourceExports(this.selector()),
      watch: source.watch,
      logger: this.options.logger,
    });
    informer.on('add', (re) => { this.leaderChanged(re, false); });
    informer.on('update', (re) => { this.leaderChanged(re, false); });
    informer.on('delete', (re) => { this.leaderChanged(re, true); });
    informer.start().catch((err: unknown) => {
      if (!(err instanceof InformerStoppedError)) this.options.logger.warn('resource export watcher did not start', { error: describeError(err) });
    });
    this.watcher = informer;
    this.watcherApi = api;
  }

  private stopWatcher(): void {
    const informer = this.watcher;
    this.watcher = undefined;
    this.watcherApi = undefined;
    informer?.stop().catch(() => undefined);
  }

  /**
   * One of our REs changed on the leader: deleted or edited by someone else, or judged by the
   * leader. Our own writes come back with the version we already hold and change nothing.
   */
  private leaderChanged(re: ResourceExport, deleted: boolean): void {
    if (!this.canWork()) return;
    if (re.spec?.clusterID !== undefined && re.spec.clusterID !== this.options.localClusterID) return;
    const name = nameOf(re);
    const entry = this.known.get(name);
    const key = entry?.key ?? keyOfExport(re);
    if (key === undefined) return;
    if (deleted || isTerminating(re)) {
      if (entry) {
        this.dropKnown(name);
        this.options.logger.info('one of our exports is being deleted on the leader; it is published again', { resourceExport: name });
      }
    } else if (entry) {
      if (entry.live.metadata?.resourceVersion === re.metadata?.resourceVersion) return;
      // The watch lags behind the answers to our own writes and reads: an event can bring a
      // version older than the one we hold (e.g. the leader's verdict on the spec before our
      // replace). Taking it would show that verdict as current and PUT over a stale version.
      // (A leader restored from an etcd backup, whose revisions went back, is caught by the
      // next full sync, which rebuilds the index from a list.)
      if (olderVersion(re.metadata?.resourceVersion, entry.live.metadata?.resourceVersion)) return;
      this.setKnown(name, key, re);
    }
    // Unknown ones too: a leftover is withdrawn, one of ours adopted, by the reconcile.
    this.queue.add(key);
  }

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
