/**
 * A list-watch informer that keeps running through errors.
 *
 * client-node 2.0.1's `ListWatch` (dist/cache.js) handles three cases itself: a watch that ends
 * cleanly or hits its 30 s inactivity timeout is re-opened from the last resourceVersion
 * (with its own 1 s → 30 s delay, reset by any event), and a 410 — as an HTTP status or as an
 * `ERROR` event — triggers a relist that emits `delete` for vanished objects. Any other failure
 * (list error, non-200 watch, broken stream, 403, ECONNREFUSED, TLS) emits `error` and the
 * ListWatch stays stopped for good. Its `stop()` also surfaces as an `error` (an AbortError from
 * the aborted request), and its `start()` resolves even when the list failed.
 *
 * This wrapper adds what is missing:
 * - restart after an `error`, with exponential backoff and jitter, relisting (like client-go's
 *   reflector) so a stale resourceVersion cannot wedge it; the backoff resets once a watch is
 *   established again;
 * - a terminal `stop()` that nothing restarts, and that also cancels a watch ListWatch would
 *   still open after stopping (it does not re-check `stopped` after its list or delay);
 * - `start()` that resolves only once a list has succeeded (`hasSynced`);
 * - handler isolation: ListWatch calls handlers from an async function, so a throwing handler
 *   would become an unhandled rejection;
 * - watches as client-go's reflector opens them: bookmarks, and a server-side timeout of 5 to
 *   10 minutes with jitter, resumed from the last bookmark without a LIST;
 * - an optional periodic resync that re-emits `update` for every cached object;
 * - a transform applied to every object before it is cached, by default dropping
 *   `metadata.managedFields` (client-go's TransformStripManagedFields): nothing here reads
 *   them, and they were the largest part of a cached Service or ResourceImport; it also
 *   shares repeated short strings between cached objects (string-pool.ts).
 */
import {
  type Informer,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  type ObjectCache,
  type Watch,
} from '@kubernetes/client-node';
import { Backoff, type BackoffSettings } from '../runtime/backoff.js';
import { type Clock, systemClock, type TimerHandle } from '../runtime/workqueue.js';
import { describeError } from './errors.js';
import { sharedStrings } from './string-pool.js';

/** The only part of `Watch` an informer uses; tests supply a fake. */
export type WatchLike = Pick<Watch, 'watch'>;

export type InformerEvent = 'add' | 'update' | 'delete';
export type ObjectHandler<T> = (obj: T) => void;

export interface InformerLogger {
  info(message: string, meta: Record<string, unknown>): void;
  warn(message: string, meta: Record<string, unknown>): void;
}

/** What a {@link ListWatchFactory} receives to build the inner list-watch. */
export interface ListWatchFactoryArgs<T extends KubernetesObject> {
  readonly path: string;
  readonly watch: WatchLike;
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly labelSelector: string | undefined;
  readonly fieldSelector?: string | undefined;
  /** Timer for the inner reconnect delay, driven by the informer's clock. */
  readonly delay: (ms: number) => Promise<void>;
}

export type InnerInformer<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;
export type ListWatchFactory<T extends KubernetesObject> = (args: ListWatchFactoryArgs<T>) => InnerInformer<T>;

/** Builds client-node's `ListWatch`, not auto-started. */
export function createListWatch<T extends KubernetesObject>(args: ListWatchFactoryArgs<T>): InnerInformer<T> {
  // ListWatch only calls `watch.watch`, but its parameter type is the `Watch` class, whose private
  // members make a structural stand-in impossible to type without a cast.
  const watch = args.watch as unknown as Watch;
  return new ListWatch<T>(args.path, watch, args.list, false, args.labelSelector, args.fieldSelector, {
    delayFn: args.delay,
  });
}

