// `clusterset-agent join`: what the two clusters must hold for a member to join, checked
// against what they hold already. Pure: join.ts observes and acts.
//
// Every contradiction is found before anything is written, and each is said with the object,
// the field, what it holds and what join would need, so the user can fix the one that is wrong.
import { CLUSTERSET, type ClusterSet, type LeaderClusterInfo } from '../../common/api/antrea.js';
import { DEFAULT_LEADER_NAMESPACE, LEADER_SECRET_CA_KEY, LEADER_SECRET_TOKEN_KEY } from '../../common/api/names.js';
import { leaderTarget } from '../../clusterset/spec.js';

export interface JoinRequest {
  /** The ClusterSet ID: the name of the ClusterSet on both sides. */
  readonly clusterSet: string;
  /** The member's cluster ID. */
  readonly clusterID: string;
  /** The leader API server URL as the member reaches it. */
  readonly leaderServer: string;
  readonly leaderNamespace: string;
  /** The agent's namespace in the member. */
  readonly memberNamespace: string;
  readonly secretName: string;
  /** The leader cluster ID, for a leader ClusterSet join creates; else read from it. */
  readonly leaderClusterID?: string;
}

export interface LeaderState {
  readonly clusterSetsServed: boolean;
  readonly namespaceExists: boolean;
  /** The leader's own ClusterSet of that name in the leader namespace. */
  readonly clusterSet: ClusterSet | undefined;
}

export interface MemberState {
  readonly clusterSetsServed: boolean;
  readonly namespaceExists: boolean;
  readonly clusterSet: ClusterSet | undefined;
  /** The Secret's `ca.crt` and `token` (decoded), when it exists. */
  readonly secret: { readonly caPem: string | undefined; readonly token: string | undefined } | undefined;
}

export interface JoinPlan {
  /** Contradictions: when any, nothing may be written. */
  readonly refusals: readonly string[];
  readonly leaderClusterID: string;
  /** The leader's own ClusterSet to create, when it is missing and join was told the leader's ID. */
  readonly createLeaderClusterSet: ClusterSet | undefined;
  /** The member ClusterSet to create; undefined when an equal one exists. */
  readonly createMemberClusterSet: ClusterSet | undefined;
  /**
   * The leader to add to the member's existing ClusterSet (same cluster ID and leader
   * namespace, another leader cluster): the member then has several leaders (issue 30).
   */
  readonly addMemberLeader: LeaderClusterInfo | undefined;
  /** The member ClusterSet as join wants it (created, or found equal). */
  readonly memberClusterSet: ClusterSet;
  /** Whether the member's Secret exists: its token is then checked before a new one is issued. */
  readonly secretExists: boolean;
}

const API_VERSION = `${CLUSTERSET.group}/${CLUSTERSET.version}`;

export function leaderClusterSetManifest(name: string, namespace: string, leaderClusterID: string): ClusterSet {
  return {
    apiVersion: API_VERSION, kind: CLUSTERSET.kind,
    metadata: { name, namespace },
    spec: { clusterID: leaderClusterID, leaders: [{ clusterID: leaderClusterID }] },
  };
}

export function memberClusterSetManifest(request: JoinRequest, leaderClusterID: string): ClusterSet {
  return {
    apiVersion: API_VERSION, kind: CLUSTERSET.kind,
    metadata: { name: request.clusterSet, namespace: request.memberNamespace },
    spec: {
      clusterID: request.clusterID,
      namespace: request.leaderNamespace,
      leaders: [{ clusterID: leaderClusterID, server: request.leaderServer, secret: request.secretName }],
    },
  };
}

/** The member-side Secret, as `leader create-member-token` prints it. */
export function memberSecretManifest(request: JoinRequest, caPem: string, token: string) {
  return {
    apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
    metadata: { name: request.secretName, namespace: request.memberNamespace },
    data: {
      [LEADER_SECRET_CA_KEY]: Buffer.from(caPem, 'utf8').toString('base64'),
      [LEADER_SECRET_TOKEN_KEY]: Buffer.from(token, 'utf8').toString('base64'),
    },
  };
}

