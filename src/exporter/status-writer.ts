// The one writer of ServiceExport status. Every ClusterSet's exporter judges the same
// ServiceExport (its local checks, and its leader's verdict on the REs it wrote); when each
// wrote `Conflict` itself, two leaders that disagreed made two exporters flip it against each
// other without end. Here every exporter only reports its judgement; the status is the
// aggregate (`Conflict=True` if any leader refuses, naming which ClusterSets; `Valid` from the
// local checks) and is written only when that aggregate differs from what the status says.
// Only connected leaders' verdicts count: a leader's exporter pauses when its leader is lost,
// and what that leader said before is stale; it neither holds a Conflict nor keeps one from
// clearing (several leaders per ClusterSet, issue 30).
import type { MetaCondition } from '../common/api/meta.js';
import { SERVICE_EXPORT, SERVICE_EXPORT_CONDITION_VALID, type ServiceExport, type ServiceExportStatus } from '../common/api/mcs.js';
import type { EventRecorder, EventTarget } from '../common/events/recorder.js';
import { describeError, isNotFound } from '../common/kube/errors.js';
import { WorkQueue } from '../common/runtime/workqueue.js';
import { boundText } from '../common/text/bounded.js';
import { olderVersion } from './known-exports.js';

/** ServiceExport condition mirroring the leaders' verdicts on our REs. */
export const SERVICE_EXPORT_CONDITION_CONFLICT = 'Conflict';

/** Reasons of our own conditions and Events. */
export const EXPORT_REASON = {
  /** Conflict=True: the leader rejected one of the REs (its reason is used when it gives one). */
  LeaderRejected: 'LeaderRejected',
  /** Conflict=True: the RE name is taken by another export (possible only with ≤2.6 leaders). */
  NameConflict: 'NameConflict',
  /** Conflict=False once the leaders accept the REs again. */
  NoConflict: 'NoConflict',
  /** Warning Event reason for a Conflict. */
  ExportConflict: 'ExportConflict',
} as const;

/**
 * A leader's verdict message is a peer's text: one is cut to this many bytes before it enters a
 * ServiceExport condition (our leader sends at most 1 KiB; Antrea's a fixed sentence).
 */
export const MAX_LEADER_MESSAGE_BYTES = 2048;
/** The Conflict message naming every refusing ClusterSet, far below the CRD's maxLength 32768. */
export const MAX_CONFLICT_MESSAGE_BYTES = 8192;

/** A leader's verdict message as it may enter a ServiceExport condition: bounded, whatever the leader sent. Pure. */
export function boundedLeaderMessage(message: string): string {
  return boundText(message, MAX_LEADER_MESSAGE_BYTES);
}

/** A condition as decided, before times and generations are added. */
export interface WantedCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** A leader's verdict on the REs of one export; 'unknown' while it has not judged what we wrote. */
export type Verdict = { readonly kind: 'failed'; readonly reason: string; readonly message: string } | { readonly kind: 'ok' } | { readonly kind: 'unknown' };

/** One ClusterSet's judgement of one ServiceExport. */
export interface Judgement {
  /** From the local checks (the same for every ClusterSet). */
  readonly valid: WantedCondition;
  /** The export policy refuses the namespace (a Warning Event with the Valid reason). */
  readonly refused: boolean;
  readonly verdict: Verdict;
  /**
   * The newest resourceVersion of the member's objects the judged REs were built from (the
   * Service and its EndpointSlices). Each ClusterSet's exporter sees a change of the Service
   * in its own turn: until all have, one judges the new state and another still the old.
   */
  readonly source?: string | undefined;
}

/**
 * The verdicts that count: one built from an older state of the member than another
 * ClusterSet's is not yet about what the member exports now, so it counts as not judged.
 * Without this, a spec change seen by one exporter first (its leader not yet judging the new
 * spec, the other's still accepting the old one) turned a standing Conflict=True into False
 * until the first leader refused again: a flap.
 */
function currentVerdicts(entries: readonly (readonly [string, Judgement])[]): (readonly [string, Judgement])[] {
  const newest = entries.reduce<string | undefined>((n, [, j]) => (n === undefined || olderVersion(n, j.source) ? j.source ?? n : n), undefined);
  return entries.map(([clusterSet, j]) => (olderVersion(j.source, newest) ? [clusterSet, { ...j, verdict: { kind: 'unknown' } }] as const : [clusterSet, j] as const));
}

function sameCondition(a: Pick<MetaCondition, 'status' | 'reason' | 'message'>, b: WantedCondition): boolean {
  return a.status === b.status && a.reason === b.reason && a.message === b.message;
}

