// `clusterset-agent leave`: undoes join. Reads both clusters, proves the leader context is the
// leader the member ClusterSet names and finds the account join made (leave-plan.ts decides);
// on any doubt it stops before the first delete. Then, in order: the member ClusterSet (the
// agent's leave finalizer withdraws the announce and the exports; leave waits for it to go),
// its Secret, the announce if the agent could not withdraw it, then the member's RoleBinding
// and ServiceAccount on the leader, which voids every token issued for it. Every delete is of
// an object read and judged ours, under its uid; whatever stays is named.
//
// With several leaders, `--leader` names the one to leave: its entry is removed from the member
// ClusterSet instead (the agent leaves that leader: announce and exports withdrawn; leave waits
// for the status to drop it), then its Secret and the member's access on that leader.
import type { KubeConfig, V1RoleBinding } from '@kubernetes/client-node';
import { apisOf, type CustomApi, type RbacApi } from '../../common/kube/typed-api.js';
import { MEMBER_CLUSTER_ANNOUNCE, type ClusterSet, type MemberClusterAnnounce } from '../../common/api/antrea.js';
import { LEADER_SECRET_CA_KEY, LEADER_SECRET_TOKEN_KEY, mcaName, MEMBER_TOKEN_LABEL } from '../../common/api/names.js';
import { describeError, httpStatus, isConflict, isNotFound } from '../../common/kube/errors.js';
import { leaderCaPem } from '../../leader/member-token.js';
import { clusterSetRef, JoinFailed, JoinRefused, orUndefined } from './join.js';
import {
  accessRefusals, describeStep, isOwnAnnounce, leaderToLeave, leaveTarget, planLeave,
  type LeaveObservation, type LeavePlan, type LeaveStep, type LeaveTarget,
} from './leave-plan.js';

export interface LeaveOptions {
  readonly leader: KubeConfig;
  readonly member: KubeConfig;
  readonly clusterSet: string;
  /** `--leader`: the leader to leave, required when the ClusterSet lists several. */
  readonly leaderClusterID?: string | undefined;
  readonly memberNamespace: string;
  /** Only for a membership join did not record: the account is otherwise read from what join wrote. */
  readonly serviceAccount: string | undefined;
  readonly dryRun: boolean;
  readonly waitSeconds: number;
  readonly progress: (line: string) => void;
}

export interface LeaveResult {
  readonly target: LeaveTarget;
  readonly plan: LeavePlan;
  /** What was removed, one line each; empty in a dry run. */
  readonly removed: readonly string[];
  /** What stays, each with why (the plan's, and any delete that found the object replaced). */
  readonly kept: readonly string[];
  /** With several leaders: the leaders the ClusterSet keeps (empty: the ClusterSet went). */
  readonly leadersLeft: readonly string[];
}

/** The command line does not say which leader to leave, or names one not listed: exit 2, nothing read further. */
export class LeaveUsageError extends Error {}

const preconditions = (uid: string | undefined) => (uid === undefined ? {} : { body: { preconditions: { uid } } });

