// Waiting on conditions with deadlines: the only way tests synchronise with the system.
import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  readonly timeoutMs: number;
  /** How often the condition is checked (a poll interval, not a synchronisation sleep). */
  readonly intervalMs?: number;
  /** What else the timeout's message should show (the state behind a bare `false`). */
  readonly explain?: () => unknown;
}

/**
 * Resolves with the first truthy value `check` returns; rejects with the description
 * and the last observed value or error once the deadline passes.
 */
export async function waitFor<T>(description: string, check: () => Promise<T | false | undefined | null> | T | false | undefined | null,
  options: WaitOptions): Promise<T> {
  // The monotonic clock: a wall clock stepped (NTP, a VM paused and resumed) must not end a wait early or late.
  const deadline = performance.now() + options.timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== undefined && value !== null) return value;
      last = value;
    } catch (err) {
      last = err;
      if (err instanceof Error && /exited early/.test(err.message)) throw err;
    }
    if (performance.now() >= deadline) {
      const detail = last instanceof Error ? last.message : (JSON.stringify(last) as string | undefined) ?? 'undefined';
      const explained = options.explain === undefined ? '' : `; ${await explanation(options.explain)}`;
      throw new Error(`timed out after ${String(options.timeoutMs)} ms waiting for ${description} (last: ${detail})${explained}`);
    }
    await delay(options.intervalMs ?? 100);
  }
}

async function explanation(explain: () => unknown): Promise<string> {
  try {
    return JSON.stringify(await explain()) ?? 'undefined';
  } catch (err) {
    return `(no explanation: ${err instanceof Error ? err.message : String(err)})`;
  }
}
