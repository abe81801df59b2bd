// Dropped Events are logged, but a flood of drops must not become a flood of log lines: one
// line per window per kind of drop, carrying the count since the last line. Pure: the caller
// passes the time and writes the line.

export class DropReport {
  readonly #windowMs: number;
  #count = 0;
  #loggedAt: number | undefined;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Counts one drop; returns the count to log now, or undefined while the last line is recent. */
  note(now: number): number | undefined {
    this.#count += 1;
    if (this.#loggedAt !== undefined && now - this.#loggedAt < this.#windowMs) return undefined;
    return this.#take(now);
  }

  /** The drops not logged yet (a last line at stop or eviction), or undefined if there are none. */
  unreported(now: number): number | undefined {
    return this.#count === 0 ? undefined : this.#take(now);
  }

  #take(now: number): number {
    const count = this.#count;
    this.#count = 0;
    this.#loggedAt = now;
    return count;
  }
}
