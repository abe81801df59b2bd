/**
 * A gate between shared work, many at once (writers), and exclusive sections that must see no
 * writer half-done and be seen half-done by none. An exclusive section blocks new writers the
 * moment it is requested, then waits for the writers already inside to leave; exclusive
 * sections run one at a time, in the order requested.
 */
export class ExclusiveGate {
  /** Exclusive sections requested and not settled yet: while > 0, writers wait. */
  #exclusive = 0;
  #exclusiveTail: Promise<void> = Promise.resolve();
  #writers = 0;
  #open = false;
  #gateWaiters: (() => void)[] = [];
  #drainWaiters: (() => void)[] = [];

  /** Writers inside now. */
  get writers(): number {
    return this.#writers;
  }

  /** True while an exclusive section waits or runs. */
  get exclusivePending(): boolean {
    return this.#exclusive > 0;
  }

  /**
   * Runs `work` as a writer: once no exclusive section is pending (or the gate was opened for
   * good), alongside any other writers. Settles with the outcome of `work`.
   */
  async shared<T>(work: () => Promise<T>): Promise<T> {
    // Never synchronously, even with the gate free: `work` sees whatever its caller changes
    // later in the same tick (an owner paused right after queueing work must not write).
    await this.#pass();
    this.#writers += 1;
    try {
      return await work();
    } finally {
      this.#leave();
    }
  }

  /** Runs `work` once no writer is inside; writers wait until it is done. Serialised. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#exclusive += 1;
    const run = this.#exclusiveTail.then(async () => {
      await this.#writersDrained();
      return work();
    });
    this.#exclusiveTail = run.then(() => undefined, () => undefined);
    return run.finally(() => {
      this.#exclusive -= 1;
      if (this.#exclusive === 0) this.#wakeWriters();
    });
  }

  /**
   * Lets writers through for good, even past exclusive sections: for an owner that is
   * stopping, whose writers then find out themselves that there is nothing to do.
   */
  open(): void {
    this.#open = true;
    this.#wakeWriters();
  }

  /** Resolves once every exclusive section requested so far has settled. */
  settled(): Promise<void> {
    return this.#exclusiveTail;
  }

  async #pass(): Promise<void> {
    while (this.#exclusive > 0 && !this.#open) {
      await new Promise<void>((resolve) => { this.#gateWaiters.push(resolve); });
    }
  }

  #writersDrained(): Promise<void> {
    if (this.#writers === 0) return Promise.resolve();
    return new Promise((resolve) => { this.#drainWaiters.push(resolve); });
  }

  #wakeWriters(): void {
    const waiters = this.#gateWaiters;
    this.#gateWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #leave(): void {
    this.#writers -= 1;
    if (this.#writers > 0) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
