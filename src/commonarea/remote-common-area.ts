// The member's handle on one leader's common area (its namespace): credentials, heartbeat,
// conditions, and the ResourceImport watcher, which the area starts, pauses and stops from
// its own state. One per ClusterSet leader.
//
// Trust: the importer applies what the leader sends only while the area trusts the leader:
// its credentials are present and accepted, it admits our announce, and its answers are
// what a Kubernetes API server would send. The first beat that shows otherwise pauses
// imports at once (what was imported follows the lost-leader retention); the next accepted
// beat resumes them with one full resync. A lost connection pauses them when Ready turns
// False. Nobody else holds the leader client: the controller and the metrics only observe
// the area's event stream.
//
// Credentials can change under a running area (token rotation): the next beat simply uses
// the new client; the cached announce and the conditions carry over, so a rotation causes
// no extra requests and no Ready transition.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AnnounceError, AnnounceHeldElsewhereError, AnnounceMismatchError, AnnounceOwnedElsewhereError, AnnounceWriter, type AnnounceIdentity, type LeaveResult,
} from '../announce/announce-writer.js';
import { Heartbeat } from '../announce/heartbeat.js';
import { duplicateMessage, shouldReportDuplicate, takeoverWindowMs } from '../announce/holder.js';
import { classifyLeaderError, isRetryableLeaderError } from '../conditions/classify.js';
import { LeaderConditions, type LeaderConditionsSnapshot } from '../conditions/leader-conditions.js';
import { failure, FailureReason, type Failure } from '../conditions/reasons.js';
import { MEMBER_CLUSTER_ANNOUNCE } from '../common/api/antrea.js';
import { CLUSTER_UID_ANNOTATION, DUPLICATE_CLUSTER_ID_REASON, HOLDER_CLUSTER_UID_ANNOTATION, mcaName } from '../common/api/names.js';
import { Backoff } from '../common/runtime/backoff.js';
import { apiStatus, describeError, httpStatus } from '../common/kube/errors.js';
import { AreaEvents, type TrustLost } from './area-events.js';
import type { LeaderCredentials } from './credentials.js';
import type { LeaderApi } from './leader-api.js';
import type { LeaderLink } from './leaderlink/lifecycle.js';

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

// The interface the area drives its importer and exporter through (leaderlink/lifecycle.ts).
export type { LeaderLink };

/** Failures that mean the leader's answers (or our right to ask) cannot be trusted. */
const TRUST_LOSING: ReadonlySet<string> = new Set([
  FailureReason.SecretNotFound, FailureReason.SecretInvalid, FailureReason.InvalidServerURL, FailureReason.InvalidSpec,
  FailureReason.TLSVerificationFailed, FailureReason.Unauthorized, FailureReason.Forbidden, FailureReason.AdmissionDenied,
  FailureReason.UnexpectedResponse, FailureReason.DuplicateMembership, FailureReason.DuplicateClusterID,
]);

export interface RemoteCommonAreaOptions {
  readonly identity: AnnounceIdentity;
  readonly leaderNamespace: string;
  readonly heartbeatCron: string;
  /** The heartbeat interval; a beat, retries included, ends within 90% of it. */
  readonly intervalMs: number;
  /** Upper bound of one request to the leader; a retry is started only if it can finish within the beat. */
  readonly requestTimeoutMs: number;
  readonly failureThreshold: number;
  readonly createApi: (credentials: LeaderCredentials, namespace: string) => LeaderApi;
  readonly logger: AreaLogger;
  readonly importer?: LeaderLink;
  /** Publishes this member's exports to the leader; withdrawn (leave) before the announce is deleted. */
  readonly exporter?: LeaderLink;
  readonly initial?: ConstructorParameters<typeof LeaderConditions>[0]['initial'];
  /**
   * This member cluster's identity (its kube-system Namespace UID), stamped on the announce so
   * that two clusters configured with one cluster ID are told apart; undefined when it cannot be
   * read (asked again at the next beat until it can).
   */
  readonly clusterUid?: () => Promise<string | undefined>;
  /** How long another cluster's last beat keeps the announce its own. @default three heartbeat intervals */
  readonly takeoverWindowMs?: number;
  readonly now?: () => Date;
  readonly random?: () => number;
}

