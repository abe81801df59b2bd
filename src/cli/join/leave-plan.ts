// `clusterset-agent leave`: what may be deleted, decided from what both clusters hold. Pure:
// leave.ts observes and acts.
//
// Two rules. The leader context must be proven to be the leader the member ClusterSet names
// (the UID of the leader ClusterSet join recorded, or else the same server and CA, and in every
// case the leader ClusterSet with the same leader ID) before anything is deleted, so a context
// pointing at another ClusterSet's leader is refused. And only what join (or
// create-member-token) labelled at create is deleted, under a uid precondition; a RoleBinding
// it did not create only loses the member's subject; anything that stays is named.
import type { V1RoleBinding, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import type { ClusterSet, MemberClusterAnnounce } from '../../common/api/antrea.js';
import {
  CLUSTER_ID_ANNOTATION, LEADER_CLUSTERSET_UID_ANNOTATION, LEADER_SERVICE_ACCOUNT_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE,
} from '../../common/api/names.js';
import { tokenSubject } from './plan.js';

export interface LeaveObservation {
  readonly memberNamespace: string;
  readonly clusterSet: ClusterSet;
  /** The member's Secret the ClusterSet names, when it exists. */
  readonly secret: {
    readonly uid: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
    readonly caPem: string | undefined;
    readonly token: string | undefined;
  } | undefined;
  /** Other ClusterSets in the member naming the same Secret. */
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
  readonly action: 'delete' | 'remove-subject';
  readonly kind: 'ClusterSet' | 'Secret' | 'RoleBinding' | 'ServiceAccount';
  readonly namespace: string;
  readonly name: string;
  /** Delete precondition (or, for remove-subject, the resourceVersion the replace is based on). */
  readonly uid?: string;
  readonly resourceVersion?: string;
  /** For remove-subject: the ServiceAccount whose subject goes. */
  readonly subject?: string;
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

/** Who the member is, which account is its own, and whether the leader context is its leader. */
export function leaveTarget(o: LeaveObservation): LeaveTarget {
  const cs = o.clusterSet;
  const name = cs.metadata?.name ?? '';
  const clusterID = cs.spec?.clusterID ?? '';
  const leaderNamespace = cs.spec?.namespace ?? '';
  const entry = cs.spec?.leaders[0];
  const leaderClusterID = entry?.clusterID ?? '';
  const refusals: string[] = [];
  if (clusterID === '') refusals.push(`ClusterSet ${o.memberNamespace}/${name} has no spec.clusterID: leave cannot tell which member's access to remove`);
  if (leaderNamespace === '') refusals.push(`ClusterSet ${o.memberNamespace}/${name} has no spec.namespace: leave cannot tell the leader namespace`);

  // The account: what join recorded, never a guess when a record exists.
  const annotations = cs.metadata?.annotations ?? {};
  const subject = tokenSubject(o.secret?.token ?? '');
  const recorded: [LeaveTarget['serviceAccountFrom'], string | undefined][] = [
    ['the ClusterSet join wrote', annotations[LEADER_SERVICE_ACCOUNT_ANNOTATION]],
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
    const recordedUid = annotations[LEADER_CLUSTERSET_UID_ANNOTATION];
    if (recordedUid !== undefined && recordedUid !== '') {
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
        refusals.push(`the leader context's CA is not the CA in Secret ${o.memberNamespace}/${cs.spec?.leaders[0]?.secret ?? ''}: it is another cluster; pass the right --leader-context`);
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

/** The writes, in order: the member's ClusterSet and Secret, then the member's access on the leader. */
export function planLeave(o: LeaveObservation, target: LeaveTarget, access: LeaderAccess): LeavePlan {
  const steps: LeaveStep[] = [];
  const kept: string[] = [];
  const notes: string[] = [];
  const cs = o.clusterSet;
  const csName = cs.metadata?.name ?? '';
  steps.push({ side: 'member', action: 'delete', kind: 'ClusterSet', namespace: o.memberNamespace, name: csName, ...(cs.metadata?.uid !== undefined && { uid: cs.metadata.uid }) });

  const secretName = cs.spec?.leaders[0]?.secret ?? '';
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
  return `${step.side}: delete ${what}`;
}
