// Kubernetes Events on a ClusterSet: what `kubectl describe clusterset` shows.
//
// Why this is more than "create an Event": a flooding leader once produced 7,500 import
// rejections, each with a different message. The old recorder deduplicated only identical
// messages, so every rejection became its own create, all started at once: the member API
// server answered 429 thousands of times, the event loop was busy, a summary Event was lost
// and RSS reached 1.5 GB. The fix mirrors client-go's event correlator
// (tools/record/events_cache.go) and puts a bounded, coalescing sender behind it:
//
// 1. Aggregation (client-go EventAggregator): events that differ only by message, for the same
//    source, object, type and reason, are "similar". Within a 10-minute sliding window the first
//    distinct messages get their own Event; once 10 distinct messages are seen, further new ones
//    are folded into ONE aggregate Event, "(combined from similar events): <latest message>",
//    whose count is bumped.
// 2. Deduplication (client-go eventLogger): an event seen before (same key including message,
//    or the same aggregate) PATCHes count/lastTimestamp/message instead of creating.
// 3. Spam filter (client-go EventSourceObjectSpamFilter): a token bucket per source+object,
//    burst 25, refilled by one token every 5 minutes. Events beyond are dropped and counted.
// 4. Sending (not in client-go, whose broadcaster blocks a goroutine per event): one bounded
//    queue, at most `maxInFlight` requests at a time, and at most one queued request per Event:
//    later occurrences only update the queued request, so one request carries the final count.
//
// Every map is bounded: entries expire with the window and an LRU cap (client-go's 4096) holds
// the size. record() never throws and never leaves a rejected promise behind: Events are best
// effort and must never fail the work they describe.
import { createHash } from 'node:crypto';
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import { describeError, httpStatus, isAlreadyExists, isNotFound } from '../kube/errors.js';
import { Backoff, type BackoffSettings } from '../runtime/backoff.js';
import { systemClock, type Clock, type TimerHandle } from '../runtime/workqueue.js';
import { apiClient } from '../kube/shared-connections.js';

export interface EventTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
}

