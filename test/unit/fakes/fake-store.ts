// An in-memory member cluster behind the LocalStore interface: answers like the apiserver
// (404 NotFound, 409 AlreadyExists, 409 Conflict on a stale resourceVersion, a ClusterIP for
// every Service), counts every call, can slow or hold any verb and fail the next call, and
// records the most objects of the agent it ever held at once (so a test can check a cap at
// every instant, not only at the end).
import type { KindRef, LocalStore, ObjectRef, PlainObject } from '../../../src/importer/local-store.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../../../src/importer/ownership.js';
import { apiError } from './fake-leader.js';

export type StoreVerb = 'get' | 'create' | 'replace' | 'status' | 'delete' | 'list';

export function storeKey(ref: { group: string; plural: string; namespace?: string | undefined; name: string }): string {
  return `${ref.group}/${ref.plural}/${ref.namespace ?? ''}/${ref.name}`;
}

function matches(labels: Record<string, string> | undefined, selector: string): boolean {
  return selector.split(',').filter(Boolean).every((term) => {
    const [k = '', v = ''] = term.split('=');
    return labels?.[k] === v;
  });
}

export class FakeStore implements LocalStore {
  readonly objects = new Map<string, PlainObject>();
  /** Every call, as `verb key` (`list group/plural` for lists), in order. */
  readonly calls: string[] = [];
  /** Every `group/version/plural` a call addressed (which version of a kind the agent speaks). */
  readonly versions = new Set<string>();
  /** The most objects labelled managed-by=clusterset-agent that existed at the same time. */
  maxOwned = 0;
  /** Status fields the kind's schema lacks: a status write drops them, as kube-apiserver prunes unknown fields. */
  readonly prunedStatusFields = new Set<string>();
  /** Milliseconds each call of a verb takes; a function for varied latencies. */
  latency: Partial<Record<StoreVerb, number | (() => number)>> = {};
  readonly #held = new Map<StoreVerb, { promise: Promise<void>; release: () => void }>();
  readonly #failures: { verb: StoreVerb; err: Error }[] = [];
  #rv = 1;
  #ip = 1;
  #pending = 0;

  /** Calls of `verb` wait (after being counted) until the returned function is called. */
  hold(verb: StoreVerb): () => void {
    const { promise, resolve } = Promise.withResolvers<undefined>();
    const release = () => {
      if (this.#held.get(verb)?.promise === promise) this.#held.delete(verb);
      resolve(undefined);
    };
    this.#held.set(verb, { promise, release });
    return release;
  }

  failNext(verb: StoreVerb, err: Error): void {
    this.#failures.push({ verb, err });
  }

  count(verb: StoreVerb, key?: string): number {
    const prefix = key === undefined ? `${verb} ` : `${verb} ${key}`;
    return this.calls.filter((c) => (key === undefined ? c.startsWith(prefix) : c === prefix)).length;
  }

  /** Calls in flight (started, not answered). */
  get pending(): number {
    return this.#pending;
  }

  ownedNow(): number {
    let n = 0;
    for (const o of this.objects.values()) if (o.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE) n += 1;
    return n;
  }

  /** Puts an object in place directly (as if it existed before the test). */
  seed(ref: ObjectRef, body: PlainObject): void {
    this.objects.set(storeKey(ref), this.#stamp(ref, body));
  }

  async #enter(verb: StoreVerb, key: string, kind: KindRef): Promise<void> {
    this.calls.push(`${verb} ${key}`);
    this.versions.add(`${kind.group}/${kind.version}/${kind.plural}`);
    this.#pending += 1;
    try {
      const held = this.#held.get(verb);
      if (held) await held.promise;
      const latency = this.latency[verb];
      const ms = typeof latency === 'function' ? latency() : latency;
      if (ms !== undefined && ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
      const failure = this.#failures.findIndex((f) => f.verb === verb);
      if (failure !== -1) {
        const [next] = this.#failures.splice(failure, 1);
        if (next) throw next.err;
      }
    } finally {
      this.#pending -= 1;
    }
  }

  /** `uid`: the object's uid, kept by a replace as kube-apiserver keeps it; a create makes a new one. */
  #stamp(ref: ObjectRef, body: PlainObject, uid?: string): PlainObject {
    this.#rv += 1;
    const copy = structuredClone(body) as PlainObject & { spec?: Record<string, unknown> };
    copy.metadata = { ...copy.metadata, name: ref.name, ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}), resourceVersion: String(this.#rv), uid: uid ?? `uid-${String(this.#rv)}` };
    if (ref.group === '' && ref.plural === 'services' && copy.spec?.['clusterIP'] === undefined) {
      this.#ip += 1;
      copy.spec = { ...copy.spec, clusterIP: `10.96.${String(Math.floor(this.#ip / 250))}.${String((this.#ip % 250) + 1)}` };
    }
    return copy;
  }

  #notFound(ref: ObjectRef): Error {
    return apiError(404, 'NotFound', `${ref.plural} "${ref.name}" not found`, { name: ref.name, kind: ref.plural });
  }

