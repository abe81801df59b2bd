// Reconciles ClusterSets in the agent's namespace into one RemoteCommonArea per leader.
//
// Level-based: events only enqueue a ClusterSet name; the reconcile reads the current
// ClusterSet and Secret from the informer caches and converges. A Secret change enqueues
// the ClusterSets that use it, which is how a rotated token takes effect without restart.
// A finalizer makes deletion a real leave: the announce is deleted on the leader before
// the ClusterSet goes away, even if the agent was down when it was deleted.
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Secret, Watch } from '@kubernetes/client-node';
import { CLUSTERSET, type ClusterSet, type ClusterSetList } from '../api/types.js';
import { credentialsFromSecret } from '../commonarea/credentials.js';
import { createLeaderApi, type LeaderApi } from '../commonarea/leader-api.js';
import { RemoteCommonArea, type AreaLogger, type LeaderStatus } from '../commonarea/remote-common-area.js';
import { ResilientInformer } from '../kube/informer.js';
import { describeError, httpStatus, isConflict } from '../kube/errors.js';
import { WorkQueue } from '../runtime/workqueue.js';
import { computeStatus, type ComputedStatus } from '../status/compute.js';
import { StatusWriter } from '../status/writer.js';
import type { EventRecorder, EventTarget } from '../events/recorder.js';
import { leaderTarget, sameLeader, type LeaderTarget } from './spec.js';

/** Finalizer that holds a deleted ClusterSet until its announce is gone from the leader. */
export const LEAVE_FINALIZER = 'clusterset-agent.multicluster.x-k8s.io/leave-leader';

export interface ControllerLogger extends AreaLogger {
  error(message: string, meta?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): ControllerLogger;
}

