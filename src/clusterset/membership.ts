// Which ClusterSet holds a membership when two claim the same one. Pure.
//
// A member's announce on a leader is named after its cluster ID alone
// (`member-announce-from-<clusterID>`), so two ClusterSets in this member with the same
// cluster ID and the same leader namespace on the same leader would write, and on leaving
// delete, one and the same announce. The first one (oldest, then by name) keeps the
// membership; the others write nothing and say why.
import type { LeaderTarget } from './spec.js';

export interface MembershipClaim {
  readonly name: string;
  /** metadata.creationTimestamp (RFC3339); missing sorts last. */
  readonly createdAt: string | undefined;
  readonly target: LeaderTarget;
}

/** Same announce on the same leader: same member ID and namespace, and the same leader by ID or by URL. */
export function sameMembership(a: LeaderTarget, b: LeaderTarget): boolean {
  return a.localClusterID === b.localClusterID && a.leaderNamespace === b.leaderNamespace &&
    (a.leaderClusterID === b.leaderClusterID || normaliseServer(a.server) === normaliseServer(b.server));
}

function normaliseServer(server: string): string {
  try {
    const url = new URL(server);
    const port = url.port || (url.protocol === 'https:' ? '443' : '');
    return `${url.protocol}//${url.hostname.toLowerCase()}:${port}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return server;
  }
}

function precedes(a: MembershipClaim, b: MembershipClaim): boolean {
  const at = a.createdAt ?? '\uffff';
  const bt = b.createdAt ?? '\uffff';
  return at !== bt ? at < bt : a.name < b.name;
}

/** The claim that holds the membership `claim` also wants, if another one does. */
export function heldBy(claim: MembershipClaim, others: readonly MembershipClaim[]): MembershipClaim | undefined {
  let holder: MembershipClaim | undefined;
  for (const other of others) {
    if (other.name === claim.name || !sameMembership(claim.target, other.target)) continue;
    if (precedes(other, claim) && (!holder || precedes(other, holder))) holder = other;
  }
  return holder;
}
