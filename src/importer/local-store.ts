// The member-side objects the importer reads and writes, as plain JSON whatever their kind:
// core Services and Endpoints go through the typed core client (the custom-objects client
// cannot address the core group), everything else through the custom-objects client.
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';

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
  delete(ref: ObjectRef): Promise<void>;
  /** Objects of the kind matching the label selector: in `namespace`, or in all namespaces. */
  list(kind: KindRef, labelSelector: string, namespace?: string): Promise<PlainObject[]>;
}

/** Typed client models carry Date objects and classes; the importer compares plain wire JSON. */
function plain(value: unknown): PlainObject {
  return JSON.parse(JSON.stringify(value)) as PlainObject;
}

export function createLocalStore(kc: KubeConfig): LocalStore {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const isCore = (k: KindRef) => k.group === '' && (k.plural === 'services' || k.plural === 'endpoints');
  const ns = (ref: ObjectRef) => ref.namespace ?? '';

  return {
    async get(ref) {
      if (isCore(ref)) {
        return plain(ref.plural === 'services'
          ? await core.readNamespacedService({ namespace: ns(ref), name: ref.name })
          : await core.readNamespacedEndpoints({ namespace: ns(ref), name: ref.name }));
      }
      const base = { group: ref.group, version: ref.version, plural: ref.plural, name: ref.name };
      return plain(ref.namespaced ? await custom.getNamespacedCustomObject({ ...base, namespace: ns(ref) }) : await custom.getClusterCustomObject(base));
    },
    async create(ref, body) {
      if (isCore(ref)) {
        return plain(ref.plural === 'services'
          ? await core.createNamespacedService({ namespace: ns(ref), body: body })
          : await core.createNamespacedEndpoints({ namespace: ns(ref), body: body }));
      }
      const base = { group: ref.group, version: ref.version, plural: ref.plural, body };
      return plain(ref.namespaced ? await custom.createNamespacedCustomObject({ ...base, namespace: ns(ref) }) : await custom.createClusterCustomObject(base));
    },
    async replace(ref, body) {
      if (isCore(ref)) {
        return plain(ref.plural === 'services'
          ? await core.replaceNamespacedService({ namespace: ns(ref), name: ref.name, body: body })
          : await core.replaceNamespacedEndpoints({ namespace: ns(ref), name: ref.name, body: body }));
      }
      const base = { group: ref.group, version: ref.version, plural: ref.plural, name: ref.name, body };
      return plain(ref.namespaced ? await custom.replaceNamespacedCustomObject({ ...base, namespace: ns(ref) }) : await custom.replaceClusterCustomObject(base));
    },
    async delete(ref) {
      if (isCore(ref)) {
        if (ref.plural === 'services') await core.deleteNamespacedService({ namespace: ns(ref), name: ref.name });
        else await core.deleteNamespacedEndpoints({ namespace: ns(ref), name: ref.name });
        return;
      }
      const base = { group: ref.group, version: ref.version, plural: ref.plural, name: ref.name };
      if (ref.namespaced) await custom.deleteNamespacedCustomObject({ ...base, namespace: ns(ref) });
      else await custom.deleteClusterCustomObject(base);
    },
    async list(kind, labelSelector, namespace) {
      if (namespace !== undefined) {
        if (isCore(kind)) throw new Error('namespaced listing of core kinds is not needed');
        const res = (await custom.listNamespacedCustomObject({ group: kind.group, version: kind.version, plural: kind.plural, namespace, labelSelector })) as { items?: unknown[] };
        return (res.items ?? []).map(plain);
      }
      if (isCore(kind)) {
        const list = kind.plural === 'services'
          ? await core.listServiceForAllNamespaces({ labelSelector })
          : await core.listEndpointsForAllNamespaces({ labelSelector });
        return list.items.map(plain);
      }
      const res = (await custom.listCustomObjectForAllNamespaces({ group: kind.group, version: kind.version, resourcePlural: kind.plural, labelSelector })) as { items?: unknown[] };
      return (res.items ?? []).map(plain);
    },
  };
}
