// The admission policies' parameter: a ConfigMap the leader keeps in step with the leader
// namespace, because admission CEL cannot look anything up (antrea-wire.md §3.1, §3.6).
//   <ServiceAccount name> → the cluster ID of its `multicluster.antrea.io/cluster-id` annotation
//   ClusterSetID / LeaderClusterID → the leader ClusterSet's name and leader ID (announce CREATE)
//   DashPrefixPairsRefused → "true": no two cluster IDs here form a dash-prefix pair (this
//     leader leaves both out), so the export policy's search for a member whose export names a
//     caller's could take is skipped. That search is a comprehension over every entry, which at
//     1,000 members cost the API server more than the rest of an export write; a parameter kept
//     by hand (without the key) still gets it.
// The reserved keys contain capitals, which no ServiceAccount name can. Pure.
import type { V1ServiceAccount } from '@kubernetes/client-node';
import type { ClusterSet } from '../../common/api/antrea.js';
import { CLUSTER_ID_ANNOTATION, clusterIdProblem, dashPrefixPair } from '../../common/api/names.js';
import { leaderProblem } from './liveness.js';
import { compareNames } from '../../common/text/order.js';

export const MEMBER_IDS_CLUSTERSET_KEY = 'ClusterSetID';
export const MEMBER_IDS_LEADER_KEY = 'LeaderClusterID';
export const MEMBER_IDS_NO_PAIRS_KEY = 'DashPrefixPairsRefused';

export interface MemberIdsPlan {
  readonly data: Record<string, string>;
  /** Why some ServiceAccounts or ClusterSets were left out: each fails closed, and is said once. */
  readonly problems: readonly string[];
}

/**
 * What the leader's ServiceAccount cache keeps of one ServiceAccount: its identity and the
 * cluster-ID annotation, the only fields read (memberIdsData). One ServiceAccount per member, and
 * nothing of it is written back, so the rest (secrets, other annotations, labels) is dropped.
 */
export function compactServiceAccount(sa: V1ServiceAccount): V1ServiceAccount {
  const m = sa.metadata ?? {};
  const id = m.annotations?.[CLUSTER_ID_ANNOTATION];
  return {
    metadata: {
      ...(m.name !== undefined && { name: m.name }),
      ...(m.namespace !== undefined && { namespace: m.namespace }),
      ...(m.uid !== undefined && { uid: m.uid }),
      ...(m.resourceVersion !== undefined && { resourceVersion: m.resourceVersion }),
      ...(id !== undefined && { annotations: { [CLUSTER_ID_ANNOTATION]: id } }),
    },
  };
}

export function memberIdsData(serviceAccounts: readonly V1ServiceAccount[], clusterSets: readonly ClusterSet[]): MemberIdsPlan {
  const problems: string[] = [];
  const bySA = new Map<string, string>();
  const holders = new Map<string, string[]>();
  for (const sa of serviceAccounts) {
    const name = sa.metadata?.name ?? '';
    const id = sa.metadata?.annotations?.[CLUSTER_ID_ANNOTATION];
    if (id === undefined || name === '') continue;
    const problem = clusterIdProblem(id);
    if (problem !== undefined) {
      problems.push(`ServiceAccount ${name}: annotation ${CLUSTER_ID_ANNOTATION}: ${problem}; its writes are denied`);
      continue;
    }
    bySA.set(name, id);
    holders.set(id, [...(holders.get(id) ?? []), name]);
  }
  // Two ServiceAccounts claiming one cluster ID could each impersonate the other: neither is admitted.
  for (const [id, names] of holders) {
    if (names.length < 2) continue;
    problems.push(`ServiceAccounts ${names.sort().join(', ')} all claim cluster ID ${id}: their writes are denied until only one carries it`);
    for (const name of names) bySA.delete(name);
  }
  // Two IDs forming a dash-prefix pair (east, east-1) derive colliding export names: neither is admitted.
  const ids = [...new Set(bySA.values())].sort();
  const paired = new Set<string>();
  // Sorted, the IDs that start with `a-` follow `a` at once ('-' sorts before every other
  // character of an ID): a scan forward from each while they do, not every pair (a million at
  // 1,000 members, at every admission-parameter pass).
  for (const [i, a] of ids.entries()) {
    for (let j = i + 1; j < ids.length; j++) {
      const b = ids[j] ?? '';
      if (!dashPrefixPair(a, b)) break;
      const saOf = (id: string) => [...bySA].filter(([, v]) => v === id).map(([k]) => k).join(', ');
      problems.push(`cluster IDs ${a} (ServiceAccount ${saOf(a)}) and ${b} (ServiceAccount ${saOf(b)}) form a dash-prefix pair, so their export names collide: ` +
        'the writes of both are denied until one of them gets another ID');
      paired.add(a);
      paired.add(b);
    }
  }
  for (const [name, id] of [...bySA]) if (paired.has(id)) bySA.delete(name);
  const data: Record<string, string> = Object.fromEntries([...bySA].sort(([a], [b]) => compareNames(a, b)));
  // True by construction: every pair found above was left out.
  data[MEMBER_IDS_NO_PAIRS_KEY] = 'true';
  const valid = clusterSets.filter((cs) => leaderProblem(cs) === undefined && cs.metadata?.deletionTimestamp == null);
  if (valid.length === 1) {
    const cs = valid[0];
    data[MEMBER_IDS_CLUSTERSET_KEY] = cs?.metadata?.name ?? '';
    data[MEMBER_IDS_LEADER_KEY] = cs?.spec?.clusterID ?? '';
  } else if (valid.length > 1) {
    problems.push(`${valid.length} leader ClusterSets in the namespace (${valid.map((cs) => cs.metadata?.name ?? '').sort().join(', ')}): a leader namespace holds one ClusterSet; new members are denied until only one remains`);
  }
  return { data, problems };
}
