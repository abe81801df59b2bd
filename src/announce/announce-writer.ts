// Upserts this member's MemberClusterAnnounce on the leader, one write per beat.
//
// The leader takes any *changing* write of the announce as liveness, so every beat stamps
// a fresh `touch-ts`, creation included (the leader's GC reaps announces without one).
// Steady state costs exactly one request: we PUT the object the previous write returned
// (its resourceVersion included), never GET first. Only when that copy is stale do we pay
// more: 409 Conflict (someone else wrote, e.g. the leader adding its finalizer) → GET and
// PUT again; 404 (the announce was deleted) → POST; no copy yet → POST, and on
// AlreadyExists (a restart) → GET and PUT. Writing back the fetched object keeps the
// leader's finalizers and annotations.
import { mcaName, MEMBER_CLUSTER_ANNOUNCE, TIMESTAMP_ANNOTATION, type MemberClusterAnnounce } from '../api/types.js';
import { isAlreadyExists, isConflict, isNamespaceNotFound, isNotFound } from '../kube/errors.js';
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

export class AnnounceWriter {
  private last: MemberClusterAnnounce | undefined;
  private lastStamp = '';

  constructor(private readonly identity: AnnounceIdentity, private readonly now: () => Date = () => new Date()) {}

  get name(): string {
    return mcaName(this.identity.clusterID);
  }

  /** One heartbeat through `api`. Throws AnnounceError naming the failed call. */
  async beat(api: LeaderApi): Promise<MemberClusterAnnounce> {
    if (this.last) {
      try {
        return this.remember(await call('update', () => api.replaceAnnounce(this.stamp(this.last))));
      } catch (err) {
        if (err instanceof AnnounceError && isConflict(err.cause)) return this.refetchAndReplace(api);
        // A missing leader namespace is a failure to report, not a deleted announce to re-create.
        if (err instanceof AnnounceError && isNotFound(err.cause) && !isNamespaceNotFound(err.cause)) {
          this.last = undefined;
          return this.create(api);
        }
        throw err;
      }
    }
    return this.create(api);
  }

  /** Deletes the announce: the member leaves the ClusterSet. A missing announce is fine. */
  async leave(api: LeaderApi): Promise<void> {
    try {
      await call('delete', () => api.deleteAnnounce(this.name));
    } catch (err) {
      if (!(err instanceof AnnounceError && isNotFound(err.cause))) throw err;
    }
    this.last = undefined;
  }

  private async create(api: LeaderApi): Promise<MemberClusterAnnounce> {
    try {
      return this.remember(await call('create', () => api.createAnnounce(this.stamp(this.fresh()))));
    } catch (err) {
      if (err instanceof AnnounceError && isAlreadyExists(err.cause)) return this.refetchAndReplace(api);
      throw err;
    }
  }

  private async refetchAndReplace(api: LeaderApi): Promise<MemberClusterAnnounce> {
    const current = await call('get', () => api.getAnnounce(this.name));
    return this.remember(await call('update', () => api.replaceAnnounce(this.stamp(current))));
  }

  private remember(written: MemberClusterAnnounce): MemberClusterAnnounce {
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
  private stamp(base: MemberClusterAnnounce | undefined): MemberClusterAnnounce {
    const source = base ?? this.fresh();
    let stamp = this.now().toISOString();
    // Two beats within one millisecond would write identical objects, which the apiserver
    // turns into a no-op the leader never sees.
    if (stamp <= this.lastStamp) stamp = new Date(Date.parse(this.lastStamp) + 1).toISOString();
    this.lastStamp = stamp;
    return {
      ...source,
      metadata: { ...source.metadata, name: this.name, annotations: { ...source.metadata?.annotations, [TIMESTAMP_ANNOTATION]: stamp } },
      clusterID: this.identity.clusterID,
      clusterSetID: this.identity.clusterSetID,
      leaderClusterID: this.identity.leaderClusterID,
    };
  }
}

async function call<T>(verb: AnnounceError['verb'], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new AnnounceError(verb, err);
  }
}