export interface ResilientInformerOptions<T extends KubernetesObject> {
  /** Names the informer in log lines. */
  readonly name: string;
  /** Collection URL, e.g. `/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/ns/memberclusterannounces`. */
  readonly path: string;
  /** Lists the collection. Must apply the same label selector as {@link labelSelector}. */
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly watch: WatchLike;
  /** Applied to watch requests only (ListWatch does not pass it to `list`). */
  readonly labelSelector?: string;
  /** Applied to watch requests only, as labelSelector: `list` must apply the same one. */
  readonly fieldSelector?: string;
  /** @default a logger that drops everything */
  readonly logger?: InformerLogger;
  /**
   * Delay between an error and the restart. The 30 s ceiling matches ListWatch's own
   * reconnect ceiling.
   * @default { baseMs: 1000, maxMs: 30_000, factor: 2, jitter: 0.2 }
   */
  readonly backoff?: BackoffSettings;
  /** @default Math.random */
  readonly random?: () => number;
  /** @default systemClock */
  readonly clock?: Clock;
  /**
   * If set, every `resyncMs` milliseconds `update` is emitted for every cached object, so
   * handlers that dropped an event (or a key whose retry was lost) converge anyway.
   */
  readonly resyncMs?: number;
  /** @default createListWatch */
  readonly listWatchFactory?: ListWatchFactory<T>;
  /**
   * Applied to every listed or watched object before it is cached and handed to handlers;
   * may modify the object in place (it is the only reference). `null` caches objects as received.
   * @default compactForCache
   */
  readonly transform?: ((obj: T) => T) | null;
  /**
   * Called with the error each time the list or watch fails, and with `undefined` once a watch
   * is established again after a failure: what a status needs to say "not syncing since".
   */
  readonly onHealthChange?: (error: unknown) => void;
}

/**
 * Drops `metadata.managedFields` (a PUT without them keeps the server's copy). The metadata is
 * rebuilt without them rather than the key deleted: `delete` turns the object into a hash table
 * in V8, about 450 bytes instead of about 100 for a typical metadata, and the agent keeps one
 * per cached or imported object (measured with a heap snapshot of 10,000 imports).
 */
export function stripManagedFields<T extends KubernetesObject>(obj: T): T {
  const metadata = obj.metadata as ({ managedFields?: unknown } & NonNullable<T['metadata']>) | undefined;
  if (metadata?.managedFields === undefined) return obj;
  const { managedFields, ...rest } = metadata;
  obj.metadata = rest;
  return obj;
}

/**
 * What a cache keeps of an object it holds for long: managedFields dropped, and its short
 * strings shared with every other cached object (kube/string-pool.ts).
 */
export function compactForCache<T extends KubernetesObject>(obj: T): T {
  return sharedStrings.internValues(stripManagedFields(obj));
}

/** Rejects {@link ResilientInformer.start} when the informer is stopped before it synced. */
export class InformerStoppedError extends Error {
  override readonly name = 'InformerStoppedError';
  constructor(informer: string) {
    super(`informer ${informer} was stopped before it synced`);
  }
}

const silentLogger: InformerLogger = {
  info: () => undefined,
  warn: () => undefined,
};

/**
 * Server-side watch timeout, as client-go's reflector does it: 5 to 10 minutes, spread so that
 * the watches of many agents (and of one agent) do not reopen together. With bookmarks, a
 * quiet watch still learns the current resourceVersion about once a minute, so reopening it
 * from there needs no LIST (410 Gone, which does, only follows a real gap).
 */
export const MIN_WATCH_TIMEOUT_S = 300;

/**
 * The process's shortest server-side watch timeout (`apiClient.watchTimeoutSeconds`). One
 * setting per process, like its client budget (shared-connections.ts): every informer of the
 * process, member or leader, reads it when it opens a watch.
 */
let minWatchTimeoutS = MIN_WATCH_TIMEOUT_S;

/** Sets the shortest server-side watch timeout of this process; watches ask for it to twice it. */
export function setWatchTimeout(minSeconds: number): void {
  if (!Number.isInteger(minSeconds) || minSeconds < 1) throw new RangeError(`Expected a watch timeout of at least 1 s, got ${String(minSeconds)}`);
  minWatchTimeoutS = minSeconds;
}

/** The query parameters every watch request carries on top of ListWatch's own. */
export function watchQuery(random: () => number): { allowWatchBookmarks: true; timeoutSeconds: number } {
  return { allowWatchBookmarks: true, timeoutSeconds: minWatchTimeoutS + Math.floor(random() * minWatchTimeoutS) };
}

// ListWatch relists (and diffs its cache, emitting deletes) when a watch ends with 410.
// Reporting this instead of opening a watch is how a restart forces a relist.
function relistSignal(): Error {
  return Object.assign(new Error('relist requested after a failure'), { statusCode: 410 });
}

