// An in-memory leader namespace behind the LeaderApi interface: bumps resourceVersion on
// every write, answers 409 to a stale one or to a failed uid precondition, 404/409
// AlreadyExists like the apiserver, and counts requests so tests can assert the cost of a beat.
// ResourceExports live in `resourceExports`; a delete removes one at once (finalizers are
// not simulated) and is recorded in `exportDeletes`. Their watch (`exportsWatch`) holds every
// event until the test delivers it (`deliver`, `deliverOne`), so a test decides when the watch
// catches up, and can let it lag behind the answers to the exporter's own writes, as a real one can.
import { ApiException } from '@kubernetes/client-node';
import type { MemberClusterAnnounce, ResourceExport, ResourceExportList, ResourceImportList } from '../../../src/common/api/antrea.js';
import type { LeaderApi, LeaderEvent } from '../../../src/commonarea/leader-api.js';
import type { WatchLike } from '../../../src/common/kube/informer.js';

export function apiError(code: number, reason: string, message: string, details?: Record<string, unknown>): ApiException<string> {
  return new ApiException(code, message, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code, ...(details ? { details } : {}) }), {});
}

export class FakeLeader implements LeaderApi {
  readonly server = 'https://leader.example:6443';
  readonly namespace = 'leader-ns';
  readonly resourceImportsPath = '/apis/x';
  readonly watch = undefined as unknown as WatchLike;
  readonly announces = new Map<string, MemberClusterAnnounce>();
  readonly resourceExports = new Map<string, ResourceExport>();
  /** Every ResourceExport delete, with the uid precondition it carried. */
  readonly exportDeletes: { name: string; uid: string | undefined }[] = [];
  /** Set to alter what ResourceExport get/create/update/list answer. */
  rewriteExportAnswers: ((re: ResourceExport) => ResourceExport) | undefined;
  readonly calls: string[] = [];
  /** Every delete, with the uid precondition it carried. */
  readonly deletes: { name: string; uid: string | undefined }[] = [];
  /** Set to alter what get/create/update answer (a leader, or something else, answering oddly). */
  rewriteAnswers: ((mca: MemberClusterAnnounce) => MemberClusterAnnounce) | undefined;
  private rv = 1;
  private uids = 0;
  /** close() was called. */
  closed = false;
  /** Set to make every call fail with this error. */
  failWith: Error | undefined;
  /** Errors for the next calls, one each, before failWith applies. */
  readonly failNext: Error[] = [];

  private check(call: string): void {
    this.calls.push(call);
    const next = this.failNext.shift();
    if (next !== undefined) throw next;
    if (this.failWith !== undefined) throw this.failWith;
  }

  private store(obj: MemberClusterAnnounce): MemberClusterAnnounce {
    this.rv += 1;
    // Like the apiserver: a uid on creation, kept by updates.
    const uid = this.announces.get(obj.metadata?.name ?? '')?.metadata?.uid ?? `uid-${String((this.uids += 1))}`;
    const stored = structuredClone({ ...obj, metadata: { ...obj.metadata, namespace: this.namespace, uid, resourceVersion: String(this.rv) } });
    this.announces.set(stored.metadata.name ?? '', stored);
    return this.answer(stored);
  }

  private answer(mca: MemberClusterAnnounce): MemberClusterAnnounce {
    const copy = structuredClone(mca);
    return this.rewriteAnswers ? this.rewriteAnswers(copy) : copy;
  }

  /** A write by someone else (e.g. the leader adding its finalizer). */
  touchAsLeader(name: string, finalizer: string): void {
    const current = this.announces.get(name);
    if (!current) throw new Error(`no announce ${name}`);
    this.store({ ...current, metadata: { ...current.metadata, finalizers: [...(current.metadata?.finalizers ?? []), finalizer] } });
  }

  getAnnounce(name: string): Promise<MemberClusterAnnounce> {
    this.check(`get ${name}`);
    const found = this.announces.get(name);
    if (!found) return Promise.reject(apiError(404, 'NotFound', `memberclusterannounces "${name}" not found`, { name, kind: 'memberclusterannounces' }));
    return Promise.resolve(this.answer(found));
  }

  createAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce> {
    const name = body.metadata?.name ?? '';
    this.check(`create ${name}`);
    if (this.announces.has(name)) return Promise.reject(apiError(409, 'AlreadyExists', `memberclusterannounces "${name}" already exists`));
    return Promise.resolve(this.store(body));
  }

  replaceAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce> {
    const name = body.metadata?.name ?? '';
    this.check(`update ${name}`);
    const current = this.announces.get(name);
    if (!current) return Promise.reject(apiError(404, 'NotFound', `memberclusterannounces "${name}" not found`, { name, kind: 'memberclusterannounces' }));
    if (current.metadata?.resourceVersion !== body.metadata?.resourceVersion) {
      return Promise.reject(apiError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again'));
    }
    return Promise.resolve(this.store(body));
  }

  deleteAnnounce(name: string, uid?: string): Promise<void> {
    this.check(`delete ${name}`);
    this.deletes.push({ name, uid });
    const current = this.announces.get(name);
    if (!current) return Promise.reject(apiError(404, 'NotFound', `memberclusterannounces "${name}" not found`, { name, kind: 'memberclusterannounces' }));
    if (uid !== undefined && uid !== current.metadata?.uid) {
      return Promise.reject(apiError(409, 'Conflict', `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata?.uid ?? ''}`));
    }
    this.announces.delete(name);
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
  }

  /** Every Event recorded in the leader namespace. */
  readonly events: LeaderEvent[] = [];

  createEvent(body: LeaderEvent): Promise<void> {
    this.check(`create event ${body.reason}`);
    this.events.push(structuredClone(body));
    return Promise.resolve();
  }

  /** What discovery says: whether the multicluster CRDs are served, or that /apis is not Kubernetes discovery. */
  discovery: 'served' | 'not-served' | Error = 'served';

  servesMulticlusterGroup(): Promise<boolean> {
    this.calls.push('get /apis');
    if (this.discovery instanceof Error) return Promise.reject(this.discovery);
    return Promise.resolve(this.discovery === 'served');
  }

  // --- ResourceExports -------------------------------------------------------------------

  private storeExport(obj: ResourceExport): ResourceExport {
    this.rv += 1;
    const name = obj.metadata?.name ?? '';
    const existing = this.resourceExports.get(name)?.metadata;
    const uid = existing?.uid ?? `uid-${String((this.uids += 1))}`;
    const creationTimestamp = existing?.creationTimestamp ?? ('2026-01-01T00:00:00Z' as unknown as Date);
    const stored = structuredClone({
      ...obj,
      metadata: { ...obj.metadata, namespace: this.namespace, uid, resourceVersion: String(this.rv), creationTimestamp },
    });
    this.resourceExports.set(name, stored);
    this.exportEvent(existing ? 'MODIFIED' : 'ADDED', stored);
    return this.exportAnswer(stored);
  }

  private exportAnswer(re: ResourceExport): ResourceExport {
    const copy = structuredClone(re);
    return this.rewriteExportAnswers ? this.rewriteExportAnswers(copy) : copy;
  }

  private exportNotFound(name: string): ApiException<string> {
    return apiError(404, 'NotFound', `resourceexports.multicluster.crd.antrea.io "${name}" not found`, { name, group: 'multicluster.crd.antrea.io', kind: 'resourceexports' });
  }

  /** A write by someone else, e.g. the leader's controller writing status or adding a label. */
  touchExportAsLeader(name: string, change: (re: ResourceExport) => ResourceExport): void {
    const current = this.resourceExports.get(name);
    if (!current) throw new Error(`no resourceexport ${name}`);
    this.storeExport(change(structuredClone(current)));
  }

  listResourceExports(labelSelector: string): Promise<ResourceExportList> {
    this.check(`list re ${labelSelector}`);
    const matches = selectorMatcher(labelSelector);
    const items = [...this.resourceExports.values()]
      .filter((re) => matches(re.metadata?.labels ?? {}))
      .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1))
      .map((re) => this.exportAnswer(re));
    return Promise.resolve({ apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceExportList', metadata: { resourceVersion: String(this.rv) }, items });
  }

  getResourceExport(name: string): Promise<ResourceExport> {
    this.check(`get re ${name}`);
    const found = this.resourceExports.get(name);
    if (!found) return Promise.reject(this.exportNotFound(name));
    return Promise.resolve(this.exportAnswer(found));
  }

  createResourceExport(body: ResourceExport): Promise<ResourceExport> {
    const name = body.metadata?.name ?? '';
    this.check(`create re ${name}`);
    if (this.resourceExports.has(name)) {
      return Promise.reject(apiError(409, 'AlreadyExists', `resourceexports.multicluster.crd.antrea.io "${name}" already exists`, { name, group: 'multicluster.crd.antrea.io', kind: 'resourceexports' }));
    }
    if (body.metadata?.resourceVersion !== undefined && body.metadata.resourceVersion !== '') {
      return Promise.reject(apiError(500, 'InternalError', 'resourceVersion should not be set on objects to be created'));
    }
    return Promise.resolve(this.storeExport(body));
  }

  replaceResourceExport(body: ResourceExport): Promise<ResourceExport> {
    const name = body.metadata?.name ?? '';
    this.check(`update re ${name}`);
    const current = this.resourceExports.get(name);
    if (!current) return Promise.reject(this.exportNotFound(name));
    const rv = body.metadata?.resourceVersion;
    // Like the apiserver: an update without a resourceVersion is unconditional.
    if (rv !== undefined && rv !== '' && rv !== current.metadata?.resourceVersion) {
      return Promise.reject(apiError(409, 'Conflict', `Operation cannot be fulfilled on resourceexports.multicluster.crd.antrea.io "${name}": the object has been modified; please apply your changes to the latest version and try again`));
    }
    // status is a subresource: a PUT of the object keeps the stored status.
    const next: ResourceExport = { ...body };
    delete next.status;
    if (current.status !== undefined) next.status = current.status;
    return Promise.resolve(this.storeExport(next));
  }

  deleteResourceExport(name: string, uid?: string): Promise<void> {
    this.check(`delete re ${name}`);
    this.exportDeletes.push({ name, uid });
    const current = this.resourceExports.get(name);
    if (!current) return Promise.reject(this.exportNotFound(name));
    if (uid !== undefined && uid !== current.metadata?.uid) {
      return Promise.reject(apiError(409, 'Conflict', `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata?.uid ?? ''}`));
    }
    this.resourceExports.delete(name);
    // Like the apiserver: the DELETED event carries a resourceVersion of its own.
    this.rv += 1;
    this.exportEvent('DELETED', { ...current, metadata: { ...current.metadata, resourceVersion: String(this.rv) } });
    return Promise.resolve();
  }

  // --- The watch of ResourceExports --------------------------------------------------------

  /** Every ResourceExport change, in the order stored: what a watch from some resourceVersion reports. */
  readonly #exportEvents: ExportEvent[] = [];
  readonly #exportWatches = new Set<ExportWatchStream>();
  readonly #watchOpened: (() => void)[] = [];

  readonly exportsWatch: { readonly path: string; readonly watch: WatchLike } = {
    path: `/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${this.namespace}/resourceexports`,
    watch: {
      // Like the apiserver: the events after the resourceVersion asked for (the list's), of
      // the objects the label selector matches.
      watch: (_path, query, callback) => {
        const since = Number(query['resourceVersion'] ?? this.rv);
        const labelSelector = query['labelSelector'];
        const stream: ExportWatchStream = {
          callback: callback as ExportWatchStream['callback'],
          matches: selectorMatcher(typeof labelSelector === 'string' ? labelSelector : ''),
          next: this.#exportEvents.findIndex((e) => e.rv > since),
        };
        if (stream.next === -1) stream.next = this.#exportEvents.length;
        const controller = new AbortController();
        controller.signal.addEventListener('abort', () => { this.#exportWatches.delete(stream); });
        this.#exportWatches.add(stream);
        for (const opened of this.#watchOpened.splice(0)) opened();
        return Promise.resolve(controller);
      },
    },
  };

  private exportEvent(type: ExportEvent['type'], re: ResourceExport): void {
    this.#exportEvents.push({ type, re: structuredClone(re), rv: Number(re.metadata?.resourceVersion) });
  }

  /** A watch of ResourceExports is open. */
  get watching(): boolean {
    return this.#exportWatches.size > 0;
  }

  /** Resolves once a watch of ResourceExports is open. */
  watchOpen(): Promise<void> {
    if (this.watching) return Promise.resolve();
    return new Promise((resolve) => { this.#watchOpened.push(resolve); });
  }

  /** Sends every held event to every open watch, in the order the leader stored them; false when none was held. */
  deliver(): boolean {
    let delivered = false;
    while (this.deliverOne()) delivered = true;
    return delivered;
  }

  /** Sends the oldest event an open watch has not had yet; false when none is held. */
  deliverOne(): boolean {
    for (const stream of this.#exportWatches) {
      while (stream.next < this.#exportEvents.length) {
        const event = this.#exportEvents[stream.next];
        stream.next += 1;
        if (!event || !stream.matches(event.re.metadata?.labels ?? {})) continue;
        const re = structuredClone(event.re);
        stream.callback(event.type, re, { type: event.type, object: re });
        return true;
      }
    }
    return false;
  }

  listResourceImports(): Promise<ResourceImportList> {
    this.check('list resourceimports');
    return Promise.resolve({ apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImportList', metadata: { resourceVersion: String(this.rv) }, items: [] });
  }
}

interface ExportEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly re: ResourceExport;
  readonly rv: number;
}

/** One open watch of ResourceExports: its callback, its label selector, and the next event it is owed. */
interface ExportWatchStream {
  readonly callback: (phase: string, obj: unknown, watchObj?: unknown) => void;
  readonly matches: (labels: Readonly<Record<string, string>>) => boolean;
  next: number;
}

/** Equality-based label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-separated (all must hold). */
export function selectorMatcher(selector: string): (labels: Readonly<Record<string, string>>) => boolean {
  const terms = selector.split(',').map((t) => t.trim()).filter((t) => t !== '');
  const tests = terms.map((term): ((labels: Readonly<Record<string, string>>) => boolean) => {
    const ne = /^([^!=]+)!=(.*)$/.exec(term);
    if (ne) return (labels) => labels[(ne[1] ?? '').trim()] !== (ne[2] ?? '').trim();
    const eq = /^([^!=]+)==?(.*)$/.exec(term);
    if (eq) return (labels) => labels[(eq[1] ?? '').trim()] === (eq[2] ?? '').trim();
    if (term.startsWith('!')) return (labels) => labels[term.slice(1).trim()] === undefined;
    return (labels) => labels[term] !== undefined;
  });
  return (labels) => tests.every((t) => t(labels));
}
