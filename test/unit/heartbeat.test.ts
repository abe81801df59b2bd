// The heartbeat's schedule (node-cron, on the wall clock) against a wall clock stepped back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heartbeat } from '../../src/announce/heartbeat.js';
import { waitFor } from '../harness/wait.js';

/** Replaces the global Date with one whose "now" is `offset()` ms away from the real clock. */
function steppedClock(t: { after(fn: () => void): void }): { step(ms: number): void } {
  const RealDate = Date;
  let offset = 0;
  class SteppedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...(args as [string | number | Date]));
    }

    static override now(): number {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = SteppedDate as DateConstructor;
  t.after(() => { globalThis.Date = RealDate; });
  return { step: (ms) => { offset += ms; } };
}

function recordingLogger() {
  const warnings: string[] = [];
  return { warnings, logger: { debug: () => undefined, warn: (message: string) => { warnings.push(message); } } };
}

describe('Heartbeat', () => {
  it('keeps beating when the wall clock steps back 30 s: the watchdog beats and plans the schedule anew', async (t) => {
    const clock = steppedClock(t);
    const { warnings, logger } = recordingLogger();
    let beats = 0;
    const heartbeat = new Heartbeat({ cron: '* * * * * *', intervalMs: 1000, name: 'stepped', logger, beat: () => { beats += 1; return Promise.resolve(); } });
    t.after(() => heartbeat.stop());
    await heartbeat.start();
    await waitFor('two scheduled beats', () => beats >= 3, { timeoutMs: 5_000, intervalMs: 20 });
    clock.step(-30_000);
    const stepped = beats;
    // Without the watchdog node-cron waits until the clock reads its planned tick again: 30 s.
    await waitFor('three beats after the step', () => beats >= stepped + 3, { timeoutMs: 6_000, intervalMs: 20 });
    // Once for the step (a loaded machine may drop a late tick too, which warns again).
    assert.ok(warnings.some((w) => w.startsWith('heartbeat schedule silent')), warnings.join('\n'));
  });

  it('a beat longer than the interval holds the ticks back without a warning', async (t) => {
    const { warnings, logger } = recordingLogger();
    let beats = 0;
    let release: () => void = () => undefined;
    const heartbeat = new Heartbeat({ cron: '* * * * * *', intervalMs: 1000, name: 'slow', logger,
      beat: () => { beats += 1; return beats === 1 ? new Promise<void>((resolve) => { release = resolve; }) : Promise.resolve(); } });
    t.after(() => heartbeat.stop());
    const started = performance.now();
    const first = heartbeat.start();
    // Past the watchdog's interval and a half while the first beat is still running.
    await waitFor('3 s into the first beat', () => beats === 1 && performance.now() > started + 3_000, { timeoutMs: 6_000, intervalMs: 50 });
    release();
    await first;
    await waitFor('the schedule beating again', () => beats >= 2, { timeoutMs: 3_000, intervalMs: 20 });
    assert.deepEqual(warnings, []);
  });

  it('refuses an interval that is not positive', () => {
    assert.throws(() => new Heartbeat({ cron: '* * * * * *', intervalMs: 0, name: 'x', logger: recordingLogger().logger, beat: () => Promise.resolve() }), /heartbeat interval must be positive/);
  });
});
