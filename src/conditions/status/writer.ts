// Writes ClusterSet status promptly after a change, at most once per `minIntervalMs` per
// ClusterSet, and never a write that changes nothing. Requests for the same ClusterSet
// coalesce in a work queue keyed by name; the queue also serialises them, so two writes to
// one ClusterSet never race. A 409 (our cached copy was stale) is retried with backoff.
import { WorkQueue } from '../../common/runtime/workqueue.js';
import { sameStatus, type ComputedStatus } from './compute.js';

export interface StatusTarget {
  readonly metadata?: { readonly name?: string; readonly resourceVersion?: string; readonly generation?: number };
  readonly status?: unknown;
}

export interface StatusStore<T extends StatusTarget> {
  /** The latest known copy (e.g. from an informer cache), or undefined when gone. */
  get(name: string): T | undefined;
  replaceStatus(object: T, status: ComputedStatus): Promise<void>;
}

export interface StatusWriterOptions<T extends StatusTarget> {
  readonly store: StatusStore<T>;
  readonly desired: (object: T) => ComputedStatus | undefined;
  readonly minIntervalMs: number;
  readonly onError?: (name: string, error: unknown) => void;
  /** Milliseconds for the pacing, on a clock that does not step. @default performance.now */
  readonly now?: () => number;
}

export class StatusWriter<T extends StatusTarget> {
  private readonly queue: WorkQueue;
  private readonly lastWrite = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: StatusWriterOptions<T>) {
    // Pacing is a duration: on the monotonic clock, so a wall clock stepped back does not hold writes back.
    this.now = options.now ?? (() => performance.now());
    this.queue = new WorkQueue({
      backoff: { baseMs: 100, maxMs: 30_000 },
      onError: (key, error) => options.onError?.(key, error),
    });
    this.queue.start((name) => this.write(name));
  }

  request(name: string): void {
    this.queue.add(name);
  }

  forget(name: string): void {
    this.lastWrite.delete(name);
    this.queue.forget(name);
  }

  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private async write(name: string): Promise<{ requeueAfterMs: number } | undefined> {
    const wait = (this.lastWrite.get(name) ?? -Infinity) + this.options.minIntervalMs - this.now();
    if (wait > 0) return { requeueAfterMs: wait };
    const object = this.options.store.get(name);
    if (!object) return undefined;
    const desired = this.options.desired(object);
    if (!desired || sameStatus(object.status ?? {}, desired)) return undefined;
    this.lastWrite.set(name, this.now());
    await this.options.store.replaceStatus(object, desired);
    return undefined;
  }
}