export type AreaLeaveResult = LeaveResult | 'never-joined';

export class RemoteCommonArea {
  /** Whether observers have been told the conditions once (see record). */
  private observed = false;
  readonly events: AreaEvents;
  private readonly conditions: LeaderConditions;
  private readonly writer: AnnounceWriter;
  private readonly heartbeat: Heartbeat;
  private api: LeaderApi | undefined;
  private credentialsFingerprint: string | undefined;
  private configProblem: Failure | undefined;
  private importsActive = false;
  /** The uid of our announce at the last accepted beat: a new one means it was created again. */
  private announceUid: string | undefined;
  private stopped = false;
  private clusterUid: string | undefined;
  private readonly takeoverWindowMs: number;
  /** The last DuplicateClusterID Event recorded on the leader, to repeat it only every few minutes. */
  private duplicateReported: { atMs: number; holder: string } | undefined;

  constructor(private readonly options: RemoteCommonAreaOptions) {
    this.events = new AreaEvents((err) => { options.logger.warn('area event listener failed', { error: describeError(err) }); });
    this.conditions = new LeaderConditions({
      leaderClusterID: options.identity.leaderClusterID,
      failureThreshold: options.failureThreshold,
      ...(options.now ? { now: options.now } : {}),
      ...(options.initial ? { initial: options.initial } : {}),
    });
    this.takeoverWindowMs = options.takeoverWindowMs ?? takeoverWindowMs(options.intervalMs);
    this.writer = new AnnounceWriter(options.identity, options.now, {
      takeoverWindowMs: this.takeoverWindowMs,
      onTakeOver: (previous, lastBeatMs) => {
        options.logger.warn('took over the announce from another member cluster with this cluster ID whose heartbeats stopped', {
          previousCluster: previous, previousLastHeartbeat: lastBeatMs === undefined ? 'never' : new Date(lastBeatMs).toISOString(), cluster: this.clusterUid,
        });
      },
    });
    this.heartbeat = new Heartbeat({
      cron: options.heartbeatCron,
      name: `announce-${options.identity.clusterSetID}-${options.identity.leaderClusterID}`,
      beat: (signal) => this.beat(signal),
      logger: options.logger,
      intervalMs: options.intervalMs,
    });
  }

  get leaderClusterID(): string {
    return this.options.identity.leaderClusterID;
  }

  /** Whether imports are being applied now. */
  get importing(): boolean {
    return this.importsActive;
  }

  /**
   * Installs new credentials, or a reason why there are none (a missing or bad Secret, or a
   * membership another ClusterSet holds). Returns true when something changed.
   */
  setCredentials(result: { ok: true; credentials: LeaderCredentials } | { ok: false; failure: Failure }): boolean {
    if (result.ok) {
      if (result.credentials.fingerprint === this.credentialsFingerprint && !this.configProblem) return false;
      const rotated = this.credentialsFingerprint !== undefined;
      const previous = this.api;
      this.api = this.options.createApi(result.credentials, this.options.leaderNamespace);
      this.credentialsFingerprint = result.credentials.fingerprint;
      this.conditions.setTokenExpiry(result.credentials.expiresAtMs);
      this.configProblem = undefined;
      this.options.logger.info(rotated ? 'leader credentials rotated' : 'leader credentials loaded', { server: result.credentials.server });
      if (previous) this.retire(previous);
      if (this.heartbeat.running) void this.heartbeat.trigger();
      return true;
    }
    const same = this.configProblem?.reason === result.failure.reason && this.configProblem.message === result.failure.message;
    const previous = this.api;
    this.api = undefined;
    this.credentialsFingerprint = undefined;
    this.configProblem = result.failure;
    if (!same) this.options.logger.warn('leader credentials unusable', { reason: result.failure.reason, detail: result.failure.message });
    // Trust is gone with the credentials: nothing more is imported from this moment.
    this.pauseImports(result.failure);
    if (previous) this.retire(previous);
    this.record(() => this.conditions.recordFailure(result.failure));
    return !same;
  }

