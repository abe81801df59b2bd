// A manually driven Clock: time moves only when a test calls advance(), so timer-based code
// is tested without real waiting.
import { type Clock, type TimerHandle } from '../../src/common/runtime/workqueue.js';

interface FakeTimer {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
}

export class FakeClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Map<number, FakeTimer>();
  #waiters: { count: number; resolve: () => void }[] = [];

  #wallOffset = 0;

  /** The wall clock: the timers' time plus every step `stepWall` made. */
  now(): number {
    return this.#now + this.#wallOffset;
  }

  /** The clock that never steps: what timers fire on. */
  monotonic(): number {
    return this.#now;
  }

  /** Steps the wall clock (NTP, a VM resumed) without moving the timers' time. */
  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    this.#seq += 1;
    this.#timers.set(this.#seq, { at: this.#now + Math.max(0, ms), seq: this.#seq, callback });
    this.#notify();
    return this.#seq;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** Number of timers that have not fired or been cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Remaining delay of each pending timer, ascending. */
  pendingDelays(): number[] {
    return [...this.#timers.values()].map((t) => t.at - this.#now).sort((a, b) => a - b);
  }

  /** Moves time forward, firing due timers in order, including timers they schedule. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const timer of this.#timers.values()) {
        if (timer.at <= target && (next === undefined || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq))) {
          next = timer;
        }
      }
      if (next === undefined) {
        break;
      }
      this.#timers.delete(next.seq);
      this.#now = next.at;
      next.callback();
    }
    this.#now = target;
  }

  /** Resolves once at least `count` timers are pending. */
  waitForTimers(count = 1): Promise<void> {
    if (this.#timers.size >= count) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#waiters.push({ count, resolve });
    });
  }

  #notify(): void {
    const ready = this.#waiters.filter((w) => this.#timers.size >= w.count);
    this.#waiters = this.#waiters.filter((w) => this.#timers.size < w.count);
    for (const w of ready) {
      w.resolve();
    }
  }
}
