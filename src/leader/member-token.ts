// What a member's token needs on the leader: the library behind `clusterset-agent leader
// create-member-token` (src/cli/leader-command.ts) and `join`, which a leader administrator
// runs to let one member in. Against the LEADER cluster, with admin rights, it makes sure of
// (idempotently):
//
// 1. a ServiceAccount `member-<id>` in the leader namespace annotated
//    `multicluster.antrea.io/cluster-id: <id>`: Antrea leaders (v2.7+) only accept a member's
//    MemberClusterAnnounce and ResourceExports when the caller's ServiceAccount carries the
//    member's cluster ID in that annotation;
// 2. the Role `antrea-mc-member-cluster-role` with Antrea's member rules (created if missing;
//    an existing Role, e.g. the one Antrea's leader manifest installs, is kept, and only rules
//    it lacks are appended);
// 3. a RoleBinding `<service account>` from the ServiceAccount to that Role;
//
// then issues a token with the TokenRequest API and returns the member-side Secret (`ca.crt` =
// the leader CA from the kubeconfig, `token`) as YAML for `kubectl apply -f -` on the member.
//
// Unlike antctl, the token is a bound TokenRequest token with an expiry (default one year), not
// a legacy `kubernetes.io/service-account-token` Secret: those need the controller-manager's
// token controller and never expire. Rotate by running the command again and applying the new
// Secret; the agent picks up a changed Secret without a restart.
//
// It refuses, before writing anything, to reuse a ServiceAccount that belongs to another cluster
// ID (or carries no cluster ID), to give a cluster ID a second ServiceAccount, and to issue an
// ID that is a dash-prefix of another member's (`east` vs `east-1`), which v2.7+ leaders reject
// at admission.
import { readFileSync } from 'node:fs';
import type { KubeConfig, V1BoundObjectReference, V1PolicyRule, V1RoleBinding, V1ServiceAccount } from '@kubernetes/client-node';
import { parseTimestamp } from '../common/kube/time.js';
import { apisOf, type RbacApi } from '../common/kube/typed-api.js';
import { stringify } from 'yaml';
import { CLUSTER_ID_ANNOTATION, clusterIdProblem, dashPrefixPair, DEFAULT_LEADER_NAMESPACE, isDnsLabel, isDnsSubdomain, LEADER_SECRET_CA_KEY, LEADER_SECRET_TOKEN_KEY } from '../common/api/names.js';
import { describeError, httpStatus, isAlreadyExists, isNotFound } from '../common/kube/errors.js';
import { readExemptServiceAccounts } from './admission-exemptions.js';
import { ANTREA_MEMBER_ROLE_RULES, MEMBER_ROLE_NAME, memberRulesNotGranted, missingMemberPermissions } from './decisions/member-role.js';

export const DEFAULT_SECRET_NAME = 'leader-token';
export const DEFAULT_MEMBER_NAMESPACE = 'clusterset-agent';
/** One year, as `8760h`. */
export const DEFAULT_TOKEN_DURATION_SECONDS = 8760 * 3600;
/** The TokenRequest API refuses anything shorter than ten minutes. */
export const MIN_TOKEN_DURATION_SECONDS = 600;
const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'clusterset-agent' };

export interface MemberTokenOptions {
  /** The member's cluster ID (its ClusterSet `spec.clusterID`): a DNS-1123 label (`CLUSTER_ID_RULE`). */
  readonly memberId: string;
  /** Leader namespace. Default `antrea-multicluster`. */
  readonly namespace?: string;
  /** Default `member-<memberId>`. */
  readonly serviceAccount?: string;
  /** Requested token lifetime; the API server may shorten it (see `expiresAt`). Default one year. */
  readonly durationSeconds?: number;
  /** Name of the Secret in the member cluster. Default `leader-token`. */
  readonly secretName?: string;
  /** Namespace of that Secret (the agent's namespace). Default `clusterset-agent`. */
  readonly memberNamespace?: string;
  /** Progress lines, for stderr. Default: silent. */
  readonly log?: (message: string) => void;
  /**
   * Called once the account, Role and binding are in place, right before the token is issued:
   * the object the token is bound to (deleting it revokes the token). Default: not bound.
   */
  readonly bindTo?: (serviceAccount: V1ServiceAccount) => Promise<V1BoundObjectReference>;
}

export interface MemberToken {
  /** A `v1 Secret` (type Opaque, data `ca.crt` and `token`) for the member cluster, as YAML. */
  readonly secretYaml: string;
  readonly serviceAccount: string;
  /** The token itself (what the Secret carries), for callers that write the Secret themselves. */
  readonly token: string;
  /** When the token expires, as the API server reports it. */
  readonly expiresAt: Date | undefined;
}

/** Invalid input or a refusal; the message says what to do instead. */
export class MemberTokenError extends Error {
  override readonly name = 'MemberTokenError';
}

