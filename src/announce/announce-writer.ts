// Upserts this member's MemberClusterAnnounce on the leader, one write per beat, and never
// touches an announce that belongs to another ClusterSet.
//
// The leader takes any *changing* write of the announce as liveness, so every beat stamps
// a fresh `touch-ts`, creation included (the leader's GC reaps announces without one).
// Steady state costs exactly one request: we PUT the object the previous write returned
// (its resourceVersion included), never GET first. Only when that copy is stale or missing
// do we pay more: 409 Conflict (someone else wrote, e.g. the leader adding its finalizer) or
// no copy yet (a start or restart) → GET and PUT; 404 → POST. Adopting with GET first means a
// restart never sends a CREATE that the leader answers 409 (on an Antrea ≥2.7 leader every
// CREATE costs its webhook a ServiceAccount lookup). Writing back the fetched object keeps the
// leader's finalizers and annotations.
//
// Ownership: the announce name depends only on the member's cluster ID, so two ClusterSets
// (or two member clusters) with the same ID would share it. An announce whose clusterSetID
// is not ours is never overwritten or deleted, and a delete carries our copy's uid as a
// precondition, so it cannot remove an announce that replaced ours meanwhile.
// Two member clusters with one ID: every write stamps this cluster's identity, and an announce
// we find (first sight, 409, AlreadyExists) stamped by another cluster that beat within the
// takeover window is not written (holder.ts); the steady-state PUT stays the only request.
import { MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../common/api/antrea.js';
import { CLUSTER_UID_ANNOTATION, mcaName, TIMESTAMP_ANNOTATION } from '../common/api/names.js';
import { judgeHolder, takeoverWindowMs, type HolderVerdict } from './holder.js';
import { apiStatus, isAlreadyExists, isConflict, isNamespaceNotFound, isNotFound } from '../common/kube/errors.js';
import type { LeaderApi } from '../commonarea/leader-api.js';

export interface AnnounceIdentity {
  /** This member's cluster ID (ClusterSet spec.clusterID). */
  readonly clusterID: string;
  /** The ClusterSet name, which is the ClusterSet ID. */
  readonly clusterSetID: string;
  readonly leaderClusterID: string;
}

/** Which call failed, so a failure can name the verb the member's Role lacks. */
export class AnnounceError extends Error {
  constructor(readonly verb: 'get' | 'create' | 'update' | 'delete', override readonly cause: unknown) {
    super(`${verb} memberclusterannounce failed`, { cause });
    this.name = 'AnnounceError';
  }
}

/** The announce on the leader belongs to another ClusterSet: we write nothing to it. */
export class AnnounceOwnedElsewhereError extends Error {
  constructor(readonly announce: string, readonly ownerClusterSetID: string, readonly clusterSetID: string) {
    super(`announce ${announce} on the leader belongs to ClusterSet ${JSON.stringify(ownerClusterSetID)}, not ${JSON.stringify(clusterSetID)}: ` +
      'another ClusterSet or another member cluster uses the same cluster ID; this ClusterSet writes nothing until that is resolved');
    this.name = 'AnnounceOwnedElsewhereError';
  }
}

/** Another member cluster with our cluster ID holds the announce (it beat within the takeover window): we write nothing. */
export class AnnounceHeldElsewhereError extends Error {
  constructor(readonly announce: string, readonly holder: string, readonly holderLastBeatMs: number, readonly ours: string | undefined) {
    super(`announce ${announce} is held by member cluster ${holder} (last heartbeat ${new Date(holderLastBeatMs).toISOString()}), not by this cluster ${ours ?? '(identity unknown)'}`);
    this.name = 'AnnounceHeldElsewhereError';
  }
}

/** The leader answered a write with an announce that is not the one we wrote. */
export class AnnounceMismatchError extends Error {
  constructor(detail: string) {
    super(`the leader's answer is not the announce we wrote: ${detail}`);
    this.name = 'AnnounceMismatchError';
  }
}

export type LeaveResult = 'deleted' | 'absent' | 'owned-elsewhere' | 'held-elsewhere';

export interface AnnounceWriterOptions {
  /** How long another cluster's last beat keeps the announce its own. @default three 10 s beats */
  readonly takeoverWindowMs?: number;
  /** We took the announce over from another cluster whose beats had stopped. */
  readonly onTakeOver?: (previous: string, lastBeatMs: number | undefined) => void;
}

export class AnnounceWriter {
  private last: MemberClusterAnnounce | undefined;
  private lastStamp = '';
  private clusterUid: string | undefined;
  private readonly windowMs: number;

  constructor(private readonly identity: AnnounceIdentity, private readonly now: () => Date = () => new Date(), private readonly options: AnnounceWriterOptions = {}) {
    this.windowMs = options.takeoverWindowMs ?? takeoverWindowMs(10_000);
  }

  get name(): string {
    return mcaName(this.identity.clusterID);
  }

  /** This cluster's identity (kube-system Namespace UID), stamped on every write from now on. */
  setClusterUid(uid: string | undefined): void {
    this.clusterUid = uid;
  }

  /**
   * Whether the announce on the leader is held by another member cluster now (one GET). Leaving
   * must then delete nothing: neither that cluster's announce nor the exports under our shared ID.
   */
  async heldElsewhere(api: LeaderApi): Promise<boolean> {
    try {
      const current = await call('get', () => api.getAnnounce(this.name));
      return this.judge(current).op === 'held-elsewhere';
    } catch (err) {
      if (err instanceof AnnounceError && isObjectNotFound(err.cause)) return false;
      throw err;
    }
  }

  private judge(announce: MemberClusterAnnounce): HolderVerdict {
    return judgeHolder(announce, this.clusterUid, this.now().getTime(), this.windowMs);
  }

  /** One heartbeat through `api`. Throws AnnounceError naming the failed call, or an ownership error. */
  async beat(api: LeaderApi): Promise<MemberClusterAnnounce> {
    const last = this.last;
    if (!last) return this.adopt(api);
    try {
      return this.accept(await call('update', () => api.replaceAnnounce(this.stamp(last))));
    } catch (err) {
      if (err instanceof AnnounceError && isConflict(err.cause)) return this.adopt(api);
      // A missing leader namespace is a failure to report, not a deleted announce to re-create.
      if (err instanceof AnnounceError && isObjectNotFound(err.cause)) {
        this.last = undefined;
        return this.create(api);
      }
      throw err;
    }
  }

  /**
   * Deletes our announce: the member leaves the ClusterSet. A missing announce, or one that
   * belongs to another ClusterSet, is left as it is.
   */
  async leave(api: LeaderApi): Promise<LeaveResult> {
    let target = this.last;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      if (!target) {
        try {
          target = await call('get', () => api.getAnnounce(this.name));
        } catch (err) {
          if (err instanceof AnnounceError && isObjectNotFound(err.cause)) return this.forget('absent');
          throw err;
        }
      }
      if (target.clusterSetID !== this.identity.clusterSetID) return this.forget('owned-elsewhere');
      if (this.judge(target).op === 'held-elsewhere') return this.forget('held-elsewhere');
      const uid = target.metadata?.uid;
      try {
        await call('delete', () => api.deleteAnnounce(this.name, uid));
        return this.forget('deleted');
      } catch (err) {
        if (err instanceof AnnounceError && isObjectNotFound(err.cause)) return this.forget('absent');
        // The uid precondition failed: the announce was replaced since we saw it; look again.
        if (err instanceof AnnounceError && isConflict(err.cause)) {
          target = undefined;
          continue;
        }
        throw err;
      }
    }
    throw new AnnounceError('delete', new Error(`announce ${this.name} kept changing while we tried to delete it`));
  }

  private forget(result: LeaveResult): LeaveResult {
    this.last = undefined;
    return result;
  }

  private async adopt(api: LeaderApi, createsLeft = 1): Promise<MemberClusterAnnounce> {
    let current: MemberClusterAnnounce;
    try {
      current = await call('get', () => api.getAnnounce(this.name));
    } catch (err) {
      if (createsLeft > 0 && err instanceof AnnounceError && isObjectNotFound(err.cause)) return this.create(api, createsLeft - 1);
      throw err;
    }
    if (current.clusterSetID !== this.identity.clusterSetID) {
      this.last = undefined;
      throw new AnnounceOwnedElsewhereError(this.name, current.clusterSetID ?? '', this.identity.clusterSetID);
    }
    const verdict = this.judge(current);
    if (verdict.op === 'held-elsewhere') {
      this.last = undefined;
      throw new AnnounceHeldElsewhereError(this.name, verdict.holder, verdict.lastBeatMs, this.clusterUid);
    }
    if (verdict.op === 'take-over') this.options.onTakeOver?.(verdict.previous, verdict.lastBeatMs);
    return this.accept(await call('update', () => api.replaceAnnounce(this.stamp(current))));
  }

  private async create(api: LeaderApi, adoptsLeft = 1): Promise<MemberClusterAnnounce> {
    try {
      return this.accept(await call('create', () => api.createAnnounce(this.stamp(this.fresh()))));
    } catch (err) {
      // Someone created it between our GET and POST: adopt it if it is ours.
      if (adoptsLeft > 0 && err instanceof AnnounceError && isAlreadyExists(err.cause)) return this.adopt(api, 0);
      throw err;
    }
  }

  /** Keeps the leader's answer as the base of the next beat, once it is shown to be what we wrote. */
  private accept(written: MemberClusterAnnounce): MemberClusterAnnounce {
    const problems: string[] = [];
    for (const field of ['clusterID', 'clusterSetID', 'leaderClusterID'] as const) {
      if (written[field] !== this.identity[field]) problems.push(`${field} is ${JSON.stringify(written[field])}, we wrote ${JSON.stringify(this.identity[field])}`);
    }
    const stamp = written.metadata?.annotations?.[TIMESTAMP_ANNOTATION];
    if (stamp !== this.lastStamp) problems.push(`${TIMESTAMP_ANNOTATION} is ${JSON.stringify(stamp)}, we wrote ${JSON.stringify(this.lastStamp)}`);
    if (!written.metadata?.uid || !written.metadata.resourceVersion) problems.push('it has no uid or resourceVersion');
    if (problems.length > 0) {
      this.last = undefined;
      throw new AnnounceMismatchError(problems.join('; '));
    }
    this.last = written;
    return written;
  }

  private fresh(): MemberClusterAnnounce {
    return {
      apiVersion: `${MEMBER_CLUSTER_ANNOUNCE.group}/${MEMBER_CLUSTER_ANNOUNCE.version}`,
      kind: MEMBER_CLUSTER_ANNOUNCE.kind,
      metadata: { name: this.name },
      clusterID: this.identity.clusterID,
      clusterSetID: this.identity.clusterSetID,
      leaderClusterID: this.identity.leaderClusterID,
    };
  }

  /** A copy of `base` with our identity and a timestamp that differs from the previous one. */
  private stamp(base: MemberClusterAnnounce): MemberClusterAnnounce {
    let stamp = this.now().toISOString();
    // Two beats within one millisecond would write identical objects, which the apiserver
    // turns into a no-op the leader never sees.
    if (stamp <= this.lastStamp) stamp = new Date(Date.parse(this.lastStamp) + 1).toISOString();
    this.lastStamp = stamp;
    // Without our identity we drop the stamp we took over: our beats must not vouch for another cluster.
    const { [CLUSTER_UID_ANNOTATION]: _previous, ...others } = base.metadata?.annotations ?? {};
    const annotations = { ...others, [TIMESTAMP_ANNOTATION]: stamp, ...(this.clusterUid !== undefined && { [CLUSTER_UID_ANNOTATION]: this.clusterUid }) };
    return {
      ...base,
      metadata: { ...base.metadata, name: this.name, annotations },
      clusterID: this.identity.clusterID,
      clusterSetID: this.identity.clusterSetID,
      leaderClusterID: this.identity.leaderClusterID,
    };
  }
}

/**
 * A Kubernetes NotFound for the announce itself: not its namespace (a failure to report), and
 * not a bare 404 from something that is not an API server (a proxy's error page).
 */
function isObjectNotFound(err: unknown): boolean {
  return isNotFound(err) && apiStatus(err)?.reason === 'NotFound' && !isNamespaceNotFound(err);
}

async function call<T>(verb: AnnounceError['verb'], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new AnnounceError(verb, err);
  }
}
