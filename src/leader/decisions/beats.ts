// What the leader learns from members' heartbeats over time, beyond "ready now": how often each
// member actually beats (from the history of its touch-ts), whether the configured timeout is
// long enough for the slowest of them, and which members flap. Pure: fed observations and times.

/** Beat periods kept per member: enough to see a steady cadence, few enough to follow a change. */
const PERIODS_KEPT = 5;
/** touch-ts may be whole seconds (Antrea), and a beat takes a request to land. */
export const TRUNCATION_MS = 1000;
export const LATENCY_ALLOWANCE_MS = 500;

export class BeatPeriods {
  readonly #last = new Map<string, number>();
  readonly #periods = new Map<string, number[]>();

  /** Records the member's touch-ts (ms since epoch); a repeated value is not a beat. */
  observe(clusterID: string, beatMs: number | undefined): void {
    if (beatMs === undefined) return;
    const last = this.#last.get(clusterID);
    if (last === beatMs) return;
    this.#last.set(clusterID, beatMs);
    if (last === undefined || beatMs < last) return;
    const periods = [...(this.#periods.get(clusterID) ?? []), beatMs - last].slice(-PERIODS_KEPT);
    this.#periods.set(clusterID, periods);
  }

  forget(clusterID: string): void {
    this.#last.delete(clusterID);
    this.#periods.delete(clusterID);
  }

  /**
   * The member's beat period: the smallest recent gap between two beats (a gap may also span
   * beats the leader missed, so the smallest is the period); undefined until two beats were seen.
   */
  periodOf(clusterID: string): number | undefined {
    const periods = this.#periods.get(clusterID);
    return periods === undefined || periods.length === 0 ? undefined : Math.min(...periods);
  }
}

/**
 * Why `timeoutMs` is too short for a member beating every `periodMs`, or undefined if it is not:
 * between two beats the stored touch-ts ages by the period, plus up to a second of truncation,
 * plus the write's latency; a timeout inside that makes the member flap at every beat.
 */
export function timeoutProblem(clusterID: string, timeoutMs: number, periodMs: number | undefined): string | undefined {
  if (periodMs === undefined) return undefined;
  const needed = periodMs + TRUNCATION_MS + LATENCY_ALLOWANCE_MS;
  if (timeoutMs >= needed) return undefined;
  return `member ${clusterID} beats every ${(periodMs / 1000).toFixed(1)} s, but the member timeout is ${(timeoutMs / 1000).toFixed(1)} s: ` +
    `it turns Disconnected between beats; set leader.memberTimeoutSeconds (CSA_LEADER_MEMBER_TIMEOUT) above ${String(Math.ceil(needed / 1000))} s (three beats is usual)`;
}

/**
 * Which timeout problems to say: each member's once while it lasts, and again only after it
 * cleared. Not once per distinct message: the period is the smallest of the last few gaps, so on
 * a busy API server it moves by a second at a time, and each new figure was said again (a
 * 1,000-member bench logged 7,138 warnings and as many Events in 36 minutes, adding to the load
 * that caused them).
 */
export class TimeoutReports {
  readonly #said = new Set<string>();

  /** The problem to say now for `clusterID` (its current one, or none), undefined when already said. */
  next(clusterID: string, problem: string | undefined): string | undefined {
    if (problem === undefined) {
      this.#said.delete(clusterID);
      return undefined;
    }
    if (this.#said.has(clusterID)) return undefined;
    this.#said.add(clusterID);
    return problem;
  }

  forget(clusterID: string): void {
    this.#said.delete(clusterID);
  }
}

export interface FlapReport {
  /** Log this transition on its own (false while the member is reported as flapping). */
  readonly logTransition: boolean;
  /** The member just started flapping: report it once. */
  readonly startedFlapping: boolean;
}

/**
 * Counts each member's Ready transitions in a sliding window. A member with `threshold`
 * transitions inside the window is flapping: that is reported once, and its further transitions
 * are not logged one by one until it has been steady for a whole window.
 */
export class FlapTracker {
  readonly #windowMs: number;
  readonly #threshold: number;
  readonly #transitions = new Map<string, number[]>();
  readonly #flapping = new Set<string>();

  constructor(windowMs: number, threshold = 4) {
    this.#windowMs = windowMs;
    this.#threshold = threshold;
  }

  transition(clusterID: string, nowMs: number): FlapReport {
    const recent = (this.#transitions.get(clusterID) ?? []).filter((t) => nowMs - t < this.#windowMs);
    if (this.#flapping.has(clusterID) && recent.length === 0) this.#flapping.delete(clusterID);
    recent.push(nowMs);
    this.#transitions.set(clusterID, recent);
    if (this.#flapping.has(clusterID)) return { logTransition: false, startedFlapping: false };
    if (recent.length >= this.#threshold) {
      this.#flapping.add(clusterID);
      return { logTransition: false, startedFlapping: true };
    }
    return { logTransition: true, startedFlapping: false };
  }

  isFlapping(clusterID: string): boolean {
    return this.#flapping.has(clusterID);
  }

  forget(clusterID: string): void {
    this.#transitions.delete(clusterID);
    this.#flapping.delete(clusterID);
  }
}
