/**
 * One shared copy of the short strings that repeat across the objects the agent keeps.
 *
 * V8's JSON.parse shares property names but gives every string value its own copy, so each
 * cached ResourceImport and each imported object carried its own "antrea-multicluster", label
 * values, apiVersion, kind, hash and timestamp (a heap snapshot of a 10,000-object sync: 17.7
 * MiB of strings, 11.0 once deduplicated).
 *
 * Bounded in two generations: a string seen again while in the older one moves to the newer
 * one, and the older one is dropped when the newer one fills. A string that recurs stays;
 * unique ones (names, IPs) age out, so the pool never holds more than 2 × `capacity` strings,
 * whatever the agent has seen.
 */
export class StringPool {
  #young = new Map<string, string>();
  #old = new Map<string, string>();

  /**
   * @param capacity strings per generation
   * @param maxLength longer strings are left alone (they rarely repeat, and comparing costs)
   */
  constructor(private readonly capacity = 8192, private readonly maxLength = 64) {}

  get size(): number {
    return this.#young.size + this.#old.size;
  }

  intern(value: string): string {
    if (value.length > this.maxLength) return value;
    const young = this.#young.get(value);
    if (young !== undefined) return young;
    const kept = this.#old.get(value) ?? value;
    if (this.#young.size >= this.capacity) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(kept, kept);
    return kept;
  }

  /**
   * Replaces, in place, every string value in `value` (objects and arrays, at any depth) by its
   * pooled copy, except those under `skipKeys`, which never repeat and would only churn the pool.
   */
  internValues<T>(value: T, skipKeys: ReadonlySet<string> = UNIQUE_KEYS): T {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'string') value[i] = this.intern(item);
        else if (typeof item === 'object' && item !== null) this.internValues(item, skipKeys);
      }
    } else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const item = record[key];
        if (typeof item === 'string') {
          if (!skipKeys.has(key)) record[key] = this.intern(item);
        } else if (typeof item === 'object' && item !== null) {
          this.internValues(item, skipKeys);
        }
      }
    }
    return value;
  }
}

/** Metadata fields that are unique per object (or per write). */
const UNIQUE_KEYS: ReadonlySet<string> = new Set(['uid', 'resourceVersion']);

/** The pool every cache of the agent shares. */
export const sharedStrings = new StringPool();
