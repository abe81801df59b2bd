// Runs a beat on a node-cron schedule, and on demand (join, new credentials), never two at
// once: a tick that finds a beat still running is skipped rather than queued, because a
// late beat carries no information the next one will not.
// node-cron plans its next tick on the wall clock: stepped back (NTP, a VM restored) by S
// seconds, it stays silent for S seconds, long enough for the leader to show this member
// Disconnected. A watchdog on the monotonic clock notices a schedule silent for longer than
// an interval and a half, beats, and plans the schedule anew from the clock as it now reads.
import cron, { type ScheduledTask } from 'node-cron';

export interface HeartbeatLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface HeartbeatOptions {
  /** node-cron expression with a seconds field, e.g. `*\/10 * * * * *`. */
  readonly cron: string;
  readonly name: string;
  readonly beat: (signal: AbortSignal) => Promise<void>;
  readonly logger: HeartbeatLogger;
  /** The schedule's period: the watchdog's measure of a silent schedule. */
  readonly intervalMs: number;
}

export class Heartbeat {
  private task: ScheduledTask | undefined;
  private inFlight: Promise<void> | undefined;
  private rerun = false;
  private abort = new AbortController();
  private watchdog: NodeJS.Timeout | undefined;

  constructor(private readonly options: HeartbeatOptions) {
    if (!cron.validate(options.cron)) throw new Error(`invalid heartbeat schedule ${JSON.stringify(options.cron)}`);
    if (!(options.intervalMs > 0)) throw new RangeError(`heartbeat interval must be positive, not ${String(options.intervalMs)} ms`);
  }

  get running(): boolean {
    return this.task !== undefined;
  }

  /**
   * Starts the schedule and beats at once, so a join does not wait a whole interval. Resolves
   * when that first beat has ended (at once when already running).
   */
  start(): Promise<void> {
    if (this.task) return Promise.resolve();
    this.abort = new AbortController();
    this.task = this.schedule();
    this.watchdog = setTimeout(() => { this.onSilence(); }, this.silenceMs());
    this.watchdog.unref();
    return this.runOnce(false);
  }

  private schedule(): ScheduledTask {
    const log = this.options.logger;
    const task = cron.createTask(this.options.cron, () => { this.watchdog?.refresh(); void this.runOnce(false); }, {
      name: this.options.name,
      noOverlap: true,
      timezone: 'UTC',
      logger: {
        info: (m) => { log.debug(m); },
        warn: (m) => { log.warn(m); },
        error: (m) => { log.warn(String(m)); },
        debug: (m) => { log.debug(String(m)); },
      },
    });
    void task.start();
    return task;
  }

  /** Longer than any gap between two ticks of a schedule that follows the clock. */
  private silenceMs(): number {
    return this.options.intervalMs + Math.max(1000, this.options.intervalMs / 2);
  }

  private onSilence(): void {
    const stale = this.task;
    if (stale === undefined) return;
    this.watchdog?.refresh();
    // A long beat holds the ticks back (no overlap): that is not the schedule's silence.
    if (this.inFlight) return;
    this.options.logger.warn('heartbeat schedule silent for longer than an interval and a half (the wall clock stepped back, or a late tick was dropped): beating now, rescheduled from the current time', {
      silentMs: this.silenceMs(), intervalMs: this.options.intervalMs,
    });
    this.task = this.schedule();
    Promise.resolve(stale.stop()).then(() => stale.destroy()).catch((err: unknown) => {
      this.options.logger.warn('could not stop the silent heartbeat schedule', { error: (err as Error).message });
    });
    void this.runOnce(false);
  }

  /**
   * Beats now. If a beat is running, one more follows it: the caller changed something
   * (e.g. credentials) that the running beat may not have seen.
   */
  trigger(): Promise<void> {
    return this.runOnce(true);
  }

  /** Stops the schedule, aborts a running beat and waits for it to end. */
  async stop(): Promise<void> {
    const task = this.task;
    this.task = undefined;
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    if (task) {
      await task.stop();
      await task.destroy();
    }
    this.abort.abort();
    this.rerun = false;
    await this.inFlight;
  }

  /** Read after an await: trigger() and stop() may have run meanwhile. */
  private rerunRequested(): boolean {
    return this.rerun && this.task !== undefined;
  }

  private runOnce(rerunIfBusy: boolean): Promise<void> {
    if (this.inFlight) {
      if (rerunIfBusy) this.rerun = true;
      return this.inFlight;
    }
    if (!this.task) return Promise.resolve();
    this.inFlight = (async () => {
      try {
        let again = true;
        while (again) {
          this.rerun = false;
          await this.options.beat(this.abort.signal);
          again = this.rerunRequested();
        }
      } catch (err) {
        // The beat function reports its own failures; reaching here is a bug worth a log line, not a crash.
        this.options.logger.warn('heartbeat beat threw', { error: (err as Error).message });
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }
}
