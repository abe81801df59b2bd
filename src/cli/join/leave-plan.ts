// `clusterset-agent leave`: what may be deleted, decided from what both clusters hold. Pure:
// leave.ts observes and acts.
//
// Two rules. The leader context must be proven to be the leader the member ClusterSet names
// (the UID of the leader ClusterSet join recorded, or else the same server and CA, and in every
// case the leader ClusterSet with the same leader ID) before anything is deleted, so a context
// pointing at another ClusterSet's leader is refused. And only what join (or
// create-member-token) labelled at create is deleted, under a uid precondition; a RoleBinding
// it did not create only loses the member's subject; anything that stays is named.
//
// With several leaders, leave is about one of them (`--leader`): its entry goes from the member
// ClusterSet (the agent leaves that leader), then its Secret and the member's access on it; the
// other leaders stay untouched. The last leader's leave is the whole leave.
import type { V1RoleBinding, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import type { ClusterSet, MemberClusterAnnounce } from '../../common/api/antrea.js';
import {
  CLUSTER_ID_ANNOTATION, LEADER_CLUSTERSET_UID_ANNOTATION, LEADER_CLUSTERSET_UIDS_ANNOTATION, LEADER_SERVICE_ACCOUNT_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE,
} from '../../common/api/names.js';
import { tokenSubject } from './plan.js';

export interface LeaveObservation {
  readonly memberNamespace: string;
  readonly clusterSet: ClusterSet;
  /** The entry of spec.leaders leave is about (see {@link leaderToLeave}); 0 when omitted. */
  readonly leaderIndex?: number;
  /** The member's Secret that leader's entry names, when it exists. */
  readonly secret: {
    readonly uid: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
    readonly caPem: string | undefined;
    readonly token: string | undefined;
  } | undefined;
  /** Other ClusterSets in the member naming the same Secret (or other leaders of this one, as `name (leader id)`). */
  readonly secretSharedWith: readonly string[];
  /** `--service-account`, when given. */
  readonly serviceAccountFlag: string | undefined;
  readonly leader: {
    /** The leader kubeconfig's server URL and CA (PEM). */
    readonly server: string;
    readonly caPem: string | undefined;
    /** The leader's own ClusterSet of that name in the leader namespace, as the leader context shows it. */
    readonly clusterSet: ClusterSet | undefined;
  };
}

/** What the leader holds for the account leave resolved (read after the account is known). */
export interface LeaderAccess {
  readonly serviceAccount: V1ServiceAccount | undefined;
  readonly roleBinding: V1RoleBinding | undefined;
  /** Leader Secrets labelled as this member's token bindings (join made them; each revokes a token when deleted). */
  readonly tokenSecrets: readonly V1Secret[];
}

/**
 * The token Secrets join made for `serviceAccount`: labelled at create, annotated with the
 * account, and owned by it (when `ownerUid` is known); never `except` (the current one).
 */
export function tokenSecretsOf(secrets: readonly V1Secret[], serviceAccount: string, exceptUid?: string, ownerUid?: string): { name: string; uid: string }[] {
  return secrets
    .filter((s) => isManaged(s.metadata?.labels) && s.metadata?.annotations?.[LEADER_SERVICE_ACCOUNT_ANNOTATION] === serviceAccount)
    .filter((s) => s.metadata?.uid !== exceptUid)
    .filter((s) => ownerUid === undefined || (s.metadata?.ownerReferences ?? []).some((o) => o.kind === 'ServiceAccount' && o.uid === ownerUid))
    .map((s) => ({ name: s.metadata?.name ?? '', uid: s.metadata?.uid ?? '' }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface LeaveTarget {
  readonly refusals: readonly string[];
  readonly clusterID: string;
  readonly leaderNamespace: string;
  readonly leaderClusterID: string;
  /** The member's ServiceAccount on the leader, and where its name came from. */
  readonly serviceAccount: string;
  readonly serviceAccountFrom: 'the ClusterSet join wrote' | 'the Secret join wrote' | "the Secret's token" | '--service-account' | 'the default';
}

/** One write leave makes, in order. */
export interface LeaveStep {
  readonly side: 'member' | 'leader';
  readonly action: 'delete' | 'remove-subject' | 'remove-leader';
  readonly kind: 'ClusterSet' | 'Secret' | 'RoleBinding' | 'ServiceAccount';
  readonly namespace: string;
  readonly name: string;
  /** Delete precondition (or, for remove-subject, the resourceVersion the replace is based on). */
  readonly uid?: string;
  readonly resourceVersion?: string;
  /** For remove-subject: the ServiceAccount whose subject goes. */
  readonly subject?: string;
  /** For remove-leader: the leader whose entry goes from spec.leaders, and the patch that takes it out. */
  readonly leader?: string;
  readonly patch?: readonly PatchOp[];
}

export interface LeavePlan {
  readonly steps: readonly LeaveStep[];
  /** What stays, each with why: leave exits 5 when any does. */
  readonly kept: readonly string[];
  /** What stays on purpose and is fine (a Secret another ClusterSet uses): said, not a failure. */
  readonly notes: readonly string[];
}

function isManaged(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
}
const norm = (pem: string) => pem.replace(/\r/g, '').trim();

/** Which leader a leave is about, or why the command line does not say (exit 2: a usage error). */
export type LeaderChoice = { readonly index: number; readonly last: boolean } | { readonly problem: string };

/**
 * The entry of spec.leaders `--leader` names; without the flag, the only leader. Several leaders
 * and no flag is a question only the user can answer: the leader context is one leader's.
 */
export function leaderToLeave(cs: ClusterSet, requested: string | undefined, memberNamespace: string): LeaderChoice {
  const leaders = cs.spec?.leaders ?? [];
  const where = `ClusterSet ${memberNamespace}/${cs.metadata?.name ?? ''}`;
  const listed = leaders.map((l) => l.clusterID ?? '').join(', ');
  if (requested === undefined) {
    if (leaders.length <= 1) return { index: 0, last: true };
    return { problem: `${where} lists ${String(leaders.length)} leaders (${listed}): pass --leader <id> with the --leader-context of that leader (the last leader's leave removes the ClusterSet)` };
  }
  const index = leaders.findIndex((l) => l.clusterID === requested);
  if (index < 0) return { problem: `${where} lists no leader ${JSON.stringify(requested)}; its leaders: ${listed === '' ? '(none)' : listed}` };
  return { index, last: leaders.length === 1 };
}

/** The per-leader records join wrote ({@link LEADER_CLUSTERSET_UIDS_ANNOTATION}); empty when none or unreadable. */
function recordedUids(cs: ClusterSet): Record<string, string> {
  const text = cs.metadata?.annotations?.[LEADER_CLUSTERSET_UIDS_ANNOTATION];
  if (text === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
  } catch {
    return {};
  }
}

/**
 * The UID of the leader ClusterSet join joined for the leader at `index`: its per-leader record,
 * else (a ClusterSet join created with one leader) the single record, which is the first leader's.
 */
export function recordedLeaderUid(cs: ClusterSet, index: number): string | undefined {
  const id = cs.spec?.leaders[index]?.clusterID ?? '';
  const own = recordedUids(cs)[id];
  if (own !== undefined) return own;
  const first = cs.metadata?.annotations?.[LEADER_CLUSTERSET_UID_ANNOTATION];
  return index === 0 && first !== undefined && first !== '' ? first : undefined;
}

/** The uid records with a leader's added, as join writes them when it adds that leader. */
export function withRecordedUid(cs: ClusterSet, leaderClusterID: string, uid: string): string {
  const uids = recordedUids(cs);
  // The first leader's record, kept in the single annotation, joins the map on the first add.
  const firstID = cs.spec?.leaders[0]?.clusterID;
  const first = cs.metadata?.annotations?.[LEADER_CLUSTERSET_UID_ANNOTATION];
  if (firstID !== undefined && first !== undefined && first !== '' && uids[firstID] === undefined) uids[firstID] = first;
  uids[leaderClusterID] = uid;
  return JSON.stringify(uids);
}

/** One operation of a JSON patch (RFC 6902). */
export type PatchOp = { readonly op: 'test' | 'add' | 'replace'; readonly path: string; readonly value: unknown } | { readonly op: 'remove'; readonly path: string };

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The patch that takes the leader at `index` out of the member ClusterSet, tested against what
 * leave read (the object's uid, the entry itself, each annotation it changes): an edit in
 * between fails the patch instead of removing another entry. The records of that leader go
 * with it; when it was the first, the single records (the first leader's) follow the new first.
 */
export function removeLeaderPatch(cs: ClusterSet, index: number): PatchOp[] {
  const entry = cs.spec?.leaders[index];
  const ops: PatchOp[] = [
    { op: 'test', path: '/metadata/uid', value: cs.metadata?.uid },
    { op: 'test', path: `/spec/leaders/${String(index)}`, value: entry },
    { op: 'remove', path: `/spec/leaders/${String(index)}` },
  ];
  const annotations = cs.metadata?.annotations ?? {};
  const set = (key: string, value: string | undefined) => {
    const old = annotations[key];
    if (old === value) return;
    const path = `/metadata/annotations/${pointer(key)}`;
    if (old !== undefined) ops.push({ op: 'test', path, value: old });
    ops.push(value === undefined ? { op: 'remove', path } : { op: old === undefined ? 'add' : 'replace', path, value });
  };
  const id = entry?.clusterID ?? '';
  const all = recordedUids(cs);
  const uids = Object.fromEntries(Object.entries(all).filter(([leader]) => leader !== id));
  if (all[id] !== undefined) {
    set(LEADER_CLUSTERSET_UIDS_ANNOTATION, Object.keys(uids).length === 0 ? undefined : JSON.stringify(uids));
  }
  if (index === 0) {
    const next = cs.spec?.leaders[1]?.clusterID ?? '';
    set(LEADER_CLUSTERSET_UID_ANNOTATION, uids[next]);
    // The account recorded on the ClusterSet is the first leader's; the next one's is on its Secret.
    set(LEADER_SERVICE_ACCOUNT_ANNOTATION, undefined);
  }
  return ops;
}

/** Who the member is, which account is its own, and whether the leader context is its leader. */
export function leaveTarget(o: LeaveObservation): LeaveTarget {
  const cs = o.clusterSet;
  const name = cs.metadata?.name ?? '';
  const clusterID = cs.spec?.clusterID ?? '';
  const leaderNamespace = cs.spec?.namespace ?? '';
  const index = o.leaderIndex ?? 0;
  const entry = cs.spec?.leaders[index];
  const leaderClusterID = entry?.clusterID ?? '';
  const refusals: string[] = [];
  if (clusterID === '') refusals.push(`ClusterSet ${o.memberNamespace}/${name} has no spec.clusterID: leave cannot tell which member's access to remove`);
  if (leaderNamespace === '') refusals.push(`ClusterSet ${o.memberNamespace}/${name} has no spec.namespace: leave cannot tell the leader namespace`);

  // The account: what join recorded, never a guess when a record exists. The ClusterSet's
  // record is its first leader's (join writes it when it creates the ClusterSet).
  const annotations = cs.metadata?.annotations ?? {};
  const subject = tokenSubject(o.secret?.token ?? '');
  const recorded: [LeaveTarget['serviceAccountFrom'], string | undefined][] = [
    ['the ClusterSet join wrote', index === 0 ? annotations[LEADER_SERVICE_ACCOUNT_ANNOTATION] : undefined],
    ['the Secret join wrote', o.secret?.annotations[LEADER_SERVICE_ACCOUNT_ANNOTATION]],
    ["the Secret's token", subject !== undefined && subject.namespace === leaderNamespace ? subject.name : undefined],
  ];
  const found = recorded.find(([, value]) => value !== undefined && value !== '');
  let serviceAccount = `member-${clusterID}`;
  let serviceAccountFrom: LeaveTarget['serviceAccountFrom'] = 'the default';
  if (found !== undefined) {
    [serviceAccountFrom, serviceAccount] = [found[0], found[1] ?? ''];
    if (o.serviceAccountFlag !== undefined && o.serviceAccountFlag !== serviceAccount) {
      refusals.push(`--service-account is ${JSON.stringify(o.serviceAccountFlag)}, but ${found[0]} names ServiceAccount ${leaderNamespace}/${serviceAccount}: drop the flag, leave finds the account join made`);
    }
  } else if (o.serviceAccountFlag !== undefined) {
    [serviceAccountFrom, serviceAccount] = ['--service-account', o.serviceAccountFlag];
  }

  // The leader: the one the ClusterSet names, proven before the first delete.
  const leaderCS = o.leader.clusterSet;
  const where = `${leaderNamespace}/${name}`;
  if (leaderCS === undefined) {
    refusals.push(`the leader context (${o.leader.server}) has no ClusterSet ${where}: it is not the leader of this ClusterSet; pass the right --leader-context`);
  } else {
    const leaderID = leaderCS.spec?.leaders[0]?.clusterID ?? leaderCS.spec?.clusterID ?? '';
    if (leaderID !== leaderClusterID) {
      refusals.push(`the leader context's ClusterSet ${where} says the leader is ${JSON.stringify(leaderID)}, the member's names ${JSON.stringify(leaderClusterID)}: it is another ClusterSet's leader; pass the right --leader-context`);
    }
    const recordedUid = recordedLeaderUid(cs, index);
    if (recordedUid !== undefined) {
      if (leaderCS.metadata?.uid !== recordedUid) {
        refusals.push(`the leader context's ClusterSet ${where} is not the one this member joined (uid ${leaderCS.metadata?.uid ?? '(none)'}, join recorded ${recordedUid}): pass the --leader-context of the leader at ${entry?.server ?? ''}`);
      }
    } else {
      // No record (a ClusterSet written by hand): the leader context must be the same URL and CA.
      if (o.leader.server !== (entry?.server ?? '')) {
        refusals.push(`the leader context's server is ${o.leader.server}, the ClusterSet's leader is ${entry?.server ?? '(none)'}, and join recorded no leader to prove it the same: pass a --leader-context for ${entry?.server ?? ''}`);
      }
      const secretCa = o.secret?.caPem;
      if (secretCa !== undefined && o.leader.caPem !== undefined && norm(secretCa) !== norm(o.leader.caPem)) {
        refusals.push(`the leader context's CA is not the CA in Secret ${o.memberNamespace}/${entry?.secret ?? ''}: it is another cluster; pass the right --leader-context`);
      }
    }
  }
  return { refusals, clusterID, leaderNamespace, leaderClusterID, serviceAccount, serviceAccountFrom };
}

/** The member's own access on the leader: refused when the account belongs to another member. */
export function accessRefusals(target: LeaveTarget, access: LeaderAccess): string[] {
  const sa = access.serviceAccount;
  if (sa === undefined) return [];
  const id = sa.metadata?.annotations?.[CLUSTER_ID_ANNOTATION];
  if (id === target.clusterID) return [];
  return [`ServiceAccount ${target.leaderNamespace}/${target.serviceAccount} on the leader is annotated ${CLUSTER_ID_ANNOTATION}=${JSON.stringify(id ?? '')}, not this member's ${JSON.stringify(target.clusterID)}: not removing it`];
}

/**
 * The writes, in order: the member's ClusterSet (deleted, or with several leaders only this
 * leader's entry removed) and Secret, then the member's access on the leader.
 */
export function planLeave(o: LeaveObservation, target: LeaveTarget, access: LeaderAccess): LeavePlan {
  const steps: LeaveStep[] = [];
  const kept: string[] = [];
  const notes: string[] = [];
  const cs = o.clusterSet;
  const csName = cs.metadata?.name ?? '';
  const index = o.leaderIndex ?? 0;
  if ((cs.spec?.leaders.length ?? 0) > 1) {
    steps.push({
      side: 'member', action: 'remove-leader', kind: 'ClusterSet', namespace: o.memberNamespace, name: csName, leader: target.leaderClusterID,
      patch: removeLeaderPatch(cs, index), ...(cs.metadata?.uid !== undefined && { uid: cs.metadata.uid }),
    });
  } else {
    steps.push({ side: 'member', action: 'delete', kind: 'ClusterSet', namespace: o.memberNamespace, name: csName, ...(cs.metadata?.uid !== undefined && { uid: cs.metadata.uid }) });
  }

  const secretName = cs.spec?.leaders[index]?.secret ?? '';
  if (o.secret !== undefined && secretName !== '') {
    const secret = `Secret ${o.memberNamespace}/${secretName}`;
    if (o.secretSharedWith.length > 0) notes.push(`keeping ${secret}: ClusterSet ${o.secretSharedWith.join(', ')} uses it`);
    else if (isManaged(o.secret.labels)) steps.push({ side: 'member', action: 'delete', kind: 'Secret', namespace: o.memberNamespace, name: secretName, uid: o.secret.uid });
    else kept.push(`${secret} in the member: join did not create it (no ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE} label); delete it yourself if it is this membership's`);
  }

  const ns = target.leaderNamespace;
  const sa = target.serviceAccount;
  const rb = access.roleBinding;
  if (rb !== undefined) {
    const subjects = rb.subjects ?? [];
    const ours = (s: { kind: string; name: string; namespace?: string }) => s.kind === 'ServiceAccount' && s.name === sa && (s.namespace ?? ns) === ns;
    if (subjects.some(ours)) {
      if (isManaged(rb.metadata?.labels) && subjects.every(ours)) {
        steps.push({ side: 'leader', action: 'delete', kind: 'RoleBinding', namespace: ns, name: rb.metadata?.name ?? sa, ...(rb.metadata?.uid !== undefined && { uid: rb.metadata.uid }) });
      } else {
        // join appended the subject to a binding it did not create (or that binds others too).
        steps.push({
          side: 'leader', action: 'remove-subject', kind: 'RoleBinding', namespace: ns, name: rb.metadata?.name ?? sa, subject: sa,
          ...(rb.metadata?.uid !== undefined && { uid: rb.metadata.uid }), ...(rb.metadata?.resourceVersion !== undefined && { resourceVersion: rb.metadata.resourceVersion }),
        });
      }
    }
  }
  const account = access.serviceAccount;
  // The Secrets its tokens are bound to (the ServiceAccount's deletion voids them anyway; these would be left over).
  for (const secret of tokenSecretsOf(access.tokenSecrets, sa, undefined, account?.metadata?.uid)) {
    steps.push({ side: 'leader', action: 'delete', kind: 'Secret', namespace: ns, name: secret.name, uid: secret.uid });
  }
  if (account !== undefined) {
    if (isManaged(account.metadata?.labels)) {
      steps.push({ side: 'leader', action: 'delete', kind: 'ServiceAccount', namespace: ns, name: sa, ...(account.metadata?.uid !== undefined && { uid: account.metadata.uid }) });
    } else {
      kept.push(`ServiceAccount ${ns}/${sa} on the leader: not created by join or create-member-token (no ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE} label), so its tokens stay valid until you delete it`);
    }
  }
  return { steps, kept, notes };
}

/** Whether the announce on the leader is this member's in this ClusterSet (the only one leave may delete). */
export function isOwnAnnounce(announce: MemberClusterAnnounce, target: LeaveTarget, clusterSetName: string): boolean {
  return announce.clusterID === target.clusterID && announce.clusterSetID === clusterSetName &&
    (announce.leaderClusterID === undefined || announce.leaderClusterID === '' || announce.leaderClusterID === target.leaderClusterID);
}

/** One line per step, as leave says it (and --dry-run prints it). */
export function describeStep(step: LeaveStep): string {
  const what = `${step.kind} ${step.namespace}/${step.name}`;
  if (step.action === 'remove-subject') return `${step.side}: remove the subject ServiceAccount ${step.subject ?? ''} from ${what} (join did not create it, or it binds others too)`;
  if (step.action === 'remove-leader') return `${step.side}: remove leader ${step.leader ?? ''} from spec.leaders of ${what} (the agent leaves that leader: its announce and exports there); the other leaders stay`;
  return `${step.side}: delete ${what}`;
}