  /** Starts beating (idempotent); resolves when the first beat has ended. */
  start(): Promise<void> {
    if (this.stopped) throw new Error('a stopped RemoteCommonArea cannot be restarted; create a new one');
    return this.heartbeat.start();
  }

  /** Beats now (once the area is started); resolves when that beat, retries included, has ended. */
  beatNow(): Promise<void> {
    return this.heartbeat.trigger();
  }

  /** Stops beating and watching. The announce and the imports stay: a restart is not a leave. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.importsActive = false;
    await this.heartbeat.stop();
    await Promise.all(this.links().map((link) => link.stop()));
  }

  /**
   * Leaves the ClusterSet on the leader: stops, then deletes our announce. A member that was
   * never accepted by this leader has nothing there to delete, so it does not wait for it.
   */
  async leave(): Promise<AreaLeaveResult> {
    await this.stop();
    if (!this.everJoined()) {
      this.options.logger.info('leaving a leader that never accepted this member: nothing to delete there');
      return 'never-joined';
    }
    if (!this.api) throw new Error(`cannot delete the announce on leader ${this.leaderClusterID}: ${this.configProblem?.message ?? 'no credentials'}`);
    // Another cluster with our ID holds the announce: the exports under that ID are its own.
    await this.resolveClusterUid();
    if (await this.writer.heldElsewhere(this.api)) {
      this.options.logger.warn('leaving: another member cluster with this cluster ID holds the announce; its announce and exports are left in place', { announce: this.writer.name });
      return 'held-elsewhere';
    }
    // Our exports first, in our own words; a leader also drops them once the announce is gone.
    await this.options.exporter?.leave(this.api);
    try {
      const result = await this.writer.leave(this.api);
      if (result === 'owned-elsewhere') this.options.logger.warn('the announce on the leader belongs to another ClusterSet: left in place', { announce: this.writer.name });
      return result;
    } catch (err) {
      const cause = err instanceof AnnounceError ? err.cause : err;
      throw new Error(`deleting ${this.writer.name} on leader ${this.leaderClusterID}: ${this.describe(cause, 'delete').message}`, { cause: err });
    }
  }

  /** Removes everything this area imported (after leaving). */
  async removeImports(): Promise<void> {
    await this.options.importer?.leave();
  }

  /** Closes the leader client's connections; the area must be stopped. */
  close(): void {
    if (this.api) this.retire(this.api);
    this.api = undefined;
    this.events.clear();
  }

  /** A copy: callers cannot change the area's state through it. */
  getStatus(): LeaderStatus {
    return { leaderClusterID: this.leaderClusterID, ...this.conditions.snapshot() };
  }

  private everJoined(): boolean {
    const snapshot = this.conditions.snapshot();
    return snapshot.lastHeartbeatTime !== undefined || snapshot.isLeader.status === 'True';
  }

  private retire(api: LeaderApi): void {
    // Give requests still using it (a stopping watcher) a moment, then free its sockets.
    setTimeout(() => { api.close(); }, 5_000).unref();
  }

  private async beat(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const api = this.api;
    if (!api) {
      if (this.configProblem) {
        this.pauseImports(this.configProblem);
        this.record(() => this.conditions.recordFailure(this.configProblem ?? failure(FailureReason.SecretNotFound, 'no credentials')));
      }
      return;
    }
    await this.resolveClusterUid();
    if (aborted(signal)) return;
    const started = performance.now();
    const budgetMs = this.options.intervalMs * 0.9;
    const backoff = new Backoff({ baseMs: 100, maxMs: 2_000, jitter: 0.5, ...(this.options.random ? { random: this.options.random } : {}) });
    for (let attempts = 1; ; attempts += 1) {
      try {
        const announce = await this.writer.beat(api);
        const uid = announce.metadata?.uid;
        if (uid !== undefined && this.announceUid !== undefined && uid !== this.announceUid && api === this.api && !this.stopped) {
          this.options.logger.info('our announce was created again on the leader: publishing every export again');
          for (const link of this.links()) link.announceRecreated?.();
        }
        if (uid !== undefined) this.announceUid = uid;
      } catch (err) {
        if (aborted(signal)) return;
        const delayMs = backoff.next();
        // A lost request is not a lost beat: retry while a whole request still fits in the beat.
        if (this.isRetryable(err) && performance.now() - started + delayMs + this.options.requestTimeoutMs <= budgetMs) {
          this.options.logger.debug('heartbeat request failed; retrying within the beat', { attempt: attempts, error: describeError(err) });
          try {
            await sleep(delayMs, undefined, { signal });
          } catch {
            return;
          }
          continue;
        }
        this.beatFailed(err, attempts, started, await this.crdsMissing(api, err));
        if (err instanceof AnnounceHeldElsewhereError) await this.reportDuplicate(api, err);
        return;
      }
      if (aborted(signal)) return;
      this.beatAccepted(api, attempts, started);
      return;
    }
  }

