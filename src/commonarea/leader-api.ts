// Every call the agent makes to a leader, scoped to the leader namespace (the member's
// Role grants nothing else). An interface, so the heartbeat and the importer can be unit
// tested with an in-memory fake; the real one is built from the leader credentials.
//
// Every answer is checked before anyone believes it: an HTTPS endpoint the CA trusts is not
// necessarily the leader's API server (a load balancer's maintenance page answers 200
// text/html), and a "successful" heartbeat or an empty import list from such a thing would
// fake liveness or make the importer delete every import.
import type { ResourceDescriptor } from '../common/api/meta.js';
import {
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type MemberClusterAnnounce,
  type ResourceExport,
  type ResourceExportList,
  type ResourceImport,
  type ResourceImportList,
} from '../common/api/antrea.js';
import type { ClientBudget } from '../common/kube/client-budget.js';
import type { WatchLike } from '../common/kube/informer.js';
import { createRestClient, type Expectation } from '../common/kube/rest-client.js';
import type { LeaderCredentials } from './credentials.js';
import { isRecord } from '../common/kube/json.js';
import { listAllPages } from '../common/kube/paginate.js';

export interface LeaderApi {
  readonly server: string;
  readonly namespace: string;
  getAnnounce(name: string): Promise<MemberClusterAnnounce>;
  createAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce>;
  replaceAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce>;
  /** With a uid precondition when given: never deletes an object that replaced ours. */
  deleteAnnounce(name: string, uid?: string): Promise<void>;
  listResourceImports(): Promise<ResourceImportList>;
  /** This member's exports, e.g. `sourceClusterID=east` (a Kubernetes label selector; '' lists all). */
  listResourceExports(labelSelector: string): Promise<ResourceExportList>;
  getResourceExport(name: string): Promise<ResourceExport>;
  createResourceExport(body: ResourceExport): Promise<ResourceExport>;
  /** PUT; `body.metadata.resourceVersion` makes it conditional (409 Conflict when stale). */
  replaceResourceExport(body: ResourceExport): Promise<ResourceExport>;
  /**
   * With a uid precondition when given. Resolves both when the object is gone and when the
   * leader's finalizer keeps it (deletionTimestamp set) until the leader has cleaned up.
   */
  deleteResourceExport(name: string, uid?: string): Promise<void>;
  /** Records an Event in the leader namespace (the member Role grants `events create`, nothing more). */
  createEvent(body: LeaderEvent): Promise<void>;
  /** For informers: the collection path and a watch bound to the same connection pool. */
  readonly resourceImportsPath: string;
  /** Validated: every event object must be a ResourceImport of the leader namespace. */
  readonly watch: WatchLike;
  /**
   * This member's exports, for an informer: the collection path and a watch validated for
   * ResourceExports. The exporter learns the leader's verdicts on its exports only from it.
   */
  readonly exportsWatch: { readonly path: string; readonly watch: WatchLike };
  /**
   * Whether the leader's API discovery (`/apis`, a Kubernetes APIGroupList) lists the
   * multicluster group version. Tells a Kubernetes API server without the CRDs (whose unknown
   * paths answer a plain-text `404 page not found`) from something else answering 404.
   * Throws when `/apis` is not a Kubernetes discovery answer.
   */
  servesMulticlusterGroup(): Promise<boolean>;
  /** Closes idle keep-alive connections; the api must not be used afterwards. */
  close(): void;
}

/** A core/v1 Event about an object of the leader namespace, as a member records it there. */
export interface LeaderEvent {
  readonly apiVersion: 'v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly involvedObject: { readonly apiVersion: string; readonly kind: string; readonly name: string; readonly namespace: string; readonly uid?: string };
  readonly reason: string;
  readonly message: string;
  readonly type: 'Normal' | 'Warning';
  readonly source: { readonly component: string };
  readonly reportingComponent: string;
  readonly reportingInstance: string;
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly count: number;
}

// A full list of thousands of ResourceImports legitimately takes longer than a heartbeat.
const LIST_TIMEOUT_MS = 120_000;

function show(value: unknown): string {
  if (value === undefined) return 'none';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}


