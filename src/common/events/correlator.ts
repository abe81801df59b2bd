// Which Event an occurrence belongs to, after client-go's event correlator
// (tools/record/events_cache.go). Pure: the caller passes the time and sends the result.
//
// 1. Aggregation (client-go EventAggregator): events that differ only by message, for the same
//    source, object, type and reason, are "similar". Within a 10-minute sliding window the first
//    distinct messages get their own Event; once 10 distinct messages are seen, further new ones
//    are folded into ONE aggregate Event, "(combined from similar events): <latest message>",
//    whose count is bumped.
// 2. Deduplication (client-go eventLogger): an event seen before (same key including message,
//    or the same aggregate) is the same Event with a higher count, to be PATCHed, not created.
//
// Both caches are bounded: entries expire with the window and an LRU cap (client-go's 4096)
// holds the size.
import { createHash } from 'node:crypto';
import type { EventTarget, EventType } from './event.js';
import { touch } from './lru.js';

const MAX_MESSAGE = 1024;
const AGGREGATE_PREFIX = '(combined from similar events): ';
const SEP = '\u0000';

export interface CorrelatorSettings {
  /** Written into the keys: two components never share an Event. */
  readonly component: string;
  /** Aggregation, deduplication and cache expiry window. */
  readonly windowMs: number;
  /** Distinct messages per similar-event group before aggregating. */
  readonly maxEvents: number;
  /** LRU cap of each cache. */
  readonly maxEntries: number;
}

/** The Event an occurrence belongs to, as it stands after counting the occurrence. */
export interface Correlation {
  /** Component and object: the spam filter's key (client-go getSpamKey). */
  readonly source: string;
  /** The Event's key in the correlator's cache. */
  readonly logKey: string;
  /** The Event's metadata.name. */
  readonly name: string;
  readonly firstTimestamp: number;
  /** Occurrences of this Event within the window, this one included. */
  readonly count: number;
  /** The occurrence's message, or the aggregate's; at most 1024 characters. */
  readonly message: string;
}

interface AggregateRecord {
  /** Digests of the distinct messages seen, never more than maxEvents - 1. */
  readonly localKeys: Set<string>;
  last: number;
}

interface EventLog {
  readonly name: string;
  readonly first: number;
  count: number;
  last: number;
  /** A create was queued or sent (false again if that create was dropped). */
  created: boolean;
}

function truncate(message: string): string {
  return message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE) : message;
}

// Caches hold a digest instead of messages of up to 1 KiB each.
function digest(message: string): string {
  return createHash('sha1').update(message).digest('base64');
}

export class EventCorrelator {
  readonly #settings: CorrelatorSettings;
  // Each in least-recently-used order.
  readonly #aggregates = new Map<string, AggregateRecord>();
  readonly #events = new Map<string, EventLog>();
  #serial = 0;

  constructor(settings: CorrelatorSettings) {
    this.#settings = settings;
  }

  get size(): { readonly aggregates: number; readonly events: number } {
    return { aggregates: this.#aggregates.size, events: this.#events.size };
  }

  correlate(now: number, target: EventTarget, type: EventType, reason: string, fullMessage: string): Correlation {
    const { component, windowMs, maxEvents } = this.#settings;
    const message = truncate(fullMessage);
    // Key fields as client-go's getSpamKey / EventAggregatorByReasonFunc / getEventKey (source
    // host, fieldPath and reporting controller/instance are constant here).
    const source = [component, target.apiVersion, target.kind, target.namespace, target.name, target.uid ?? ''].join(SEP);
    const aggregateKey = `${source}${SEP}${type}${SEP}${reason}`;
    const localKey = digest(message);

    // 1. Aggregation. The window slides: every similar event extends it, as in client-go.
    let group = this.#aggregates.get(aggregateKey);
    if (group === undefined || now - group.last > windowMs) group = { localKeys: new Set(), last: now };
    group.last = now;
    touch(this.#aggregates, aggregateKey, group);
    let logKey: string;
    let eventMessage: string;
    if (group.localKeys.has(localKey) || group.localKeys.size < maxEvents - 1) {
      group.localKeys.add(localKey);
      logKey = `${aggregateKey}${SEP}${localKey}`;
      eventMessage = message;
    } else {
      // The maxEvents-th distinct message. client-go inserts it and then pops an arbitrary key
      // to cap the set; we always pop the new one, so messages already folded into the
      // aggregate keep going there and the first ones keep deduplicating onto their own Events.
      logKey = `${aggregateKey}${SEP}*`;
      eventMessage = truncate(AGGREGATE_PREFIX + message);
    }

    // 2. Deduplication: a known Event is patched; unlike client-go, entries also expire with
    // the window (the old recorder's behaviour), which keeps the cache small.
    let log = this.#events.get(logKey);
    if (log === undefined || now - log.last > windowMs) {
      log = { name: this.#newName(target.name, now), first: now, count: 0, last: now, created: false };
    }
    log.count += 1;
    log.last = now;
    touch(this.#events, logKey, log);
    return { source, logKey, name: log.name, firstTimestamp: log.first, count: log.count, message: eventMessage };
  }

  /**
   * Whether the request about to be sent for the Event just correlated must create it; from
   * now on it counts as created, so later requests PATCH.
   */
  claimCreate(logKey: string): boolean {
    const log = this.#events.get(logKey);
    if (log === undefined) return true;
    const create = !log.created;
    log.created = true;
    return create;
  }

  /** A create was dropped: the Event was never created, so the next occurrence must create it. */
  createLost(logKey: string, name: string): void {
    const log = this.#events.get(logKey);
    if (log?.name === name) log.created = false;
  }

  /** Drops what the window has expired; Map order is last-use order, so only the front is checked. */
  expire(now: number): void {
    for (const [key, group] of this.#aggregates) {
      if (now - group.last <= this.#settings.windowMs) break;
      this.#aggregates.delete(key);
    }
    for (const [key, log] of this.#events) {
      if (now - log.last <= this.#settings.windowMs) break;
      this.#events.delete(key);
    }
  }

  /** Evicts the least recently used entries beyond the cap. */
  cap(): void {
    for (const map of [this.#aggregates, this.#events]) {
      for (const key of map.keys()) {
        if (map.size <= this.#settings.maxEntries) break;
        map.delete(key);
      }
    }
  }

  #newName(objectName: string, now: number): string {
    // Fixed-width serial so that time and serial cannot run into each other.
    this.#serial = (this.#serial + 1) % 0x10000;
    return `${objectName}.${Math.floor(now).toString(16)}${this.#serial.toString(16).padStart(4, '0')}`;
  }
}