/**
 * The leader join adds to an existing member ClusterSet: the same membership (cluster ID and
 * leader namespace) that does not list this leader cluster yet. Undefined otherwise (another
 * membership, or the leader is listed: then compared field by field).
 */
function leaderToAdd(existing: ClusterSet, wanted: ClusterSet): LeaderClusterInfo | undefined {
  const have = existing.spec;
  const want = wanted.spec?.leaders[0];
  if (want === undefined || (have?.clusterID ?? '') !== (wanted.spec?.clusterID ?? '')) return undefined;
  if ((have?.namespace ?? DEFAULT_LEADER_NAMESPACE) !== wanted.spec?.namespace) return undefined;
  const listed = (have?.leaders ?? []).some((l) => l.clusterID === want.clusterID || (l.server !== undefined && l.server === want.server));
  return listed ? undefined : want;
}

/** Field by field, how an existing member ClusterSet differs from the one join needs. */
function clusterSetDifferences(existing: ClusterSet, wanted: ClusterSet): string[] {
  const have = existing.spec;
  const want = wanted.spec;
  // With several leaders, the entry of the leader join is about (by ID), else the first.
  const index = Math.max(0, (have?.leaders ?? []).findIndex((l) => l.clusterID === want?.leaders[0]?.clusterID));
  const haveLeader = have?.leaders[index];
  const wantLeader = want?.leaders[0];
  const fields: [string, string | undefined, string | undefined][] = [
    ['spec.clusterID', have?.clusterID, want?.clusterID],
    ['spec.namespace', have?.namespace ?? DEFAULT_LEADER_NAMESPACE, want?.namespace],
    [`spec.leaders[${String(index)}].clusterID`, haveLeader?.clusterID, wantLeader?.clusterID],
    [`spec.leaders[${String(index)}].server`, haveLeader?.server, wantLeader?.server],
    [`spec.leaders[${String(index)}].secret`, haveLeader?.secret, wantLeader?.secret],
  ];
  return fields.filter(([, a, b]) => (a ?? '') !== (b ?? '')).map(([field, a, b]) => `${field} is ${JSON.stringify(a ?? '')}, join needs ${JSON.stringify(b ?? '')}`);
}

function sameCa(a: string, b: string): boolean {
  const norm = (pem: string) => pem.replace(/\r/g, '').trim();
  return norm(a) === norm(b);
}

