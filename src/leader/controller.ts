// The leader's controllers over one leader namespace: member liveness and the leader
// ClusterSet status, announce finalizers and garbage collection, aggregation of exports into
// imports, and the admission policies' parameter ConfigMap. Decisions live in the pure modules
// next to this one (aggregate, liveness, member-ids); this file only watches and writes.
//
// One work queue, typed keys, each handler level-triggered from informer caches:
//   import:<ResourceImport name>  aggregate the exports feeding it, release finalizers
//   announce:<name>               finalizer, member GC (announce deleted or stale)
//   status                        liveness → every leader ClusterSet's status
//   memberids                     ServiceAccount cluster IDs → the admission parameter
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ConfigMap, type V1ServiceAccount } from '@kubernetes/client-node';
import { createJsonClient } from '../kube/json-client.js';
import type winston from 'winston';
import {
  CLUSTERSET,
  MEMBER_ANNOUNCE_FINALIZER_PREFIX,
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ClusterSet,
  type ClusterSetList,
  type Condition,
  type KubeList,
  type KubeObject,
  type MemberClusterAnnounce,
  type MemberClusterAnnounceList,
  type ResourceExport,
  type ResourceExportList,
  type ResourceImport,
  type ResourceImportList,
  type ResourceImportSpec,
} from '../api/types.js';
import type { EventRecorder, EventTarget } from '../events/recorder.js';
import type { AgentMetrics } from '../metrics/metrics.js';
import { sameCanonical } from '../kube/canonical.js';
import { describeError, isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import { ResilientInformer } from '../kube/informer.js';
import { rfc3339 } from '../kube/time.js';
import { WorkQueue } from '../runtime/workqueue.js';
import {
  dependentImportKeys,
  hasLeaderFinalizer,
  importKeyOf,
  isDeleting,
  planImport,
  withoutLeaderFinalizers,
  type ExportVerdict,
} from './aggregate.js';
import { lastBeatOf, leaderClusterSetStatus, memberLiveness } from './liveness.js';
import { memberIdsData } from './member-ids.js';

export const MEMBER_IDS_CONFIGMAP = 'clusterset-member-ids';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_LEADER = 'clusterset-agent-leader';

const STATUS_KEY = 'status';
const MEMBER_IDS_KEY = 'memberids';
// A status recompute right after the earliest expiry, not before it.
const EXPIRY_SLACK_MS = 50;

export interface LeaderControllerOptions {
  readonly kubeConfig: KubeConfig;
  /** The leader namespace (common area). */
  readonly namespace: string;
  readonly memberTimeoutMs: number;
  readonly staleMemberMs: number;
  readonly logger: winston.Logger;
  readonly events?: EventRecorder;
  readonly metrics?: Pick<AgentMetrics, 'setLeaderMembers' | 'recordLeaderWrite'>;
  readonly memberIdsConfigMap?: string;
  /** @default 4 */
  readonly concurrency?: number;
  readonly now?: () => number;
}

type Ref = { group: string; version: string; plural: string };

function refOf(d: { group: string; version: string; plural: string }): Ref {
  return { group: d.group, version: d.version, plural: d.plural };
}

function nameOf(obj: { metadata?: { name?: string } }): string {
  return obj.metadata?.name ?? '';
}

/** An object of the leader namespace as the target of an Event. */
function eventTarget(kind: { apiVersion: string; kind: string }, obj: KubeObject, namespace: string): EventTarget {
  return { apiVersion: kind.apiVersion, kind: kind.kind, name: nameOf(obj), namespace, ...(obj.metadata?.uid ? { uid: obj.metadata.uid } : {}) };
}

function announceFinalizer(clusterID: string): string {
  return `${MEMBER_ANNOUNCE_FINALIZER_PREFIX}${clusterID}`;
}

export class LeaderController {
  readonly #ns: string;
  readonly #log: winston.Logger;
  readonly #objects: CustomObjectsApi;
  readonly #core: CoreV1Api;
  readonly #events: EventRecorder | undefined;
  readonly #metrics: LeaderControllerOptions['metrics'];
  readonly #now: () => number;
  readonly #memberTimeoutMs: number;
  readonly #staleMemberMs: number;
  readonly #memberIdsName: string;
  readonly announces: ResilientInformer<MemberClusterAnnounce>;
  readonly exports: ResilientInformer<ResourceExport>;
  readonly imports: ResilientInformer<ResourceImport>;
  readonly clusterSets: ResilientInformer<ClusterSet>;
  readonly serviceAccounts: ResilientInformer<V1ServiceAccount>;
  readonly configMaps: ResilientInformer<V1ConfigMap>;
  readonly #queue: WorkQueue;
  /** Import keys that had an export since this process started: only their RIs are ever deleted. */
  readonly #seenKeys = new Set<string>();
  /** Export name → import keys it feeds, and the reverse: reconciles read only their own exports. */
  readonly #keysOfExport = new Map<string, string[]>();
  readonly #exportsOfKey = new Map<string, Set<string>>();
  #lastMemberIdProblems = '';
  #started = false;

  constructor(options: LeaderControllerOptions) {
    this.#ns = options.namespace;
    this.#log = options.logger.child({ leaderNamespace: options.namespace });
    this.#objects = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#events = options.events;
    this.#metrics = options.metrics;
    this.#now = options.now ?? Date.now;
    this.#memberTimeoutMs = options.memberTimeoutMs;
    this.#staleMemberMs = options.staleMemberMs;
    this.#memberIdsName = options.memberIdsConfigMap ?? MEMBER_IDS_CONFIGMAP;
    const watch = createJsonClient(options.kubeConfig);
    const ns = this.#ns;
    const custom = <L extends KubeList<KubeObject>>(d: Ref) => ({
      name: d.plural,
      path: `/apis/${d.group}/${d.version}/namespaces/${ns}/${d.plural}`,
      list: async () => (await this.#objects.listNamespacedCustomObject({ ...d, namespace: ns })) as L,
      watch,
      logger: this.#log,
    });
    this.announces = new ResilientInformer(custom<MemberClusterAnnounceList>(refOf(MEMBER_CLUSTER_ANNOUNCE)));
    this.exports = new ResilientInformer(custom<ResourceExportList>(refOf(RESOURCE_EXPORT)));
    this.imports = new ResilientInformer(custom<ResourceImportList>(refOf(RESOURCE_IMPORT)));
    this.clusterSets = new ResilientInformer(custom<ClusterSetList>(refOf(CLUSTERSET)));
    this.serviceAccounts = new ResilientInformer<V1ServiceAccount>({
      name: 'serviceaccounts',
      path: `/api/v1/namespaces/${ns}/serviceaccounts`,
      list: () => this.#core.listNamespacedServiceAccount({ namespace: ns }),
      watch,
      logger: this.#log,
    });
    const selector = `${MANAGED_BY_LABEL}=${MANAGED_BY_LEADER}`;
    this.configMaps = new ResilientInformer<V1ConfigMap>({
      name: 'configmaps',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      list: () => this.#core.listNamespacedConfigMap({ namespace: ns, labelSelector: selector }),
      labelSelector: selector,
      watch,
      logger: this.#log,
    });
    this.#queue = new WorkQueue({
      concurrency: options.concurrency ?? 4,
      backoff: { baseMs: 200, maxMs: 60_000 },
      onError: (key, error, retry) => {
        this.#log.warn('leader reconcile failed; will retry', { key, error: describeError(error), retryInMs: Math.round(retry.delayMs), attempts: retry.attempts });
      },
    });
    this.#wire();
  }

  /** Starts the informers, waits until they synced, then starts the queue. */
  async start(): Promise<void> {
    await Promise.all([this.announces, this.exports, this.imports, this.clusterSets, this.serviceAccounts, this.configMaps].map((i) => i.start()));
    this.#started = true;
    this.#queue.start((key) => this.#handle(key));
    this.#queue.add(STATUS_KEY);
    this.#queue.add(MEMBER_IDS_KEY);
    this.#log.info('leader controllers started', { memberTimeoutSeconds: this.#memberTimeoutMs / 1000, staleMemberSeconds: this.#staleMemberMs / 1000 });
  }

  ready(): boolean {
    return this.#started;
  }

  /** Resolves when no key is queued or in flight (tests, graceful stop). */
  idle(): Promise<void> {
    return this.#queue.onIdle();
  }

  async stop(): Promise<void> {
    await this.#queue.stop();
    await Promise.all([this.announces, this.exports, this.imports, this.clusterSets, this.serviceAccounts, this.configMaps].map((i) => i.stop()));
  }

  #wire(): void {
    const onAnnounce = (a: MemberClusterAnnounce) => {
      this.#queue.add(`announce:${nameOf(a)}`);
      this.#queue.add(STATUS_KEY);
    };
    for (const event of ['add', 'update', 'delete'] as const) {
      this.announces.on(event, onAnnounce);
      this.exports.on(event, (re) => { this.#onExport(re, event === 'delete'); });
      this.imports.on(event, (ri) => { this.#queue.add(`import:${nameOf(ri)}`); });
      this.clusterSets.on(event, () => {
        this.#queue.add(STATUS_KEY);
        this.#queue.add(MEMBER_IDS_KEY);
      });
      this.serviceAccounts.on(event, () => { this.#queue.add(MEMBER_IDS_KEY); });
      this.configMaps.on(event, () => { this.#queue.add(MEMBER_IDS_KEY); });
    }
  }

  #onExport(re: ResourceExport, deleted: boolean): void {
    const name = nameOf(re);
    const previous = this.#keysOfExport.get(name) ?? [];
    const current = deleted ? [] : dependentImportKeys(re);
    const keys = new Set([...previous, ...current]);
    for (const key of previous) {
      const names = this.#exportsOfKey.get(key);
      names?.delete(name);
      if (names?.size === 0) this.#exportsOfKey.delete(key);
    }
    for (const key of current) {
      let names = this.#exportsOfKey.get(key);
      if (names === undefined) {
        names = new Set();
        this.#exportsOfKey.set(key, names);
      }
      names.add(name);
    }
    if (deleted) this.#keysOfExport.delete(name);
    else this.#keysOfExport.set(name, current);
    const own = importKeyOf(re);
    if (own !== undefined) this.#seenKeys.add(own);
    for (const key of keys) this.#queue.add(`import:${key}`);
  }

  async #handle(key: string): Promise<undefined | { requeueAfterMs: number }> {
    if (key === STATUS_KEY) return this.#reconcileStatus();
    if (key === MEMBER_IDS_KEY) return this.#reconcileMemberIds();
    const sep = key.indexOf(':');
    const kind = key.slice(0, sep);
    const name = key.slice(sep + 1);
    if (kind === 'import') return this.#reconcileImport(name);
    if (kind === 'announce') return this.#reconcileAnnounce(name);
    return undefined;
  }

  // ---------------------------------------------------------------------------------------
  // Aggregation

  async #reconcileImport(key: string): Promise<undefined> {
    const feeding = [...(this.#exportsOfKey.get(key) ?? [])].flatMap((name) => {
      const re = this.exports.get(name, this.#ns);
      return re === undefined ? [] : [re];
    });
    const plan = planImport(key, feeding);
    await this.#applyImport(key, plan.spec, plan.annotations ?? {});
    const mine = feeding.filter((re) => importKeyOf(re) === key);
    for (const re of mine) {
      const verdict = plan.verdicts.get(nameOf(re));
      if (verdict !== undefined && !isDeleting(re)) await this.#writeVerdict(re, verdict);
    }
    // The import no longer holds what a deleting export carried: let the export go.
    for (const re of mine) {
      if (isDeleting(re) && hasLeaderFinalizer(re)) await this.#releaseExport(re);
    }
    if (plan.spec === undefined && mine.length === 0) this.#seenKeys.delete(key);
    return undefined;
  }

  async #applyImport(key: string, spec: ResourceImportSpec | undefined, annotations: Readonly<Record<string, string>>): Promise<void> {
    const existing = this.imports.get(key, this.#ns);
    const ref = { ...refOf(RESOURCE_IMPORT), namespace: this.#ns };
    if (spec === undefined) {
      // Only imports this leader made from exports: never a hand-made one it knows nothing of.
      if (existing === undefined || !this.#seenKeys.has(key)) return;
      try {
        await this.#objects.deleteNamespacedCustomObject({ ...ref, name: key });
        this.#metrics?.recordLeaderWrite('resourceimports', 'delete');
        this.#log.info('ResourceImport deleted: no export feeds it any more', { resourceImport: key });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    }
    const annotated = existing?.metadata?.annotations ?? {};
    const sameAnnotations = Object.entries(annotations).every(([k, v]) => annotated[k] === v);
    if (existing !== undefined && !isDeleting(existing) && sameCanonical(existing.spec, spec) && sameAnnotations) return;
    if (existing === undefined) {
      const body: ResourceImport = {
        apiVersion: RESOURCE_IMPORT.apiVersion, kind: RESOURCE_IMPORT.kind,
        metadata: { name: key, namespace: this.#ns, ...(Object.keys(annotations).length > 0 && { annotations: { ...annotations } }) }, spec,
      };
      try {
        await this.#objects.createNamespacedCustomObject({ ...ref, body });
        this.#metrics?.recordLeaderWrite('resourceimports', 'create');
        this.#log.info('ResourceImport created', { resourceImport: key, kind: spec.kind });
      } catch (err) {
        // Our cache is behind: the informer event brings the object and another pass.
        if (!isAlreadyExists(err)) throw err;
      }
      return;
    }
    if (isDeleting(existing)) throw new Error(`ResourceImport ${key} is being deleted; it is re-created once it is gone`);
    // The cached copy's resourceVersion makes this a compare-and-swap.
    const metadata = sameAnnotations ? existing.metadata : { ...existing.metadata, annotations: { ...annotated, ...annotations } };
    await this.#objects.replaceNamespacedCustomObject({ ...ref, name: key, body: { ...existing, metadata, spec } });
    this.#metrics?.recordLeaderWrite('resourceimports', 'update');
    this.#log.info('ResourceImport updated', { resourceImport: key, kind: spec.kind });
  }

  async #writeVerdict(re: ResourceExport, verdict: ExportVerdict): Promise<void> {
    const current = re.status?.conditions?.[0];
    const next: Condition = verdict.ok
      ? { type: 'Succeeded', status: 'True' }
      : { type: 'Failure', status: 'False', reason: verdict.reason, message: verdict.message };
    if (current !== undefined && current.type === next.type && current.status === next.status && (current.reason ?? '') === (next.reason ?? '') && (current.message ?? '') === (next.message ?? '')) return;
    const condition: Condition = { ...next, lastTransitionTime: rfc3339(this.#now()) };
    try {
      await this.#objects.replaceNamespacedCustomObjectStatus({
        ...refOf(RESOURCE_EXPORT), namespace: this.#ns, name: nameOf(re),
        body: { ...re, status: { conditions: [condition] } },
      });
      this.#metrics?.recordLeaderWrite('resourceexports', 'status');
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!verdict.ok) {
      this.#log.warn('ResourceExport not converged', { resourceExport: nameOf(re), reason: verdict.reason, message: verdict.message });
      this.#events?.record(eventTarget(RESOURCE_EXPORT, re, this.#ns), 'Warning', verdict.reason, verdict.message);
    }
  }

  async #releaseExport(re: ResourceExport): Promise<void> {
    const finalizers = withoutLeaderFinalizers(re.metadata?.finalizers ?? []);
    try {
      await this.#objects.replaceNamespacedCustomObject({
        ...refOf(RESOURCE_EXPORT), namespace: this.#ns, name: nameOf(re),
        body: { ...re, metadata: { ...re.metadata, finalizers } },
      });
      this.#metrics?.recordLeaderWrite('resourceexports', 'update');
      this.#log.info('ResourceExport released after its import was updated', { resourceExport: nameOf(re) });
    } catch (err) {
      if (isNotFound(err)) return;
      // A newer copy is on its way through the informer, and with it another pass.
      if (isConflict(err)) return;
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Announces: finalizer, garbage collection

  async #reconcileAnnounce(name: string): Promise<undefined | { requeueAfterMs: number }> {
    const announce = this.announces.get(name, this.#ns);
    if (announce === undefined) return undefined;
    const clusterID = announce.clusterID ?? '';
    const finalizer = announceFinalizer(clusterID);
    const ref = { ...refOf(MEMBER_CLUSTER_ANNOUNCE), namespace: this.#ns };
    if (isDeleting(announce)) {
      // The member left (or was reaped): its exports go, and with them what they fed.
      const theirs = this.exports.list(this.#ns).filter((re) => re.spec?.clusterID === clusterID && !isDeleting(re));
      for (const re of theirs) {
        try {
          await this.#objects.deleteNamespacedCustomObject({ ...refOf(RESOURCE_EXPORT), namespace: this.#ns, name: nameOf(re) });
          this.#metrics?.recordLeaderWrite('resourceexports', 'delete');
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      if (theirs.length > 0) this.#log.info('member left: its exports are being deleted', { memberClusterID: clusterID, exports: theirs.length });
      if ((announce.metadata?.finalizers ?? []).includes(finalizer)) {
        await this.#replaceAnnounce(announce, (announce.metadata?.finalizers ?? []).filter((f) => f !== finalizer));
      }
      return undefined;
    }
    const now = this.#now();
    const lastBeat = lastBeatOf(announce) ?? Date.parse(String(announce.metadata?.creationTimestamp ?? ''));
    const staleAt = (Number.isNaN(lastBeat) ? now : lastBeat) + this.#staleMemberMs;
    if (now >= staleAt) {
      const message = `member ${clusterID} sent no heartbeat for ${Math.round(this.#staleMemberMs / 1000)} s (last ${Number.isNaN(lastBeat) ? 'never' : new Date(lastBeat).toISOString()}): ` +
        'its announce and exports are deleted; it joins again with its next heartbeat';
      this.#log.warn('stale member removed', { memberClusterID: clusterID, message });
      this.#events?.record(eventTarget(MEMBER_CLUSTER_ANNOUNCE, announce, this.#ns), 'Warning', 'StaleMember', message);
      try {
        await this.#objects.deleteNamespacedCustomObject({ ...ref, name, ...(announce.metadata?.uid ? { body: { preconditions: { uid: announce.metadata.uid } } } : {}) });
        this.#metrics?.recordLeaderWrite('memberclusterannounces', 'delete');
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
      return undefined;
    }
    if (clusterID !== '' && !(announce.metadata?.finalizers ?? []).includes(finalizer)) {
      await this.#replaceAnnounce(announce, [...(announce.metadata?.finalizers ?? []), finalizer]);
    }
    return { requeueAfterMs: staleAt - now + EXPIRY_SLACK_MS };
  }

  async #replaceAnnounce(announce: MemberClusterAnnounce, finalizers: string[]): Promise<void> {
    try {
      await this.#objects.replaceNamespacedCustomObject({
        ...refOf(MEMBER_CLUSTER_ANNOUNCE), namespace: this.#ns, name: nameOf(announce),
        body: { ...announce, metadata: { ...announce.metadata, finalizers } },
      });
      this.#metrics?.recordLeaderWrite('memberclusterannounces', 'update');
    } catch (err) {
      // The member's next beat wrote meanwhile: the informer brings it, and another pass.
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Liveness and leader ClusterSet status

  async #reconcileStatus(): Promise<undefined | { requeueAfterMs: number }> {
    const now = this.#now();
    const announces = this.announces.list(this.#ns).filter((a) => !isDeleting(a));
    let nextExpiry: number | undefined;
    for (const clusterSet of this.clusterSets.list(this.#ns)) {
      const members = announces.filter((a) => a.clusterSetID === nameOf(clusterSet)).map((a) => memberLiveness(a, now, this.#memberTimeoutMs));
      for (const m of members) {
        if (m.expiresAt !== undefined) nextExpiry = Math.min(nextExpiry ?? Infinity, m.expiresAt);
      }
      const status = leaderClusterSetStatus(clusterSet, members, now);
      this.#metrics?.setLeaderMembers(nameOf(clusterSet), status.readyClusters ?? 0, status.totalClusters ?? 0);
      if (sameCanonical(clusterSet.status, status)) continue;
      this.#logTransitions(clusterSet, status.clusterStatuses ?? []);
      try {
        await this.#objects.replaceNamespacedCustomObjectStatus({
          ...refOf(CLUSTERSET), namespace: this.#ns, name: nameOf(clusterSet),
          body: { ...clusterSet, status },
        });
        this.#metrics?.recordLeaderWrite('clustersets', 'status');
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
    }
    return nextExpiry === undefined ? undefined : { requeueAfterMs: Math.max(0, nextExpiry - now) + EXPIRY_SLACK_MS };
  }

  #logTransitions(clusterSet: ClusterSet, next: NonNullable<ClusterSet['status']>['clusterStatuses'] & object): void {
    const before = new Map((clusterSet.status?.clusterStatuses ?? []).map((s) => [s.clusterID ?? '', s.conditions?.[0]?.status]));
    for (const s of next) {
      const was = before.get(s.clusterID ?? '');
      const is = s.conditions?.[0]?.status;
      if (was === is) continue;
      const fields = { clusterSet: nameOf(clusterSet), memberClusterID: s.clusterID, ready: is, message: s.conditions?.[0]?.message };
      if (is === 'True') this.#log.info('member connected', fields);
      else this.#log.warn('member disconnected', fields);
    }
  }

  // ---------------------------------------------------------------------------------------
  // Admission parameter

  async #reconcileMemberIds(): Promise<undefined> {
    const plan = memberIdsData(this.serviceAccounts.list(this.#ns), this.clusterSets.list(this.#ns));
    const problems = plan.problems.join('\n');
    if (problems !== this.#lastMemberIdProblems) {
      for (const problem of plan.problems) this.#log.warn('member identity problem', { problem });
      this.#lastMemberIdProblems = problems;
    }
    const existing = this.configMaps.get(this.#memberIdsName, this.#ns);
    if (existing !== undefined && sameCanonical(existing.data ?? {}, plan.data)) return undefined;
    // Our label added to whatever labels the stored copy has; its resourceVersion makes a replace a compare-and-swap.
    const body = (stored: V1ConfigMap | undefined): V1ConfigMap => ({
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: {
        name: this.#memberIdsName, namespace: this.#ns,
        labels: { ...(stored?.metadata?.labels ?? {}), [MANAGED_BY_LABEL]: MANAGED_BY_LEADER },
        ...(stored?.metadata?.resourceVersion ? { resourceVersion: stored.metadata.resourceVersion } : {}),
      },
      data: plan.data,
    });
    const replace = (stored: V1ConfigMap) => this.#core.replaceNamespacedConfigMap({ name: this.#memberIdsName, namespace: this.#ns, body: body(stored) });
    if (existing === undefined) {
      try {
        await this.#core.createNamespacedConfigMap({ namespace: this.#ns, body: body(undefined) });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        // Made by hand before this leader ran (without our label, so not in our cache): take it over.
        await replace(await this.#core.readNamespacedConfigMap({ name: this.#memberIdsName, namespace: this.#ns }));
      }
    } else {
      await replace(existing);
    }
    this.#metrics?.recordLeaderWrite('configmaps', existing === undefined ? 'create' : 'update');
    this.#log.info('admission parameter updated', { configMap: this.#memberIdsName, members: Object.keys(plan.data).filter((k) => k === k.toLowerCase()).length });
    return undefined;
  }
}
