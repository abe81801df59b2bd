// `clusterset-agent join`: one member in or out of a ClusterSet, over the leader's
// and the member's kubeconfigs, as the README's manual steps would do it.
//
// join: read both clusters, check the leader's CA against the URL the member will use, plan
// (plan.ts); on any contradiction stop with nothing written. Then only what is missing: the
// member's ServiceAccount, Role binding and token on the leader (create-member-token's code),
// the token checked against the leader URL, the Secret and the ClusterSet in the member; then
// wait for Ready. A second join finds everything in place and writes nothing.
// leave is in leave.ts.
import { KubeConfig, type V1ServiceAccount } from '@kubernetes/client-node';
import { apisOf, type CoreApi, type CustomApi } from '../../common/kube/typed-api.js';
import { stringify } from 'yaml';
import { CLUSTERSET, MEMBER_CLUSTER_ANNOUNCE, type ClusterSet } from '../../common/api/antrea.js';
import {
  CLUSTER_ID_ANNOTATION, LEADER_CLUSTERSET_UID_ANNOTATION, LEADER_CLUSTERSET_UIDS_ANNOTATION, LEADER_SECRET_CA_KEY, LEADER_SECRET_TOKEN_KEY, LEADER_SERVICE_ACCOUNT_ANNOTATION,
  MANAGED_BY_LABEL, MANAGED_BY_VALUE, mcaName, MEMBER_TOKEN_LABEL,
} from '../../common/api/names.js';
import { tokenSecretsOf, withRecordedUid } from './leave-plan.js';
import { describeError, httpStatus, isNotFound, isTlsVerificationError, networkErrorCode } from '../../common/kube/errors.js';
import { MEMBER_ROLE_NAME } from '../../leader/decisions/member-role.js';
import { createMemberToken, MemberTokenError } from '../../leader/member-token.js';
import { tokenExpiry } from '../report/model.js';
import { AGENT_POD_SELECTOR, readAgentPodProblems } from '../report/agent-pods.js';
import { defaultedLeaderServerProblem } from './leader-url.js';
import {
  memberSecretManifest, planJoin, tokenSubject,
  type JoinPlan, type JoinRequest, type LeaderState, type MemberState,
} from './plan.js';

/** A contradiction found before anything was written: exit 4. */
export class JoinRefused extends Error {
  constructor(readonly reasons: readonly string[]) {
    super(reasons.join('\n'));
  }
}

/** A failure after checks passed (an API error, or Ready not reached in time): exit 1. */
export class JoinFailed extends Error {}

export interface JoinOptions extends JoinRequest {
  readonly leader: KubeConfig;
  readonly member: KubeConfig;
  /** The leader CA (PEM) the member will trust: from the leader kubeconfig unless given. */
  readonly leaderCaPem: string;
  /**
   * Set when leaderServer was taken from the leader kubeconfig (no --leader-server): the
   * context's name, for the advice. Such a URL is refused when it is loopback.
   */
  readonly leaderServerFromKubeconfig?: string;
  readonly serviceAccount: string;
  readonly durationSeconds: number | undefined;
  readonly dryRun: boolean;
  /** How long to wait for Ready; 0 = do not wait. */
  readonly waitSeconds: number;
  readonly progress: (line: string) => void;
}

export interface JoinResult {
  readonly plan: JoinPlan;
  /** What was written, one line each ("created Secret ns/name"); empty on a no-op and in a dry run. */
  readonly wrote: readonly string[];
  /** The manifests a dry run prints. */
  readonly manifests: string | undefined;
  readonly ready: { readonly status: string; readonly reason: string; readonly message: string } | undefined;
}

const MANAGED_BY = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
const recordedAccount = (options: JoinOptions) => ({ [LEADER_SERVICE_ACCOUNT_ANNOTATION]: options.serviceAccount });

/** The leader-side Secret a new member token is bound to, owned by the account (garbage-collected with it). */
async function createTokenSecret(core: CoreApi, options: JoinOptions, account: V1ServiceAccount): Promise<{ name: string; uid: string }> {
  const created = await core.createNamespacedSecret({
    namespace: options.leaderNamespace,
    body: {
      metadata: {
        generateName: `${options.serviceAccount}-token-`,
        labels: { ...MANAGED_BY, [MEMBER_TOKEN_LABEL]: options.clusterID },
        annotations: { [LEADER_SERVICE_ACCOUNT_ANNOTATION]: options.serviceAccount },
        ownerReferences: [{ apiVersion: 'v1', kind: 'ServiceAccount', name: account.metadata?.name ?? '', uid: account.metadata?.uid ?? '' }],
      },
      type: 'Opaque',
    },
  });
  return { name: created.metadata?.name ?? '', uid: created.metadata?.uid ?? '' };
}