function checkSubdomain(what: string, value: string, maxLength = 253): void {
  // A member ID leaves room for the announce's name prefix: a tighter limit than 253.
  if (value.length > maxLength || !isDnsSubdomain(value)) {
    throw new MemberTokenError(`${what} ${JSON.stringify(value)} is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending alphanumeric, at most ${String(maxLength)} characters)`);
  }
}

function checkLabel(what: string, value: string): void {
  if (!isDnsLabel(value)) {
    throw new MemberTokenError(`${what} ${JSON.stringify(value)} is not a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)`);
  }
}

/**
 * Parses a token lifetime: whole seconds (`3600`) or a Go-style duration of hours, minutes and
 * seconds (`8760h`, `90m`, `1h30m`, `45s`). Throws MemberTokenError otherwise.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  let seconds: number | undefined;
  if (/^[0-9]{1,12}$/.test(trimmed)) {
    seconds = Number(trimmed);
  } else {
    const match = /^(?:([0-9]{1,9})h)?(?:([0-9]{1,9})m)?(?:([0-9]{1,12})s)?$/.exec(trimmed);
    if (match !== null && trimmed !== '') {
      seconds = Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
    }
  }
  if (seconds === undefined) throw new MemberTokenError(`duration ${JSON.stringify(text)} is not a number of seconds or a duration like 8760h, 90m or 1h30m`);
  return seconds;
}

/** The leader CA, PEM, from the kubeconfig's current cluster (certificate-authority-data or certificate-authority). */
export function leaderCaPem(kc: KubeConfig): string {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new MemberTokenError('the kubeconfig has no current cluster: pass --kubeconfig for the leader cluster');
  let pem: string;
  if (cluster.caData !== undefined && cluster.caData !== '') {
    pem = Buffer.from(cluster.caData, 'base64').toString('utf8');
  } else if (cluster.caFile !== undefined && cluster.caFile !== '') {
    try {
      pem = readFileSync(cluster.caFile, 'utf8');
    } catch (err) {
      throw new MemberTokenError(`cannot read the leader CA file ${cluster.caFile} named by kubeconfig cluster ${JSON.stringify(cluster.name)}: ${describeError(err)}`);
    }
  } else {
    throw new MemberTokenError(`kubeconfig cluster ${JSON.stringify(cluster.name)} has neither certificate-authority-data nor certificate-authority: the member needs the leader's CA to verify it`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new MemberTokenError(`the CA of kubeconfig cluster ${JSON.stringify(cluster.name)} is not a PEM certificate`);
  }
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}

/**
 * ServiceAccount names no member may be given: the leader namespace's `default`, Antrea's leader
 * controller and agent (exempt from admission in Antrea's own webhooks), and ≤ v2.6's shared
 * member account.
 */
export const RESERVED_SERVICE_ACCOUNTS: readonly string[] = ['default', 'antrea-mc-controller', 'antrea-agent', 'antrea-mc-member-access-sa'];

function checkReservedName(serviceAccount: string): void {
  if (RESERVED_SERVICE_ACCOUNTS.includes(serviceAccount)) {
    throw new MemberTokenError(`ServiceAccount name ${JSON.stringify(serviceAccount)} is reserved (${RESERVED_SERVICE_ACCOUNTS.join(', ')}): ` +
      'a leader controller runs under it, and its token could act for every member. Choose another --service-account.');
  }
}

function clusterIdOf(sa: V1ServiceAccount): string | undefined {
  return sa.metadata?.annotations?.[CLUSTER_ID_ANNOTATION];
}

/** Throws when `serviceAccount` may not (or need not be created to) carry `memberId`. Returns the existing one, if any. */
function checkServiceAccounts(accounts: readonly V1ServiceAccount[], namespace: string, serviceAccount: string, memberId: string): V1ServiceAccount | undefined {
  const existing = accounts.find((sa) => sa.metadata?.name === serviceAccount);
  if (existing !== undefined) {
    const id = clusterIdOf(existing);
    if (id === undefined) {
      throw new MemberTokenError(`ServiceAccount ${namespace}/${serviceAccount} already exists without the ${CLUSTER_ID_ANNOTATION} annotation, ` +
        `so it was not made for a member; refusing to hand its token to member ${JSON.stringify(memberId)}. Choose another --service-account.`);
    }
    if (id !== memberId) {
      throw new MemberTokenError(`ServiceAccount ${namespace}/${serviceAccount} belongs to member ${JSON.stringify(id)} (${CLUSTER_ID_ANNOTATION}); ` +
        `refusing to reuse it for member ${JSON.stringify(memberId)}. Choose another --service-account.`);
    }
  }
  for (const sa of accounts) {
    const name = sa.metadata?.name ?? '';
    const id = clusterIdOf(sa);
    if (name === serviceAccount || id === undefined) continue;
    if (id === memberId) {
      throw new MemberTokenError(`member ${JSON.stringify(memberId)} already has ServiceAccount ${namespace}/${name} (${CLUSTER_ID_ANNOTATION}=${id}); ` +
        `a cluster ID must belong to one ServiceAccount. Run again with --service-account ${name} to issue a new token for it.`);
    }
    if (dashPrefixPair(id, memberId)) {
      throw new MemberTokenError(`cluster ID ${JSON.stringify(memberId)} and member ${JSON.stringify(id)} (ServiceAccount ${namespace}/${name}) differ only by a dash suffix; ` +
        'Antrea leaders (v2.7+) reject announces from such pairs. Choose another member ID.');
    }
  }
  return existing;
}

/**
 * Creates or checks the member's ServiceAccount, the member Role and the RoleBinding in the
 * leader namespace, issues a token and returns the member-side Secret. `kc` must be an admin
 * (or at least able to manage ServiceAccounts, Roles, RoleBindings and tokens there).
 */
export async function createMemberToken(kc: KubeConfig, options: MemberTokenOptions): Promise<MemberToken> {
  const log = options.log ?? (() => { /* silent */ });
  const memberId = options.memberId;
  const namespace = options.namespace ?? DEFAULT_LEADER_NAMESPACE;
  const serviceAccount = options.serviceAccount ?? `member-${memberId}`;
  const secretName = options.secretName ?? DEFAULT_SECRET_NAME;
  const memberNamespace = options.memberNamespace ?? DEFAULT_MEMBER_NAMESPACE;
  const durationSeconds = options.durationSeconds ?? DEFAULT_TOKEN_DURATION_SECONDS;
  // One grammar for cluster IDs everywhere (the member spec, the leader's ID map, admission).
  const idProblem = clusterIdProblem(memberId);
  if (idProblem !== undefined) throw new MemberTokenError(`member ${idProblem}; no token was issued`);
  checkReservedName(serviceAccount);
  checkLabel('leader namespace', namespace);
  checkSubdomain('ServiceAccount name', serviceAccount);
  checkSubdomain('Secret name', secretName);
  checkLabel('member namespace', memberNamespace);
  if (!Number.isSafeInteger(durationSeconds) || durationSeconds < MIN_TOKEN_DURATION_SECONDS) {
    throw new MemberTokenError(`token duration must be a whole number of seconds, at least ${String(MIN_TOKEN_DURATION_SECONDS)} (10m); got ${String(durationSeconds)}`);
  }
  const caPem = leaderCaPem(kc);
  const { core, rbac } = apisOf(kc, 'leader');
  const server = kc.getCurrentCluster()?.server ?? '';

  try {
    await core.readNamespace({ name: namespace });
  } catch (err) {
    if (isNotFound(err)) {
      throw new MemberTokenError(`namespace ${namespace} does not exist on ${server}: is this the leader cluster, and is --namespace the leader namespace?`);
    }
    // Forbidden to read namespaces is fine: the next calls tell.
    if (httpStatus(err) !== 403) throw err;
  }

  // 1. ServiceAccount: every check before the first write.
  const exempt = await readExemptServiceAccounts(kc, namespace);
  if (exempt.has(serviceAccount)) {
    throw new MemberTokenError(`ServiceAccount ${namespace}/${serviceAccount} is exempt from the leader's admission policies (a leader controller's identity): ` +
      'a member token for it could write any member\'s announce and exports. Choose another --service-account.');
  }
  const accounts = (await core.listNamespacedServiceAccount({ namespace })).items;
  let existing = checkServiceAccounts(accounts, namespace, serviceAccount, memberId);
  if (existing === undefined) {
    try {
      await core.createNamespacedServiceAccount({
        namespace,
        body: { metadata: { name: serviceAccount, labels: MANAGED_BY, annotations: { [CLUSTER_ID_ANNOTATION]: memberId } } },
      });
      log(`created ServiceAccount ${namespace}/${serviceAccount} (${CLUSTER_ID_ANNOTATION}=${memberId})`);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Someone created it meanwhile: it must pass the same checks.
      existing = await core.readNamespacedServiceAccount({ namespace, name: serviceAccount });
      checkServiceAccounts([existing], namespace, serviceAccount, memberId);
    }
  }
  if (existing !== undefined) log(`ServiceAccount ${namespace}/${serviceAccount} already exists for member ${memberId}`);

  // 2. Role.
  await ensureMemberRole(rbac, namespace, log);

  // 3. RoleBinding.
  await ensureRoleBinding(rbac, namespace, serviceAccount, log);

  // 4. Token.
  const boundObjectRef = options.bindTo === undefined ? undefined : await options.bindTo(await core.readNamespacedServiceAccount({ namespace, name: serviceAccount }));
  const request = await core.createNamespacedServiceAccountToken({
    namespace, name: serviceAccount, body: { spec: { audiences: [], expirationSeconds: durationSeconds, ...(boundObjectRef !== undefined && { boundObjectRef }) } },
  });
  const token = request.status?.token;
  if (token === undefined || token === '') throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  // A string in the answer (plain JSON), whatever the model's Date type says.
  const expiresAt = parseTimestamp(request.status?.expirationTimestamp);
  if (expiresAt !== undefined) {
    log(`issued a token for ${namespace}/${serviceAccount}, valid until ${new Date(expiresAt).toISOString()}`);
    const granted = Math.round((expiresAt - Date.now()) / 1000);
    if (granted < durationSeconds - 300) {
      log(`warning: the API server shortened the token lifetime to ${String(granted)}s (--service-account-max-token-expiration); re-run before it expires`);
    }
  }

  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretName, namespace: memberNamespace },
    type: 'Opaque',
    data: {
      [LEADER_SECRET_CA_KEY]: Buffer.from(caPem, 'utf8').toString('base64'),
      [LEADER_SECRET_TOKEN_KEY]: Buffer.from(token, 'utf8').toString('base64'),
    },
  };
  log(`apply the Secret in the member cluster (namespace ${memberNamespace}) and point the ClusterSet's spec.leaders[0] at server ${server}, secret ${secretName}`);
  return { secretYaml: stringify(secret, { lineWidth: 0 }), serviceAccount, token, expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt) };
}

