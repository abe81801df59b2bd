// Reconciles ClusterSets in the agent's namespace into one RemoteCommonArea per leader.
// A ClusterSet may list several leaders: each gets its own area (credentials, heartbeat,
// conditions, importer, exporter), so one leader's trouble never pauses another's.
//
// Level-based: events only enqueue a ClusterSet name; the reconcile reads the current
// ClusterSet and Secret from the informer caches and converges. A Secret change enqueues
// the ClusterSets that use it, which is how a rotated token takes effect without restart.
// A finalizer makes deletion a real leave: the announce is deleted on the leader before
// the ClusterSet goes away, even if the agent was down when it was deleted.
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { createJsonClient } from '../common/kube/json-client.js';
import { parseTimestamp } from '../common/kube/time.js';
import { CLUSTERSET, type ClusterSet, type ClusterSetList } from '../common/api/antrea.js';
import { credentialsFromSecret } from '../commonarea/credentials.js';
import type { AreaEvent } from '../commonarea/area-events.js';
import { createLeaderApi, type LeaderApi } from '../commonarea/leader-api.js';
import { type BudgetSettings, ClientBudget } from '../common/kube/client-budget.js';
import { RemoteCommonArea, type AreaLogger, type LeaderLink, type LeaderStatus } from '../commonarea/remote-common-area.js';
import { failure, FailureReason } from '../conditions/reasons.js';
import { ResilientInformer, stripManagedFields } from '../common/kube/informer.js';
import { describeError, httpStatus, isConflict } from '../common/kube/errors.js';
import { WorkQueue } from '../common/runtime/workqueue.js';
import { computeStatus, EXTENSION_FIELD_PATHS, prunedStatusFields, type ComputedStatus, type ExtensionField, type ImportsSynced } from '../conditions/status/compute.js';
import { StatusWriter } from '../conditions/status/writer.js';
import type { EventRecorder, EventTarget } from '../common/events/recorder.js';
import { heldBy, type MembershipClaim } from './membership.js';
import { leaderTarget, sameLeader, type LeaderTarget } from './spec.js';
import { kubeApis, type CustomApi } from '../common/kube/typed-api.js';
import { paged } from '../common/kube/paginate.js';

/** Finalizer that holds a deleted ClusterSet until its announce is gone from the leader. */
export const LEAVE_FINALIZER = 'clusterset-agent.multicluster.x-k8s.io/leave-leader';

const RECONCILE_CONCURRENCY = 16;

export interface ControllerLogger extends AreaLogger {
  error(message: string, meta?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): ControllerLogger;
}

/** Creates and forgets the importer or exporter of each ClusterSet leader; the area drives it. */
export interface LinkFactory {
  create(clusterSet: string, target: LeaderTarget): LeaderLink;
  release(clusterSet: string, leaderClusterID: string): void;
  /** The ClusterSet's leaders now, in spec.leaders order (several leaders share its imports). */
  setLeaders?(clusterSet: string, leaderClusterIDs: readonly string[]): void;
}

/** The importers also count what they imported, for the ClusterSet status. */
export interface ImporterFactory extends LinkFactory {
  counts(clusterSet: string): ComputedStatus['imports'];
  /** The import watcher's health, for the ImportsSynced condition. */
  importsSynced?(clusterSet: string): ImportsSynced | undefined;
}

