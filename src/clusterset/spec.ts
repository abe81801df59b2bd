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

/**
 * `target` is the first leader, `targets` every leader in `spec.leaders` order (the order
 * decides which leader's import wins when several hold it: importer/import-sources.ts).
 */
export type SpecResult = { readonly ok: true; readonly target: LeaderTarget; readonly targets: readonly LeaderTarget[] } |
  { readonly ok: false; readonly reason: 'InvalidSpec'; readonly message: string };

/**
 * How many leaders one ClusterSet may name: the chart's CRD allows as many (Antrea's own CRD
 * allows one, and its API server refuses more before the agent sees them).
 */
export const MAX_LEADERS = 5;

export function leaderTarget(clusterSet: ClusterSet): SpecResult {
  const problems: string[] = [];
  const spec = clusterSet.spec;
  const localClusterID = spec?.clusterID ?? '';
  const leaders = spec?.leaders ?? [];
  const leaderNamespace = spec?.namespace ?? '';
  // Cluster IDs end up in object names on the leader (member-announce-from-<id>).
  if (!localClusterID) problems.push('spec.clusterID is empty: set it to this member cluster\'s ID');
  else if (!isClusterId(localClusterID)) problems.push(`spec.clusterID: ${clusterIdProblem(localClusterID) ?? ''}`);
  if (leaders.length === 0) problems.push('spec.leaders must list at least one leader, found 0');
  if (leaders.length > MAX_LEADERS) problems.push(`spec.leaders lists ${String(leaders.length)} leaders, at most ${String(MAX_LEADERS)} are supported`);
  const seenIDs = new Set<string>();
  const seenServers = new Set<string>();
  leaders.forEach((leader, i) => {
    const at = `spec.leaders[${String(i)}]`;
    if (!leader.clusterID) problems.push(`${at}.clusterID is empty: set it to the leader cluster's ID`);
    if (!leader.server) problems.push(`${at}.server is empty: set it to the leader API server URL (https://...)`);
    if (!leader.secret) problems.push(`${at}.secret is empty: name the Secret holding ca.crt and token`);
    // One leader listed twice would make two areas write one and the same announce.
    if (leader.clusterID && seenIDs.has(leader.clusterID)) problems.push(`${at}.clusterID ${JSON.stringify(leader.clusterID)} is listed twice`);
    if (leader.server && seenServers.has(leader.server)) problems.push(`${at}.server ${JSON.stringify(leader.server)} is listed twice: each entry must be a different leader cluster`);
    if (leader.clusterID) seenIDs.add(leader.clusterID);
    if (leader.server) seenServers.add(leader.server);
  });
  if (!leaderNamespace) problems.push('spec.namespace is empty: set it to the leader namespace that holds the ClusterSet');
  else if (!isDnsLabel(leaderNamespace)) problems.push(`spec.namespace ${JSON.stringify(leaderNamespace)} is not a valid namespace name`);
  const targets = leaders.map((leader) => ({
    localClusterID,
    clusterSetID: clusterSet.metadata?.name ?? '',
    leaderClusterID: leader.clusterID ?? '',
    server: leader.server ?? '',
    secretName: leader.secret ?? '',
    leaderNamespace,
  }));
  const first = targets[0];
  if (problems.length > 0 || !first) return { ok: false, reason: 'InvalidSpec', message: problems.join('; ') };
  return { ok: true, target: first, targets };
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
