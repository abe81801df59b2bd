// Validation of a ClusterSet spec, and the identity of the leader it names. Pure.
import { clusterIdProblem, isClusterId, isDnsLabel } from '../common/api/names.js';
import type { ClusterSet } from '../common/api/antrea.js';

export interface LeaderTarget {
  /** This member's ID. */
  readonly localClusterID: string;
  readonly clusterSetID: string;
  readonly leaderClusterID: string;
  readonly server: string;
  readonly secretName: string;
  readonly leaderNamespace: string;
}

export type SpecResult = { readonly ok: true; readonly target: LeaderTarget } | { readonly ok: false; readonly reason: 'InvalidSpec'; readonly message: string };

export function leaderTarget(clusterSet: ClusterSet): SpecResult {
  const problems: string[] = [];
  const spec = clusterSet.spec;
  const localClusterID = spec?.clusterID ?? '';
  const leaders = spec?.leaders ?? [];
  const leader = leaders[0];
  const leaderNamespace = spec?.namespace ?? '';
  // Cluster IDs end up in object names on the leader (member-announce-from-<id>).
  if (!localClusterID) problems.push('spec.clusterID is empty: set it to this member cluster\'s ID');
  else if (!isClusterId(localClusterID)) problems.push(`spec.clusterID: ${clusterIdProblem(localClusterID) ?? ''}`);
  if (leaders.length !== 1) problems.push(`spec.leaders must list exactly one leader, found ${String(leaders.length)}`);
  if (leader) {
    if (!leader.clusterID) problems.push('spec.leaders[0].clusterID is empty: set it to the leader cluster\'s ID');
    if (!leader.server) problems.push('spec.leaders[0].server is empty: set it to the leader API server URL (https://...)');
    if (!leader.secret) problems.push('spec.leaders[0].secret is empty: name the Secret holding ca.crt and token');
  }
  if (!leaderNamespace) problems.push('spec.namespace is empty: set it to the leader namespace that holds the ClusterSet');
  else if (!isDnsLabel(leaderNamespace)) problems.push(`spec.namespace ${JSON.stringify(leaderNamespace)} is not a valid namespace name`);
  if (problems.length > 0 || !leader) return { ok: false, reason: 'InvalidSpec', message: problems.join('; ') };
  return {
    ok: true,
    target: {
      localClusterID,
      clusterSetID: clusterSet.metadata?.name ?? '',
      leaderClusterID: leader.clusterID ?? '',
      server: leader.server ?? '',
      secretName: leader.secret ?? '',
      leaderNamespace,
    },
  };
}

/**
 * Two targets name the same membership. The server URL and the Secret are how we reach the
 * leader, not who it is: changing them is a credential rotation (a leader API moved behind a
 * new address keeps its members), not a leave and re-join.
 */
export function sameLeader(a: LeaderTarget, b: LeaderTarget): boolean {
  return a.localClusterID === b.localClusterID && a.clusterSetID === b.clusterSetID && a.leaderClusterID === b.leaderClusterID &&
    a.leaderNamespace === b.leaderNamespace;
}