async function ensureMemberRole(rbac: RbacApi, namespace: string, log: (message: string) => void): Promise<void> {
  let role;
  try {
    role = await rbac.readNamespacedRole({ namespace, name: MEMBER_ROLE_NAME });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await rbac.createNamespacedRole({ namespace, body: { metadata: { name: MEMBER_ROLE_NAME, labels: MANAGED_BY }, rules: [...ANTREA_MEMBER_ROLE_RULES] } });
      log(`created Role ${namespace}/${MEMBER_ROLE_NAME}`);
      return;
    } catch (createErr) {
      if (!isAlreadyExists(createErr)) throw createErr;
      role = await rbac.readNamespacedRole({ namespace, name: MEMBER_ROLE_NAME });
    }
  }
  const rules: V1PolicyRule[] = role.rules ?? [];
  const missing = missingMemberPermissions(rules);
  if (missing.length === 0) {
    log(`Role ${namespace}/${MEMBER_ROLE_NAME} already grants the member permissions`);
    return;
  }
  // Keep whatever the Role grants (it may be Antrea's, with rules of a newer version) and add what members need.
  const body = Object.assign({}, role, { rules: [...rules, ...memberRulesNotGranted(rules)] });
  await rbac.replaceNamespacedRole({ namespace, name: MEMBER_ROLE_NAME, body });
  log(`Role ${namespace}/${MEMBER_ROLE_NAME} lacked ${missing.join(', ')}: added the member rules for them`);
}

