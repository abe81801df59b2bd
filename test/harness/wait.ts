// Waiting on conditions with deadlines: the only way tests synchronise with the system.
import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  readonly timeoutMs: number;
  /** How often the condition is checked (a poll interval, not a synchronisation sleep). */
  readonly intervalMs?: number;
}

/**
 * Resolves with the first truthy value `check` returns; rejects with the description
 * and the last observed value or error once the deadline passes.
 */
export async function waitFor<T>(description: string, check: () => Promise<T | false | undefined | null> | T | false | undefined | null,
  options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
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
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : (JSON.stringify(last) as string | undefined) ?? 'undefined';
      throw new Error(`timed out after ${String(options.timeoutMs)} ms waiting for ${description} (last: ${detail})`);
    }
    await delay(options.intervalMs ?? 100);
  }
}
