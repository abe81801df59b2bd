// Which names of the member's Endpoints and ServiceImports are taken, from watches, so that
// the claim check of an imported Service (applier.ts `claim`) needs no GET when its names are
// free, which they are for nearly every new Service. Without it every new Service cost two
// GETs before its first create (2,505 member requests instead of 1,510 for 1,500 objects in
// `npm run bench:imports`). Only existence is kept (name, namespace): whether a taken name is
// ours is still read from the live object, on the rare path where a name is taken.
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { ResilientInformer, type InformerLogger } from '../common/kube/informer.js';
import type { JsonClient } from '../common/kube/json-client.js';
import { collectionPath, type KindRef, type ObjectRef } from './local-store.js';
import { listAllPages } from '../common/kube/paginate.js';
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import type { ResourceDescriptor } from '../common/api/meta.js';

export interface TakenNames {
  /**
   * Whether an object holds `ref`'s name: `false` only when a synced, connected watch of its
   * kind has not seen one (then no GET is needed); `undefined` when the kind is not watched or
   * its watch cannot be trusted now (the caller reads the object).
   */
  holds(ref: ObjectRef): boolean | undefined;
}

/** The kinds whose names an imported Service claims before its Service is created (groups.ts). */
export const WATCHED_NAME_KINDS: readonly KindRef[] = [
  { group: '', version: 'v1', plural: 'endpoints', namespaced: true },
  { group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespaced: true },
];

/** What a name needs to be known: the object reduced to its name (a cluster's Endpoints may be many and large). */
export function nameOnly(obj: KubernetesObject): KubernetesObject {
  const { name, namespace, resourceVersion } = obj.metadata ?? {};
  return { metadata: { ...(name !== undefined && { name }), ...(namespace !== undefined && { namespace }), ...(resourceVersion !== undefined && { resourceVersion }) } };
}

/**
 * A LIST answer as a list. An empty PartialObjectMetadataList carries `items: null` (a nil Go
 * slice): that is an empty list, not a bad answer.
 */
export function namesList(list: Record<string, unknown>, plural: string): KubernetesListObject<KubernetesObject> {
  if (list['items'] === null) return { ...list, items: [] };
  if (!Array.isArray(list['items'])) throw new Error(`listing ${plural}: the answer has no items array`);
  return list as unknown as KubernetesListObject<KubernetesObject>;
}

const kindKey = (kind: Pick<KindRef, 'group' | 'plural'>) => `${kind.group}/${kind.plural}`;

/** The parts of an informer this needs (a ResilientInformer; a fake in unit tests). */
export interface NameCache {
  readonly hasSynced: boolean;
  readonly lastError: unknown;
  get(name: string, namespace?: string): unknown;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export class WatchedNames implements TakenNames {
  readonly #caches: Map<string, NameCache>;

  constructor(caches: ReadonlyMap<string, NameCache>) {
    this.#caches = new Map(caches);
  }

  /** One cluster-wide, name-only informer per kind of {@link WATCHED_NAME_KINDS}. */
  static watching(client: JsonClient, logger: InformerLogger, serviceImport: ResourceDescriptor = SERVICE_IMPORT): WatchedNames {
    const caches = new Map<string, NameCache>();
    // ServiceImports in the version the member serves.
    for (const kind of WATCHED_NAME_KINDS.map((k) => k.plural === serviceImport.plural && k.group === serviceImport.group ? { ...k, version: serviceImport.version } : k)) {
      const path = collectionPath(kind, undefined);
      caches.set(kindKey(kind), new ResilientInformer<KubernetesObject>({
        name: `${kind.plural} (names)`, path, watch: client, logger,
        list: async () => {
          // Each page checked as it comes, then one list of them all.
          return listAllPages(async (page) => namesList(await client.request('GET', path, { query: { limit: page.limit, continue: page.continue } }), kind.plural));
        },
        transform: nameOnly,
      }));
    }
    return new WatchedNames(caches);
  }

  holds(ref: ObjectRef): boolean | undefined {
    const cache = this.#caches.get(kindKey(ref));
    // Not synced yet, or in an outage (the cache may miss what was created meanwhile): unknown.
    if (!cache?.hasSynced || cache.lastError !== undefined) return undefined;
    return cache.get(ref.name, ref.namespaced ? ref.namespace : undefined) !== undefined;
  }

  /**
   * Starts every watch without waiting for them: until one has synced its kind's names are
   * read from the objects, as they were before (a missing ServiceImport CRD never syncs).
   */
  start(): void {
    for (const cache of this.#caches.values()) cache.start().catch(() => undefined);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#caches.values()].map((cache) => cache.stop()));
  }
}