  /** Reads this cluster's identity until it is known; a failure is logged and the beat goes on without it. */
  private async resolveClusterUid(): Promise<void> {
    if (this.clusterUid !== undefined || !this.options.clusterUid) return;
    this.clusterUid = await this.options.clusterUid();
    this.writer.setClusterUid(this.clusterUid);
  }

  /**
   * Tells the leader (a Warning Event about the holder's announce, which the member Role may
   * create) that two clusters use our cluster ID: at detection, then every few minutes while it
   * lasts. Best effort: a failed Event changes nothing else.
   */
  private async reportDuplicate(api: LeaderApi, held: AnnounceHeldElsewhereError): Promise<void> {
    const nowMs = (this.options.now?.() ?? new Date()).getTime();
    if (!shouldReportDuplicate(this.duplicateReported, held.holder, nowMs)) return;
    const { clusterID } = this.options.identity;
    const at = new Date(nowMs).toISOString();
    const name = mcaName(clusterID);
    try {
      await api.createEvent({
        apiVersion: 'v1', kind: 'Event',
        metadata: {
          name: `${name}.${nowMs.toString(16)}${Math.floor((this.options.random ?? Math.random)() * 0xffff).toString(16)}`,
          annotations: { [CLUSTER_UID_ANNOTATION]: this.clusterUid ?? '', [HOLDER_CLUSTER_UID_ANNOTATION]: held.holder },
        },
        involvedObject: { apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind, name, namespace: this.options.leaderNamespace },
        reason: DUPLICATE_CLUSTER_ID_REASON, type: 'Warning',
        message: duplicateMessage(clusterID, this.clusterUid, held.holder, this.takeoverWindowMs),
        source: { component: 'clusterset-agent' }, reportingComponent: 'clusterset-agent', reportingInstance: this.clusterUid ?? clusterID,
        firstTimestamp: at, lastTimestamp: at, count: 1,
      });
      this.duplicateReported = { atMs: nowMs, holder: held.holder };
    } catch (err) {
      this.options.logger.warn('could not record the DuplicateClusterID Event on the leader', { error: describeError(err) });
    }
  }

  private beatAccepted(api: LeaderApi, attempts: number, started: number): void {
    this.options.logger.debug('heartbeat accepted', { attempts });
    this.duplicateReported = undefined;
    this.events.emit({ type: 'beat', ok: true, seconds: (performance.now() - started) / 1000, attempts });
    const wasConnected = this.conditions.connected;
    this.record(() => this.conditions.recordSuccess());
    if (!wasConnected) this.options.logger.info('connected to leader: heartbeat accepted');
    // Credentials may have changed while the beat ran; only the client that was accepted is trusted.
    if (api === this.api && !this.stopped) this.resumeImports(api);
  }

  /**
   * A Kubernetes API server without the multicluster CRDs answers their paths with a plain-text
   * `404 page not found`, which alone cannot be told from a proxy's 404 page: its discovery
   * can. Only a real APIGroupList without the group makes it CRDNotInstalled.
   */
  private async crdsMissing(api: LeaderApi, err: unknown): Promise<Failure | undefined> {
    const cause = err instanceof AnnounceError ? err.cause : err;
    if (httpStatus(cause) !== 404 || apiStatus(cause) !== undefined) return undefined;
    try {
      if (await api.servesMulticlusterGroup()) return undefined;
    } catch {
      return undefined;
    }
    return failure(FailureReason.CRDNotInstalled,
      `leader ${api.server} does not serve ${MEMBER_CLUSTER_ANNOUNCE.plural}.${MEMBER_CLUSTER_ANNOUNCE.group}: install the leader CRDs (its API discovery does not list ${MEMBER_CLUSTER_ANNOUNCE.group}/${MEMBER_CLUSTER_ANNOUNCE.version})`);
  }

