// The member-side objects the importer reads and writes, as plain JSON whatever their kind,
// through kube/json-client.ts (no model classes: the importer compares wire JSON).
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { compactForCache } from '../common/kube/informer.js';
import { createJsonClient, type JsonClient } from '../common/kube/json-client.js';
import { listAllPages } from '../common/kube/paginate.js';

export interface ObjectRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly namespace?: string;
  readonly name: string;
}

export type KindRef = Omit<ObjectRef, 'name' | 'namespace'>;

export type PlainObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
};

export interface LocalStore {
  get(ref: ObjectRef): Promise<PlainObject>;
  create(ref: ObjectRef, body: PlainObject): Promise<PlainObject>;
  replace(ref: ObjectRef, body: PlainObject): Promise<PlainObject>;
  /** Replaces the `status` subresource. @default absent: no status is written */
  replaceStatus?(ref: ObjectRef, body: PlainObject): Promise<PlainObject>;
  delete(ref: ObjectRef): Promise<void>;
  /** Objects of the kind matching the label selector: in `namespace`, or in all namespaces. */
  list(kind: KindRef, labelSelector: string, namespace?: string): Promise<PlainObject[]>;
}

/**
 * Compacted like a cache entry (managedFields dropped, strings shared): the importer keeps
 * every object it owns in memory, and a PUT without managedFields keeps the server's.
 */
const compact = (object: PlainObject): PlainObject => compactForCache(object as PlainObject & KubernetesObject);

/** The collection URL of a kind: `/api/v1/...` for the core group, `/apis/<group>/<version>/...` otherwise. */
export function collectionPath(kind: KindRef, namespace: string | undefined): string {
  const root = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${root}${scope}/${kind.plural}`;
}

export function createLocalStore(kc: KubeConfig, client: JsonClient = createJsonClient(kc, { who: 'member' })): LocalStore {
  const objectPath = (ref: ObjectRef) => `${collectionPath(ref, ref.namespaced ? ref.namespace ?? '' : undefined)}/${encodeURIComponent(ref.name)}`;
  return {
    get: async (ref) => compact(await client.request<PlainObject>('GET', objectPath(ref))),
    create: async (ref, body) => compact(await client.request<PlainObject>('POST', collectionPath(ref, ref.namespaced ? ref.namespace ?? '' : undefined), { body })),
    replace: async (ref, body) => compact(await client.request<PlainObject>('PUT', objectPath(ref), { body })),
    replaceStatus: async (ref, body) => compact(await client.request<PlainObject>('PUT', `${objectPath(ref)}/status`, { body })),
    async delete(ref) {
      await client.request('DELETE', objectPath(ref));
    },
    async list(kind, labelSelector, namespace) {
      const list = await listAllPages(async (page) => {
        const answer = await client.request<{ items?: unknown; metadata?: { continue?: string } }>('GET', collectionPath(kind, namespace), { query: { labelSelector, limit: page.limit, continue: page.continue } });
        if (!Array.isArray(answer.items)) throw new Error(`listing ${kind.plural}: the answer has no items array`);
        return answer as { items: PlainObject[]; metadata?: { continue?: string } };
      });
      return list.items.map(compact);
    },
  };
}
