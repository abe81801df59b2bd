/**
 * A rate-limited work queue of string keys, modelled on client-go's workqueue as used by
 * controller-runtime:
 *
 * - A key added while it is already waiting is queued once (keys are level-triggered:
 *   the handler reads current state, so merging events loses nothing).
 * - The same key is never handed to two workers at once. A key added while in flight is
 *   processed once more after the running handler finishes.
 * - A handler that throws is retried with per-key exponential backoff; success resets it.
 *   A handler may ask to run again later by returning `{ requeueAfterMs }`.
 * - Workers that have taken keys back to back for {@link YIELD_AFTER_MS} give the event loop a
 *   turn before the next one: handlers that do no I/O (a cache read and a pure decision)
 *   would otherwise run in microtasks one after another, starving health probes, Lease
 *   renewal and watch events for as long as the backlog lasts.
 */
import { Backoff, type BackoffSettings } from './backoff.js';

/** Opaque handle returned by {@link Clock.setTimeout} (a Timeout object in Node, a number in fakes). */
export type TimerHandle = object | number;

/** Time source and timers, injectable so tests can drive time explicitly. */
export interface Clock {
  /** The wall clock, epoch milliseconds: what is written into objects and compared with their times. */
  now(): number;
  /**
   * Milliseconds on a clock that never steps, for durations and deadlines (a wall clock stepped
   * by NTP or a resumed VM must not shorten or stretch them); `now()` when absent.
   */
  monotonic?(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** `clock`'s monotonic time, for durations: its wall clock where it has no monotonic one. */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic?.() ?? clock.now();
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** What a handler returns: nothing on success, or a request to run the key again later. */
export type WorkResult = undefined | { readonly requeueAfterMs: number };

/**
 * Processes one key. The signal aborts when the queue is stopped.
 * A thrown error (or rejection) requeues the key with backoff.
 */
// `void` keeps plain `async (key) => { … }` handlers assignable; TS types those as Promise<void>.
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type
export type WorkHandler = (key: string, signal: AbortSignal) => Promise<WorkResult | void>;

export interface RetryInfo {
  /** Failures of this key since it last succeeded, including this one. */
  readonly attempts: number;
  /** Delay before the key is retried. */
  readonly delayMs: number;
}

export interface WorkQueueOptions {
  /**
   * How many keys may be processed at the same time (distinct keys only).
   * @default 1
   */
  readonly concurrency?: number;
  /**
   * Per-key failure backoff used by {@link WorkQueue.addRateLimited}.
   * The default ceiling is 5 minutes rather than client-go's 1000 s: the agent talks to remote
   * clusters that come back from outages, and a quarter-hour gap before noticing is too long.
   * @default { baseMs: 5, maxMs: 300_000, factor: 2, jitter: 0.1 }
   */
  readonly backoff?: BackoffSettings;
  /**
   * Randomness for backoff jitter, in `[0, 1)`.
   * @default Math.random
   */
  readonly random?: () => number;
  /** @default systemClock */
  readonly clock?: Clock;
  /**
   * Called when a handler fails, with the retry that has been scheduled. Errors thrown here are
   * ignored so a faulty logger cannot wedge the queue.
   */
  readonly onError?: (key: string, error: unknown, retry: RetryInfo) => void;
}

/**
 * How long workers may take keys back to back (handlers that finish in microtasks) before the
 * queue lets the event loop run: short next to a health probe's timeout or a Lease renewal,
 * long enough that a burst of cheap keys is not slowed by a turn of the loop for each.
 */
const YIELD_AFTER_MS = 10;

// Node clamps larger delays to 1 ms (with a warning), which would turn "much later" into "now".
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkQueue {
  readonly #concurrency: number;
  readonly #backoff: { baseMs: number; maxMs: number; factor: number; jitter: number; random: () => number };
  readonly #clock: Clock;
  readonly #onError: ((key: string, error: unknown, retry: RetryInfo) => void) | undefined;

  /** Keys ready to be handed to a worker, in FIFO order. Never contains an in-flight key. */
  readonly #queue: string[] = [];
  /** Keys that need processing: queued, or re-added while in flight. */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  /** In-flight keys re-added with {@link addNext}: they go to the front when they finish. */
  readonly #next = new Set<string>();
  readonly #delayed = new Map<string, { readyAt: number; handle: TimerHandle }>();
  readonly #failures = new Map<string, Backoff>();
  readonly #abort = new AbortController();
  /** Workers that finished a key and wait for the next turn of the event loop to take another. */
  #resting = 0;
  /** When the queue last gave the event loop a turn (or started work from idle). */
  #sliceStartedAt = 0;
  #idleWaiters: (() => void)[] = [];
  #handler: WorkHandler | undefined;
  #stopped = false;

  constructor(options: WorkQueueOptions = {}) {
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`Expected \`concurrency\` to be an integer from 1 and up, got ${String(concurrency)}`);
    }
    this.#concurrency = concurrency;
    this.#backoff = {
      baseMs: options.backoff?.baseMs ?? 5,
      maxMs: options.backoff?.maxMs ?? 300_000,
      factor: options.backoff?.factor ?? 2,
      jitter: options.backoff?.jitter ?? 0.1,
      random: options.random ?? Math.random,
    };
    // Fail at construction rather than on the first failure of some key.
    new Backoff(this.#backoff);
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError;
  }

  /** Keys waiting for a worker (excludes in-flight and delayed keys). */
  get size(): number {
    return this.#queue.length;
  }

  /** Keys whose handler is running. */
  get inFlight(): number {
    return this.#processing.size;
  }

  /** Keys waiting on a timer from {@link addAfter} or {@link addRateLimited}. */
  get delayed(): number {
    return this.#delayed.size;
  }

