/**
 * Exponential backoff with jitter.
 *
 * The n-th call to {@link Backoff.next} (counting from 0) returns a delay in
 * `[d * (1 - jitter), d]` where `d = min(maxMs, baseMs * factor ** n)`.
 * Jitter only ever shortens the delay, so `maxMs` is a hard ceiling: callers can rely
 * on it when sizing timeouts, and many clients that failed together still spread out.
 *
 * The class holds no timers and reads no clock; with `random` injected it is fully deterministic.
 */
export interface BackoffOptions {
  /** Delay before the first retry, in milliseconds. Must be > 0. */
  readonly baseMs: number;
  /** Upper bound for any delay, in milliseconds. Must be >= `baseMs`. */
  readonly maxMs: number;
  /**
   * Growth factor per attempt. Must be >= 1.
   * @default 2
   */
  readonly factor?: number;
  /**
   * Fraction of each delay that is randomised away, from 0 (none) to 1 (anywhere in `[0, d]`).
   * @default 0.2
   */
  readonly jitter?: number;
  /**
   * Source of randomness in `[0, 1)`. Inject a constant in tests.
   * @default Math.random
   */
  readonly random?: () => number;
}

/** Backoff settings a component accepts from its caller; unset fields take the component's defaults. */
export type BackoffSettings = Partial<Omit<BackoffOptions, 'random'>>;

export class Backoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #attempts = 0;

  constructor(options: BackoffOptions) {
    const { baseMs, maxMs, factor = 2, jitter = 0.2, random = Math.random } = options;
    if (!Number.isFinite(baseMs) || baseMs <= 0) {
      throw new RangeError(`Expected \`baseMs\` to be a finite number > 0, got ${String(baseMs)}`);
    }
    if (!Number.isFinite(maxMs) || maxMs < baseMs) {
      throw new RangeError(`Expected \`maxMs\` to be a finite number >= baseMs (${baseMs}), got ${String(maxMs)}`);
    }
    if (!Number.isFinite(factor) || factor < 1) {
      throw new RangeError(`Expected \`factor\` to be a finite number >= 1, got ${String(factor)}`);
    }
    if (!(jitter >= 0 && jitter <= 1)) {
      throw new RangeError(`Expected \`jitter\` to be a number from 0 to 1, got ${String(jitter)}`);
    }
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
    this.#factor = factor;
    this.#jitter = jitter;
    this.#random = random;
  }

  /** Number of delays handed out since construction or the last {@link reset}. */
  get attempts(): number {
    return this.#attempts;
  }

  /** Returns the delay for the next attempt and counts the attempt. */
  next(): number {
    // factor ** attempts overflows to Infinity after enough failures; min() absorbs that.
    const nominal = Math.min(this.#maxMs, this.#baseMs * this.#factor ** this.#attempts);
    this.#attempts += 1;
    const r = Math.min(Math.max(this.#random(), 0), 1);
    return nominal - nominal * this.#jitter * r;
  }

  /** Starts over from `baseMs`; call after a success. */
  reset(): void {
    this.#attempts = 0;
  }
}