export interface ClusterSetControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly heartbeatCron: string;
  readonly failureThreshold: number;
  readonly requestTimeoutMs: number;
  readonly statusMinIntervalMs: number;
  /** How long a deleted ClusterSet waits for the leader to accept the leave before giving up. */
  readonly leaveTimeoutMs?: number;
  readonly logger: ControllerLogger;
  /** Called after every accepted heartbeat (the importer connects here). */
  readonly onAreaBeat?: (clusterSet: string, target: LeaderTarget, status: LeaderStatus, api: LeaderApi) => void;
  /** Called after every heartbeat, for metrics. */
  readonly onBeatResult?: (clusterSet: string, leader: string, ok: boolean, seconds: number, reason?: string) => void;
  /** Called after every change of a leader's conditions. */
  readonly onAreaStatus?: (clusterSet: string, target: LeaderTarget, status: LeaderStatus) => void;
  /** Called when an area goes away; `leaving` means the ClusterSet (or this leader) is gone for good. */
  readonly onAreaRemoved?: (clusterSet: string, target: LeaderTarget | undefined, leaving: boolean) => Promise<void>;
  /** Import counters to publish in the ClusterSet status. */
  readonly importCounts?: (clusterSet: string) => ComputedStatus['imports'];
  readonly events?: EventRecorder;
  readonly createApi?: (credentials: Parameters<typeof createLeaderApi>[0], namespace: string) => LeaderApi;
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
  private readonly areas = new Map<string, ManagedArea>();
  private readonly specProblems = new Map<string, { reason: string; message: string }>();
  private readonly lastReady = new Map<string, string>();
  private readonly objects: CustomObjectsApi;
  private readonly log: ControllerLogger;
  private readonly ref: { group: string; version: string; plural: string; namespace: string };

  constructor(private readonly options: ClusterSetControllerOptions) {
    const kc = options.kubeConfig;
    this.log = options.logger.child({ component: 'clusterset-controller', namespace: options.namespace });
    this.objects = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const watch = new Watch(kc);
    const ns = options.namespace;
    this.ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: ns };
    this.clusterSets = new ResilientInformer<ClusterSet>({
      name: 'clustersets',
      path: `/apis/${CLUSTERSET.group}/${CLUSTERSET.version}/namespaces/${ns}/${CLUSTERSET.plural}`,
      list: async () => (await this.objects.listNamespacedCustomObject(this.ref)) as ClusterSetList,
      watch,
      logger: this.log,
    });
    this.secrets = new ResilientInformer<V1Secret>({
      name: 'secrets',
      path: `/api/v1/namespaces/${ns}/secrets`,
      list: () => core.listNamespacedSecret({ namespace: ns }),
      watch,
      logger: this.log,
    });
    this.queue = new WorkQueue({
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
          await this.objects.replaceNamespacedCustomObjectStatus({ ...this.ref, name: object.metadata?.name ?? '', body: { ...object, status } });
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
    this.clusterSets.on('add', enqueue);
    this.clusterSets.on('update', enqueue);
    this.clusterSets.on('delete', enqueue);
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
    await Promise.all([...this.areas.values()].map((m) => m.area.stop()));
    this.areas.clear();
    await this.status.stop();
    await this.clusterSets.stop();
    await this.secrets.stop();
  }

  /** Current per-leader status of a ClusterSet, for metrics and tests. */
  leaderStatus(clusterSet: string): LeaderStatus | undefined {
    return this.areas.get(clusterSet)?.area.getStatus();
  }

  areaFor(clusterSet: string): RemoteCommonArea | undefined {
    return this.areas.get(clusterSet)?.area;
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

    const target = parsed.target;
    let managed = this.areas.get(name);
    if (managed && !sameLeader(managed.target, target)) {
      log.info('leader changed: leaving the previous leader', { previousLeader: managed.target.leaderClusterID, leader: target.leaderClusterID });
      await this.removeArea(name, true, log, 0);
      managed = undefined;
    }
    if (!managed) {
      managed = { target, area: this.createArea(clusterSet, target, log) };
      this.areas.set(name, managed);
    }
    managed.area.setCredentials(this.credentialsFor(target));
    managed.area.start();
    this.status.request(name);
    // Our cached copy was older than the server's; the update event brings the new one.
    return finalizerInPlace ? undefined : { requeueAfterMs: 200 };
  }

  /** The leader credentials the target's Secret holds now (from the informer cache), or why there are none. */
  private credentialsFor(target: LeaderTarget): ReturnType<typeof credentialsFromSecret> {
    const secret = this.secrets.get(target.secretName, this.options.namespace);
    return credentialsFromSecret(target.server, { namespace: this.options.namespace, name: target.secretName }, secret);
  }

  private createArea(clusterSet: ClusterSet, target: LeaderTarget, log: ControllerLogger): RemoteCommonArea {
    const name = target.clusterSetID;
    const previous = clusterSet.status?.clusterStatuses?.find((s) => s.clusterID === target.leaderClusterID);
    const ready = previous?.conditions?.find((c) => c.type === 'Ready');
    const isLeader = previous?.conditions?.find((c) => c.type === 'IsLeader');
    const createApi = this.options.createApi ?? ((creds, ns) => createLeaderApi(creds, ns, this.options.requestTimeoutMs));
    return new RemoteCommonArea({
      identity: { clusterID: target.localClusterID, clusterSetID: target.clusterSetID, leaderClusterID: target.leaderClusterID },
      leaderNamespace: target.leaderNamespace,
      heartbeatCron: this.options.heartbeatCron,
      failureThreshold: this.options.failureThreshold,
      createApi,
      logger: log.child({ leader: target.leaderClusterID, leaderNamespace: target.leaderNamespace }),
      onStatusChange: () => {
        this.status.request(name);
        const area = this.areas.get(name)?.area;
        if (area) this.leaderStatusChanged(name, target, area.getStatus());
      },
      ...(this.options.onAreaBeat ? { onBeat: (status: LeaderStatus, api: LeaderApi) => this.options.onAreaBeat?.(name, target, status, api) } : {}),
      ...(this.options.onBeatResult ? { onBeatResult: (ok: boolean, seconds: number, reason?: string) => this.options.onBeatResult?.(name, target.leaderClusterID, ok, seconds, reason) } : {}),
      // Carry conditions over a restart, so their transition times (and Ready) do not reset.
      initial: {
        ...(ready?.status && ready.lastTransitionTime ? { ready: { ...ready, type: 'Ready', status: ready.status, lastTransitionTime: ready.lastTransitionTime } } : {}),
        ...(isLeader?.status && isLeader.lastTransitionTime ? { isLeader: { ...isLeader, type: 'IsLeader', status: isLeader.status, lastTransitionTime: isLeader.lastTransitionTime } } : {}),
        ...(previous?.lastHeartbeatTime ? { lastHeartbeatTime: previous.lastHeartbeatTime } : {}),
      },
    });
  }

  /**
   * Stops (and with `leave`, deletes the announce of) a ClusterSet's area. A failed leave
   * throws while `deadline` lies ahead, so the queue retries; after it, the failure is logged
   * and the leader's own GC (24 h without heartbeat) reaps the announce.
   */
  private async removeArea(name: string, leave: boolean, log: ControllerLogger, deadline: number): Promise<void> {
    const managed = this.areas.get(name);
    this.lastReady.delete(name);
    if (!managed) {
      await this.options.onAreaRemoved?.(name, undefined, leave);
      return;
    }
    if (leave) {
      try {
        await managed.area.leave();
        log.info('left leader: announce deleted', { leader: managed.target.leaderClusterID });
      } catch (err) {
        if (Date.now() < deadline) throw err;
        log.warn('could not delete the announce on the leader; giving up (the leader garbage-collects it after 24 h without heartbeat)',
          { leader: managed.target.leaderClusterID, error: describeError(err) });
      }
    } else {
      await managed.area.stop();
    }
    this.areas.delete(name);
    await this.options.onAreaRemoved?.(name, managed.target, leave);
  }

  /** Events for real Ready transitions, and the hook the importer uses to track leader loss. */
  private leaderStatusChanged(name: string, target: LeaderTarget, status: LeaderStatus): void {
    const previous = this.lastReady.get(name);
    const ready = status.ready;
    this.lastReady.set(name, ready.status);
    if (previous !== undefined && previous !== ready.status) {
      const connected = ready.status === 'True';
      this.options.events?.record(this.eventTarget(name), connected ? 'Normal' : 'Warning', connected ? 'LeaderConnected' : 'LeaderDisconnected',
        connected ? (ready.message ?? '') : `${ready.reason ?? 'Unknown'}: ${ready.message ?? ''}`);
    }
    this.options.onAreaStatus?.(name, target, status);
  }

  private async finishDeletion(clusterSet: ClusterSet, log: ControllerLogger): Promise<undefined> {
    const name = clusterSet.metadata?.name ?? '';
    const finalizers = clusterSet.metadata?.finalizers ?? [];
    if (!finalizers.includes(LEAVE_FINALIZER)) {
      await this.removeArea(name, true, log, 0);
      return undefined;
    }
    const deletedAt = Date.parse(String(clusterSet.metadata?.deletionTimestamp));
    const deadline = (Number.isNaN(deletedAt) ? Date.now() : deletedAt) + (this.options.leaveTimeoutMs ?? 60_000);
    if (!this.areas.has(name)) {
      // After a restart there is no area yet: build one just to leave with the Secret's credentials.
      const parsed = leaderTarget(clusterSet);
      if (parsed.ok) {
        const area = this.createArea(clusterSet, parsed.target, log);
        area.setCredentials(this.credentialsFor(parsed.target));
        this.areas.set(name, { target: parsed.target, area });
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
    const managed = this.areas.get(name);
    const specProblem = this.specProblems.get(name);
    const imports = this.options.importCounts?.(name);
    return computeStatus({
      generation: clusterSet.metadata?.generation,
      leaders: managed ? [managed.area.getStatus()] : [],
      ...(specProblem ? { specProblem } : {}),
      ...(imports ? { imports } : {}),
      previous: clusterSet.status,
      now: new Date(),
    });
  }
}