function kindProblem(obj: Record<string, unknown>, kind: string, apiVersion: string): string | undefined {
  if (obj.kind === kind && obj.apiVersion === apiVersion) return undefined;
  return `expected kind ${kind} (${apiVersion}), got kind ${show(obj.kind)} apiVersion ${show(obj.apiVersion)}`;
}

/** Checks kind, apiVersion, and that the object is `name` (when given) in `namespace` (when it says). */
export function objectProblem(obj: Record<string, unknown>, resource: ResourceDescriptor, namespace: string, name?: string): string | undefined {
  const wrongKind = kindProblem(obj, resource.kind, resource.apiVersion);
  if (wrongKind !== undefined) return wrongKind;
  const { metadata } = obj;
  if (!isRecord(metadata) || typeof metadata.name !== 'string') return `expected ${resource.kind} metadata.name, got metadata ${show(metadata)}`;
  if (name !== undefined && metadata.name !== name) return `expected ${resource.kind} ${show(name)}, got ${show(metadata.name)}`;
  if (metadata.namespace !== undefined && metadata.namespace !== namespace) {
    return `expected namespace ${show(namespace)}, got ${resource.kind} ${show(metadata.name)} in namespace ${show(metadata.namespace)}`;
  }
  return undefined;
}

/** A `<Kind>List` of this namespace whose every item is a `<Kind>`, with a resourceVersion to watch from. */
function listProblem(obj: Record<string, unknown>, resource: ResourceDescriptor, namespace: string): string | undefined {
  const wrongKind = kindProblem(obj, `${resource.kind}List`, resource.apiVersion);
  if (wrongKind !== undefined) return wrongKind;
  if (!isRecord(obj.metadata) || typeof obj.metadata.resourceVersion !== 'string') {
    return `expected ${resource.kind}List metadata.resourceVersion, got metadata ${show(obj.metadata)}`;
  }
  if (!Array.isArray(obj.items)) return `expected ${resource.kind}List items to be an array, got ${show(obj.items)}`;
  for (const [index, item] of (obj.items as unknown[]).entries()) {
    const problem = isRecord(item) ? objectProblem(item, resource, namespace) : `expected an object, got ${show(item)}`;
    if (problem !== undefined) return `items[${String(index)}]: ${problem}`;
  }
  return undefined;
}