  async get(ref: ObjectRef): Promise<PlainObject> {
    const key = storeKey(ref);
    await this.#enter('get', key, ref);
    const found = this.objects.get(key);
    if (!found) throw this.#notFound(ref);
    return structuredClone(found);
  }

  async create(ref: ObjectRef, body: PlainObject): Promise<PlainObject> {
    const key = storeKey(ref);
    await this.#enter('create', key, ref);
    if (this.objects.has(key)) throw apiError(409, 'AlreadyExists', `${ref.plural} "${ref.name}" already exists`, { name: ref.name, kind: ref.plural });
    const stored = this.#stamp(ref, body);
    this.objects.set(key, stored);
    this.maxOwned = Math.max(this.maxOwned, this.ownedNow());
    return structuredClone(stored);
  }

  /** The stored object `body` replaces: 404 when there is none, 409 when `body` names another resourceVersion. */
  #current(key: string, ref: ObjectRef, body: PlainObject): PlainObject {
    const current = this.objects.get(key);
    if (!current) throw this.#notFound(ref);
    const rv = body.metadata?.resourceVersion;
    if (rv !== undefined && rv !== current.metadata?.resourceVersion) {
      throw apiError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
    }
    return current;
  }

  async replace(ref: ObjectRef, body: PlainObject): Promise<PlainObject> {
    const key = storeKey(ref);
    await this.#enter('replace', key, ref);
    const current = this.#current(key, ref, body);
    const stored = this.#stamp(ref, body, current.metadata?.uid);
    this.objects.set(key, stored);
    this.maxOwned = Math.max(this.maxOwned, this.ownedNow());
    return structuredClone(stored);
  }

  /** The `status` subresource: only `status` changes, the rest is the stored object's. */
  async replaceStatus(ref: ObjectRef, body: PlainObject): Promise<PlainObject> {
    const key = storeKey(ref);
    await this.#enter('status', key, ref);
    const current = this.#current(key, ref, body);
    const status = Object.fromEntries(Object.entries((body['status'] ?? {}) as Record<string, unknown>).filter(([field]) => !this.prunedStatusFields.has(field)));
    const stored = this.#stamp(ref, { ...current, status }, current.metadata?.uid);
    this.objects.set(key, stored);
    return structuredClone(stored);
  }

  async delete(ref: ObjectRef): Promise<void> {
    const key = storeKey(ref);
    await this.#enter('delete', key, ref);
    if (!this.objects.delete(key)) throw this.#notFound(ref);
  }

  async list(kind: KindRef, labelSelector: string, namespace?: string): Promise<PlainObject[]> {
    await this.#enter('list', `${kind.group}/${kind.plural}`, kind);
    const prefix = `${kind.group}/${kind.plural}/`;
    const found: PlainObject[] = [];
    for (const [key, object] of this.objects) {
      if (!key.startsWith(prefix)) continue;
      if (namespace !== undefined && object.metadata?.namespace !== namespace) continue;
      if (!matches(object.metadata?.labels, labelSelector)) continue;
      found.push(structuredClone(object));
    }
    return found;
  }
}