  private beatFailed(err: unknown, attempts: number, started: number, known?: Failure): void {
    const verb = err instanceof AnnounceError ? err.verb : 'update';
    const cause = err instanceof AnnounceError ? err.cause : err;
    const failed = known ?? this.describe(cause, verb);
    this.events.emit({ type: 'beat', ok: false, seconds: (performance.now() - started) / 1000, attempts, reason: failed.reason });
    const before = this.conditions.connected;
    this.record(() => this.conditions.recordFailure(failed));
    const { consecutiveFailures } = this.conditions.snapshot();
    this.options.logger.warn('heartbeat failed', {
      reason: failed.reason, detail: failed.message, attempts, consecutiveFailures, stillReady: before && this.conditions.connected,
    });
    if (TRUST_LOSING.has(failed.reason)) this.pauseImports(failed);
    else if (!this.conditions.connected) this.pauseImports(failure(failed.reason, `leader lost: ${failed.message}`));
  }

  /**
   * Applies a change to the conditions and tells the observers when it changed anything, and
   * always the first time: conditions carried over a restart may not change on the first beat,
   * yet observers (metrics, the status writer) start knowing nothing.
   */
  private record(change: () => boolean): void {
    const previousReady = this.conditions.snapshot().ready.status;
    const changed = change();
    if (changed || !this.observed) this.events.emit({ type: 'conditions', status: this.getStatus(), previousReady });
    this.observed = true;
  }

  private links(): LeaderLink[] {
    return [this.options.importer, this.options.exporter].filter((link): link is LeaderLink => link !== undefined);
  }

  private pauseImports(why: Failure): void {
    const links = this.links();
    if (links.length === 0) return;
    // Always passed on: a fresh importer (an agent restarted during an outage) must start its retention countdown.
    for (const link of links) link.pause(`${why.reason}: ${why.message}`);
    if (!this.importsActive) return;
    this.importsActive = false;
    const lost: TrustLost = { reason: why.reason, message: why.message };
    this.options.logger.warn('imports paused: the leader is not trusted or not reachable', { reason: why.reason });
    this.events.emit({ type: 'imports', state: 'paused', why: lost });
  }

  private resumeImports(api: LeaderApi): void {
    const links = this.links();
    if (links.length === 0) return;
    for (const link of links) link.resume(api);
    if (this.importsActive) return;
    this.importsActive = true;
    this.events.emit({ type: 'imports', state: 'resumed' });
  }

  private isRetryable(err: unknown): boolean {
    if (err instanceof AnnounceOwnedElsewhereError || err instanceof AnnounceMismatchError || err instanceof AnnounceHeldElsewhereError) return false;
    return isRetryableLeaderError(err instanceof AnnounceError ? err.cause : err);
  }

  private describe(err: unknown, verb: string): Failure {
    if (err instanceof AnnounceOwnedElsewhereError) return failure(FailureReason.DuplicateMembership, err.message, true);
    if (err instanceof AnnounceHeldElsewhereError) {
      return failure(FailureReason.DuplicateClusterID, duplicateMessage(this.options.identity.clusterID, err.ours, err.holder, this.takeoverWindowMs), true);
    }
    if (err instanceof AnnounceMismatchError) return failure(FailureReason.UnexpectedResponse, `${err.message}: is the leader URL a Kubernetes API server?`);
    return classifyLeaderError(err, {
      verb,
      resource: MEMBER_CLUSTER_ANNOUNCE.plural,
      group: MEMBER_CLUSTER_ANNOUNCE.group,
      namespace: this.options.leaderNamespace,
      server: this.api?.server ?? '',
    });
  }
}
