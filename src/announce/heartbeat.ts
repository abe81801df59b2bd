// Runs a beat on a node-cron schedule, and on demand (join, new credentials), never two at
// once: a tick that finds a beat still running is skipped rather than queued, because a
// late beat carries no information the next one will not.
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
}

export class Heartbeat {
  private task: ScheduledTask | undefined;
  private inFlight: Promise<void> | undefined;
  private rerun = false;
  private abort = new AbortController();

  constructor(private readonly options: HeartbeatOptions) {
    if (!cron.validate(options.cron)) throw new Error(`invalid heartbeat schedule ${JSON.stringify(options.cron)}`);
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
    const log = this.options.logger;
    this.task = cron.createTask(this.options.cron, () => { void this.runOnce(false); }, {
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
    void this.task.start();
    return this.runOnce(false);
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
