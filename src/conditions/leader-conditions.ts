// The per-leader condition state machine: Ready (connected) and IsLeader.
//
// Rules (Antrea flips Ready on every single failed write; we do not):
// - Ready turns True after one accepted heartbeat.
// - From True, Ready turns False only after `failureThreshold` consecutive failures,
//   so one lost beat, a 409 or a leader restart does not flap the status.
// - Before the first success (Unknown) or after a permanent (configuration) failure,
//   Ready turns False at once: a join that cannot work must explain itself now.
// - lastTransitionTime changes only when `status` changes; reason and message follow the
//   latest failure while False, so the message always describes the current problem.
// - IsLeader turns True when the leader first accepts our announce and stays True for the
//   life of this leader: a disconnected leader is still our leader.
// - lastHeartbeatTime advances at most once per `heartbeatTimePeriodMs` (default 60 s): it
//   says the link is alive, not when the last beat was, so the member's apiserver gets a
//   ClusterSet status write per minute instead of one per beat (node heartbeats moved to
//   Leases for the same reason). The exact figure is the seconds_since_last_heartbeat metric.
//
// Every method is synchronous: on Node's single thread a transition cannot interleave with
// another, so heartbeat, import watcher and status writer can all call in without a lock.
import { parseTimestamp, rfc3339 } from '../common/kube/time.js';
import type { Failure } from './reasons.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly lastTransitionTime: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface LeaderConditionsSnapshot {
  readonly ready: Condition;
  readonly isLeader: Condition;
  readonly consecutiveFailures: number;
  /** When the leader last accepted a heartbeat (RFC3339), if ever. */
  readonly lastHeartbeatTime?: string;
}

export interface LeaderConditionsOptions {
  readonly leaderClusterID: string;
  readonly failureThreshold: number;
  /** @default {@link HEARTBEAT_TIME_PERIOD_MS} */
  readonly heartbeatTimePeriodMs?: number;
  readonly now?: () => Date;
  /** State carried over from the ClusterSet status, so a restart does not reset transitions. */
  readonly initial?: Partial<Pick<LeaderConditionsSnapshot, 'ready' | 'isLeader' | 'lastHeartbeatTime'>>;
}

export const READY = 'Ready';
/** How often lastHeartbeatTime advances while beats succeed. */
export const HEARTBEAT_TIME_PERIOD_MS = 60_000;
export const IS_LEADER = 'IsLeader';
/** Ready's message warns of the leader token's expiry this long before it. */
export const TOKEN_WARNING_MS = 7 * 24 * 3600 * 1000;

export class LeaderConditions {
  private readonly threshold: number;
  private readonly now: () => Date;
  private readonly heartbeatTimePeriodMs: number;
  private readonly leaderClusterID: string;
  private ready: Condition;
  private isLeader: Condition;
  private failures = 0;
  private lastHeartbeatTime: string | undefined;
  private tokenExpiresAtMs: number | undefined;

  constructor(options: LeaderConditionsOptions) {
    if (!Number.isInteger(options.failureThreshold) || options.failureThreshold < 1) {
      throw new RangeError(`failureThreshold must be an integer >= 1, got ${String(options.failureThreshold)}`);
    }
    this.threshold = options.failureThreshold;
    this.now = options.now ?? (() => new Date());
    this.heartbeatTimePeriodMs = options.heartbeatTimePeriodMs ?? HEARTBEAT_TIME_PERIOD_MS;
    this.leaderClusterID = options.leaderClusterID;
    const at = rfc3339(this.now());
    this.ready = options.initial?.ready ?? { type: READY, status: 'Unknown', lastTransitionTime: at, reason: 'Connecting', message: `Joining leader cluster ${options.leaderClusterID}` };
    this.isLeader = options.initial?.isLeader ?? { type: IS_LEADER, status: 'Unknown', lastTransitionTime: at, reason: 'NotYetConnected', message: 'The leader has not accepted an announce yet' };
    this.lastHeartbeatTime = options.initial?.lastHeartbeatTime;
  }

  /** Records an accepted heartbeat. Returns true when the snapshot changed. */
  recordSuccess(): boolean {
    const before = this.snapshot();
    this.failures = 0;
    const now = this.now();
    const previous = parseTimestamp(this.lastHeartbeatTime);
    // Also after a failure streak: a recovered link is news worth a write.
    if (previous === undefined || this.ready.status !== 'True' || now.getTime() - previous >= this.heartbeatTimePeriodMs) {
      this.lastHeartbeatTime = rfc3339(now);
    }
    this.ready = this.transition(this.ready, 'True', 'Connected', `Heartbeat accepted by leader cluster ${this.leaderClusterID}${this.tokenWarning(now.getTime())}`);
    this.isLeader = this.transition(this.isLeader, 'True', 'LeaderAccepted', `Cluster ${this.leaderClusterID} is the leader of this member`);
    return !sameSnapshot(before, this.snapshot());
  }

  /** Records a failed heartbeat (or a configuration problem). Returns true when the snapshot changed. */
  recordFailure(failure: Failure): boolean {
    const before = this.snapshot();
    this.failures += 1;
    const tolerate = this.ready.status === 'True' && !failure.permanent && this.failures < this.threshold;
    if (!tolerate) {
      this.ready = this.transition(this.ready, 'False', failure.reason, failure.message);
    }
    return !sameSnapshot(before, this.snapshot());
  }

  /** When the leader token expires (ms since epoch), for the Ready message; undefined: no expiry known. */
  setTokenExpiry(expiresAtMs: number | undefined): void {
    this.tokenExpiresAtMs = expiresAtMs;
  }

  /** A suffix for the Ready message when the token expires within TOKEN_WARNING_MS (stable: the date, not a countdown). */
  private tokenWarning(nowMs: number): string {
    const at = this.tokenExpiresAtMs;
    if (at === undefined || at - nowMs >= TOKEN_WARNING_MS) return '';
    return `; the leader token expires at ${new Date(at).toISOString()}: issue a new one on the leader with ` +
      "'clusterset-agent leader create-member-token' and apply the Secret here";
  }

  get connected(): boolean {
    return this.ready.status === 'True';
  }

  snapshot(): LeaderConditionsSnapshot {
    return {
      ready: { ...this.ready },
      isLeader: { ...this.isLeader },
      consecutiveFailures: this.failures,
      ...(this.lastHeartbeatTime !== undefined ? { lastHeartbeatTime: this.lastHeartbeatTime } : {}),
    };
  }

  private transition(current: Condition, status: ConditionStatus, reason: string, message: string): Condition {
    const lastTransitionTime = current.status === status ? current.lastTransitionTime : rfc3339(this.now());
    return { type: current.type, status, lastTransitionTime, reason, message };
  }
}

function sameCondition(a: Condition, b: Condition): boolean {
  return a.status === b.status && a.reason === b.reason && a.message === b.message && a.lastTransitionTime === b.lastTransitionTime;
}

/** consecutiveFailures is bookkeeping, not status: counting it would make every failed beat a change. */
function sameSnapshot(a: LeaderConditionsSnapshot, b: LeaderConditionsSnapshot): boolean {
  return sameCondition(a.ready, b.ready) && sameCondition(a.isLeader, b.isLeader) && a.lastHeartbeatTime === b.lastHeartbeatTime;
}
