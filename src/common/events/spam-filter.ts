// The spam filter after client-go's EventSourceObjectSpamFilter: a token bucket per
// source+object, burst 25, refilled by one token every 5 minutes. Requests beyond are refused
// and counted. Pure: the caller passes the time and writes the log lines it is handed.
//
// The buckets are bounded: one untouched long enough to be full again is forgotten, and an
// LRU cap (client-go's 4096) holds the size.
import { DropReport } from './drop-report.js';
import { touch } from './lru.js';

export interface SpamFilterSettings {
  readonly burst: number;
  /** One token per this many ms. */
  readonly refillMs: number;
  /** At most one log line per object per window about refused requests. */
  readonly windowMs: number;
  /** LRU cap of the buckets. */
  readonly maxEntries: number;
}

/** A log line owed about an object's refused requests. */
export interface RateLimitDrops {
  readonly object: string;
  readonly dropped: number;
}

export type SpamDecision =
  | { readonly allowed: true }
  /** `logDropped`: the refusals to log now, absent while the last line is recent. */
  | { readonly allowed: false; readonly logDropped?: RateLimitDrops };

interface SpamRecord {
  tokens: number;
  last: number;
  readonly object: string;
  readonly drops: DropReport;
}

export class SpamFilter {
  readonly #settings: SpamFilterSettings;
  // In least-recently-used order.
  readonly #sources = new Map<string, SpamRecord>();
  #refused = 0;

  constructor(settings: SpamFilterSettings) {
    this.#settings = settings;
  }

  get size(): number {
    return this.#sources.size;
  }

  /** Requests refused so far. */
  get refused(): number {
    return this.#refused;
  }

  /** Takes a token from the source's bucket, which starts full. `object` names it in log lines. */
  allow(source: string, object: string, now: number): SpamDecision {
    const { burst, refillMs, windowMs } = this.#settings;
    let bucket = this.#sources.get(source);
    if (bucket === undefined) {
      bucket = { tokens: burst, last: now, object, drops: new DropReport(windowMs) };
    } else {
      bucket.tokens = Math.min(burst, bucket.tokens + Math.max(0, now - bucket.last) / refillMs);
      bucket.last = now;
    }
    touch(this.#sources, source, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    this.#refused += 1;
    const dropped = bucket.drops.note(now);
    return dropped === undefined ? { allowed: false } : { allowed: false, logDropped: { object: bucket.object, dropped } };
  }

  /** Forgets the buckets that are full again; returns the refusals they had not logged yet. */
  expire(now: number): RateLimitDrops[] {
    const lines: RateLimitDrops[] = [];
    // A bucket untouched for burst * refill is full again: the same as having none.
    for (const [key, bucket] of this.#sources) {
      if (now - bucket.last < this.#settings.burst * this.#settings.refillMs) break;
      this.#evict(key, bucket, now, lines);
    }
    return lines;
  }

  /** Evicts the least recently used buckets beyond the cap; returns their unlogged refusals. */
  cap(now: number): RateLimitDrops[] {
    const lines: RateLimitDrops[] = [];
    for (const [key, bucket] of this.#sources) {
      if (this.#sources.size <= this.#settings.maxEntries) break;
      this.#evict(key, bucket, now, lines);
    }
    return lines;
  }

  /** The refusals not logged yet, per object, for a last word at stop. */
  unreported(now: number): RateLimitDrops[] {
    const lines: RateLimitDrops[] = [];
    for (const bucket of this.#sources.values()) {
      const dropped = bucket.drops.unreported(now);
      if (dropped !== undefined) lines.push({ object: bucket.object, dropped });
    }
    return lines;
  }

  #evict(key: string, bucket: SpamRecord, now: number, lines: RateLimitDrops[]): void {
    this.#sources.delete(key);
    const dropped = bucket.drops.unreported(now);
    if (dropped !== undefined) lines.push({ object: bucket.object, dropped });
  }
}