export class ResilientInformer<T extends KubernetesObject> {
  readonly name: string;
  readonly #inner: InnerInformer<T>;
  readonly #watch: WatchLike;
  readonly #listFn: () => Promise<KubernetesListObject<T>>;
  readonly #onHealthChange: ((error: unknown) => void) | undefined;
  readonly #transform: ((obj: T) => T) | undefined;
  readonly #logger: InformerLogger;
  readonly #backoff: Backoff;
  readonly #clock: Clock;
  readonly #resyncMs: number | undefined;
  readonly #random: () => number;
  readonly #handlers: Record<InformerEvent, Set<ObjectHandler<T>>> = {
    add: new Set(),
    update: new Set(),
    delete: new Set(),
  };
  readonly #sync = Promise.withResolvers<undefined>();
  /** Watch requests that are open, so stop() can close them whatever ListWatch tracks. */
  readonly #openWatches = new Set<AbortController>();
  /** Pending inner reconnect delays, released early by stop(). */
  readonly #delays = new Map<TimerHandle, () => void>();
  #state: 'new' | 'running' | 'stopped' = 'new';
  #synced = false;
  /** A list succeeded and its items are about to be (or have been) applied to the cache. */
  #listed = false;
  #relistOnNextWatch = false;
  #lastError: unknown = undefined;
  #restartTimer: TimerHandle | undefined;
  #resyncTimer: TimerHandle | undefined;

  constructor(options: ResilientInformerOptions<T>) {
    if (options.resyncMs !== undefined && !(options.resyncMs > 0)) {
      throw new RangeError(`Expected \`resyncMs\` to be a number > 0, got ${String(options.resyncMs)}`);
    }
    this.name = options.name;
    this.#watch = options.watch;
    this.#listFn = options.list;
    this.#onHealthChange = options.onHealthChange;
    this.#transform = options.transform === null ? undefined : (options.transform ?? compactForCache);
    this.#logger = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    this.#resyncMs = options.resyncMs;
    this.#random = options.random ?? Math.random;
    this.#backoff = new Backoff({
      baseMs: options.backoff?.baseMs ?? 1000,
      maxMs: options.backoff?.maxMs ?? 30_000,
      factor: options.backoff?.factor ?? 2,
      jitter: options.backoff?.jitter ?? 0.2,
      ...(options.random !== undefined && { random: options.random }),
    });
    // Only awaiting callers should see the rejection from stop-before-sync.
    this.#sync.promise.catch(() => undefined);

    const factory = options.listWatchFactory ?? createListWatch;
    this.#inner = factory({
      path: options.path,
      watch: { watch: this.#proxyWatch },
      list: () => this.#list(),
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      delay: (ms) => this.#delay(ms),
    });
    this.#inner.on('add', (obj) => {
      this.#emit('add', obj);
    });
    this.#inner.on('update', (obj) => {
      this.#emit('update', obj);
    });
    this.#inner.on('delete', (obj) => {
      this.#emit('delete', obj);
    });
    this.#inner.on('error', (err: unknown) => {
      this.#onInnerError(err);
    });
  }

  /** True once a list has succeeded and been applied to the cache. Stays true across restarts. */
  get hasSynced(): boolean {
    return this.#synced;
  }

  /** The error behind the current outage; `undefined` once a watch is established again. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /**
   * Registers a handler. Handlers run synchronously inside the informer and should only
   * enqueue work; an exception is logged and does not affect other handlers.
   */
  on(event: InformerEvent, handler: ObjectHandler<T>): void {
    this.#handlers[event].add(handler);
  }

  off(event: InformerEvent, handler: ObjectHandler<T>): void {
    this.#handlers[event].delete(handler);
  }

  /**
   * Starts listing and watching. Resolves once the first list has been applied (retrying
   * failed lists with backoff); rejects with {@link InformerStoppedError} if stopped first.
   * Later calls return the same promise.
   */
  start(): Promise<void> {
    if (this.#state === 'new') {
      this.#state = 'running';
      this.#scheduleResync();
      this.#runInner();
    }
    return this.#sync.promise;
  }

  /** Stops for good: closes the watch, cancels timers and never restarts. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') {
      return;
    }
    this.#state = 'stopped';
    this.#sync.reject(new InformerStoppedError(this.name));
    if (this.#restartTimer !== undefined) {
      this.#clock.clearTimeout(this.#restartTimer);
      this.#restartTimer = undefined;
    }
    if (this.#resyncTimer !== undefined) {
      this.#clock.clearTimeout(this.#resyncTimer);
      this.#resyncTimer = undefined;
    }
    for (const [handle, release] of this.#delays) {
      this.#clock.clearTimeout(handle);
      release();
    }
    this.#delays.clear();
    for (const controller of this.#openWatches) {
      controller.abort();
    }
    this.#openWatches.clear();
    await this.#inner.stop();
  }

  /** Cached objects, optionally of one namespace. */
  list(namespace?: string): readonly T[] {
    return this.#inner.list(namespace);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#inner.get(name, namespace);
  }

  #runInner(): void {
    this.#inner.start().catch((err: unknown) => {
      this.#onInnerError(err);
    });
  }

  async #list(): Promise<KubernetesListObject<T>> {
    // ListWatch is listing anyway; a forced relist on top would list twice.
    this.#relistOnNextWatch = false;
    const result = await this.#listFn();
    const transform = this.#transform;
    if (transform !== undefined) result.items = result.items.map((item) => transform(item));
    this.#listed = true;
    return result;
  }

  #delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.#state === 'stopped') {
        resolve();
        return;
      }
      const handle = this.#clock.setTimeout(() => {
        this.#delays.delete(handle);
        resolve();
      }, ms);
      this.#delays.set(handle, resolve);
    });
  }

  readonly #proxyWatch: WatchLike['watch'] = async (path, query, callback, done) => {
    // ListWatch applies a successful list to its cache right before it opens the watch.
    if (this.#listed && this.#state === 'running') {
      this.#listed = false;
      this.#markSynced();
    }
    if (this.#state === 'stopped') {
      return new AbortController();
    }
    if (this.#relistOnNextWatch) {
      this.#relistOnNextWatch = false;
      // Deferred so ListWatch finishes this round before starting the relist round.
      queueMicrotask(() => {
        done(relistSignal());
      });
      return new AbortController();
    }

    // An object, not a `let`: the callback's write is invisible to control-flow narrowing.
    const request = { ended: false };
    let controller: AbortController | undefined;
    const onDone = (err: unknown): void => {
      request.ended = true;
      if (controller !== undefined) {
        this.#openWatches.delete(controller);
      }
      done(err);
    };
    try {
      const transform = this.#transform;
      const transformed: typeof callback = transform === undefined
        ? callback
        : (phase, apiObj, watchObj) => {
          // ERROR events carry a Status, not a T.
          callback(phase, phase === 'ERROR' || apiObj === null || typeof apiObj !== 'object' ? apiObj : transform(apiObj as T), watchObj);
        };
      controller = await this.#watch.watch(path, { ...query, ...watchQuery(this.#random) }, transformed, onDone);
    } catch (err) {
      // Watch rejects e.g. when credentials cannot be obtained. ListWatch awaits this call
      // without a catch, so on a reconnect the rejection would be unhandled and the informer
      // silently dead; report it as a failed watch instead.
      onDone(err);
      return new AbortController();
    }
    if (request.ended) {
      // Non-200 answers are reported through `done` before `watch()` returns.
      return controller;
    }
    if (this.#isStopped()) {
      controller.abort();
      return controller;
    }
    this.#openWatches.add(controller);
    this.#onWatchEstablished();
    return controller;
  };

  // A method call, so that checks after an await or in a callback are not narrowed away.
  #isStopped(): boolean {
    return this.#state === 'stopped';
  }

  #markSynced(): void {
    if (this.#synced) {
      return;
    }
    this.#synced = true;
    this.#logger.info('informer synced', { informer: this.name, objects: this.#inner.list().length });
    this.#sync.resolve(undefined);
  }

  #onWatchEstablished(): void {
    this.#backoff.reset();
    if (this.#lastError !== undefined) {
      this.#logger.info('informer recovered', { informer: this.name });
      this.#lastError = undefined;
      this.#onHealthChange?.(undefined);
    }
  }

  #onInnerError(err: unknown): void {
    if (this.#state !== 'running') {
      // Includes the AbortError that ListWatch reports for our own stop().
      return;
    }
    this.#lastError = err;
    this.#onHealthChange?.(err);
    if (this.#restartTimer !== undefined) {
      return;
    }
    const delayMs = this.#backoff.next();
    this.#logger.warn('informer failed; restarting', {
      informer: this.name,
      error: describeError(err),
      attempt: this.#backoff.attempts,
      retryInMs: Math.round(delayMs),
    });
    this.#restartTimer = this.#clock.setTimeout(() => {
      this.#restartTimer = undefined;
      if (!this.#isStopped()) {
        this.#relistOnNextWatch = true;
        this.#runInner();
      }
    }, delayMs);
  }

  #scheduleResync(): void {
    const resyncMs = this.#resyncMs;
    if (resyncMs === undefined || this.#state !== 'running') {
      return;
    }
    this.#resyncTimer = this.#clock.setTimeout(() => {
      this.#resyncTimer = undefined;
      if (this.#synced) {
        for (const obj of this.#inner.list()) {
          this.#emit('update', obj);
        }
      }
      this.#scheduleResync();
    }, resyncMs);
  }

  #emit(event: InformerEvent, obj: T): void {
    if (this.#state !== 'running') {
      return;
    }
    for (const handler of [...this.#handlers[event]]) {
      try {
        handler(obj);
      } catch (err) {
        this.#logger.warn('informer handler failed', {
          informer: this.name,
          event,
          object: `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`,
          error: describeError(err),
        });
      }
    }
  }
}
