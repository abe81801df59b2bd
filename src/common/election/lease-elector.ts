// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics
// (k8s.io/client-go/tools/leaderelection, defaults as controller-runtime sets them):
//
// * Every `retryPeriod` (default 2 s) a candidate reads the Lease. It takes it when it is
//   missing (create), when nobody holds it (`holderIdentity` empty, i.e. released), when the
//   holder's lease expired (`renewTime + leaseDurationSeconds < now`, default 15 s), or when it
//   is already ours. Writes carry the read resourceVersion, so of two candidates racing for an
//   expired lease one gets 409 Conflict (create: AlreadyExists) and stays a follower.
// * The leader renews every `retryPeriod` with an optimistic PUT on the resourceVersion it last
//   wrote (no GET while nothing changed; on 409 it falls back to read-then-write).
// * The leader gives up when no renewal has succeeded for `renewDeadline` (default 10 s) since
//   the last successful one, or at once when it reads the Lease held by someone else. It then
//   calls `onStoppedLeading` and the elector is finished: the agent must stop its work and
//   exit, as controller-runtime requires ("the binary must be exited immediately"), because
//   another replica may take over `leaseDuration` after the last renewal.
// * `release()` (graceful shutdown, after the agent's work has stopped) writes an empty
//   holderIdentity and `leaseDurationSeconds: 1`, exactly like client-go's ReleaseOnCancel, so
//   the other replica takes over at its next retry instead of after the lease expires.
//
// Expiry is judged from the Lease's `renewTime` against the local clock. client-go instead
// times expiry from when *it* last saw the record change, which is immune to clock skew but
// means a fresh candidate always waits a full lease duration and takeover can take up to
// leaseDuration + 2 × retryPeriod. Using renewTime bounds takeover by leaseDuration +
// retryPeriod, at the price of assuming replica clocks agree to well within
// leaseDuration − renewDeadline (5 s by default; NTP-synced nodes agree to milliseconds). A
// Lease without a renewTime (written by some other tool) falls back to client-go's rule.
//
// MicroTime (checked against a real kube-apiserver): `spec.renewTime`/`acquireTime` are
// MicroTimes, which the API server parses with exactly six fractional digits: JSON.stringify's
// three (a plain `Date`) are rejected with `cannot parse ".123Z" as ".000000"`. They are written
// by `microTime` below, and read back as strings (`2026-01-02T03:04:05.123456Z`).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig, V1Lease, V1LeaseSpec, V1ObjectMeta } from '@kubernetes/client-node';
import { describeError, isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import { monotonicNow, systemClock, type Clock, type TimerHandle } from '../runtime/workqueue.js';
import { createJsonClient } from '../kube/json-client.js';
import { parseTimestamp } from '../kube/time.js';

/** The election state stored in a Lease's spec, with times as epoch milliseconds. */
export interface LeaseRecord {
  /** Empty when nobody holds the lease (after a release). */
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime?: number;
  readonly renewTime?: number;
  readonly leaseTransitions: number;
}

export interface ObservedLease {
  readonly record: LeaseRecord;
  readonly resourceVersion: string;
}

/**
 * The three calls an elector makes. Errors follow client-node's shapes (`.code` = HTTP status,
 * `.body` = Status JSON), so `isConflict`/`isAlreadyExists` recognise a lost race.
 */
export interface LeaseClient {
  /** `namespace/name`, for log lines. */
  readonly description: string;
  /** `undefined` when the Lease does not exist. */
  get(signal: AbortSignal): Promise<ObservedLease | undefined>;
  /** Fails with 409 AlreadyExists when it exists. */
  create(record: LeaseRecord, signal: AbortSignal): Promise<ObservedLease>;
  /** Replaces the spec if the Lease is still at `current.resourceVersion`, else fails with 409 Conflict. */
  update(current: ObservedLease, record: LeaseRecord, signal: AbortSignal): Promise<ObservedLease>;
}

export interface ElectionLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export interface LeaseElectorOptions {
  readonly lease: LeaseClient;
  /** Default: `<hostname>_<16 hex digits>`, unique per process even when pods share a hostname. */
  readonly identity?: string;
  /** Seconds a lease stays valid without renewal. Default 15. Written to the Lease rounded up. */
  readonly leaseDurationSeconds?: number;
  /** Seconds the leader may go without a successful renewal before it gives up. Default 10; < leaseDuration. */
  readonly renewDeadlineSeconds?: number;
  /** Seconds between acquire/renew attempts. Default 2; < renewDeadline. */
  readonly retryPeriodSeconds?: number;
  /** Called once this replica holds the lease. Errors are logged. */
  readonly onStartedLeading?: () => void | Promise<void>;
  /**
   * Called once when leadership is lost without stop()/release() being asked for: the renew
   * deadline passed, or another replica holds the Lease. The agent must stop its work and
   * exit. Errors are logged.
   */
  readonly onStoppedLeading?: (reason: string) => void | Promise<void>;
  readonly clock?: Clock;
  readonly logger?: ElectionLogger;
}

export const DEFAULT_LEASE_DURATION_SECONDS = 15;
export const DEFAULT_RENEW_DEADLINE_SECONDS = 10;
export const DEFAULT_RETRY_PERIOD_SECONDS = 2;

const silent: ElectionLogger = { debug() { /* off */ }, info() { /* off */ }, warn() { /* off */ }, error() { /* off */ } };

export function defaultIdentity(): string {
  return `${hostname()}_${randomBytes(8).toString('hex')}`;
}

type State = 'new' | 'running' | 'stopped';

export class LeaseElector {
  readonly identity: string;
  readonly #lease: LeaseClient;
  readonly #clock: Clock;
  readonly #log: ElectionLogger;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #onStarted: (() => void | Promise<void>) | undefined;
  readonly #onStopped: ((reason: string) => void | Promise<void>) | undefined;

  #state: State = 'new';
  #leading = false;
  /** The Lease as last read or written. */
  #observed: ObservedLease | undefined;
  /** Local time the observed record last changed; only used for a Lease without renewTime. */
  #observedAt = 0;
  /** When (monotonic clock) the last successful acquire/renew was *sent*: the renew deadline counts from it. */
  #lastRenew = 0;
  #retryTimer: TimerHandle | undefined;
  #deadlineTimer: TimerHandle | undefined;
  #inFlight: Promise<void> | undefined;
  #abort = new AbortController();

  constructor(options: LeaseElectorOptions) {
    this.#lease = options.lease;
    this.identity = options.identity ?? defaultIdentity();
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger ?? silent;
    const lease = options.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
    const renew = options.renewDeadlineSeconds ?? DEFAULT_RENEW_DEADLINE_SECONDS;
    const retry = options.retryPeriodSeconds ?? DEFAULT_RETRY_PERIOD_SECONDS;
    if (!(retry > 0 && renew > retry && lease > renew)) {
      throw new Error(`leader election needs 0 < retryPeriod (${String(retry)}s) < renewDeadline (${String(renew)}s) < leaseDuration (${String(lease)}s)`);
    }
    if (this.identity === '') throw new Error('leader election identity must not be empty');
    this.#leaseDurationMs = lease * 1000;
    this.#renewDeadlineMs = renew * 1000;
    this.#retryPeriodMs = retry * 1000;
    this.#onStarted = options.onStartedLeading;
    this.#onStopped = options.onStoppedLeading;
  }

  /** Whether this replica holds the lease right now. */
  get isLeader(): boolean {
    return this.#leading;
  }

  /** The holder seen in the Lease at the last read or write; `undefined` before, or when released. */
  get leader(): string | undefined {
    const holder = this.#observed?.record.holderIdentity;
    return holder === undefined || holder === '' ? undefined : holder;
  }

  /** Resolves once no acquire/renew attempt is running (for tests driving a fake clock). */
  async settled(): Promise<void> {
    while (this.#inFlight !== undefined) await this.#inFlight;
  }

  /** Starts trying to acquire the lease, at once and then every retry period. An elector runs once. */
  start(): void {
    if (this.#state !== 'new') throw new Error('a LeaseElector can only be started once');
    this.#state = 'running';
    this.#log.info('leader election started', { lease: this.#lease.description, identity: this.identity });
    this.#schedule(0);
  }

  /**
   * Stops campaigning and renewing without touching the Lease (as if the process died): another
   * replica takes over once the lease expires. Does not call onStoppedLeading.
   */
  async stop(): Promise<void> {
    this.#halt();
    this.#abort.abort(new Error('leader election stopped'));
    await this.#inFlight;
  }

  /**
   * Graceful shutdown: stops, then, if this replica holds the lease, hands it back (empty
   * holderIdentity, leaseDurationSeconds 1) so another replica takes over at its next retry.
   * Call it after the work guarded by the lease has stopped. Resolves true when the lease was
   * released (or not ours); false when the write failed and the lease will simply expire.
   */
  async release(): Promise<boolean> {
    const wasLeading = this.#leading;
    this.#halt();
    // Let a renewal in flight finish rather than abort it: aborted, it may still have been
    // applied, and the release would then hit a 409 on a resourceVersion we never saw.
    await this.#inFlight;
    const observed = this.#observed;
    if (!wasLeading || observed === undefined) return true;
    const signal = this.#timeoutSignal(this.#renewDeadlineMs);
    try {
      let current: ObservedLease | undefined = observed;
      for (let attempt = 0; attempt < 3 && current !== undefined; attempt++) {
        if (current.record.holderIdentity !== this.identity) return true;
        const now = this.#clock.now();
        try {
          this.#observed = await this.#lease.update(current, {
            holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: current.record.leaseTransitions,
          }, signal.signal);
          this.#log.info('released the leader lease', { lease: this.#lease.description, identity: this.identity });
          return true;
        } catch (err) {
          if (!isConflict(err)) throw err;
          current = await this.#lease.get(signal.signal);
        }
      }
      return true;
    } catch (err) {
      this.#log.warn('could not release the leader lease; it expires on its own', { lease: this.#lease.description, error: describeError(err) });
      return false;
    } finally {
      signal.dispose();
    }
  }

  /** Ends the loop: no new attempts, no timers, not leading. */
  #halt(): void {
    this.#state = 'stopped';
    this.#leading = false;
    this.#clearTimer('retry');
    this.#clearTimer('deadline');
  }

  #clearTimer(which: 'retry' | 'deadline'): void {
    const handle = which === 'retry' ? this.#retryTimer : this.#deadlineTimer;
    if (handle !== undefined) this.#clock.clearTimeout(handle);
    if (which === 'retry') this.#retryTimer = undefined;
    else this.#deadlineTimer = undefined;
  }

  #schedule(delayMs: number): void {
    if (this.#state !== 'running') return;
    this.#retryTimer = this.#clock.setTimeout(() => {
      this.#retryTimer = undefined;
      this.#inFlight = this.#attempt().catch((err: unknown) => {
        this.#log.error('leader election attempt failed unexpectedly', { error: describeError(err) });
      }).finally(() => {
        this.#inFlight = undefined;
        this.#schedule(this.#retryPeriodMs);
      });
    }, delayMs);
  }

  /**
   * An AbortSignal that fires after `ms` on the injected clock, or when the elector is stopped.
   * Forwarded by hand rather than with AbortSignal.any, so no listener outlives its attempt.
   */
  #timeoutSignal(ms: number): { signal: AbortSignal; dispose(): void } {
    const controller = new AbortController();
    const timer = this.#clock.setTimeout(() => { controller.abort(new Error(`Lease request timed out after ${String(ms)} ms`)); }, ms);
    const stopped = this.#abort.signal;
    const forward = () => { controller.abort(stopped.reason); };
    if (stopped.aborted) forward();
    else stopped.addEventListener('abort', forward, { once: true });
    return {
      signal: controller.signal,
      dispose: () => {
        this.#clock.clearTimeout(timer);
        stopped.removeEventListener('abort', forward);
      },
    };
  }

  async #attempt(): Promise<void> {
    // The wall clock for the Lease's times; the monotonic one for the deadline: a wall clock
    // stepped ahead (a VM resumed) must not make every renewal's budget negative and end a
    // leadership that the Lease itself still holds.
    const start = this.#clock.now();
    const startedAt = monotonicNow(this.#clock);
    // A leader must not wait past its deadline; a candidate gives a request as long as a leader would.
    const budget = this.#leading ? this.#lastRenew + this.#renewDeadlineMs - startedAt : this.#renewDeadlineMs;
    const timeout = this.#timeoutSignal(Math.max(1, budget));
    let acquired: boolean;
    try {
      acquired = await this.#tryAcquireOrRenew(start, timeout.signal);
    } catch (err) {
      if (this.#state !== 'running') return;
      const meta = { lease: this.#lease.description, identity: this.identity, error: describeError(err) };
      if (this.#leading) this.#log.warn('failed to renew the leader lease', meta);
      else if (isConflict(err) || isAlreadyExists(err)) this.#log.debug('another replica updated the lease first', meta);
      else this.#log.warn('failed to acquire the leader lease', meta);
      return;
    } finally {
      timeout.dispose();
    }
    if (this.#state !== 'running') return;
    if (!acquired) {
      if (this.#leading) this.#lose(`the lease is now held by ${JSON.stringify(this.leader ?? '')}`);
      return;
    }
    if (monotonicNow(this.#clock) - startedAt >= this.#renewDeadlineMs) {
      // Written, but so late that another replica may already consider the lease expired.
      this.#lose('the renewal took longer than the renew deadline');
      return;
    }
    this.#lastRenew = startedAt;
    this.#clearTimer('deadline');
    this.#deadlineTimer = this.#clock.setTimeout(() => {
      this.#deadlineTimer = undefined;
      this.#lose(`no successful renewal within the ${String(this.#renewDeadlineMs / 1000)}s renew deadline`);
    }, startedAt + this.#renewDeadlineMs - monotonicNow(this.#clock));
    if (!this.#leading) {
      this.#leading = true;
      this.#log.info('became leader', { lease: this.#lease.description, identity: this.identity });
      this.#callback('onStartedLeading', this.#onStarted);
    }
  }

  /** True when the lease is ours after this call; false when another replica validly holds it. */
  async #tryAcquireOrRenew(now: number, signal: AbortSignal): Promise<boolean> {
    const durationSeconds = Math.ceil(this.#leaseDurationMs / 1000);
    // Fast path: renew on the resourceVersion we wrote last.
    const mine = this.#observed;
    if (this.#leading && mine !== undefined) {
      try {
        this.#observe(await this.#lease.update(mine, { ...mine.record, leaseDurationSeconds: durationSeconds, renewTime: now }, signal), now);
        return true;
      } catch (err) {
        // As client-go: whatever went wrong (409, the Lease deleted, a dropped connection), read it and decide.
        if (signal.aborted) throw err;
        this.#log.debug('optimistic renewal failed; reading the lease', { lease: this.#lease.description, error: describeError(err) });
      }
    }
    const current = await this.#lease.get(signal);
    if (current === undefined) {
      this.#observe(await this.#lease.create({
        holderIdentity: this.identity, leaseDurationSeconds: durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0,
      }, signal), now);
      return true;
    }
    this.#observe(current, now);
    const holder = current.record.holderIdentity;
    if (holder !== this.identity) {
      // A leader that finds someone else in the Lease has lost it, valid or not.
      if (this.#leading) return false;
      if (holder !== '' && this.#isValid(current.record, now)) return false;
    }
    const record: LeaseRecord = holder === this.identity
      ? { ...current.record, leaseDurationSeconds: durationSeconds, renewTime: now }
      : { holderIdentity: this.identity, leaseDurationSeconds: durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: current.record.leaseTransitions + 1 };
    this.#observe(await this.#lease.update(current, record, signal), now);
    return true;
  }

  #isValid(record: LeaseRecord, now: number): boolean {
    const from = record.renewTime ?? this.#observedAt;
    return from + record.leaseDurationSeconds * 1000 > now;
  }

  #observe(lease: ObservedLease, now: number): void {
    const before = this.#observed;
    if (before?.resourceVersion !== lease.resourceVersion) this.#observedAt = now;
    const previousHolder = before?.record.holderIdentity;
    this.#observed = lease;
    const holder = lease.record.holderIdentity;
    if (holder !== previousHolder && holder !== this.identity) {
      this.#log.info(holder === '' ? 'the leader lease is free' : 'observed a new leader', { lease: this.#lease.description, leader: holder });
    }
  }

  #lose(reason: string): void {
    if (!this.#leading || this.#state !== 'running') return;
    this.#halt();
    this.#abort.abort(new Error(`lost leadership: ${reason}`));
    this.#log.error('lost leadership', { lease: this.#lease.description, identity: this.identity, reason });
    this.#callback('onStoppedLeading', this.#onStopped === undefined ? undefined : () => this.#onStopped?.(reason));
  }

  #callback(name: string, fn: (() => void | Promise<void>) | undefined): void {
    if (fn === undefined) return;
    const report = (err: unknown) => { this.#log.error(`${name} failed`, { error: describeError(err) }); };
    try {
      const result = fn();
      if (result instanceof Promise) result.catch(report);
    } catch (err) {
      report(err);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The real Lease, through the plain-JSON client.

function toRecord(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  // A MicroTime's six fractional digits are cut to the millisecond.
  const acquireTime = parseTimestamp(spec.acquireTime);
  const renewTime = parseTimestamp(spec.renewTime);
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    ...(acquireTime !== undefined && { acquireTime }),
    ...(renewTime !== undefined && { renewTime }),
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

function toSpec(record: LeaseRecord): V1LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    // Six fractional digits: see the MicroTime note at the top of this file. (The spec's type
    // says Date; JSON.stringify writes a string as it is.)
    ...(record.acquireTime !== undefined && { acquireTime: microTime(record.acquireTime) as unknown as Date }),
    ...(record.renewTime !== undefined && { renewTime: microTime(record.renewTime) as unknown as Date }),
    leaseTransitions: record.leaseTransitions,
  };
}

/** `ms` as a MicroTime: RFC 3339 with six fractional digits (the last three are zeros). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** A LeaseClient for the Lease `name` in `namespace`. Needs get/create/update on leases there. */
export function kubeLeaseClient(kc: KubeConfig, namespace: string, name: string): LeaseClient {
  const client = createJsonClient(kc, { who: 'election' });
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const path = `${collection}/${encodeURIComponent(name)}`;
  // The full objects we read or wrote, so a replace keeps labels, annotations and the
  // spec fields this elector does not manage (preferredHolder, strategy).
  const objects = new WeakMap<ObservedLease, V1Lease>();
  // Distrust the network: anything but a Lease is a failed request, never an election state.
  const expect = (answer: Record<string, unknown>) => (answer['kind'] === 'Lease' ? undefined : `expected kind Lease, got ${JSON.stringify(answer['kind'] ?? null)}`);
  const observed = (lease: V1Lease): ObservedLease => {
    const result = { record: toRecord(lease), resourceVersion: lease.metadata?.resourceVersion ?? '' };
    objects.set(result, lease);
    return result;
  };
  return {
    description: `${namespace}/${name}`,
    async get(signal) {
      try {
        return observed(await client.request('GET', path, { signal, expect }));
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async create(record, signal) {
      const body: V1Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: toSpec(record) };
      return observed(await client.request('POST', collection, { body, signal, expect }));
    },
    async update(current, record, signal) {
      const previous = objects.get(current);
      const metadata: V1ObjectMeta = Object.assign({}, previous?.metadata, { name, namespace, resourceVersion: current.resourceVersion });
      const spec: V1LeaseSpec = Object.assign({}, previous?.spec, toSpec(record));
      const body: V1Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec };
      return observed(await client.request('PUT', path, { body, signal, expect }));
    },
  };
}
