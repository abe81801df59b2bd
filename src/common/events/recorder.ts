// Kubernetes Events on a ClusterSet: what `kubectl describe clusterset` shows.
//
// Why this is more than "create an Event": a flooding leader once produced 7,500 import
// rejections, each with a different message. The old recorder deduplicated only identical
// messages, so every rejection became its own create, all started at once: the member API
// server answered 429 thousands of times, the event loop was busy, a summary Event was lost
// and RSS reached 1.5 GB. The fix mirrors client-go's event correlator
// (tools/record/events_cache.go) and puts a bounded, coalescing sender behind it. This façade
// wires the steps, each in its own module:
//
// 1. Aggregation and 2. deduplication (correlator.ts): which Event an occurrence belongs to.
// 3. Coalescing (event-sender.ts): a request already waiting for that Event carries the news.
// 4. Spam filter (spam-filter.ts): a token bucket per source+object, charged per request.
// 5. Sending (event-sender.ts, event-sink.ts, send-failure.ts): bounded, retried, best effort.
//
// Every map is bounded: entries expire with the window and an LRU cap (client-go's 4096) holds
// the size. record() never throws and never leaves a rejected promise behind: Events are best
// effort and must never fail the work they describe.
import type { KubeConfig } from '@kubernetes/client-node';
import { describeError } from '../kube/errors.js';
import { Backoff, type BackoffSettings } from '../runtime/backoff.js';
import { systemClock, type Clock } from '../runtime/workqueue.js';
import { EventCorrelator } from './correlator.js';
import { describeTarget, type EventLogger, type EventRecorder, type EventTarget, type EventType } from './event.js';
import { EventSender } from './event-sender.js';
import { kubeSink, type EventSink } from './event-sink.js';
import { SpamFilter, type RateLimitDrops } from './spam-filter.js';

export type { EventLogger, EventRecorder, EventTarget } from './event.js';
export type { EventSink, EventUpdate } from './event-sink.js';

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
  /** @default Events through the KubeConfig's API server (typed-api.ts) */
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

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`Expected \`${name}\` to be an integer >= 1, got ${String(value)}`);
  }
  return value;
}

class CorrelatingEventRecorder implements BufferedEventRecorder {
  readonly #logger: EventLogger;
  readonly #clock: Clock;
  readonly #correlator: EventCorrelator;
  readonly #spam: SpamFilter;
  readonly #sender: EventSender;
  /** Occurrences recorded after stop(). */
  #droppedStopped = 0;

  constructor(kc: KubeConfig, logger: EventLogger, component: string, options: EventRecorderOptions) {
    // Its errors read "clusterset-agent-leader events POST ...": whose recorder, and that it is an Event.
    const sink = options.sink ?? kubeSink(kc, `${component} events`);
    this.#logger = logger;
    this.#clock = options.clock ?? systemClock;
    const windowMs = positiveInteger('windowMs', options.windowMs ?? 10 * 60_000);
    const maxEvents = positiveInteger('aggregateMaxEvents', options.aggregateMaxEvents ?? 10);
    const burst = positiveInteger('spamBurst', options.spamBurst ?? 25);
    const refillMs = positiveInteger('spamRefillMs', options.spamRefillMs ?? 5 * 60_000);
    const maxEntries = positiveInteger('maxCacheEntries', options.maxCacheEntries ?? 4096);
    const maxQueue = positiveInteger('maxQueue', options.maxQueue ?? 1000);
    const maxInFlight = positiveInteger('maxInFlight', options.maxInFlight ?? 2);
    const maxRetries = options.maxRetries ?? 4;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new RangeError(`Expected \`maxRetries\` to be an integer >= 0, got ${String(maxRetries)}`);
    }
    const backoff = new Backoff({
      baseMs: 1000, maxMs: 60_000, ...options.backoff,
      ...(options.random !== undefined && { random: options.random }),
    });
    this.#correlator = new EventCorrelator({ component, windowMs, maxEvents, maxEntries });
    this.#spam = new SpamFilter({ burst, refillMs, windowMs, maxEntries });
    this.#sender = new EventSender(sink, this.#clock, backoff, { component, maxQueue, maxInFlight, maxRetries, windowMs }, {
      warn: (message, meta) => { this.#warn(message, meta); },
      createLost: (logKey, name) => { this.#correlator.createLost(logKey, name); },
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
    return this.#sender.flush();
  }

  stop(): Promise<void> {
    return this.#sender.stop(() => {
      // The spam filter's drops not yet reported because of the once-per-window limit.
      this.#warnRateLimited(this.#spam.unreported(this.#clock.now()));
    });
  }

  stats(): EventRecorderStats {
    const sender = this.#sender.stats();
    const rateLimited = this.#spam.refused;
    return {
      queued: sender.queued, inFlight: sender.inFlight, sent: sender.sent,
      dropped: this.#droppedStopped + rateLimited + sender.dropped, rateLimited,
      cached: { ...this.#correlator.size, sources: this.#spam.size },
    };
  }

  #record(target: EventTarget, type: EventType, reason: string, message: string): void {
    if (this.#sender.stopped) {
      this.#droppedStopped += 1;
      return;
    }
    const now = this.#clock.now();
    this.#correlator.expire(now);
    this.#warnRateLimited(this.#spam.expire(now));
    try {
      this.#correlate(now, target, type, reason, message);
    } finally {
      this.#correlator.cap();
      this.#warnRateLimited(this.#spam.cap(now));
    }
  }

  #correlate(now: number, target: EventTarget, type: EventType, reason: string, message: string): void {
    const event = this.#correlator.correlate(now, target, type, reason, message);
    if (this.#sender.update(event.name, type, event.count, now, event.message)) return;

    // Spam filter, charged per request. client-go charges every occurrence, but here
    // occurrences that coalesce cost no request; as in client-go, a refused occurrence is still
    // counted in the Event's count, which the next accepted request carries.
    const decision = this.#spam.allow(event.source, describeTarget(target), now);
    if (!decision.allowed) {
      const line = decision.logDropped;
      if (line !== undefined) this.#warn('dropping events: rate limit for this object exceeded', { object: line.object, reason, dropped: line.dropped });
      return;
    }
    this.#sender.send({
      logKey: event.logKey, name: event.name, target, type, reason, firstTimestamp: event.firstTimestamp,
      message: event.message, count: event.count, lastTimestamp: now, create: this.#correlator.claimCreate(event.logKey),
    });
  }

  #warnRateLimited(lines: readonly RateLimitDrops[]): void {
    for (const { object, dropped } of lines) this.#warn('events dropped by rate limit', { object, dropped });
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