export function planJoin(request: JoinRequest, leader: LeaderState, member: MemberState, leaderCaPem: string): JoinPlan {
  const refusals: string[] = [];
  const where = (ns: string, name: string) => `${ns}/${name}`;

  // The leader.
  if (!leader.clusterSetsServed) refusals.push(`the leader cluster serves no ${CLUSTERSET.plural}.${CLUSTERSET.group}: install the chart there with mode=leader first`);
  else if (!leader.namespaceExists) refusals.push(`the leader namespace ${request.leaderNamespace} does not exist on the leader: install the chart with mode=leader (it creates it), or pass the right --leader-namespace`);
  const found = leader.clusterSet?.spec?.leaders[0]?.clusterID ?? leader.clusterSet?.spec?.clusterID;
  let leaderClusterID = request.leaderClusterID ?? found ?? '';
  let createLeaderClusterSet: ClusterSet | undefined;
  if (leader.clusterSetsServed && leader.namespaceExists) {
    if (leader.clusterSet === undefined) {
      if (request.leaderClusterID === undefined) {
        refusals.push(`the leader has no ClusterSet ${where(request.leaderNamespace, request.clusterSet)}: pass --leader-cluster-id to create it, or check --clusterset and --leader-namespace`);
      } else {
        createLeaderClusterSet = leaderClusterSetManifest(request.clusterSet, request.leaderNamespace, request.leaderClusterID);
      }
    } else if (found === undefined || found === '') {
      refusals.push(`the leader's ClusterSet ${where(request.leaderNamespace, request.clusterSet)} names no leader cluster ID (spec.leaders[0].clusterID)`);
    } else if (request.leaderClusterID !== undefined && request.leaderClusterID !== found) {
      refusals.push(`--leader-cluster-id is ${JSON.stringify(request.leaderClusterID)}, but the leader's ClusterSet ${where(request.leaderNamespace, request.clusterSet)} says the leader is ${JSON.stringify(found)}`);
    } else {
      leaderClusterID = found;
    }
  }
  if (leaderClusterID !== '' && leaderClusterID === request.clusterID) {
    refusals.push(`the member's cluster ID ${JSON.stringify(request.clusterID)} is the leader's own: give the member its own ID`);
  }

  // The member ClusterSet join would write, checked by the agent's own spec rules.
  const memberClusterSet = memberClusterSetManifest(request, leaderClusterID === '' ? 'leader' : leaderClusterID);
  const valid = leaderTarget(memberClusterSet);
  if (!valid.ok) refusals.push(`the member ClusterSet join would write is invalid: ${valid.message}`);

  // The member.
  if (!member.clusterSetsServed) refusals.push(`the member cluster serves no ${CLUSTERSET.plural}.${CLUSTERSET.group}: install the chart there (mode=member) first`);
  else if (!member.namespaceExists) refusals.push(`the agent namespace ${request.memberNamespace} does not exist in the member: install the chart there, or pass the right --member-namespace`);
  let createMemberClusterSet: ClusterSet | undefined = memberClusterSet;
  let addMemberLeader: LeaderClusterInfo | undefined;
  if (member.clusterSet !== undefined) {
    const added = leaderToAdd(member.clusterSet, memberClusterSet);
    if (added !== undefined) {
      // The same membership, another leader cluster: join adds it, after the same checks.
      const merged: ClusterSet = { ...member.clusterSet, spec: { ...member.clusterSet.spec, clusterID: request.clusterID, leaders: [...(member.clusterSet.spec?.leaders ?? []), added] } };
      const mergedValid = leaderTarget(merged);
      if (!mergedValid.ok) refusals.push(`adding leader ${added.clusterID ?? ''} to ClusterSet ${where(request.memberNamespace, request.clusterSet)} would make it invalid: ${mergedValid.message}`);
      const sharing = member.clusterSet.spec?.leaders.find((l) => l.secret === request.secretName);
      if (sharing !== undefined) refusals.push(`Secret ${where(request.memberNamespace, request.secretName)} is the Secret of leader ${sharing.clusterID ?? ''} in ClusterSet ${request.clusterSet}: pass another --secret-name for the leader added`);
      addMemberLeader = added;
    } else {
      const differences = clusterSetDifferences(member.clusterSet, memberClusterSet);
      if (differences.length > 0) {
        refusals.push(`the member already has ClusterSet ${where(request.memberNamespace, request.clusterSet)} for another membership: ${differences.join('; ')}. Run leave for it first, or fix the flags`);
      }
    }
    createMemberClusterSet = undefined;
  }
  if (member.secret !== undefined) {
    const secret = where(request.memberNamespace, request.secretName);
    if (member.secret.caPem === undefined) refusals.push(`Secret ${secret} exists in the member without ${LEADER_SECRET_CA_KEY}: it is not a leader Secret; pass another --secret-name`);
    else if (!sameCa(member.secret.caPem, leaderCaPem)) refusals.push(`Secret ${secret} exists in the member with another ${LEADER_SECRET_CA_KEY} than the leader's CA: it is for another leader; pass another --secret-name, or delete it`);
  }
  return {
    refusals,
    leaderClusterID,
    createLeaderClusterSet: refusals.length === 0 ? createLeaderClusterSet : undefined,
    createMemberClusterSet,
    addMemberLeader: refusals.length === 0 ? addMemberLeader : undefined,
    memberClusterSet,
    secretExists: member.secret !== undefined,
  };
}

/** The ServiceAccount a token belongs to, from its `sub` claim (`system:serviceaccount:NS:NAME`). Display and checks only. */
export function tokenSubject(token: string): { namespace: string; name: string } | undefined {
  const payload = token.trim().split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    const match = typeof sub === 'string' ? /^system:serviceaccount:([^:]+):([^:]+)$/.exec(sub) : null;
    return match === null ? undefined : { namespace: match[1] ?? '', name: match[2] ?? '' };
  } catch {
    return undefined;
  }
}
