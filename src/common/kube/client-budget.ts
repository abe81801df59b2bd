// A client-side request budget per API server, as client-go's: a token bucket that admits
// `qps` requests a second on average and `burst` at once, every request and watch start
// taking one token. The work queues already bound how many requests are in flight; this
// bounds how fast they may start, so a hot retry loop or a flood of leader changes cannot
// hammer an API server whatever it is.
//
// Reservation-based (golang.org/x/time/rate's Reserve): each caller learns at once how long to
// wait, so callers are served in arrival order without a queue.

export interface BudgetSettings {
  /** Average requests per second; 0 turns the budget off (client-go: a negative QPS). */
  readonly qps: number;
  /** Requests that may start at once after a quiet spell; at least 1 when qps > 0. */
  readonly burst: number;
}

export interface BudgetClock {
  now(): number;
}

/** Waits longer than this are reported (client-go logs them too), at most once per {@link REPORT_EVERY_MS}. */
export const LONG_WAIT_MS = 1000;
export const REPORT_EVERY_MS = 60_000;

/** Reported when requests waited over {@link LONG_WAIT_MS}: the longest wait and how many did, since the last report. */
export type LongWaitReporter = (report: { readonly longestWaitMs: number; readonly longWaits: number }) => void;

/** What a budget reports: requests that had to wait, and for how long in total. */
export interface BudgetStats {
  throttled: number;
  waitedMs: number;
}

export class ClientBudget {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: BudgetClock;
  readonly stats: BudgetStats = { throttled: 0, waitedMs: 0 };
  readonly #report: LongWaitReporter | undefined;
  #tokens: number;
  #last: number;
  #lastReport = -Infinity;
  #longWaits = 0;
  #longestWaitMs = 0;

  constructor(settings: BudgetSettings, report?: LongWaitReporter, clock: BudgetClock = { now: () => performance.now() }) {
    if (!(settings.qps >= 0) || !Number.isFinite(settings.qps)) throw new RangeError(`qps must be a finite number ≥ 0, got ${String(settings.qps)}`);
    if (settings.qps > 0 && !(Number.isInteger(settings.burst) && settings.burst >= 1)) {
      throw new RangeError(`burst must be an integer ≥ 1, got ${String(settings.burst)}`);
    }
    this.#qps = settings.qps;
    this.#burst = settings.burst;
    this.#clock = clock;
    this.#report = report;
    this.#tokens = settings.burst;
    this.#last = clock.now();
  }

  get enabled(): boolean {
    return this.#qps > 0;
  }

  /**
   * Takes a token; returns how many milliseconds the caller must wait before it starts its
   * request (0: start now). The token is taken even if the caller gives up while waiting.
   */
  reserve(): number {
    if (this.#qps === 0) return 0;
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    const waitMs = (-this.#tokens / this.#qps) * 1000;
    this.stats.throttled += 1;
    this.stats.waitedMs += waitMs;
    if (waitMs > LONG_WAIT_MS) this.#longWait(now, waitMs);
    return waitMs;
  }

  #longWait(now: number, waitMs: number): void {
    this.#longWaits += 1;
    this.#longestWaitMs = Math.max(this.#longestWaitMs, waitMs);
    if (now - this.#lastReport < REPORT_EVERY_MS) return;
    this.#lastReport = now;
    this.#report?.({ longestWaitMs: Math.round(this.#longestWaitMs), longWaits: this.#longWaits });
    this.#longWaits = 0;
    this.#longestWaitMs = 0;
  }

  /** Resolves when the caller may start its request. */
  async take(): Promise<void> {
    const waitMs = this.reserve();
    if (waitMs > 0) await new Promise((resolve) => { setTimeout(resolve, waitMs); });
  }
}