export function createLeaderApi(credentials: LeaderCredentials, namespace: string, requestTimeoutMs: number, budget?: ClientBudget): LeaderApi {
  const client = createRestClient({
    server: credentials.server, caPem: credentials.caPem, token: credentials.token, timeoutMs: requestTimeoutMs, peer: 'leader',
    ...(budget !== undefined && { budget }),
  });
  const collection = (resource: ResourceDescriptor): string =>
    `/apis/${resource.group}/${resource.version}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`;
  const announces = collection(MEMBER_CLUSTER_ANNOUNCE);
  const announcePath = (name: string): string => `${announces}/${encodeURIComponent(name)}`;
  const announce = (name: string): Expectation => (obj) => objectProblem(obj, MEMBER_CLUSTER_ANNOUNCE, namespace, name);
  const nameOf = (body: MemberClusterAnnounce | ResourceExport, kind: string = MEMBER_CLUSTER_ANNOUNCE.kind): string => {
    const name = body.metadata?.name;
    if (name === undefined || name === '') throw new TypeError(`a ${kind} needs metadata.name`);
    return name;
  };
  const exports = collection(RESOURCE_EXPORT);
  const exportPath = (name: string): string => `${exports}/${encodeURIComponent(name)}`;
  const resourceExport = (name: string): Expectation => (obj) => objectProblem(obj, RESOURCE_EXPORT, namespace, name);
  // 200 with a Status when the object is gone at once; 200/202 with the object itself when
  // finalizers keep it until they are removed.
  const deleteObject = async (resource: ResourceDescriptor, path: string, name: string, uid: string | undefined): Promise<void> => {
    const options = uid === undefined ? undefined : { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid } };
    await client.request('DELETE', path, {
      ...(options !== undefined && { body: options }),
      expect: (obj) => {
        if (obj.kind === 'Status') return obj.status === 'Success' ? undefined : `expected a Status with status "Success", got status ${show(obj.status)}`;
        return objectProblem(obj, resource, namespace, name);
      },
    });
  };
  // Bookmarks carry only metadata.resourceVersion, so only their kind is checked.
  const exportEvent: Expectation = (obj, type) => (type === 'BOOKMARK'
    ? kindProblem(obj, RESOURCE_EXPORT.kind, RESOURCE_EXPORT.apiVersion)
    : objectProblem(obj, RESOURCE_EXPORT, namespace));
  const importEvent: Expectation = (obj, type) => (type === 'BOOKMARK'
    ? kindProblem(obj, RESOURCE_IMPORT.kind, RESOURCE_IMPORT.apiVersion)
    : objectProblem(obj, RESOURCE_IMPORT, namespace));

  return {
    server: credentials.server,
    namespace,
    getAnnounce: (name) => client.request<MemberClusterAnnounce>('GET', announcePath(name), { expect: announce(name) }),
    createAnnounce: async (body) => {
      const name = nameOf(body);
      return client.request<MemberClusterAnnounce>('POST', announces, { body, expect: announce(name) });
    },
    replaceAnnounce: async (body) => {
      const name = nameOf(body);
      return client.request<MemberClusterAnnounce>('PUT', announcePath(name), { body, expect: announce(name) });
    },
    deleteAnnounce: (name, uid) => deleteObject(MEMBER_CLUSTER_ANNOUNCE, announcePath(name), name, uid),
    // In pages: each answer under the client's byte cap, however many imports the leader holds.
    listResourceImports: () => listAllPages((page) => client.request<ResourceImportList>('GET', collection(RESOURCE_IMPORT), {
      query: { limit: page.limit, continue: page.continue },
      timeoutMs: Math.max(requestTimeoutMs, LIST_TIMEOUT_MS),
      expect: (obj) => listProblem(obj, RESOURCE_IMPORT, namespace),
    })),
    listResourceExports: (labelSelector) => listAllPages((page) => client.request<ResourceExportList>('GET', exports, {
      query: { ...(labelSelector !== '' && { labelSelector }), limit: page.limit, continue: page.continue },
      timeoutMs: Math.max(requestTimeoutMs, LIST_TIMEOUT_MS),
      expect: (obj) => listProblem(obj, RESOURCE_EXPORT, namespace),
    })),
    getResourceExport: (name) => client.request<ResourceExport>('GET', exportPath(name), { expect: resourceExport(name) }),
    createResourceExport: async (body) => {
      const name = nameOf(body, RESOURCE_EXPORT.kind);
      return client.request<ResourceExport>('POST', exports, { body, expect: resourceExport(name) });
    },
    replaceResourceExport: async (body) => {
      const name = nameOf(body, RESOURCE_EXPORT.kind);
      return client.request<ResourceExport>('PUT', exportPath(name), { body, expect: resourceExport(name) });
    },
    deleteResourceExport: (name, uid) => deleteObject(RESOURCE_EXPORT, exportPath(name), name, uid),
    createEvent: async (body) => {
      await client.request('POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
        body,
        expect: (obj) => kindProblem(obj, 'Event', 'v1') ?? (isRecord(obj.metadata) && obj.metadata.name === body.metadata.name ? undefined : `expected Event ${show(body.metadata.name)}`),
      });
    },
    async servesMulticlusterGroup() {
      const list = await client.request<{ groups?: { name?: string; versions?: { version?: string }[] }[] }>('GET', '/apis', {
        expect: (obj) => kindProblem(obj, 'APIGroupList', 'v1') ?? (Array.isArray(obj.groups) ? undefined : 'expected a list of groups'),
      });
      return (list.groups ?? []).some((g) => g.name === MEMBER_CLUSTER_ANNOUNCE.group && (g.versions ?? []).some((v) => v.version === MEMBER_CLUSTER_ANNOUNCE.version));
    },
    resourceImportsPath: collection(RESOURCE_IMPORT),
    watch: { watch: (path, query, callback, done) => client.watch(path, query, callback, done, importEvent) },
    exportsWatch: { path: exports, watch: { watch: (path, query, callback, done) => client.watch(path, query, callback, done, exportEvent) } },
    close: () => { client.close(); },
  };
}

export type { ResourceImport };