export interface ClusterSetControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  /** The heartbeat schedule, or one per member cluster ID (to spread members over the interval). */
  readonly heartbeatCron: string | ((clusterID: string) => string);
  readonly heartbeatIntervalMs: number;
  readonly failureThreshold: number;
  readonly requestTimeoutMs: number;
  readonly statusMinIntervalMs: number;
  /** How long a deleted ClusterSet waits for the leader to accept the leave before giving up. */
  readonly leaveTimeoutMs?: number;
  readonly logger: ControllerLogger;
  readonly importers?: ImporterFactory;
  readonly exporters?: LinkFactory;
  /** Every event of every area, e.g. for metrics. */
  readonly onAreaEvent?: (clusterSet: string, target: LeaderTarget, event: AreaEvent) => void;
  /** A ClusterSet is gone for good (left, or its leader changed). */
  readonly onClusterSetGone?: (clusterSet: string) => void;
  /** The leader token a ClusterSet's Secret holds now expires at `expiresAtMs` (undefined: unknown or no token). */
  readonly onTokenExpiry?: (clusterSet: string, leaderClusterID: string, expiresAtMs: number | undefined) => void;
  readonly events?: EventRecorder;
  readonly createApi?: (credentials: Parameters<typeof createLeaderApi>[0], namespace: string) => LeaderApi;
  /** The client budget of each leader API client (apiClient.leaderQPS/leaderBurst). @default no limit */
  readonly leaderBudget?: BudgetSettings;
  /** This member cluster's identity, stamped on every announce (see announce/cluster-identity.ts). */
  readonly clusterUid?: () => Promise<string | undefined>;
}

interface ManagedArea {
  readonly target: LeaderTarget;
  readonly area: RemoteCommonArea;
}

export class ClusterSetController {
  private readonly clusterSets: ResilientInformer<ClusterSet>;
  private readonly secrets: ResilientInformer<V1Secret>;
  private readonly queue: WorkQueue;
  private readonly status: StatusWriter<ClusterSet>;
  /** Per ClusterSet, its areas by leader cluster ID, in spec.leaders order. */
  private readonly areas = new Map<string, Map<string, ManagedArea>>();
  private readonly specProblems = new Map<string, { reason: string; message: string }>();
  /** Per ClusterSet and leader removed from its spec.leaders: until when its leave is retried. */
  private readonly leavingSince = new Map<string, number>();
  /** Our status fields the installed ClusterSet CRD prunes (Antrea's own CRD): no longer written. */
  private readonly prunedFields = new Set<ExtensionField>();
  private readonly objects: CustomApi;
  private readonly log: ControllerLogger;
  private readonly ref: { group: string; version: string; plural: string; namespace: string };