async function ensureRoleBinding(rbac: RbacApi, namespace: string, serviceAccount: string, log: (message: string) => void): Promise<void> {
  const subject = { kind: 'ServiceAccount', name: serviceAccount, namespace };
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: MEMBER_ROLE_NAME };
  let binding: V1RoleBinding;
  try {
    binding = await rbac.readNamespacedRoleBinding({ namespace, name: serviceAccount });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await rbac.createNamespacedRoleBinding({ namespace, body: { metadata: { name: serviceAccount, labels: MANAGED_BY }, roleRef, subjects: [subject] } });
    log(`created RoleBinding ${namespace}/${serviceAccount} -> Role ${MEMBER_ROLE_NAME}`);
    return;
  }
  if (binding.roleRef.kind !== 'Role' || binding.roleRef.name !== MEMBER_ROLE_NAME) {
    throw new MemberTokenError(`RoleBinding ${namespace}/${serviceAccount} exists and binds ${binding.roleRef.kind} ${binding.roleRef.name}, not Role ${MEMBER_ROLE_NAME}; ` +
      'roleRef cannot be changed: delete that RoleBinding or choose another --service-account');
  }
  const subjects = binding.subjects ?? [];
  if (subjects.some((s) => s.kind === 'ServiceAccount' && s.name === serviceAccount && (s.namespace ?? namespace) === namespace)) {
    log(`RoleBinding ${namespace}/${serviceAccount} already binds the ServiceAccount`);
    return;
  }
  await rbac.replaceNamespacedRoleBinding({ namespace, name: serviceAccount, body: Object.assign({}, binding, { subjects: [...subjects, subject] }) });
  log(`added ServiceAccount ${serviceAccount} to RoleBinding ${namespace}/${serviceAccount}`);
}