export interface EventRecorder {
  record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface EventLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

type EventType = 'Normal' | 'Warning';

/** What a PATCH of an existing Event sets (client-go's patch carries the same three fields). */
export interface EventUpdate {
  readonly count: number;
  readonly lastTimestamp: Date;
  readonly message: string;
}

/** The two API calls the recorder makes; injectable so tests need no API server. */
export interface EventSink {
  create(namespace: string, body: CoreV1Event): Promise<unknown>;
  patch(namespace: string, name: string, update: EventUpdate): Promise<unknown>;
}

export interface EventRecorderStats {
  /** Requests waiting to be sent, including those waiting for a retry. */
  readonly queued: number;
  readonly inFlight: number;
  /** Requests the API server accepted. */
  readonly sent: number;
  /** Occurrences rate limited plus requests given up (queue full, failed, discarded at stop). */
  readonly dropped: number;
  /** Of `dropped`, occurrences refused by the spam filter. */
  readonly rateLimited: number;
  /** Entries in the correlator's caches: aggregation groups, known Events, spam buckets. */
  readonly cached: { readonly aggregates: number; readonly events: number; readonly sources: number };
}

export interface BufferedEventRecorder extends EventRecorder {
  /** Resolves once nothing is queued or in flight (waiting through retries). */
  flush(): Promise<void>;
  /** Stops accepting events, discards what is queued and waits for the requests in flight. */
  stop(): Promise<void>;
  stats(): EventRecorderStats;
}

/**
 * A process's last Events (e.g. the last disconnection) are worth a short wait, not a hung exit:
 * flushes for at most `timeoutMs`, then stops.
 */
export async function flushThenStop(events: BufferedEventRecorder, timeoutMs = 2_000): Promise<void> {
  await Promise.race([events.flush(), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
  await events.stop();
}

export interface EventRecorderOptions {
  /** @default CoreV1Api from the KubeConfig */
  readonly sink?: EventSink;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Aggregation, deduplication and cache expiry window. @default 600_000 (client-go) */
  readonly windowMs?: number;
  /** Distinct messages per similar-event group before aggregating. @default 10 (client-go) */
  readonly aggregateMaxEvents?: number;
  /** @default 25 (client-go) */
  readonly spamBurst?: number;
  /** One spam-filter token per this many ms. @default 300_000 (client-go: qps 1/300) */
  readonly spamRefillMs?: number;
  /** LRU cap of each correlator cache. @default 4096 (client-go maxLruCacheEntries) */
  readonly maxCacheEntries?: number;
  /** Requests waiting to be sent; beyond it the oldest Normal (else Warning) is dropped. @default 1000 */
  readonly maxQueue?: number;
  /** @default 2 */
  readonly maxInFlight?: number;
  /** Retries of a request after 429, 5xx or a transport error. @default 4 */
  readonly maxRetries?: number;
  /** @default { baseMs: 1000, maxMs: 60_000 } */
  readonly backoff?: BackoffSettings;
  /** Randomness for the backoff jitter. @default Math.random */
  readonly random?: () => number;
}

const MAX_MESSAGE = 1024;
const AGGREGATE_PREFIX = '(combined from similar events): ';
// A broken or hostile Retry-After must not park the sender for hours.
const MAX_RETRY_AFTER_MS = 10 * 60_000;
const SEP = '\u0000';

interface Outgoing {
  readonly seq: number;
  readonly logKey: string;
  readonly name: string;
  readonly target: EventTarget;
  readonly type: EventType;
  readonly reason: string;
  readonly firstTimestamp: number;
  message: string;
  count: number;
  lastTimestamp: number;
  /** POST when true, PATCH otherwise; flips on 404 (Event expired) and 409 (create did land). */
  create: boolean;
  attempts: number;
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

interface DropReport {
  count: number;
  loggedAt: number | undefined;
}

interface SpamRecord {
  tokens: number;
  last: number;
  readonly object: string;
  readonly drops: DropReport;
}

function truncate(message: string): string {
  return message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE) : message;
}

// Caches hold a digest instead of messages of up to 1 KiB each.
function digest(message: string): string {
  return createHash('sha1').update(message).digest('base64');
}

/** Re-inserts so that Map order is least-recently-used first. */
function touch<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`Expected \`${name}\` to be an integer >= 1, got ${String(value)}`);
  }
  return value;
}

function retryable(status: number | undefined): boolean {
  // No status: a transport error (connection refused or reset), worth another try.
  return status === undefined || status === 429 || status >= 500;
}

/** Retry-After (seconds or HTTP date) from a client-node ApiException's response headers. */
function retryAfterMs(err: unknown, now: number): number | undefined {
  if (typeof err !== 'object' || err === null || !('headers' in err)) return undefined;
  const headers: unknown = err.headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'retry-after' || (typeof value !== 'string' && typeof value !== 'number')) continue;
    const text = String(value).trim();
    const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
    return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
  }
  return undefined;
}

function kubeSink(kc: KubeConfig): EventSink {
  const core = apiClient(kc, CoreV1Api);
  return {
    create: (namespace, body) => core.createNamespacedEvent({ namespace, body }),
    patch: (namespace, name, update) => core.patchNamespacedEvent({
      namespace, name,
      body: [
        { op: 'replace', path: '/count', value: update.count },
        { op: 'replace', path: '/lastTimestamp', value: update.lastTimestamp.toISOString() },
        { op: 'replace', path: '/message', value: update.message },
      ],
    }),
  };
}

class CorrelatingEventRecorder implements BufferedEventRecorder {
  readonly #sink: EventSink;
  readonly #logger: EventLogger;
  readonly #component: string;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #maxEvents: number;
  readonly #burst: number;
  readonly #refillMs: number;
  readonly #maxCache: number;
  readonly #maxQueue: number;
  readonly #maxInFlight: number;
  readonly #maxRetries: number;
  readonly #backoff: Backoff;

