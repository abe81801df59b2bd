// The lifecycle the importer and the exporter share towards their leader. The ClusterSet's
// RemoteCommonArea drives both alike ({@link LeaderLink}): it resumes them with a trusted
// client after an accepted heartbeat, pauses them when trust or the leader is lost, stops them
// on shutdown. Work that began before a pause or a stop must write nothing more: it takes the
// lifecycle's generation when it starts and checks it before every write
// ({@link LinkLifecycle.writable}), which throws {@link PausedError}. The state is here; what
// a component does on each transition (watch, resync, retention) stays its own.
import { setTimeout as sleep } from 'node:timers/promises';
import { Backoff, type BackoffOptions } from '../../common/runtime/backoff.js';
import type { LeaderApi } from '../leader-api.js';

/**
 * The area's side of its importer and its exporter: what it needs to drive them. Both move
 * data across the trust boundary, so both follow the area's trust in the leader.
 */
export interface LeaderLink {
  /** The leader is connected and trusted: work with this client (a no-op when already doing so). */
  resume(api: LeaderApi): void;
  /** Exchange nothing more with the leader (imports follow the lost-leader retention). */
  pause(why: string): void;
  /** Stops; what was imported or exported stays (a restart is not a leave). */
  stop(): Promise<void>;
  /**
   * Stops and removes what it brought: the importer its local objects, the exporter its
   * ResourceExports on the leader, through `api` (the area's client) when it never resumed,
   * e.g. after a restart when the ClusterSet was deleted meanwhile.
   */
  leave(api?: LeaderApi): Promise<void>;
  /**
   * Our announce had to be created again (someone deleted it, and a leader deletes the
   * exports of a member whose announce is gone): bring back at once what was published.
   */
  announceRecreated?(): void;
}

/** Thrown inside work that began before a pause or stop: write nothing more. */
export class PausedError extends Error {
  override readonly name = 'PausedError';
}

export type LinkState = 'new' | 'active' | 'paused';

/**
 * What {@link LinkLifecycle.resume} changed: `stopped`, nothing (stopped for good); `unchanged`,
 * already active with this client; `newClient`, active, now with another client (rotated
 * credentials); `started`, the first resume; `resumed`, active again after a pause.
 */
export type ResumeChange = 'stopped' | 'unchanged' | 'newClient' | 'started' | 'resumed';

/** The work a component does for its link, as {@link LinkLifecycle.drain} waits for it. */
export interface LinkWork {
  /** The full resync running now, if any (it queues more work when it ends). */
  resyncing(): Promise<void> | undefined;
  /** The component's work queue (common/runtime/workqueue.ts). */
  readonly queue: { onIdle(): Promise<void>; readonly size: number; readonly inFlight: number };
  /** Work the queue's items hand on and that counts too, e.g. the exporter's status writes. */
  handedOn?(): Promise<void>;
}

export class LinkLifecycle<Api> {
  #state: LinkState = 'new';
  #stopped = false;
  #generation = 0;
  #api: Api | undefined;
  #pauseReason: string | undefined;
  readonly #stopSignal = new AbortController();
  #pauseSignal = new AbortController();

  /** 'new' until the first resume; then 'active' or 'paused'. A stopped link keeps its last state. */
  get state(): LinkState {
    return this.#state;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** The client while active; undefined while new, paused or stopped. */
  get api(): Api | undefined {
    return this.#stopped || this.#state !== 'active' ? undefined : this.#api;
  }

  /** Bumped by every pause and by stop. */
  get generation(): number {
    return this.#generation;
  }

  /** Why the link is paused (the first reason given), while it is. */
  get pauseReason(): string | undefined {
    return this.#pauseReason;
  }

  /** Aborted by stop. */
  get stopSignal(): AbortSignal {
    return this.#stopSignal.signal;
  }

  /** Aborted by the next pause or by stop: for waits that must end with the active period. */
  get activeSignal(): AbortSignal {
    return this.#pauseSignal.signal;
  }

  /** Active and not stopped. */
  get active(): boolean {
    return !this.#stopped && this.#state === 'active';
  }

  resume(api: Api): ResumeChange {
    if (this.#stopped) return 'stopped';
    if (this.#state === 'active') {
      if (this.#api === api) return 'unchanged';
      this.#api = api;
      return 'newClient';
    }
    const change = this.#state === 'paused' ? 'resumed' : 'started';
    this.#state = 'active';
    this.#api = api;
    this.#pauseReason = undefined;
    return change;
  }

  /**
   * Pauses: returns the state it left ('new' or 'active'), or undefined when it was already
   * paused or is stopped (further pauses keep the first reason).
   */
  pause(why: string): 'new' | 'active' | undefined {
    if (this.#stopped || this.#state === 'paused') return undefined;
    const left = this.#state;
    this.#state = 'paused';
    this.#pauseReason = why;
    this.#generation += 1;
    this.#api = undefined;
    this.#pauseSignal.abort();
    this.#pauseSignal = new AbortController();
    return left;
  }

  /** Stops for good; true on the first call. */
  stop(): boolean {
    if (this.#stopped) return false;
    this.#stopped = true;
    this.#generation += 1;
    this.#stopSignal.abort();
    this.#pauseSignal.abort();
    return true;
  }

  /**
   * The client to write with, for work begun at `generation`; throws PausedError once the link
   * was paused or stopped since (`what` names the work in the message).
   */
  writable(generation: number, what: string): Api {
    const api = this.api;
    if (api === undefined || this.#generation !== generation) throw new PausedError(`${what} were paused`);
    return api;
  }

  /**
   * Resolves when `work` has nothing queued or running, a pending full resync included. A
   * resync ends by queueing every key, and another can start while the queue drains, so one
   * pass is not enough: it loops until a pass finds both at rest. Callers (tests, mostly) see
   * a settled state, never the moment between a resync and the work it queued.
   */
  async drain(work: LinkWork): Promise<void> {
    for (;;) {
      const resyncing = work.resyncing();
      if (resyncing) {
        await resyncing;
        continue;
      }
      await work.queue.onIdle();
      await work.handedOn?.();
      if (work.resyncing() === undefined && work.queue.size === 0 && work.queue.inFlight === 0) return;
    }
  }
}

export interface RetryOptions {
  readonly backoff: BackoffOptions;
  /** Asked before each attempt, after each failure and after success: false ends the loop. */
  readonly proceed: () => boolean;
  /** Ends a wait between attempts (and the loop). */
  readonly signal: AbortSignal;
  /** An attempt failed; the next one follows in `retryInMs`. */
  readonly failed: (err: unknown, retryInMs: number) => void;
}

/**
 * Runs `attempt` until it succeeds, waiting with backoff between failures (a leader or member
 * API server that is briefly unavailable must not end the work for good). True when an attempt
 * succeeded and `proceed` still holds; false when `proceed` turned false or `signal` aborted.
 */
export async function retryUntilDone(attempt: () => Promise<void>, options: RetryOptions): Promise<boolean> {
  const backoff = new Backoff(options.backoff);
  for (;;) {
    if (!options.proceed()) return false;
    try {
      await attempt();
      return options.proceed();
    } catch (err) {
      if (!options.proceed()) return false;
      const delay = backoff.next();
      options.failed(err, delay);
      try {
        await sleep(delay, undefined, { signal: options.signal });
      } catch {
        return false;
      }
    }
  }
}
