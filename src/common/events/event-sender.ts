// Sends the correlator's Events to the API server (not in client-go, whose broadcaster blocks a
// goroutine per event): one bounded queue, at most `maxInFlight` requests at a time, and at
// most one queued request per Event: later occurrences only update the queued request, so one
// request carries the final count. A 429, 5xx or transport error pauses the whole sender
// (Retry-After or backoff) and the request is retried; what cannot be sent is dropped, counted
// and logged at most once per window.
//
// Nothing here throws to the caller or leaves a rejected promise behind: Events are best effort
// and must never fail the work they describe.
import type { CoreV1Event } from '@kubernetes/client-node';
import { describeError } from '../kube/errors.js';
import type { Backoff } from '../runtime/backoff.js';
import type { Clock, TimerHandle } from '../runtime/workqueue.js';
import { DropReport } from './drop-report.js';
import { describeTarget, type EventTarget, type EventType } from './event.js';
import type { EventSink } from './event-sink.js';
import { decideOnFailure } from './send-failure.js';

export interface EventSenderSettings {
  /** Written into each Event's source and reporting fields. */
  readonly component: string;
  /** Requests waiting to be sent; beyond it the oldest Normal (else Warning) is dropped. */
  readonly maxQueue: number;
  readonly maxInFlight: number;
  /** Retries of a request after 429, 5xx or a transport error. */
  readonly maxRetries: number;
  /** Drops are logged at most once per window. */
  readonly windowMs: number;
}

export interface EventSenderHooks {
  /** Never throws. */
  readonly warn: (message: string, meta: Record<string, unknown>) => void;
  /** A create was dropped, so the Event does not exist: the next occurrence must create it. */
  readonly createLost: (logKey: string, name: string) => void;
}

/** One request to send: the Event as the correlator last saw it. */
export interface EventRequest {
  /** The Event's key in the correlator, handed back through `createLost`. */
  readonly logKey: string;
  readonly name: string;
  readonly target: EventTarget;
  readonly type: EventType;
  readonly reason: string;
  readonly firstTimestamp: number;
  readonly message: string;
  readonly count: number;
  readonly lastTimestamp: number;
  /** POST when true, PATCH otherwise. */
  readonly create: boolean;
}

/**
 * A request waiting or in flight. What a later occurrence of the same Event updates (message,
 * count, last time) is mutable, so a queued request carries the news instead of a second one.
 */
interface Outgoing extends Omit<EventRequest, 'message' | 'count' | 'lastTimestamp' | 'create'> {
  readonly seq: number;
  message: string;
  count: number;
  lastTimestamp: number;
  /** POST when true, PATCH otherwise; flips on 404 (Event expired) and 409 (create did land). */
  create: boolean;
  attempts: number;
}

export class EventSender {
  readonly #sink: EventSink;
  readonly #clock: Clock;
  readonly #backoff: Backoff;
  readonly #settings: EventSenderSettings;
  readonly #hooks: EventSenderHooks;

  // Queues are keyed by Event name, so each Event has at most one queued request.
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
  #sent = 0;
  #dropped = 0;
  readonly #queueFull: DropReport;
  readonly #failed: DropReport;

  constructor(sink: EventSink, clock: Clock, backoff: Backoff, settings: EventSenderSettings, hooks: EventSenderHooks) {
    this.#sink = sink;
    this.#clock = clock;
    this.#backoff = backoff;
    this.#settings = settings;
    this.#hooks = hooks;
    this.#queueFull = new DropReport(settings.windowMs);
    this.#failed = new DropReport(settings.windowMs);
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  stats(): { readonly queued: number; readonly inFlight: number; readonly sent: number; readonly dropped: number } {
    return { queued: this.#queued(), inFlight: this.#inFlight.size, sent: this.#sent, dropped: this.#dropped };
  }

  /**
   * Coalescing: if a request for this Event is already waiting, it just carries the news and
   * no new request is needed. Returns whether one was waiting.
   */
  update(name: string, type: EventType, count: number, lastTimestamp: number, message: string): boolean {
    const queued = this.#retry.get(name) ?? this.#queue(type).get(name);
    if (queued === undefined) return false;
    queued.count = count;
    queued.lastTimestamp = lastTimestamp;
    queued.message = message;
    return true;
  }

  /** Queues a request (the caller has checked `update` first) and starts sending. */
  send(request: EventRequest): void {
    const { target } = request;
    this.#enqueue({
      ...request, seq: ++this.#seq, attempts: 0,
      target: { apiVersion: target.apiVersion, kind: target.kind, name: target.name, namespace: target.namespace, ...(target.uid !== undefined && { uid: target.uid }) },
    });
    this.#pump();
  }