  // Correlator caches, each in least-recently-used order.
  readonly #aggregates = new Map<string, AggregateRecord>();
  readonly #events = new Map<string, EventLog>();
  readonly #sources = new Map<string, SpamRecord>();

  // Sender. Queues are keyed by Event name, so each Event has at most one queued request.
  readonly #retry = new Map<string, Outgoing>();
  readonly #normal = new Map<string, Outgoing>();
  readonly #warning = new Map<string, Outgoing>();
  readonly #inFlight = new Set<string>();
  readonly #sending = new Set<Promise<void>>();
  #resumeTimer: TimerHandle | undefined;
  #resumeAt = 0;
  #flushWaiters: (() => void)[] = [];
  #stopped = false;
  #seq = 0;
  #serial = 0;
  #sent = 0;
  #dropped = 0;
  #rateLimited = 0;
  readonly #queueFull: DropReport = { count: 0, loggedAt: undefined };
  readonly #failed: DropReport = { count: 0, loggedAt: undefined };

  constructor(kc: KubeConfig, logger: EventLogger, component: string, options: EventRecorderOptions) {
    this.#sink = options.sink ?? kubeSink(kc);
    this.#logger = logger;
    this.#component = component;
    this.#clock = options.clock ?? systemClock;
    this.#windowMs = positiveInteger('windowMs', options.windowMs ?? 10 * 60_000);
    this.#maxEvents = positiveInteger('aggregateMaxEvents', options.aggregateMaxEvents ?? 10);
    this.#burst = positiveInteger('spamBurst', options.spamBurst ?? 25);
    this.#refillMs = positiveInteger('spamRefillMs', options.spamRefillMs ?? 5 * 60_000);
    this.#maxCache = positiveInteger('maxCacheEntries', options.maxCacheEntries ?? 4096);
    this.#maxQueue = positiveInteger('maxQueue', options.maxQueue ?? 1000);
    this.#maxInFlight = positiveInteger('maxInFlight', options.maxInFlight ?? 2);
    this.#maxRetries = options.maxRetries ?? 4;
    if (!Number.isInteger(this.#maxRetries) || this.#maxRetries < 0) {
      throw new RangeError(`Expected \`maxRetries\` to be an integer >= 0, got ${String(this.#maxRetries)}`);
    }
    this.#backoff = new Backoff({
      baseMs: 1000, maxMs: 60_000, ...options.backoff,
      ...(options.random !== undefined && { random: options.random }),
    });
  }

  record(target: EventTarget, type: EventType, reason: string, message: string): void {
    try {
      this.#record(target, type, reason, message);
    } catch (err) {
      this.#warn('could not record event', { reason, error: describeError(err) });
    }
  }

  flush(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#flushWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#cancelPause();
      const discarded = this.#queued();
      for (const queue of [this.#retry, this.#normal, this.#warning]) queue.clear();
      this.#dropped += discarded;
      if (discarded > 0) this.#warn('event recorder stopped; unsent events discarded', { dropped: discarded });
    }
    await Promise.all(this.#sending);
    // Drops not yet reported because of the once-per-window limit.
    for (const report of [this.#queueFull, this.#failed]) this.#reportRemaining(report, 'events dropped', {});
    for (const source of this.#sources.values()) this.#reportRemaining(source.drops, 'events dropped by rate limit', { object: source.object });
    this.#settle();
  }

  stats(): EventRecorderStats {
    return {
      queued: this.#queued(), inFlight: this.#inFlight.size, sent: this.#sent, dropped: this.#dropped, rateLimited: this.#rateLimited,
      cached: { aggregates: this.#aggregates.size, events: this.#events.size, sources: this.#sources.size },
    };
  }

  #record(target: EventTarget, type: EventType, reason: string, message: string): void {
    if (this.#stopped) {
      this.#dropped += 1;
      return;
    }
    const now = this.#clock.now();
    this.#expire(now);
    try {
      this.#correlate(now, target, type, reason, truncate(message));
    } finally {
      this.#cap();
    }
  }

  #correlate(now: number, target: EventTarget, type: EventType, reason: string, message: string): void {
    // Key fields as client-go's getSpamKey / EventAggregatorByReasonFunc / getEventKey (source
    // host, fieldPath and reporting controller/instance are constant here).
    const source = [this.#component, target.apiVersion, target.kind, target.namespace, target.name, target.uid ?? ''].join(SEP);
    const aggregateKey = `${source}${SEP}${type}${SEP}${reason}`;
    const localKey = digest(message);

    // 1. Aggregation. The window slides: every similar event extends it, as in client-go.
    let group = this.#aggregates.get(aggregateKey);
    if (group === undefined || now - group.last > this.#windowMs) group = { localKeys: new Set(), last: now };
    group.last = now;
    touch(this.#aggregates, aggregateKey, group);
    let logKey: string;
    let eventMessage: string;
    if (group.localKeys.has(localKey) || group.localKeys.size < this.#maxEvents - 1) {
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
    if (log === undefined || now - log.last > this.#windowMs) {
      log = { name: this.#newName(target.name, now), first: now, count: 0, last: now, created: false };
    }
    log.count += 1;
    log.last = now;
    touch(this.#events, logKey, log);

    // 3. Coalescing: a request for this Event is already waiting, so it just carries the news.
    const queued = this.#retry.get(log.name) ?? this.#queue(type).get(log.name);
    if (queued !== undefined) {
      queued.count = log.count;
      queued.lastTimestamp = now;
      queued.message = eventMessage;
      return;
    }

    // 4. Spam filter, charged per request. client-go charges every occurrence, but here
    // occurrences that coalesce cost no request; as in client-go, a refused occurrence is still
    // counted in the Event's count, which the next accepted request carries.
    if (!this.#allow(source, target, reason, now)) return;

    const entry: Outgoing = {
      seq: ++this.#seq, logKey, name: log.name,
      target: { apiVersion: target.apiVersion, kind: target.kind, name: target.name, namespace: target.namespace, ...(target.uid !== undefined && { uid: target.uid }) },
      type, reason, firstTimestamp: log.first, message: eventMessage, count: log.count, lastTimestamp: now,
      create: !log.created, attempts: 0,
    };
    log.created = true;
    this.#enqueue(entry);
    this.#pump();
  }

  /** Token bucket per source+object (client-go EventSourceObjectSpamFilter); starts full. */
  #allow(source: string, target: EventTarget, reason: string, now: number): boolean {
    let bucket = this.#sources.get(source);
    if (bucket === undefined) {
      bucket = { tokens: this.#burst, last: now, object: `${target.kind} ${target.namespace}/${target.name}`, drops: { count: 0, loggedAt: undefined } };
    } else {
      bucket.tokens = Math.min(this.#burst, bucket.tokens + Math.max(0, now - bucket.last) / this.#refillMs);
      bucket.last = now;
    }
    touch(this.#sources, source, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return true;
    }
    this.#rateLimited += 1;
    this.#dropped += 1;
    this.#noteDrop(bucket.drops, now, 'dropping events: rate limit for this object exceeded', { object: bucket.object, reason });
    return false;
  }

  /** Drops what the window has expired; Map order is last-use order, so only the front is checked. */
  #expire(now: number): void {
    for (const [key, group] of this.#aggregates) {
      if (now - group.last <= this.#windowMs) break;
      this.#aggregates.delete(key);
    }
    for (const [key, log] of this.#events) {
      if (now - log.last <= this.#windowMs) break;
      this.#events.delete(key);
    }
    // A bucket untouched for burst * refill is full again: the same as having none.
    for (const [key, bucket] of this.#sources) {
      if (now - bucket.last < this.#burst * this.#refillMs) break;
      this.#evictSource(key, bucket);
    }
  }

  #cap(): void {
    for (const map of [this.#aggregates, this.#events]) {
      for (const key of map.keys()) {
        if (map.size <= this.#maxCache) break;
        map.delete(key);
      }
    }
    for (const [key, bucket] of this.#sources) {
      if (this.#sources.size <= this.#maxCache) break;
      this.#evictSource(key, bucket);
    }
  }

  #evictSource(key: string, bucket: SpamRecord): void {
    this.#sources.delete(key);
    this.#reportRemaining(bucket.drops, 'events dropped by rate limit', { object: bucket.object });
  }

  #newName(objectName: string, now: number): string {
    // Fixed-width serial so that time and serial cannot run into each other.
    this.#serial = (this.#serial + 1) % 0x10000;
    return `${objectName}.${Math.floor(now).toString(16)}${this.#serial.toString(16).padStart(4, '0')}`;
  }

  #queue(type: EventType): Map<string, Outgoing> {
    return type === 'Warning' ? this.#warning : this.#normal;
  }

  #queued(): number {
    return this.#retry.size + this.#normal.size + this.#warning.size;
  }

  #enqueue(entry: Outgoing): void {
    if (this.#normal.size + this.#warning.size >= this.#maxQueue) {
      // Full: Warnings matter more than Normals, and newer news more than older.
      const victim = this.#normal.values().next().value ?? (entry.type === 'Warning' ? this.#warning.values().next().value : undefined);
      if (victim === undefined) {
        this.#drop(entry, this.#queueFull, 'dropping event: send queue full', {});
        return;
      }
      this.#queue(victim.type).delete(victim.name);
      this.#drop(victim, this.#queueFull, 'dropping event: send queue full', {});
    }
    this.#queue(entry.type).set(entry.name, entry);
  }

  #drop(entry: Outgoing, report: DropReport, message: string, meta: Record<string, unknown>): void {
    this.#dropped += 1;
    if (entry.create) {
      // The Event was never created: the next occurrence must create it, not patch it.
      const log = this.#events.get(entry.logKey);
      if (log?.name === entry.name) log.created = false;
    }
    this.#noteDrop(report, this.#clock.now(), message, { reason: entry.reason, object: `${entry.target.kind} ${entry.target.namespace}/${entry.target.name}`, ...meta });
  }

  /** Counts a drop; logs at most once per window per report, with the count since the last line. */
  #noteDrop(report: DropReport, now: number, message: string, meta: Record<string, unknown>): void {
    report.count += 1;
    if (report.loggedAt === undefined || now - report.loggedAt >= this.#windowMs) {
      this.#warn(message, { ...meta, dropped: report.count });
      report.count = 0;
      report.loggedAt = now;
    }
  }

  #reportRemaining(report: DropReport, message: string, meta: Record<string, unknown>): void {
    if (report.count === 0) return;
    this.#warn(message, { ...meta, dropped: report.count });
    report.count = 0;
    report.loggedAt = this.#clock.now();
  }

  #next(): Outgoing | undefined {
    // One request per Event at a time, so a PATCH never overtakes the create it depends on.
    const first = (queue: Map<string, Outgoing>) => {
      for (const entry of queue.values()) if (!this.#inFlight.has(entry.name)) return entry;
      return undefined;
    };
    const retry = first(this.#retry);
    if (retry !== undefined) {
      this.#retry.delete(retry.name);
      return retry;
    }
    const normal = first(this.#normal);
    const warning = first(this.#warning);
    const entry = normal === undefined || (warning !== undefined && warning.seq < normal.seq) ? warning : normal;
    if (entry !== undefined) this.#queue(entry.type).delete(entry.name);
    return entry;
  }

  #pump(): void {
    while (!this.#stopped && this.#resumeTimer === undefined && this.#inFlight.size < this.#maxInFlight) {
      const entry = this.#next();
      if (entry === undefined) break;
      this.#inFlight.add(entry.name);
      const sending = this.#send(entry);
      this.#sending.add(sending);
      // #send never rejects.
      void sending.then(() => this.#sending.delete(sending));
    }
    this.#settle();
  }

  async #send(entry: Outgoing): Promise<void> {
    try {
      // A microtask first, so a sink that throws synchronously cannot re-enter #pump.
      await Promise.resolve();
      const { namespace } = entry.target;
      if (entry.create) {
        await this.#sink.create(namespace, this.#body(entry));
      } else {
        await this.#sink.patch(namespace, entry.name, { count: entry.count, lastTimestamp: new Date(entry.lastTimestamp), message: entry.message });
      }
      this.#sent += 1;
      this.#backoff.reset();
    } catch (err) {
      try {
        this.#onError(entry, err);
      } catch (inner) {
        this.#warn('could not record event', { reason: entry.reason, error: describeError(inner) });
      }
    } finally {
      this.#inFlight.delete(entry.name);
      try {
        this.#pump();
      } catch (err) {
        this.#warn('event sender failed', { error: describeError(err) });
      }
    }
  }

  #onError(entry: Outgoing, err: unknown): void {
    const status = httpStatus(err);
    // Like client-go's recordToSink: a PATCH of an Event the API server has expired (TTL 1 h)
    // turns into a create; a create that landed although we saw an error turns into a PATCH.
    const flip = entry.create ? isAlreadyExists(err) : isNotFound(err);
    if (flip || retryable(status)) {
      entry.attempts += 1;
      if (entry.attempts > this.#maxRetries) {
        this.#drop(entry, this.#failed, 'dropping event after retries', { error: describeError(err) });
        return;
      }
      if (flip) {
        entry.create = !entry.create;
      } else {
        // The whole sender pauses: a 429 means the API server, not this Event, is overloaded.
        this.#pause(Math.max(retryAfterMs(err, this.#clock.now()) ?? 0, this.#backoff.next()));
      }
      this.#requeue(entry);
      return;
    }
    this.#drop(entry, this.#failed, 'dropping event: rejected by the API server', { error: describeError(err) });
  }

  #requeue(entry: Outgoing): void {
    if (this.#stopped) {
      this.#drop(entry, this.#failed, 'dropping event: recorder stopped', {});
      return;
    }
    const newer = this.#queue(entry.type).get(entry.name);
    if (newer !== undefined) {
      // A later occurrence already queued a request for this Event: it carries the newer count.
      if (entry.create) newer.create = true;
      newer.attempts = Math.max(newer.attempts, entry.attempts);
      return;
    }
    this.#retry.set(entry.name, entry);
  }

  #pause(ms: number): void {
    const until = this.#clock.now() + ms;
    if (this.#resumeTimer !== undefined) {
      if (until <= this.#resumeAt) return;
      this.#clock.clearTimeout(this.#resumeTimer);
    }
    this.#resumeAt = until;
    this.#resumeTimer = this.#clock.setTimeout(() => {
      this.#resumeTimer = undefined;
      this.#pump();
    }, ms);
  }

  #cancelPause(): void {
    if (this.#resumeTimer !== undefined) this.#clock.clearTimeout(this.#resumeTimer);
    this.#resumeTimer = undefined;
  }

  #body(entry: Outgoing): CoreV1Event {
    const { target } = entry;
    return {
      metadata: { name: entry.name, namespace: target.namespace },
      involvedObject: { apiVersion: target.apiVersion, kind: target.kind, name: target.name, namespace: target.namespace, ...(target.uid !== undefined && { uid: target.uid }) },
      type: entry.type, reason: entry.reason, message: entry.message, count: entry.count,
      firstTimestamp: new Date(entry.firstTimestamp), lastTimestamp: new Date(entry.lastTimestamp),
      source: { component: this.#component },
      reportingComponent: this.#component, reportingInstance: this.#component,
    };
  }

  #idle(): boolean {
    return this.#inFlight.size === 0 && this.#queued() === 0;
  }

  #settle(): void {
    if (this.#flushWaiters.length === 0 || !this.#idle()) return;
    const waiters = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #warn(message: string, meta: Record<string, unknown>): void {
    try {
      this.#logger.warn(message, meta);
    } catch {
      // A failing logger must not break the recorder either.
    }
  }
}

export function createEventRecorder(kc: KubeConfig, logger: EventLogger, component = 'clusterset-agent', options: EventRecorderOptions = {}): BufferedEventRecorder {
  return new CorrelatingEventRecorder(kc, logger, component, options);
}
