// When the leader must look at something again, for a whole fleet with one timer. Pure: fed times.
//
// Every member's announce is due for a recheck at its stale time, and at 1,000 members that was
// 1,000 timers in the work queue, each re-armed as the member beat. Deadlines keeps them all in
// one min-heap, so the controller holds a single timer at the earliest one. And the leader
// ClusterSet's status, recomputed over every member, is paced: at most one run per interval
// however many members beat (100 beats a second at 1,000 members would otherwise be 100 status
// recomputes a second, and a status write for each transition).

/** The leader ClusterSet's status is recomputed (and written) at most once per this interval. */
export const STATUS_INTERVAL_MS = 1000;

/**
 * When a status run asked for at `requestedMs` may start: not before `intervalMs` after the
 * last run started. A request after a quiet spell runs at once (leading edge), so a single
 * change is not delayed; a burst is folded into one run per interval.
 */
export function pacedRunAt(requestedMs: number, lastRunMs: number | undefined, intervalMs: number): number {
  return lastRunMs === undefined ? requestedMs : Math.max(requestedMs, lastRunMs + intervalMs);
}

/** Keys each due at a time (ms), the earliest found in O(log n): a binary min-heap with lazy deletion. */
export class Deadlines {
  /** Each key's current deadline: the truth; heap entries that disagree with it are stale. */
  readonly #at = new Map<string, number>();
  #heap: { readonly at: number; readonly key: string }[] = [];

  get size(): number {
    return this.#at.size;
  }

  /** `key` is due at `atMs`, replacing any deadline it had (a later one too: the caller recomputed it). */
  set(key: string, atMs: number): void {
    if (this.#at.get(key) === atMs) return;
    this.#at.set(key, atMs);
    this.#push({ at: atMs, key });
    // Stale entries left by replaced deadlines: rebuilt once they outnumber the live ones.
    if (this.#heap.length > 2 * this.#at.size + 16) this.#rebuild();
  }

  delete(key: string): void {
    this.#at.delete(key);
  }

  at(key: string): number | undefined {
    return this.#at.get(key);
  }

  /** The earliest deadline, or undefined when none is set. */
  earliest(): number | undefined {
    this.#dropStale();
    return this.#heap[0]?.at;
  }

  /** Removes and returns the keys due at `nowMs` (deadline ≤ now), earliest first. */
  takeDue(nowMs: number): string[] {
    const due: string[] = [];
    for (;;) {
      this.#dropStale();
      const top = this.#heap[0];
      if (top === undefined || top.at > nowMs) return due;
      this.#pop();
      this.#at.delete(top.key);
      due.push(top.key);
    }
  }

  #dropStale(): void {
    for (let top = this.#heap[0]; top !== undefined && this.#at.get(top.key) !== top.at; top = this.#heap[0]) this.#pop();
  }

  #rebuild(): void {
    this.#heap = [];
    for (const [key, at] of this.#at) this.#push({ at, key });
  }

  #push(entry: { readonly at: number; readonly key: string }): void {
    const heap = this.#heap;
    heap.push(entry);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      const [a, b] = [heap[parent], heap[i]];
      if (a === undefined || b === undefined || a.at <= b.at) break;
      [heap[parent], heap[i]] = [b, a];
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    heap[0] = last;
    for (let i = 0; ;) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let smallest = i;
      if ((heap[l]?.at ?? Infinity) < (heap[smallest]?.at ?? Infinity)) smallest = l;
      if ((heap[r]?.at ?? Infinity) < (heap[smallest]?.at ?? Infinity)) smallest = r;
      if (smallest === i) return;
      const [a, b] = [heap[i], heap[smallest]];
      if (a === undefined || b === undefined) return;
      [heap[i], heap[smallest]] = [b, a];
      i = smallest;
    }
  }
}

/** How long a status run waits for the informer to show the leader's own last status write, at most. */
export const OWN_WRITE_ECHO_GRACE_MS = 10_000;

/** The object a status write replaced: its resourceVersion, and when it was written over. */
export interface WrittenOver {
  readonly resourceVersion: string;
  readonly atMs: number;
}

/**
 * Whether the cached ClusterSet is still the copy the leader's own last status write replaced:
 * a status computed from it would be written with a stale resourceVersion, fail with a conflict
 * and be retried (and its transitions logged again) until the write's watch event arrives, which
 * on a busy API server can take longer than the pacing interval. The event brings another run;
 * after `graceMs` without it the cache is trusted again.
 */
export function behindOwnWrite(cachedResourceVersion: string | undefined, written: WrittenOver | undefined, nowMs: number, graceMs: number): boolean {
  return written !== undefined && cachedResourceVersion === written.resourceVersion && nowMs - written.atMs < graceMs;
}
