// The objects the agent owns for one leader, as the importer last saw them: by object key and
// by the ResourceImport that produced them, each counted against its admission group.
import type { ImportCapacity } from './capacity.js';
import type { ObjectRef, PlainObject } from './local-store.js';
import { addTo, removeFrom } from './multimap.js';

export interface Owned {
  readonly ref: ObjectRef;
  readonly riName: string;
  readonly group: string;
  live: PlainObject;
  /** A delete is in flight: nobody deletes it again. */
  deleting: boolean;
  /** A replace failed: `live` may be outdated, re-read it before comparing. */
  stale?: boolean;
}

export class OwnedIndex {
  readonly #byKey = new Map<string, Owned>();
  readonly #byRI = new Map<string, Set<string>>();

  constructor(private readonly capacity: Pick<ImportCapacity, 'objectAdded' | 'objectRemoved' | 'forgetObjects'>) {}

  get size(): number {
    return this.#byKey.size;
  }

  get(key: string): Owned | undefined {
    return this.#byKey.get(key);
  }

  set(key: string, entry: Owned): void {
    const previous = this.#byKey.get(key);
    if (previous) this.#untrack(key, previous);
    this.#byKey.set(key, entry);
    addTo(this.#byRI, entry.riName, key);
    this.capacity.objectAdded(entry.group);
  }

  /** Removes the entry; its group's slots stay reserved until the caller releases them. */
  drop(key: string): Owned | undefined {
    const entry = this.#byKey.get(key);
    if (!entry) return undefined;
    this.#byKey.delete(key);
    this.#untrack(key, entry);
    return entry;
  }

  /** The objects `riName` produced, by key. */
  ofRI(riName: string): Map<string, Owned> {
    const result = new Map<string, Owned>();
    for (const key of this.#byRI.get(riName) ?? []) {
      const entry = this.#byKey.get(key);
      if (entry) result.set(key, entry);
    }
    return result;
  }

  /** The RIs that own objects. */
  riNames(): MapIterator<string> {
    return this.#byRI.keys();
  }

  /** Forgets every entry, and their counts in the capacity ledger (not its reservations). */
  clear(): void {
    this.#byKey.clear();
    this.#byRI.clear();
    this.capacity.forgetObjects();
  }

  #untrack(key: string, entry: Owned): void {
    removeFrom(this.#byRI, entry.riName, key);
    this.capacity.objectRemoved(entry.group);
  }
}