/** Deletes, under their uids, the token Secrets join bound earlier tokens of this account to: those tokens stop working. */
async function revokeEarlierTokens(core: CoreApi, options: JoinOptions, current: { name: string; uid: string }, note: (line: string) => void): Promise<void> {
  const secrets = (await core.listNamespacedSecret({ namespace: options.leaderNamespace, labelSelector: `${MEMBER_TOKEN_LABEL}=${options.clusterID},${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}` })).items;
  const earlier = tokenSecretsOf(secrets, options.serviceAccount, current.uid);
  for (const secret of earlier) {
    try {
      await core.deleteNamespacedSecret({ namespace: options.leaderNamespace, name: secret.name, body: { preconditions: { uid: secret.uid } } });
      note(`leader: deleted Secret ${options.leaderNamespace}/${secret.name}: the token bound to it is revoked`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** A token is renewed when it expires within this: the same bound `status` warns at. */
const RENEW_BEFORE_SECONDS = 7 * 24 * 3600;

export const clusterSetRef = (namespace: string) => ({ group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace });

export async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** True when the kind is served; a 404 on the collection means it is not. */
async function clusterSetsServed(api: CustomApi, namespace: string): Promise<boolean> {
  try {
    await api.listNamespacedCustomObject({ ...clusterSetRef(namespace), limit: 1 });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

async function namespaceExists(core: CoreApi, name: string): Promise<boolean> {
  try {
    await core.readNamespace({ name });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    // Not allowed to read namespaces: the writes will tell.
    if (httpStatus(err) === 403) return true;
    throw err;
  }
}

async function observeLeader(kc: KubeConfig, request: JoinRequest): Promise<LeaderState> {
  const { custom, core } = apisOf(kc, 'join (leader)');
  const served = await clusterSetsServed(custom, request.leaderNamespace);
  const nsExists = served && await namespaceExists(core, request.leaderNamespace);
  const clusterSet = nsExists
    ? await orUndefined(async () => (await custom.getNamespacedCustomObject({ ...clusterSetRef(request.leaderNamespace), name: request.clusterSet })) as ClusterSet)
    : undefined;
  return { clusterSetsServed: served, namespaceExists: nsExists, clusterSet };
}

async function observeMember(kc: KubeConfig, request: JoinRequest): Promise<MemberState> {
  const { custom, core } = apisOf(kc, 'join (member)');
  const served = await clusterSetsServed(custom, request.memberNamespace);
  const nsExists = await namespaceExists(core, request.memberNamespace);
  const clusterSet = served && nsExists
    ? await orUndefined(async () => (await custom.getNamespacedCustomObject({ ...clusterSetRef(request.memberNamespace), name: request.clusterSet })) as ClusterSet)
    : undefined;
  const secret = nsExists ? await orUndefined(() => core.readNamespacedSecret({ namespace: request.memberNamespace, name: request.secretName })) : undefined;
  const decode = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8'));
  return {
    clusterSetsServed: served,
    namespaceExists: nsExists,
    clusterSet,
    secret: secret === undefined ? undefined : { caPem: decode(secret.data?.[LEADER_SECRET_CA_KEY]), token: decode(secret.data?.[LEADER_SECRET_TOKEN_KEY]) },
  };
}

/** A client of the leader URL that trusts only the given CA, as the agent's will. */
function leaderClient(server: string, caPem: string, token?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'leader', server, caData: Buffer.from(caPem, 'utf8').toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'member', ...(token !== undefined && { token }) }],
    contexts: [{ name: 'leader', cluster: 'leader', user: 'member' }],
    currentContext: 'leader',
  });
  return kc;
}

/** Undefined when the leader URL answers and its certificate chains to the CA; else why not. */
async function checkLeaderUrl(server: string, caPem: string): Promise<string | undefined> {
  try {
    await apisOf(leaderClient(server, caPem), 'join (leader)').version.getCode();
    return undefined;
  } catch (err) {
    if (isTlsVerificationError(err)) return `the leader CA does not verify ${server}: ${describeError(err)}. Pass the CA that signed the leader's serving certificate (--leader-ca-file), or a URL its certificate names`;
    const code = networkErrorCode(err);
    if (code !== undefined) return `the leader at ${server} is unreachable from here (${code}): check --leader-server (the URL members use to reach the leader)`;
    // /version may be closed to anonymous users; any HTTP answer proves TLS and reachability.
    if (httpStatus(err) !== undefined) return undefined;
    return `the leader at ${server} did not answer as a Kubernetes API server: ${describeError(err)}`;
  }
}

/** Undefined when the token may read the member's announce on the leader (200 or 404); else why not. */
async function checkToken(request: JoinRequest, caPem: string, token: string): Promise<string | undefined> {
  try {
    await apisOf(leaderClient(request.leaderServer, caPem, token), 'join (leader)').custom.getNamespacedCustomObject({
      group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural,
      namespace: request.leaderNamespace, name: mcaName(request.clusterID),
    });
    return undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    const status = httpStatus(err);
    if (status === 401) return 'the leader refuses the token (401: expired, revoked, or its ServiceAccount deleted)';
    if (status === 403) return `the token may not read announces in ${request.leaderNamespace} (403: its ServiceAccount lacks the member Role there)`;
    return `checking the token against ${request.leaderServer} failed: ${describeError(err)}`;
  }
}

/** Why the existing Secret's token cannot be kept, or undefined when it can. */
async function tokenToReplace(options: JoinOptions, token: string | undefined): Promise<string | undefined> {
  if (token === undefined || token === '') return 'it has no token';
  const expiry = tokenExpiry(token);
  if (expiry !== undefined && 'expiresAtMs' in expiry && expiry.expiresAtMs - Date.now() < RENEW_BEFORE_SECONDS * 1000) {
    return `its token expires at ${new Date(expiry.expiresAtMs).toISOString()}, within 7 days`;
  }
  return await checkToken(options, options.leaderCaPem, token);
}

async function waitForAccess(options: JoinOptions, token: string): Promise<void> {
  // A new RoleBinding reaches the leader's authorizer within a moment: a 403 is retried briefly.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const problem = await checkToken(options, options.leaderCaPem, token);
    if (problem === undefined) return;
    if (!problem.includes('403') || Date.now() > deadline) throw new JoinFailed(`the new token does not work against ${options.leaderServer}: ${problem}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function waitForReady(options: JoinOptions): Promise<JoinResult['ready']> {
  const api = apisOf(options.member, 'join (member)').custom;
  const deadline = Date.now() + options.waitSeconds * 1000;
  let last = '';
  for (;;) {
    const cs = await orUndefined(async () => (await api.getNamespacedCustomObject({ ...clusterSetRef(options.memberNamespace), name: options.clusterSet })) as ClusterSet);
    const ready = cs?.status?.conditions?.find((c) => c.type === 'Ready');
    // Not Ready yet: the agent's Pod may say why it cannot be (an image it cannot pull).
    const pods = ready?.status === 'True' ? [] : await readAgentPodProblems(options.member, AGENT_POD_SELECTOR, options.memberNamespace);
    const condition = ready === undefined
      ? `no Ready condition yet (${pods.length === 0 ? 'is the agent running in the member?' : 'the agent is not running'})`
      : `Ready=${ready.status ?? ''} (${ready.reason ?? ''})${ready.message ? `: ${ready.message}` : ''}`;
    const shown = [condition, ...pods].join('; ');
    if (shown !== last) {
      options.progress(`waiting for ClusterSet ${options.memberNamespace}/${options.clusterSet}: ${shown}`);
      last = shown;
    }
    if (ready?.status === 'True') return { status: 'True', reason: ready.reason ?? '', message: ready.message ?? '' };
    if (Date.now() >= deadline) {
      throw new JoinFailed(`ClusterSet ${options.memberNamespace}/${options.clusterSet} is not Ready after ${String(options.waitSeconds)} s: ${shown}. ` +
        "Everything join writes is in place; 'clusterset-agent status' in the member explains the reason");
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function dryRunManifests(options: JoinOptions, plan: JoinPlan, renew: string | undefined): string {
  const docs: object[] = [];
  if (plan.createLeaderClusterSet !== undefined) docs.push({ '# leader': 'created on the leader', ...plan.createLeaderClusterSet });
  if (!plan.secretExists || renew !== undefined) {
    docs.push({
      '# leader': `ServiceAccount ${options.leaderNamespace}/${options.serviceAccount} (${CLUSTER_ID_ANNOTATION}=${options.clusterID}), the Role ${MEMBER_ROLE_NAME} and a RoleBinding, then a token (as leader create-member-token)`,
    });
    const secret = memberSecretManifest(options, options.leaderCaPem, '<token issued by join>');
    docs.push({ '# member': plan.secretExists ? `replaced: ${renew ?? ''}` : 'created in the member', ...secret, data: { ...secret.data, [LEADER_SECRET_TOKEN_KEY]: '<token issued by join>' } });
  }
  if (plan.createMemberClusterSet !== undefined) docs.push({ '# member': 'created in the member', ...plan.createMemberClusterSet });
  if (plan.addMemberLeader !== undefined) docs.push({ '# member': `added to spec.leaders of ClusterSet ${options.memberNamespace}/${options.clusterSet}`, ...plan.addMemberLeader });
  if (docs.length === 0) return '# nothing to write: the member has joined already\n';
  return docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
}

export async function join(options: JoinOptions): Promise<JoinResult> {
  const [leaderState, memberState] = await Promise.all([observeLeader(options.leader, options), observeMember(options.member, options)]);
  const plan = planJoin(options, leaderState, memberState, options.leaderCaPem);
  const urlProblem = await checkLeaderUrl(options.leaderServer, options.leaderCaPem);
  const defaulted = options.leaderServerFromKubeconfig === undefined ? undefined : defaultedLeaderServerProblem(options.leaderServer, options.leaderServerFromKubeconfig);
  const refusals = [...(defaulted === undefined ? [] : [defaulted]), ...(urlProblem === undefined ? [] : [urlProblem]), ...plan.refusals];
  // A Secret holding another ServiceAccount's token belongs to another membership: never taken over.
  const subject = tokenSubject(memberState.secret?.token ?? '');
  if (subject !== undefined && (subject.namespace !== options.leaderNamespace || subject.name !== options.serviceAccount)) {
    refusals.push(`Secret ${options.memberNamespace}/${options.secretName} in the member holds the token of ServiceAccount ${subject.namespace}/${subject.name}, ` +
      `not ${options.leaderNamespace}/${options.serviceAccount}: it serves another membership; pass another --secret-name`);
  }
  if (refusals.length > 0) throw new JoinRefused(refusals);

  const renew = plan.secretExists ? await tokenToReplace(options, memberState.secret?.token) : undefined;
  if (options.dryRun) return { plan, wrote: [], manifests: dryRunManifests(options, plan, renew), ready: undefined };

  const wrote: string[] = [];
  const note = (line: string) => { wrote.push(line); options.progress(line); };
  // 1. The member's access on the leader, and its token, unless the Secret holds a good one.
  let token: string | undefined;
  let boundSecret: { name: string; uid: string } | undefined;
  const leaderApis = apisOf(options.leader, 'join (leader)');
  const memberApis = apisOf(options.member, 'join (member)');
  const leaderCore = leaderApis.core;
  if (!plan.secretExists || renew !== undefined) {
    if (renew !== undefined) options.progress(`Secret ${options.memberNamespace}/${options.secretName} needs a new token: ${renew}`);
    try {
      const issued = await createMemberToken(options.leader, {
        memberId: options.clusterID, namespace: options.leaderNamespace, serviceAccount: options.serviceAccount,
        secretName: options.secretName, memberNamespace: options.memberNamespace,
        ...(options.durationSeconds !== undefined && { durationSeconds: options.durationSeconds }),
        // Bound to a Secret of its own: the next rotation revokes this token by deleting it.
        bindTo: async (account) => {
          boundSecret = await createTokenSecret(leaderCore, options, account);
          note(`leader: created Secret ${options.leaderNamespace}/${boundSecret.name}, the new token's binding (deleting it revokes the token)`);
          return { apiVersion: 'v1', kind: 'Secret', name: boundSecret.name, uid: boundSecret.uid };
        },
        log: (line) => {
          if (/^(created|added|issued|Role .* lacked)/.test(line)) note(`leader: ${line}`);
          // Its closing advice (apply the Secret, write the ClusterSet) is what join does next.
          else if (!line.startsWith('apply the Secret')) options.progress(`leader: ${line}`);
        },
      });
      token = issued.token;
    } catch (err) {
      // Its checks come before its first write: a refusal leaves both clusters as they were.
      if (err instanceof MemberTokenError) throw new JoinRefused([err.message]);
      throw err;
    }
    await waitForAccess(options, token);
  }
  // 2. The leader's own ClusterSet, when join was told to create it.
  const custom = { leader: leaderApis.custom, member: memberApis.custom };
  let leaderClusterSetUid = leaderState.clusterSet?.metadata?.uid;
  if (plan.createLeaderClusterSet !== undefined) {
    const created = (await custom.leader.createNamespacedCustomObject({ ...clusterSetRef(options.leaderNamespace), body: plan.createLeaderClusterSet })) as ClusterSet;
    leaderClusterSetUid = created.metadata?.uid;
    note(`leader: created ClusterSet ${options.leaderNamespace}/${options.clusterSet} (leader ${plan.leaderClusterID})`);
  }
  // 3. The member's Secret and ClusterSet.
  if (token !== undefined) {
    const core = memberApis.core;
    const body = memberSecretManifest(options, options.leaderCaPem, token);
    if (plan.secretExists) {
      // Its labels stay as they were: a Secret join did not create never becomes one leave deletes.
      const existing = await core.readNamespacedSecret({ namespace: options.memberNamespace, name: options.secretName });
      const metadata = { ...body.metadata, labels: existing.metadata?.labels ?? {}, annotations: { ...existing.metadata?.annotations, ...recordedAccount(options) }, resourceVersion: existing.metadata?.resourceVersion ?? '' };
      await core.replaceNamespacedSecret({ namespace: options.memberNamespace, name: options.secretName, body: { ...body, metadata } });
      note(`member: replaced the token in Secret ${options.memberNamespace}/${options.secretName}`);
    } else {
      await core.createNamespacedSecret({ namespace: options.memberNamespace, body: { ...body, metadata: { ...body.metadata, labels: MANAGED_BY, annotations: recordedAccount(options) } } });
      note(`member: created Secret ${options.memberNamespace}/${options.secretName}`);
    }
  }
  // The member holds the new token: every earlier token join bound for this account is revoked.
  if (boundSecret !== undefined) await revokeEarlierTokens(leaderCore, options, boundSecret, note);
  if (plan.createMemberClusterSet !== undefined) {
    // What leave needs to undo this join, recorded where leave reads first.
    const annotations = { ...recordedAccount(options), ...(leaderClusterSetUid !== undefined && { [LEADER_CLUSTERSET_UID_ANNOTATION]: leaderClusterSetUid }) };
    const body = { ...plan.createMemberClusterSet, metadata: { ...plan.createMemberClusterSet.metadata, labels: MANAGED_BY, annotations } };
    await custom.member.createNamespacedCustomObject({ ...clusterSetRef(options.memberNamespace), body });
    note(`member: created ClusterSet ${options.memberNamespace}/${options.clusterSet} (member ${options.clusterID}, leader ${plan.leaderClusterID} at ${options.leaderServer})`);
  }
  if (plan.addMemberLeader !== undefined) {
    // Only if the ClusterSet still lists the leaders the plan read: an edit in between makes the
    // test fail. Not its resourceVersion: the agent's status writes change that every beat.
    // The leader's ClusterSet uid is recorded with it, for `leave --leader` to prove that leader.
    const existing = memberState.clusterSet;
    const recordPath = `/metadata/annotations/${LEADER_CLUSTERSET_UIDS_ANNOTATION.replace('/', '~1')}`;
    const recorded = existing?.metadata?.annotations?.[LEADER_CLUSTERSET_UIDS_ANNOTATION];
    const record = existing === undefined || leaderClusterSetUid === undefined ? [] : [
      ...(recorded !== undefined ? [{ op: 'test', path: recordPath, value: recorded }] : []),
      existing.metadata?.annotations === undefined
        ? { op: 'add', path: '/metadata/annotations', value: { [LEADER_CLUSTERSET_UIDS_ANNOTATION]: withRecordedUid(existing, plan.leaderClusterID, leaderClusterSetUid) } }
        : { op: 'add', path: recordPath, value: withRecordedUid(existing, plan.leaderClusterID, leaderClusterSetUid) },
    ];
    await custom.member.patchNamespacedCustomObject({
      ...clusterSetRef(options.memberNamespace), name: options.clusterSet,
      body: [
        { op: 'test', path: '/metadata/uid', value: existing?.metadata?.uid },
        { op: 'test', path: '/spec/leaders', value: existing?.spec?.leaders ?? [] },
        { op: 'add', path: '/spec/leaders/-', value: plan.addMemberLeader },
        ...record,
      ],
    });
    note(`member: added leader ${plan.leaderClusterID} at ${options.leaderServer} to ClusterSet ${options.memberNamespace}/${options.clusterSet}`);
  }
  if (wrote.length === 0) options.progress('everything is in place already: nothing written');
  const ready = options.waitSeconds > 0 ? await waitForReady(options) : undefined;
  return { plan, wrote, manifests: undefined, ready };
}