async function waitGone(read: () => Promise<unknown>, what: string, seconds: number, progress: (line: string) => void): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  progress(`waiting for ${what} to go`);
  while ((await orUndefined(read)) !== undefined) {
    if (Date.now() >= deadline) throw new JoinFailed(`${what} is still there after ${String(seconds)} s: is the agent running in the member? Its leave finalizer withdraws the announce first`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function observe(options: LeaveOptions, cs: ClusterSet, leaderIndex: number): Promise<LeaveObservation> {
  const { core, custom } = apisOf(options.member, 'leave (member)');
  const secretName = cs.spec?.leaders[leaderIndex]?.secret ?? '';
  const secret = secretName === '' ? undefined : await orUndefined(() => core.readNamespacedSecret({ namespace: options.memberNamespace, name: secretName }));
  const decode = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8'));
  const all = ((await custom.listNamespacedCustomObject(clusterSetRef(options.memberNamespace))) as { items: ClusterSet[] }).items;
  const sharedWith = [
    ...all.filter((o) => o.metadata?.name !== options.clusterSet && (o.spec?.leaders ?? []).some((l) => l.secret === secretName)).map((o) => o.metadata?.name ?? ''),
    ...(cs.spec?.leaders ?? []).filter((l, i) => i !== leaderIndex && l.secret === secretName).map((l) => `${options.clusterSet} (leader ${l.clusterID ?? ''})`),
  ];
  let caPem: string | undefined;
  try {
    caPem = leaderCaPem(options.leader);
  } catch {
    caPem = undefined;
  }
  const leaderNamespace = cs.spec?.namespace ?? '';
  let leaderClusterSet: ClusterSet | undefined;
  if (leaderNamespace !== '') {
    try {
      leaderClusterSet = (await apisOf(options.leader, 'leave (leader)').custom.getNamespacedCustomObject({ ...clusterSetRef(leaderNamespace), name: options.clusterSet })) as ClusterSet;
    } catch (err) {
      // Not found, or ClusterSets not served there: not this ClusterSet's leader.
      if (!isNotFound(err)) throw err;
    }
  }
  return {
    memberNamespace: options.memberNamespace,
    clusterSet: cs,
    leaderIndex,
    secret: secret === undefined ? undefined : {
      uid: secret.metadata?.uid ?? '',
      labels: secret.metadata?.labels ?? {},
      annotations: secret.metadata?.annotations ?? {},
      caPem: decode(secret.data?.[LEADER_SECRET_CA_KEY]),
      token: decode(secret.data?.[LEADER_SECRET_TOKEN_KEY]),
    },
    secretSharedWith: sharedWith,
    serviceAccountFlag: options.serviceAccount,
    leader: { server: options.leader.getCurrentCluster()?.server ?? '', caPem, clusterSet: leaderClusterSet },
  };
}

/** The RoleBinding without the member's subject, replaced under the resourceVersion just read. */
async function removeSubject(rbac: RbacApi, step: LeaveStep): Promise<'removed' | 'gone' | 'replaced'> {
  const binding = await orUndefined(() => rbac.readNamespacedRoleBinding({ namespace: step.namespace, name: step.name }));
  if (binding === undefined) return 'gone';
  if (step.uid !== undefined && binding.metadata?.uid !== step.uid) return 'replaced';
  const subjects = (binding.subjects ?? []).filter((s) => !(s.kind === 'ServiceAccount' && s.name === step.subject && (s.namespace ?? step.namespace) === step.namespace));
  const body: V1RoleBinding = Object.assign({}, binding, { subjects });
  try {
    await rbac.replaceNamespacedRoleBinding({ namespace: step.namespace, name: step.name, body });
  } catch (err) {
    if (isConflict(err)) return 'replaced';
    throw err;
  }
  return 'removed';
}

export async function leave(options: LeaveOptions): Promise<LeaveResult> {
  const memberApis = apisOf(options.member, 'leave (member)');
  const leaderApis = apisOf(options.leader, 'leave (leader)');
  const { custom } = memberApis;
  const ref = { ...clusterSetRef(options.memberNamespace), name: options.clusterSet };
  const cs = await orUndefined(async () => (await custom.getNamespacedCustomObject(ref)) as ClusterSet);
  if (cs === undefined) throw new JoinRefused([`the member has no ClusterSet ${options.memberNamespace}/${options.clusterSet}: nothing to leave`]);

  // Every check before the first delete.
  const choice = leaderToLeave(cs, options.leaderClusterID, options.memberNamespace);
  if ('problem' in choice) throw new LeaveUsageError(choice.problem);
  const observation = await observe(options, cs, choice.index);
  const target = leaveTarget(observation);
  if (target.refusals.length > 0) throw new JoinRefused(target.refusals);
  options.progress(`the member's ServiceAccount on the leader is ${target.leaderNamespace}/${target.serviceAccount} (from ${target.serviceAccountFrom})`);
  const { core: leaderCore, rbac } = leaderApis;
  const access = {
    serviceAccount: await orUndefined(() => leaderCore.readNamespacedServiceAccount({ namespace: target.leaderNamespace, name: target.serviceAccount })),
    roleBinding: await orUndefined(() => rbac.readNamespacedRoleBinding({ namespace: target.leaderNamespace, name: target.serviceAccount })),
    tokenSecrets: (await leaderCore.listNamespacedSecret({ namespace: target.leaderNamespace, labelSelector: `${MEMBER_TOKEN_LABEL}=${target.clusterID}` })).items,
  };
  const refused = accessRefusals(target, access);
  if (refused.length > 0) throw new JoinRefused(refused);
  const plan = planLeave(observation, target, access);
  for (const note of plan.notes) options.progress(note);
  const leadersLeft = choice.last ? [] : (cs.spec?.leaders ?? []).filter((_, i) => i !== choice.index).map((l) => l.clusterID ?? '');
  if (options.dryRun) return { target, plan, removed: [], kept: plan.kept, leadersLeft };

  const removed: string[] = [];
  const kept = [...plan.kept];
  const did = (line: string) => { removed.push(line); options.progress(line); };
  const { core } = memberApis;
  const leaderCustom = leaderApis.custom;
  /** Runs one delete; a 404 is done already, a 409 (uid precondition) means the object was replaced: named, kept. */
  const del = async (step: LeaveStep, run: () => Promise<unknown>, suffix = '') => {
    try {
      await run();
      did(`${describeStep(step).replace(': delete ', ': deleted ')}${suffix}`);
    } catch (err) {
      if (isNotFound(err)) return;
      if (isConflict(err)) {
        kept.push(`${step.kind} ${step.namespace}/${step.name} was replaced since leave read it: not deleted`);
        return;
      }
      throw new JoinFailed(`deleting ${step.kind} ${step.namespace}/${step.name} failed: ${describeError(err)}`);
    }
  };

  for (const step of plan.steps) {
    if (step.action === 'remove-leader') {
      // The agent leaves that leader (announce and exports withdrawn) and drops its status entry.
      await removeLeader(custom, ref, step, options.waitSeconds, options.progress);
      did(`member: removed leader ${step.leader ?? ''} from spec.leaders of ClusterSet ${options.memberNamespace}/${options.clusterSet}`);
      await withdrawAnnounce(leaderCustom, target, options.clusterSet, did);
    } else if (step.kind === 'ClusterSet') {
      // The agent withdraws its announce and exports, then lets it go.
      if (cs.metadata?.deletionTimestamp === undefined) await del(step, () => custom.deleteNamespacedCustomObject({ ...ref, ...preconditions(step.uid) }));
      await waitGone(() => custom.getNamespacedCustomObject(ref), `ClusterSet ${options.memberNamespace}/${options.clusterSet}`, options.waitSeconds, options.progress);
      await withdrawAnnounce(leaderCustom, target, options.clusterSet, did);
    } else if (step.kind === 'Secret') {
      const api = step.side === 'member' ? core : leaderCore;
      await del(step, () => api.deleteNamespacedSecret({ namespace: step.namespace, name: step.name, ...preconditions(step.uid) }));
    } else if (step.kind === 'RoleBinding' && step.action === 'remove-subject') {
      const outcome = await removeSubject(rbac, step);
      if (outcome === 'removed') did(`leader: removed ServiceAccount ${step.subject ?? ''} from RoleBinding ${step.namespace}/${step.name} (join did not create it; it stays)`);
      else if (outcome === 'replaced') kept.push(`RoleBinding ${step.namespace}/${step.name} changed since leave read it: ServiceAccount ${step.subject ?? ''} not removed from it`);
    } else if (step.kind === 'RoleBinding') {
      await del(step, () => rbac.deleteNamespacedRoleBinding({ namespace: step.namespace, name: step.name, ...preconditions(step.uid) }));
    } else {
      await del(step, () => leaderCore.deleteNamespacedServiceAccount({ namespace: step.namespace, name: step.name, ...preconditions(step.uid) }), '; every token issued for it is void');
    }
  }
  return { target, plan, removed, kept, leadersLeft };
}

type ClusterSetRef = ReturnType<typeof clusterSetRef> & { name: string };

/**
 * Takes one leader out of the member ClusterSet under the plan's tests, then waits until the
 * agent has left it: a status of the new generation without that leader's entry.
 */
async function removeLeader(custom: CustomApi, ref: ClusterSetRef, step: LeaveStep, seconds: number, progress: (line: string) => void): Promise<void> {
  let patched: ClusterSet;
  try {
    patched = (await custom.patchNamespacedCustomObject({ ...ref, body: step.patch ?? [] })) as ClusterSet;
  } catch (err) {
    // A failed JSON-patch test is 422: the ClusterSet changed since leave read it.
    if (httpStatus(err) === 422 || isConflict(err)) throw new JoinFailed(`ClusterSet ${ref.namespace}/${ref.name} changed since leave read it: nothing removed; run leave again`);
    throw new JoinFailed(`removing leader ${step.leader ?? ''} from ClusterSet ${ref.namespace}/${ref.name} failed: ${describeError(err)}`);
  }
  const generation = patched.metadata?.generation ?? 0;
  const left = (cs: ClusterSet | undefined) => cs !== undefined && (cs.status?.observedGeneration ?? 0) >= generation &&
    !(cs.status?.clusterStatuses ?? []).some((c) => c.clusterID === step.leader);
  const deadline = Date.now() + seconds * 1000;
  progress(`waiting for the agent to leave leader ${step.leader ?? ''}`);
  while (!left(await orUndefined(async () => (await custom.getNamespacedCustomObject(ref)) as ClusterSet))) {
    if (Date.now() >= deadline) {
      throw new JoinFailed(`the agent has not left leader ${step.leader ?? ''} after ${String(seconds)} s (its status still lists it): is the agent running in the member? ` +
        "The leader is out of spec.leaders; its Secret and this member's access on that leader stay until the agent has left it");
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The member's announce, when the agent could not withdraw it: only if it is this member's in this ClusterSet, under its uid. */
async function withdrawAnnounce(api: CustomApi, target: LeaveTarget, clusterSetName: string, did: (line: string) => void): Promise<void> {
  const announce = {
    group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural,
    namespace: target.leaderNamespace, name: mcaName(target.clusterID),
  };
  const found = await orUndefined(async () => (await api.getNamespacedCustomObject(announce)) as MemberClusterAnnounce);
  if (found === undefined || !isOwnAnnounce(found, target, clusterSetName)) return;
  try {
    await api.deleteNamespacedCustomObject({ ...announce, ...preconditions(found.metadata?.uid) });
    did(`leader: deleted MemberClusterAnnounce ${announce.namespace}/${announce.name} (the agent had not withdrawn it)`);
  } catch (err) {
    if (isNotFound(err) || isConflict(err)) return;
    if (httpStatus(err) === 403) throw new JoinFailed(`not allowed to delete MemberClusterAnnounce ${announce.namespace}/${announce.name} on the leader: ${describeError(err)}`);
    throw err;
  }
}

export { describeStep };
