// What the exporter knows of its ResourceExports on the leader: each RE as last seen, by name
// and by the export (queue key) it belongs to. Rebuilt from the labelled list at every full
// sync, kept current by the answers to our writes and reads (resource-export-writer.ts) and by
// the watch (observe), which lags behind those answers: an event older than the version held
// is ignored. In memory, no I/O; the reconcile reads the leader's verdict from it.
import type { ResourceExport } from '../common/api/antrea.js';
import { isTerminating, keyOfExport, nameOf } from './export-keys.js';

export interface Known {
  readonly key: string;
  live: ResourceExport;
  /**
   * The resourceVersion our own last create or replace returned: while `live` is still that
   * version, its status is what the leader said about the spec before (or nothing), not a
   * verdict on what we wrote.
   */
  readonly writtenVersion?: string | undefined;
  /** A write failed: `live` may be outdated, re-read it before using it. */
  stale?: boolean;
}

/** What a watch event changed: the export to reconcile, and whether our RE is gone (or going). */
export interface Observed {
  readonly key: string;
  readonly dropped: boolean;
}

/**
 * Whether resourceVersion `a` is older than `b`. Kubernetes calls them opaque, but
 * kube-apiserver's are etcd revisions, one counter for every object of the cluster; anything
 * else is never called older (the event is then taken, as before).
 */
export function olderVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || !/^[0-9]{1,30}$/.test(a) || !/^[0-9]{1,30}$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

export class KnownExports {
  /** Our REs on the leader as last seen, by name. */
  readonly #known = new Map<string, Known>();
  readonly #byKey = new Map<string, Set<string>>();

  constructor(private readonly localClusterID: string) {}

  get size(): number {
    return this.#known.size;
  }

  get(name: string): Known | undefined {
    return this.#known.get(name);
  }

  /** Whether some RE of `key` is known. */
  has(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** The keys that have a known RE. */
  keys(): IterableIterator<string> {
    return this.#byKey.keys();
  }

  /** The names of the REs of `key`: a copy, as callers write (and so reindex) while going through them. */
  namesOf(key: string): string[] {
    return [...(this.#byKey.get(key) ?? [])];
  }

  /** What is known of the REs of `key`. */
  entriesOf(key: string): Known[] {
    return this.namesOf(key).map((name) => this.#known.get(name)).filter((e) => e !== undefined);
  }

  /** Ours unless its spec names another cluster (the label selector says ours, the spec must agree). */
  ours(re: ResourceExport): boolean {
    return re.spec?.clusterID === undefined || re.spec.clusterID === this.localClusterID;
  }

  /** `written`: `live` is the answer to our own write (see {@link Known.writtenVersion}). */
  set(name: string, key: string, live: ResourceExport, written = false): Known {
    const previous = this.#known.get(name);
    if (previous && previous.key !== key) this.unindex(name, previous.key);
    const writtenVersion = written ? live.metadata?.resourceVersion : previous?.key === key ? previous.writtenVersion : undefined;
    const entry: Known = { key, live, ...(writtenVersion !== undefined && { writtenVersion }) };
    this.#known.set(name, entry);
    let names = this.#byKey.get(key);
    if (!names) {
      names = new Set();
      this.#byKey.set(key, names);
    }
    names.add(name);
    return entry;
  }

  drop(name: string): void {
    const entry = this.#known.get(name);
    if (!entry) return;
    this.#known.delete(name);
    this.unindex(name, entry.key);
  }

  clear(): void {
    this.#known.clear();
    this.#byKey.clear();
  }

  /** Starts over from the list of our REs (a full sync); leaves out those of others, unknown kinds and those being deleted. */
  rebuild(items: readonly ResourceExport[]): void {
    this.clear();
    for (const re of items) {
      if (!this.ours(re)) continue;
      const key = keyOfExport(re);
      if (key === undefined || isTerminating(re)) continue;
      this.set(nameOf(re), key, re);
    }
  }

  /**
   * One of our REs changed on the leader, as the watch reports it: deleted or edited by someone
   * else, or judged by the leader. Returns the export to reconcile, or undefined when the event
   * changes nothing: another cluster's RE or an unknown kind, our own write coming back with
   * the version we already hold, or a version older than it.
   */
  observe(re: ResourceExport, deleted: boolean): Observed | undefined {
    if (!this.ours(re)) return undefined;
    const name = nameOf(re);
    const entry = this.#known.get(name);
    const key = entry?.key ?? keyOfExport(re);
    if (key === undefined) return undefined;
    if (deleted || isTerminating(re)) {
      if (!entry) return { key, dropped: false };
      this.drop(name);
      return { key, dropped: true };
    }
    if (entry) {
      if (entry.live.metadata?.resourceVersion === re.metadata?.resourceVersion) return undefined;
      // The watch lags behind the answers to our own writes and reads: an event can bring a
      // version older than the one we hold (e.g. the leader's verdict on the spec before our
      // replace). Taking it would show that verdict as current and PUT over a stale version.
      // (A leader restored from an etcd backup, whose revisions went back, is caught by the
      // next full sync, which rebuilds the index from a list.)
      if (olderVersion(re.metadata?.resourceVersion, entry.live.metadata?.resourceVersion)) return undefined;
      this.set(name, key, re);
    }
    // Unknown ones too: a leftover is withdrawn, one of ours adopted, by the reconcile.
    return { key, dropped: false };
  }

  private unindex(name: string, key: string): void {
    const names = this.#byKey.get(key);
    if (!names) return;
    names.delete(name);
    if (names.size === 0) this.#byKey.delete(key);
  }
}