  /** Resolves once nothing is queued or in flight (waiting through retries). */
  flush(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#flushWaiters.push(resolve));
  }

  /**
   * Stops sending, discards what is queued and waits for the requests in flight. `lastWords`
   * runs before waiting flushes resolve, for the caller's own unlogged drops.
   */
  async stop(lastWords: () => void): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#cancelPause();
      const discarded = this.#queued();
      for (const queue of [this.#retry, this.#normal, this.#warning]) queue.clear();
      this.#dropped += discarded;
      if (discarded > 0) this.#hooks.warn('event recorder stopped; unsent events discarded', { dropped: discarded });
    }
    await Promise.all(this.#sending);
    // Drops not yet reported because of the once-per-window limit.
    for (const report of [this.#queueFull, this.#failed]) {
      const dropped = report.unreported(this.#clock.now());
      if (dropped !== undefined) this.#hooks.warn('events dropped', { dropped });
    }
    lastWords();
    this.#settle();
  }

  #queue(type: EventType): Map<string, Outgoing> {
    return type === 'Warning' ? this.#warning : this.#normal;
  }

  #queued(): number {
    return this.#retry.size + this.#normal.size + this.#warning.size;
  }

  #enqueue(entry: Outgoing): void {
    if (this.#normal.size + this.#warning.size >= this.#settings.maxQueue) {
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
    if (entry.create) this.#hooks.createLost(entry.logKey, entry.name);
    const dropped = report.note(this.#clock.now());
    if (dropped !== undefined) {
      this.#hooks.warn(message, { reason: entry.reason, object: describeTarget(entry.target), ...meta, dropped });
    }
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
    while (!this.#stopped && this.#resumeTimer === undefined && this.#inFlight.size < this.#settings.maxInFlight) {
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
        this.#hooks.warn('could not record event', { reason: entry.reason, error: describeError(inner) });
      }
    } finally {
      this.#inFlight.delete(entry.name);
      try {
        this.#pump();
      } catch (err) {
        this.#hooks.warn('event sender failed', { error: describeError(err) });
      }
    }
  }

  #onError(entry: Outgoing, err: unknown): void {
    const attempts = entry.attempts + 1;
    const decision = decideOnFailure(err, entry.create, attempts, this.#settings.maxRetries, this.#clock.now());
    if (decision.op === 'rejected') {
      this.#drop(entry, this.#failed, 'dropping event: rejected by the API server', { error: describeError(err) });
      return;
    }
    entry.attempts = attempts;
    if (decision.op === 'exhausted') {
      this.#drop(entry, this.#failed, 'dropping event after retries', { error: describeError(err) });
      return;
    }
    if (decision.op === 'flip') {
      entry.create = !entry.create;
    } else {
      // The whole sender pauses: a 429 means the API server, not this Event, is overloaded.
      this.#pause(Math.max(decision.retryAfterMs ?? 0, this.#backoff.next()));
    }
    this.#requeue(entry);
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
    const component = this.#settings.component;
    return {
      metadata: { name: entry.name, namespace: target.namespace },
      involvedObject: { apiVersion: target.apiVersion, kind: target.kind, name: target.name, namespace: target.namespace, ...(target.uid !== undefined && { uid: target.uid }) },
      type: entry.type, reason: entry.reason, message: entry.message, count: entry.count,
      firstTimestamp: new Date(entry.firstTimestamp), lastTimestamp: new Date(entry.lastTimestamp),
      source: { component },
      reportingComponent: component, reportingInstance: component,
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
}
