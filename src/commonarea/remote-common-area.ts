// The member's handle on one leader's common area (its namespace): credentials, heartbeat,
// conditions, and the hooks the importer hangs on. One per ClusterSet leader.
//
// Credentials can change under a running area (token rotation): the next beat simply uses
// the new client; the cached announce and the conditions carry over, so a rotation causes
// no extra requests and no Ready transition.
import { AnnounceError, AnnounceWriter, type AnnounceIdentity } from '../announce/announce-writer.js';
import { Heartbeat } from '../announce/heartbeat.js';
import { classifyLeaderError } from '../conditions/classify.js';
import { LeaderConditions, type LeaderConditionsSnapshot } from '../conditions/leader-conditions.js';
import type { Failure } from '../conditions/reasons.js';
import { MEMBER_CLUSTER_ANNOUNCE } from '../api/types.js';
import type { LeaderCredentials } from './credentials.js';
import type { LeaderApi } from './leader-api.js';

/** A function, not a property read: the signal can abort while a beat awaits the leader. */
function aborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

export interface AreaLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface LeaderStatus extends LeaderConditionsSnapshot {
  readonly leaderClusterID: string;
}

export interface RemoteCommonAreaOptions {
  readonly identity: AnnounceIdentity;
  readonly leaderNamespace: string;
  readonly heartbeatCron: string;
  readonly failureThreshold: number;
  readonly createApi: (credentials: LeaderCredentials, namespace: string) => LeaderApi;
  readonly logger: AreaLogger;
  /** Called after every change of conditions (not after every beat). */
  readonly onStatusChange: () => void;
  /** Called after every accepted beat, e.g. to start watchers once connected. */
  readonly onBeat?: (status: LeaderStatus, api: LeaderApi) => void;
  /** Called after every beat that reached the leader or failed trying, for metrics. */
  readonly onBeatResult?: (ok: boolean, seconds: number, reason?: string) => void;
  readonly initial?: ConstructorParameters<typeof LeaderConditions>[0]['initial'];
  readonly now?: () => Date;
}

export class RemoteCommonArea {
  private readonly conditions: LeaderConditions;
  private readonly writer: AnnounceWriter;
  private readonly heartbeat: Heartbeat;
  private api: LeaderApi | undefined;
  private credentialsFingerprint: string | undefined;
  private configProblem: Failure | undefined;
  private stopped = false;

  constructor(private readonly options: RemoteCommonAreaOptions) {
    this.conditions = new LeaderConditions({
      leaderClusterID: options.identity.leaderClusterID,
      failureThreshold: options.failureThreshold,
      ...(options.now ? { now: options.now } : {}),
      ...(options.initial ? { initial: options.initial } : {}),
    });
    this.writer = new AnnounceWriter(options.identity, options.now);
    this.heartbeat = new Heartbeat({
      cron: options.heartbeatCron,
      name: `announce-${options.identity.clusterSetID}-${options.identity.leaderClusterID}`,
      beat: (signal) => this.beat(signal),
      logger: options.logger,
    });
  }

  get leaderClusterID(): string {
    return this.options.identity.leaderClusterID;
  }

  /** The current client, if credentials are valid. */
  get leaderApi(): LeaderApi | undefined {
    return this.api;
  }

  /** Installs new credentials, or a reason why there are none. Returns true when something changed. */
  setCredentials(result: { ok: true; credentials: LeaderCredentials } | { ok: false; failure: Failure }): boolean {
    if (result.ok) {
      if (result.credentials.fingerprint === this.credentialsFingerprint && !this.configProblem) return false;
      const rotated = this.credentialsFingerprint !== undefined;
      this.api = this.options.createApi(result.credentials, this.options.leaderNamespace);
      this.credentialsFingerprint = result.credentials.fingerprint;
      this.configProblem = undefined;
      this.options.logger.info(rotated ? 'leader credentials rotated' : 'leader credentials loaded', { server: result.credentials.server });
      if (this.heartbeat.running) void this.heartbeat.trigger();
      return true;
    }
    const same = this.configProblem?.reason === result.failure.reason && this.configProblem.message === result.failure.message;
    this.api = undefined;
    this.credentialsFingerprint = undefined;
    this.configProblem = result.failure;
    if (!same) this.options.logger.warn('leader credentials unusable', { reason: result.failure.reason, detail: result.failure.message });
    if (this.conditions.recordFailure(result.failure)) this.options.onStatusChange();
    return !same;
  }

  start(): void {
    if (this.stopped) throw new Error('a stopped RemoteCommonArea cannot be restarted; create a new one');
    this.heartbeat.start();
  }

  /** Stops beating. The announce stays on the leader: a restart is not a leave. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.heartbeat.stop();
  }

  /** Leaves the ClusterSet: stops beating and deletes the announce on the leader. */
  async leave(): Promise<void> {
    await this.stop();
    if (!this.api) throw new Error(`cannot delete the announce on leader ${this.leaderClusterID}: ${this.configProblem?.message ?? 'no credentials'}`);
    try {
      await this.writer.leave(this.api);
    } catch (err) {
      const cause = err instanceof AnnounceError ? err.cause : err;
      throw new Error(`deleting ${this.writer.name} on leader ${this.leaderClusterID}: ${this.describe(cause, 'delete').message}`, { cause: err });
    }
  }

  isConnected(): boolean {
    return this.conditions.connected;
  }

  /** A copy: callers cannot change the area's state through it. */
  getStatus(): LeaderStatus {
    return { leaderClusterID: this.leaderClusterID, ...this.conditions.snapshot() };
  }

  private async beat(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const api = this.api;
    if (!api) {
      if (this.configProblem && this.conditions.recordFailure(this.configProblem)) this.options.onStatusChange();
      return;
    }
    const started = performance.now();
    try {
      await this.writer.beat(api);
      if (aborted(signal)) return;
      this.options.onBeatResult?.(true, (performance.now() - started) / 1000);
      const wasConnected = this.conditions.connected;
      this.conditions.recordSuccess();
      if (!wasConnected) this.options.logger.info('connected to leader: heartbeat accepted');
      this.options.onStatusChange();
      this.options.onBeat?.(this.getStatus(), api);
    } catch (err) {
      if (aborted(signal)) return;
      const verb = err instanceof AnnounceError ? err.verb : 'update';
      const cause = err instanceof AnnounceError ? err.cause : err;
      const failure = this.describe(cause, verb);
      this.options.onBeatResult?.(false, (performance.now() - started) / 1000, failure.reason);
      const before = this.conditions.connected;
      const changed = this.conditions.recordFailure(failure);
      const { consecutiveFailures } = this.conditions.snapshot();
      this.options.logger.warn('heartbeat failed', {
        reason: failure.reason, detail: failure.message, consecutiveFailures, stillReady: before && this.conditions.connected,
      });
      if (changed) this.options.onStatusChange();
    }
  }

  private describe(err: unknown, verb: string): Failure {
    return classifyLeaderError(err, {
      verb,
      resource: MEMBER_CLUSTER_ANNOUNCE.plural,
      group: MEMBER_CLUSTER_ANNOUNCE.group,
      namespace: this.options.leaderNamespace,
      server: this.api?.server ?? '',
    });
  }
}
