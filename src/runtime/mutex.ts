/**
 * A minimal async mutex. Callers of {@link Mutex.runExclusive} run one at a time, in the order
 * they called it; a failing callback releases the lock like a successful one.
 */
export class Mutex {
  // Each caller chains onto the previous caller's completion, which gives FIFO order for free.
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;

  /** True while a callback runs or waits for the lock. */
  get isLocked(): boolean {
    return this.#pending > 0;
  }

  /** Runs `fn` once every earlier caller has finished, and settles with its outcome. */
  runExclusive<T>(fn: () => T | PromiseLike<T>): Promise<T> {
    this.#pending += 1;
    const run = this.#tail.then(fn);
    const release = (): void => {
      this.#pending -= 1;
    };
    this.#tail = run.then(release, release);
    return run;
  }
}