  constructor(private readonly options: ClusterSetControllerOptions) {
    const kc = options.kubeConfig;
    this.log = options.logger.child({ component: 'clusterset-controller', namespace: options.namespace });
    const watch = createJsonClient(kc, { who: 'member' });
    const { core, custom } = kubeApis(watch);
    this.objects = custom;
    const ns = options.namespace;
    this.ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: ns };
    this.clusterSets = new ResilientInformer<ClusterSet>({
      name: 'clustersets',
      path: `/apis/${CLUSTERSET.group}/${CLUSTERSET.version}/namespaces/${ns}/${CLUSTERSET.plural}`,
      list: paged(async (page) => (await this.objects.listNamespacedCustomObject({ ...this.ref, ...page })) as ClusterSetList),
      watch,
      logger: this.log,
    });
    this.secrets = new ResilientInformer<V1Secret>({
      name: 'secrets',
      path: `/api/v1/namespaces/${ns}/secrets`,
      list: paged((page) => core.listNamespacedSecret({ namespace: ns, ...page })),
      watch,
      logger: this.log,
      // Not compactForCache: the shared string pool outlives the objects, and no value of a
      // Secret should outlive the Secret.
      transform: stripManagedFields,
    });
    this.queue = new WorkQueue({
      // Distinct ClusterSets in parallel: a leave that waits on a dead leader delays no other.
      concurrency: RECONCILE_CONCURRENCY,
      backoff: { baseMs: 200, maxMs: 60_000 },
      onError: (key, error, retry) => {
        this.log.warn('reconcile failed; will retry', { clusterSet: key, error: describeError(error), retryInMs: Math.round(retry.delayMs), attempts: retry.attempts });
      },
    });
    this.status = new StatusWriter<ClusterSet>({
      minIntervalMs: options.statusMinIntervalMs,
      store: {
        get: (name) => this.clusterSets.get(name, ns),
        replaceStatus: async (object, status) => {
          const stored: unknown = await this.objects.replaceNamespacedCustomObjectStatus({ ...this.ref, name: object.metadata?.name ?? '', body: { ...object, status } });
          this.notePrunedFields(object.metadata?.name ?? '', status, stored);
        },
      },
      desired: (object) => this.desiredStatus(object),
      onError: (name, error) => {
        // A conflict only means the informer cache lagged our own previous write.
        if (isConflict(error)) this.log.debug('status write conflicted; retrying with a fresh copy', { clusterSet: name });
        else this.log.warn('status write failed; will retry', { clusterSet: name, error: describeError(error) });
      },
    });
  }

  async start(): Promise<void> {
    const enqueue = (cs: ClusterSet) => { this.queue.add(cs.metadata?.name ?? ''); };
    // A ClusterSet that appears, changes or goes may decide which of its namesakes holds a membership.
    const enqueueWithNamesakes = (cs: ClusterSet) => {
      enqueue(cs);
      for (const other of this.clusterSets.list()) {
        if (other.spec?.clusterID === cs.spec?.clusterID && other.metadata?.name !== cs.metadata?.name) enqueue(other);
      }
    };
    // Our own status writes come back as updates; only a change outside status is worth a reconcile.
    const seen = new Map<string, string>();
    const significant = (cs: ClusterSet) => JSON.stringify([cs.metadata?.generation, cs.metadata?.deletionTimestamp, cs.metadata?.finalizers, cs.metadata?.labels, cs.metadata?.annotations, cs.spec]);
    this.clusterSets.on('add', (cs) => {
      seen.set(cs.metadata?.name ?? '', significant(cs));
      enqueueWithNamesakes(cs);
    });
    this.clusterSets.on('update', (cs) => {
      const name = cs.metadata?.name ?? '';
      const now = significant(cs);
      if (seen.get(name) === now) return;
      seen.set(name, now);
      enqueueWithNamesakes(cs);
    });
    this.clusterSets.on('delete', (cs) => {
      seen.delete(cs.metadata?.name ?? '');
      enqueueWithNamesakes(cs);
    });
    const secretChanged = (secret: V1Secret) => {
      for (const cs of this.clusterSets.list()) {
        if (cs.spec?.leaders.some((l) => l.secret === secret.metadata?.name)) enqueue(cs);
      }
    };
    this.secrets.on('add', secretChanged);
    this.secrets.on('update', secretChanged);
    this.secrets.on('delete', secretChanged);
    // Secrets first: a ClusterSet reconciled before its Secret is cached would report SecretNotFound.
    await this.secrets.start();
    await this.clusterSets.start();
    this.queue.start((name) => this.reconcile(name));
    for (const cs of this.clusterSets.list()) enqueue(cs);
    this.log.info('clusterset controller started', { clusterSets: this.clusterSets.list().length });
  }

  get synced(): boolean {
    return this.clusterSets.hasSynced && this.secrets.hasSynced;
  }

  /** Stops everything without leaving: the announces stay, so a restart changes nothing on the leader. */
  async stop(): Promise<void> {
    await this.queue.stop();
    await Promise.all([...this.areas.values()].flatMap((byLeader) => [...byLeader.values()]).map(async (m) => {
      await m.area.stop();
      m.area.close();
    }));
    this.areas.clear();
    await this.status.stop();
    await this.clusterSets.stop();
    await this.secrets.stop();
  }

  /** Current status of a ClusterSet's leader (by default its first), for metrics and tests. */
  leaderStatus(clusterSet: string, leaderClusterID?: string): LeaderStatus | undefined {
    return this.areaFor(clusterSet, leaderClusterID)?.getStatus();
  }

  /** Every leader's status, in spec.leaders order. */
  leaderStatuses(clusterSet: string): LeaderStatus[] {
    return [...(this.areas.get(clusterSet)?.values() ?? [])].map((m) => m.area.getStatus());
  }

  areaFor(clusterSet: string, leaderClusterID?: string): RemoteCommonArea | undefined {
    const byLeader = this.areas.get(clusterSet);
    if (leaderClusterID !== undefined) return byLeader?.get(leaderClusterID)?.area;
    return byLeader?.values().next().value?.area;
  }

  /** Asks for a status write (e.g. after import counters changed). */
  requestStatus(clusterSet: string): void {
    this.status.request(clusterSet);
  }

  /** The ClusterSet as the object Events are recorded on. */
  eventTarget(clusterSet: string): EventTarget {
    const uid = this.clusterSets.get(clusterSet, this.options.namespace)?.metadata?.uid;
    return { apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, name: clusterSet, namespace: this.options.namespace, ...(uid ? { uid } : {}) };
  }

  private async reconcile(name: string): Promise<{ requeueAfterMs: number } | undefined> {
    const log = this.log.child({ clusterSet: name });
    const clusterSet = this.clusterSets.get(name, this.options.namespace);
    if (!clusterSet) {
      // Deleted without our finalizer (e.g. removed by hand): leave if we still can.
      await this.removeArea(name, true, log, 0);
      this.status.forget(name);
      this.specProblems.delete(name);
      return undefined;
    }
    if (clusterSet.metadata?.deletionTimestamp) return this.finishDeletion(clusterSet, log);

    const parsed = leaderTarget(clusterSet);
    if (!parsed.ok) {
      if (this.specProblems.get(name)?.message !== parsed.message) log.warn('invalid ClusterSet spec', { detail: parsed.message });
      this.specProblems.set(name, { reason: parsed.reason, message: parsed.message });
      await this.removeArea(name, false, log, 0);
      this.status.request(name);
      return undefined;
    }
    this.specProblems.delete(name);
    const finalizerInPlace = await this.ensureFinalizer(clusterSet);

    const targets = parsed.targets;
    const byLeader = this.areas.get(name) ?? new Map<string, ManagedArea>();
    this.areas.set(name, byLeader);
    // A leader no longer listed is left (its announce and exports deleted) before any other is added.
    for (const [leaderID, managed] of byLeader) {
      if (targets.some((t) => sameLeader(managed.target, t))) continue;
      const replacement = targets.length === 1 && byLeader.size === 1 ? targets[0]?.leaderClusterID : undefined;
      if (replacement !== undefined) log.info('leader changed: leaving the previous leader', { previousLeader: leaderID, leader: replacement });
      else log.info('leader removed from spec.leaders: leaving it', { previousLeader: leaderID });
      // Retried (the queue's backoff) until the leave timeout from the first try, as a deleted
      // ClusterSet's leave is: one failed DELETE of the announce on a busy leader is no reason
      // to leave it there for the leader's 24 h GC.
      const key = `${name}\u0000${leaderID}`;
      const deadline = this.leavingSince.get(key) ?? Date.now() + (this.options.leaveTimeoutMs ?? 60_000);
      this.leavingSince.set(key, deadline);
      await this.removeLeaderArea(name, leaderID, true, log, deadline);
      this.leavingSince.delete(key);
      // One leader replaced by another: the ClusterSet's series go, as before several leaders
      // (the new leader's come back with its first verdict).
      if (replacement !== undefined) this.options.onClusterSetGone?.(name);
    }
    this.options.importers?.setLeaders?.(name, targets.map((t) => t.leaderClusterID));
    this.options.exporters?.setLeaders?.(name, targets.map((t) => t.leaderClusterID));
    // Spec order decides which leader's import wins; the map follows it.
    const ordered = new Map<string, ManagedArea>();
    for (const target of targets) {
      const managed = byLeader.get(target.leaderClusterID) ?? { target, area: this.createArea(clusterSet, target, log) };
      ordered.set(target.leaderClusterID, managed);
    }
    this.areas.set(name, ordered);
    const others = this.otherClaims(name);
    for (const { target, area } of ordered.values()) {
      const holder = heldBy(this.claimOf(clusterSet, target), others);
      area.setCredentials(holder ? { ok: false, failure: duplicate(target, holder) } : this.credentialsFor(target));
      void area.start();
    }
    this.status.request(name);
    // Our cached copy was older than the server's; the update event brings the new one.
    return finalizerInPlace ? undefined : { requeueAfterMs: 200 };
  }

  private claimOf(clusterSet: ClusterSet, target: LeaderTarget): MembershipClaim {
    return { name: target.clusterSetID, createdAt: clusterSet.metadata?.creationTimestamp as string | undefined, target };
  }

  /** Memberships other ClusterSets claim (one per leader they list): valid and not being deleted. */
  private otherClaims(name: string): MembershipClaim[] {
    const claims: MembershipClaim[] = [];
    for (const other of this.clusterSets.list(this.options.namespace)) {
      if (other.metadata?.name === name || other.metadata?.deletionTimestamp) continue;
      const parsed = leaderTarget(other);
      if (parsed.ok) for (const target of parsed.targets) claims.push(this.claimOf(other, target));
    }
    return claims;
  }

  /** The leader credentials the target's Secret holds now (from the informer cache), or why there are none. */
  private credentialsFor(target: LeaderTarget): ReturnType<typeof credentialsFromSecret> {
    const secret = this.secrets.get(target.secretName, this.options.namespace);
    const result = credentialsFromSecret(target.server, { namespace: this.options.namespace, name: target.secretName }, secret);
    this.options.onTokenExpiry?.(target.clusterSetID, target.leaderClusterID, result.ok ? result.credentials.expiresAtMs : undefined);
    return result;
  }

  private createArea(clusterSet: ClusterSet, target: LeaderTarget, log: ControllerLogger): RemoteCommonArea {
    const name = target.clusterSetID;
    const previous = clusterSet.status?.clusterStatuses?.find((s) => s.clusterID === target.leaderClusterID);
    const ready = previous?.conditions?.find((c) => c.type === 'Ready');
    const isLeader = previous?.conditions?.find((c) => c.type === 'IsLeader');
    const budget = this.options.leaderBudget;
    const createApi = this.options.createApi ?? ((creds, ns) => createLeaderApi(creds, ns, this.options.requestTimeoutMs, budget && new ClientBudget(budget, (waits) => {
      log.warn('requests to the leader waited for the client-side budget (apiClient.leaderQPS, apiClient.leaderBurst)', { leader: target.leaderClusterID, ...waits, ...budget });
    })));
    const importer = this.options.importers?.create(name, target);
    const exporter = this.options.exporters?.create(name, target);
    const schedule = typeof this.options.heartbeatCron === 'function' ? this.options.heartbeatCron(target.localClusterID) : this.options.heartbeatCron;
    log.info('heartbeat schedule', { leader: target.leaderClusterID, cron: schedule });
    const area = new RemoteCommonArea({
      identity: { clusterID: target.localClusterID, clusterSetID: target.clusterSetID, leaderClusterID: target.leaderClusterID },
      leaderNamespace: target.leaderNamespace,
      heartbeatCron: schedule,
      intervalMs: this.options.heartbeatIntervalMs,
      requestTimeoutMs: this.options.requestTimeoutMs,
      failureThreshold: this.options.failureThreshold,
      createApi,
      logger: log.child({ leader: target.leaderClusterID, leaderNamespace: target.leaderNamespace }),
      ...(importer ? { importer } : {}),
      ...(exporter ? { exporter } : {}),
      ...(this.options.clusterUid ? { clusterUid: this.options.clusterUid } : {}),
      // Carry conditions over a restart, so their transition times (and Ready) do not reset.
      initial: {
        ...(ready?.status && ready.lastTransitionTime ? { ready: { ...ready, type: 'Ready', status: ready.status, lastTransitionTime: ready.lastTransitionTime } } : {}),
        ...(isLeader?.status && isLeader.lastTransitionTime ? { isLeader: { ...isLeader, type: 'IsLeader', status: isLeader.status, lastTransitionTime: isLeader.lastTransitionTime } } : {}),
        ...(previous?.lastHeartbeatTime ? { lastHeartbeatTime: previous.lastHeartbeatTime } : {}),
      },
    });
    area.events.subscribe((event) => {
      if (event.type === 'conditions') {
        this.status.request(name);
        this.readyTransition(name, event.previousReady, event.status);
      } else if (event.type === 'imports') {
        this.status.request(name);
      }
      this.options.onAreaEvent?.(name, target, event);
    });
    return area;
  }

  /** Stops (and with `leave`, leaves) every area of a ClusterSet, then forgets it. */
  private async removeArea(name: string, leave: boolean, log: ControllerLogger, deadline: number): Promise<void> {
    const byLeader = this.areas.get(name);
    // One leader at a time: a later one's imports may be what an earlier one's leave keeps.
    for (const leaderID of [...(byLeader?.keys() ?? [])]) await this.removeLeaderArea(name, leaderID, leave, log, deadline);
    this.areas.delete(name);
    if (leave) this.options.onClusterSetGone?.(name);
  }

  /**
   * Stops (and with `leave`, deletes the announce of) one leader's area. A failed leave
   * throws while `deadline` lies ahead, so the queue retries; after it, the failure is logged
   * and the leader's own GC (24 h without heartbeat) reaps the announce.
   */
  private async removeLeaderArea(name: string, leaderID: string, leave: boolean, log: ControllerLogger, deadline: number): Promise<void> {
    const managed = this.areas.get(name)?.get(leaderID);
    if (!managed) return;
    if (leave) {
      try {
        const result = await managed.area.leave();
        log.info(result === 'deleted' ? 'left leader: announce deleted' : `left leader: ${result}`, { leader: managed.target.leaderClusterID });
      } catch (err) {
        if (Date.now() < deadline) throw err;
        log.warn('could not delete the announce on the leader; giving up (the leader garbage-collects it after 24 h without heartbeat)',
          { leader: managed.target.leaderClusterID, error: describeError(err) });
      }
      await managed.area.removeImports();
    } else {
      await managed.area.stop();
    }
    managed.area.close();
    this.areas.get(name)?.delete(leaderID);
    this.options.importers?.release(name, leaderID);
    this.options.exporters?.release(name, leaderID);
  }

  /** An Event on every real Ready transition; leaving Unknown (the first verdict on a join) is not one. */
  private readyTransition(name: string, previous: string, status: LeaderStatus): void {
    const ready = status.ready;
    if (previous === ready.status || previous === 'Unknown') return;
    const connected = ready.status === 'True';
    this.options.events?.record(this.eventTarget(name), connected ? 'Normal' : 'Warning', connected ? 'LeaderConnected' : 'LeaderDisconnected',
      connected ? (ready.message ?? '') : `${ready.reason ?? 'Unknown'}: ${ready.message ?? ''}`);
  }

  /**
   * Says once, in a log line and an Event, that the installed ClusterSet CRD drops our status
   * fields, and stops writing them. The chart's CRD has all of them and Antrea's none, so one
   * pruned field tells which CRD this is: all are dropped from then on, and said in one go.
   */
  private notePrunedFields(name: string, sent: ComputedStatus, stored: unknown): void {
    if (this.prunedFields.size > 0 || prunedStatusFields(sent, stored).length === 0) return;
    const all = Object.keys(EXTENSION_FIELD_PATHS) as ExtensionField[];
    for (const field of all) this.prunedFields.add(field);
    const fields = all.map((f) => EXTENSION_FIELD_PATHS[f]).join(', ');
    const message = `The ClusterSet CRD installed in this cluster drops ${fields} (Antrea's own CRD has no such fields): ` +
      'the agent stops writing them; that CRD also allows one leader per ClusterSet (spec.leaders maxItems 1). ' +
      'Install the chart\'s CRDs (charts/clusterset-agent/crds, e.g. with helm upgrade --install) to see import counters and heartbeat times, and to list several leaders.';
    this.log.warn('ClusterSet CRD prunes status fields', { clusterSet: name, fields });
    this.options.events?.record(this.eventTarget(name), 'Warning', 'StatusFieldsPruned', message);
  }

  private async finishDeletion(clusterSet: ClusterSet, log: ControllerLogger): Promise<undefined> {
    const name = clusterSet.metadata?.name ?? '';
    const finalizers = clusterSet.metadata?.finalizers ?? [];
    if (!finalizers.includes(LEAVE_FINALIZER)) {
      await this.removeArea(name, true, log, 0);
      return undefined;
    }
    const deadline = (parseTimestamp(clusterSet.metadata?.deletionTimestamp) ?? Date.now()) + (this.options.leaveTimeoutMs ?? 60_000);
    if (!this.areas.has(name)) {
      // After a restart there are no areas yet: build them just to leave with the Secrets' credentials.
      const parsed = leaderTarget(clusterSet);
      if (parsed.ok) {
        this.options.importers?.setLeaders?.(name, parsed.targets.map((t) => t.leaderClusterID));
        this.options.exporters?.setLeaders?.(name, parsed.targets.map((t) => t.leaderClusterID));
        const byLeader = new Map<string, ManagedArea>();
        const others = this.otherClaims(name);
        for (const target of parsed.targets) {
          const area = this.createArea(clusterSet, target, log);
          const holder = heldBy(this.claimOf(clusterSet, target), others);
          area.setCredentials(holder ? { ok: false, failure: duplicate(target, holder) } : this.credentialsFor(target));
          byLeader.set(target.leaderClusterID, { target, area });
        }
        this.areas.set(name, byLeader);
      }
    }
    await this.removeArea(name, true, log, deadline);
    const index = finalizers.indexOf(LEAVE_FINALIZER);
    await this.objects.patchNamespacedCustomObject({
      ...this.ref, name,
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: clusterSet.metadata?.resourceVersion },
        { op: 'remove', path: `/metadata/finalizers/${String(index)}` },
      ],
    });
    this.status.forget(name);
    return undefined;
  }

  /** Adds the leave finalizer; false when our cached copy was stale (the patch's test failed). */
  private async ensureFinalizer(clusterSet: ClusterSet): Promise<boolean> {
    const finalizers = clusterSet.metadata?.finalizers;
    if (finalizers?.includes(LEAVE_FINALIZER)) return true;
    try {
      await this.objects.patchNamespacedCustomObject({
        ...this.ref, name: clusterSet.metadata?.name ?? '',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: clusterSet.metadata?.resourceVersion },
          finalizers ? { op: 'add', path: '/metadata/finalizers/-', value: LEAVE_FINALIZER } : { op: 'add', path: '/metadata/finalizers', value: [LEAVE_FINALIZER] },
        ],
      });
      return true;
    } catch (err) {
      // A failed JSON-patch test is 422; the cache catches up within milliseconds.
      if (httpStatus(err) === 422 || isConflict(err)) return false;
      throw err;
    }
  }

  private desiredStatus(clusterSet: ClusterSet): ComputedStatus | undefined {
    const name = clusterSet.metadata?.name ?? '';
    if (clusterSet.metadata?.deletionTimestamp) return undefined;
    const specProblem = this.specProblems.get(name);
    const imports = this.options.importers?.counts(name);
    const importsSynced = this.options.importers?.importsSynced?.(name);
    return computeStatus({
      generation: clusterSet.metadata?.generation,
      leaders: this.leaderStatuses(name),
      ...(specProblem ? { specProblem } : {}),
      ...(imports ? { imports } : {}),
      ...(importsSynced ? { importsSynced } : {}),
      omit: this.prunedFields,
      previous: clusterSet.status,
      now: new Date(),
    });
  }
}

function duplicate(target: LeaderTarget, holder: MembershipClaim): ReturnType<typeof failure> {
  return failure(FailureReason.DuplicateMembership,
    `ClusterSet ${holder.name} already holds the membership of cluster ${target.localClusterID} in namespace ${target.leaderNamespace} of leader ${holder.target.leaderClusterID} ` +
    `(both would write announce member-announce-from-${target.localClusterID}); this ClusterSet writes nothing to the leader until one of them is changed or deleted`, true);
}