/**
 * The conditions the judgements of every ClusterSet (by name; '' when there is only one, not
 * named) call for, given the `current` ones: `Valid` as the local checks say; `Conflict=True`
 * when any connected leader refuses, naming the ClusterSets in name order; `Conflict=False`
 * once every connected leader accepts (only where it was True); nothing about Conflict while
 * no connected leader has judged. The judgements of `disconnected` (ClusterSet keys whose
 * leader is lost) do not count for Conflict. A verdict on an older state of the member than
 * another ClusterSet's counts as not judged ({@link currentVerdicts}). Returns only the
 * conditions that differ from `current`. Pure.
 */
export function changedConditions(judgements: ReadonlyMap<string, Judgement>, current: readonly MetaCondition[], disconnected: ReadonlySet<string> = new Set()): WantedCondition[] {
  const sorted = [...judgements.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const first = sorted[0]?.[1];
  if (!first) return [];
  const wanted: WantedCondition[] = [first.valid];
  const entries = currentVerdicts(sorted.filter(([clusterSet]) => !disconnected.has(clusterSet)));
  const failed = entries.flatMap(([clusterSet, j]) => (j.verdict.kind === 'failed' ? [{ clusterSet, verdict: j.verdict }] : []));
  const conflict = current.find((c) => c.type === SERVICE_EXPORT_CONDITION_CONFLICT);
  if (failed.length > 0) {
    const reasons = new Set(failed.map((f) => f.verdict.reason));
    const [only] = reasons;
    wanted.push({
      type: SERVICE_EXPORT_CONDITION_CONFLICT, status: 'True',
      reason: reasons.size === 1 && only !== undefined ? only : EXPORT_REASON.LeaderRejected,
      message: boundText(failed.map((f) => {
        const message = boundedLeaderMessage(f.verdict.message);
        return f.clusterSet === '' ? message : `ClusterSet ${f.clusterSet}: ${message}`;
      }).join('; '), MAX_CONFLICT_MESSAGE_BYTES),
    });
  } else if (entries.length > 0 && entries.every(([, j]) => j.verdict.kind === 'ok') && conflict?.status === 'True') {
    wanted.push({ type: SERVICE_EXPORT_CONDITION_CONFLICT, status: 'False', reason: EXPORT_REASON.NoConflict, message: '' });
  }
  return wanted.filter((w) => {
    const existing = current.find((c) => c.type === w.type);
    return !existing || !sameCondition(existing, w);
  });
}

/** Replaces a ServiceExport's status (the `status` subresource); a 404 means it is gone. */
export type ServiceExportStatusWriter = (serviceExport: ServiceExport, status: ServiceExportStatus) => Promise<unknown>;

export interface StatusWriterLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ExportStatusWriterOptions {
  /** The ServiceExport as the cache has it now (undefined when gone). */
  readonly serviceExport: (namespace: string, name: string) => ServiceExport | undefined;
  readonly write: ServiceExportStatusWriter;
  readonly events: EventRecorder;
  readonly logger: StatusWriterLogger;
  readonly now?: () => Date;
}

function parseKey(key: string): { namespace: string; name: string } | undefined {
  const [kind, namespace, name] = key.split('/');
  return kind === 'svc' && namespace && name ? { namespace, name } : undefined;
}

/** The single writer of ServiceExport status, for every ClusterSet of the agent. */
export class ExportStatusWriter {
  readonly #judgements = new Map<string, Map<string, Judgement>>();
  /** The status we last wrote per key, and the resourceVersion it was written over (the cache may lag). */
  readonly #written = new Map<string, { readonly baseVersion: string | undefined; readonly conditions: readonly MetaCondition[] }>();
  readonly #queue: WorkQueue;
  /** ClusterSet keys whose leader is not connected now: their verdicts are stale. */
  readonly #disconnected = new Set<string>();
  /** Status writes sent, for tests and metrics. */
  writes = 0;

  constructor(private readonly options: ExportStatusWriterOptions) {
    this.#queue = new WorkQueue({
      concurrency: 2,
      backoff: { baseMs: 500, maxMs: 60_000 },
      onError: (key, error, retry) => {
        options.logger.warn('writing ServiceExport status failed; will retry', { serviceExport: key, error: describeError(error), retryInMs: Math.round(retry.delayMs) });
      },
    });
    this.#queue.start((key) => this.#reconcile(key));
  }

  /** `clusterSet`'s judgement of the ServiceExport of `key` (`svc/<ns>/<name>`); undefined: it judges nothing there any more. */
  report(clusterSet: string, key: string, judgement: Judgement | undefined): void {
    let byClusterSet = this.#judgements.get(key);
    const previous = byClusterSet?.get(clusterSet);
    if (judgement === undefined) {
      if (!previous) return;
      byClusterSet?.delete(clusterSet);
      if (byClusterSet?.size === 0) this.#judgements.delete(key);
    } else {
      if (!byClusterSet) {
        byClusterSet = new Map();
        this.#judgements.set(key, byClusterSet);
      }
      byClusterSet.set(clusterSet, judgement);
    }
    this.#queue.add(key);
  }

  /**
   * `clusterSet`'s leader is connected (its exporter active) or not: while not, its verdicts
   * do not count for Conflict. Every ServiceExport it judged is looked at again.
   */
  setConnected(clusterSet: string, connected: boolean): void {
    if (connected === !this.#disconnected.has(clusterSet)) return;
    if (connected) this.#disconnected.delete(clusterSet);
    else this.#disconnected.add(clusterSet);
    for (const [key, byClusterSet] of this.#judgements) {
      if (byClusterSet.has(clusterSet)) this.#queue.add(key);
    }
  }

  /** Whether `clusterSet` has a judgement of `key`. */
  judges(clusterSet: string, key: string): boolean {
    return this.#judgements.get(key)?.has(clusterSet) ?? false;
  }

  /** A ClusterSet is gone: its judgements no longer count. */
  forget(clusterSet: string): void {
    this.#disconnected.delete(clusterSet);
    for (const [key, byClusterSet] of this.#judgements) {
      if (byClusterSet.has(clusterSet)) this.report(clusterSet, key, undefined);
    }
  }

  onIdle(): Promise<void> {
    return this.#queue.onIdle();
  }

  async stop(): Promise<void> {
    await this.#queue.stop();
  }

  async #reconcile(key: string): Promise<undefined> {
    const ref = parseKey(key);
    const judgements = this.#judgements.get(key);
    const serviceExport = ref ? this.options.serviceExport(ref.namespace, ref.name) : undefined;
    if (!ref || !judgements || !serviceExport || serviceExport.metadata?.deletionTimestamp) {
      this.#written.delete(key);
      return undefined;
    }
    const baseVersion = serviceExport.metadata?.resourceVersion;
    const memo = this.#written.get(key);
    // Our last write may not have reached the cache yet: then it is what the status is.
    const current: readonly MetaCondition[] = memo && memo.baseVersion === baseVersion ? memo.conditions : serviceExport.status?.conditions ?? [];
    const changed = changedConditions(judgements, current, this.#disconnected);
    if (changed.length === 0) return undefined;

    const now = (this.options.now?.() ?? new Date()).toISOString();
    const generation = serviceExport.metadata?.generation;
    const conditions: MetaCondition[] = current.filter((c) => !changed.some((w) => w.type === c.type)).map((c) => ({ ...c }));
    for (const w of changed) {
      const existing = current.find((c) => c.type === w.type);
      conditions.push({
        type: w.type, status: w.status, reason: w.reason, message: w.message,
        lastTransitionTime: existing && existing.status === w.status ? existing.lastTransitionTime : now,
        ...(generation !== undefined ? { observedGeneration: generation } : {}),
      });
    }
    try {
      this.writes += 1;
      await this.options.write(serviceExport, { ...serviceExport.status, conditions });
    } catch (err) {
      if (isNotFound(err)) {
        this.#written.delete(key);
        return undefined;
      }
      throw err;
    }
    this.#written.set(key, { baseVersion, conditions });

    const target = eventTarget(serviceExport);
    const refused = [...judgements.values()].some((j) => j.refused);
    for (const w of changed) {
      if (w.type === SERVICE_EXPORT_CONDITION_VALID && refused) {
        this.options.logger.warn('ServiceExport not exported: its namespace is refused by the export policy', { serviceExport: key, reason: w.reason });
        this.options.events.record(target, 'Warning', w.reason, w.message);
      } else if (w.type === SERVICE_EXPORT_CONDITION_CONFLICT && w.status === 'True') {
        this.options.logger.warn('the leader does not accept an export', { serviceExport: key, detail: w.message });
        this.options.events.record(target, 'Warning', EXPORT_REASON.ExportConflict, w.message);
      }
    }
    return undefined;
  }
}

function eventTarget(serviceExport: ServiceExport): EventTarget {
  return {
    // The version the object was read in, which the member serves.
    apiVersion: serviceExport.apiVersion ?? SERVICE_EXPORT.apiVersion,
    kind: SERVICE_EXPORT.kind,
    name: serviceExport.metadata?.name ?? '',
    namespace: serviceExport.metadata?.namespace ?? '',
    ...(serviceExport.metadata?.uid !== undefined ? { uid: serviceExport.metadata.uid } : {}),
  };
}