  /** Failures of `key` since it last succeeded or was {@link forget forgotten}. */
  numRequeues(key: string): number {
    return this.#failures.get(key)?.attempts ?? 0;
  }

  /** Queues `key` now. No-op if it is already waiting, or once the queue is stopped. */
  add(key: string): void {
    if (this.#stopped || this.#dirty.has(key)) {
      return;
    }
    this.#dirty.add(key);
    if (this.#processing.has(key)) {
      // Picked up again when the running handler finishes.
      return;
    }
    this.#queue.push(key);
    this.#dispatch();
  }

  /**
   * Queues `key` ahead of every waiting key (moving it there if it is already waiting): for a
   * key whose blocker just cleared, so that what was waiting on it goes out next rather than
   * behind a long backlog. A key in flight is processed once more right after it finishes, like
   * {@link add}. No-op once the queue is stopped.
   */
  addNext(key: string): void {
    if (this.#stopped) {
      return;
    }
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      this.#next.add(key);
      return;
    }
    if (this.#dirty.has(key)) {
      const at = this.#queue.indexOf(key);
      if (at >= 0) this.#queue.splice(at, 1);
    }
    this.#dirty.add(key);
    this.#queue.unshift(key);
    this.#dispatch();
  }

  /**
   * Queues `key` after `ms` milliseconds (immediately if `ms` <= 0).
   * If the key is already waiting on a timer, the earlier deadline wins.
   */
  addAfter(key: string, ms: number): void {
    if (this.#stopped) {
      return;
    }
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const delay = Math.min(ms, MAX_TIMER_MS);
    const readyAt = monotonicNow(this.#clock) + delay;
    const existing = this.#delayed.get(key);
    if (existing !== undefined) {
      if (existing.readyAt <= readyAt) {
        return;
      }
      this.#clock.clearTimeout(existing.handle);
    }
    const handle = this.#clock.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delay);
    this.#delayed.set(key, { readyAt, handle });
  }

  /**
   * Queues `key` after its next backoff delay and returns that delay.
   * Returns 0 without side effects once the queue is stopped.
   */
  addRateLimited(key: string): number {
    if (this.#stopped) {
      return 0;
    }
    let backoff = this.#failures.get(key);
    if (backoff === undefined) {
      backoff = new Backoff(this.#backoff);
      this.#failures.set(key, backoff);
    }
    const delay = backoff.next();
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the backoff of `key`. Does not remove it from the queue. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /**
   * Starts processing with `handler`. Keys added before `start` are processed now.
   * A queue can be started once.
   */
  start(handler: WorkHandler): void {
    if (this.#stopped) {
      throw new Error('WorkQueue: cannot start a stopped queue');
    }
    if (this.#handler !== undefined) {
      throw new Error('WorkQueue: already started');
    }
    this.#handler = handler;
    this.#dispatch();
  }

  /**
   * Stops the queue: aborts the signal given to running handlers, drops waiting and delayed keys,
   * and ignores later adds. Resolves once every running handler has settled. Idempotent.
   */
  stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#abort.abort();
      for (const { handle } of this.#delayed.values()) {
        this.#clock.clearTimeout(handle);
      }
      this.#delayed.clear();
      this.#queue.length = 0;
      this.#dirty.clear();
      this.#next.clear();
    }
    return this.onIdle();
  }

  /**
   * Resolves when no key is waiting for a worker and none is in flight. Keys waiting on a timer
   * do not count. After {@link stop}, resolves once in-flight handlers have settled.
   */
  onIdle(): Promise<void> {
    if (this.#isIdle()) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#idleWaiters.push(resolve);
    });
  }

  #isIdle(): boolean {
    return this.#processing.size === 0 && this.#resting === 0 && this.#queue.length === 0;
  }

  #dispatch(): void {
    const handler = this.#handler;
    if (handler !== undefined && !this.#stopped) {
      while (this.#processing.size + this.#resting < this.#concurrency) {
        const key = this.#queue.shift();
        if (key === undefined) {
          break;
        }
        if (this.#processing.size === 0 && this.#resting === 0) this.#sliceStartedAt = performance.now();
        this.#dirty.delete(key);
        this.#processing.add(key);
        void this.#process(handler, key);
      }
    }
    if (this.#idleWaiters.length > 0 && this.#isIdle()) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) {
        resolve();
      }
    }
  }

  async #process(handler: WorkHandler, key: string): Promise<void> {
    try {
      const result = await handler(key, this.#abort.signal);
      this.forget(key);
      if (typeof result === 'object') {
        this.addAfter(key, result.requeueAfterMs);
      }
    } catch (error) {
      // After stop() the handler is expected to fail with an abort; nothing would retry it anyway.
      if (!this.#stopped) {
        const delayMs = this.addRateLimited(key);
        this.#reportError(key, error, { attempts: this.numRequeues(key), delayMs });
      }
    } finally {
      this.#processing.delete(key);
      if (this.#dirty.has(key)) {
        if (this.#next.delete(key)) this.#queue.unshift(key);
        else this.#queue.push(key);
      }
      if (performance.now() - this.#sliceStartedAt < YIELD_AFTER_MS) {
        this.#dispatch();
      } else {
        // Timers and sockets get their turn before this worker takes the next key, however
        // long the backlog. The worker's slot stays taken until then, so concurrency and
        // onIdle hold.
        this.#resting += 1;
        setImmediate(() => {
          this.#resting -= 1;
          this.#sliceStartedAt = performance.now();
          this.#dispatch();
        });
      }
    }
  }

  #reportError(key: string, error: unknown, retry: RetryInfo): void {
    try {
      this.#onError?.(key, error, retry);
    } catch {
      // See WorkQueueOptions.onError.
    }
  }
}
