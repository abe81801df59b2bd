// `clusterset-agent status`: one picture of each ClusterSet a cluster holds, built from the
// objects the agent and the leader controller already write. Pure: the caller reads the
// objects (collect.ts) and renders the result (render.ts).
//
// A ClusterSet whose leader entry names a server is a member's view of a leader; one without
// is a leader's own copy (Antrea's convention, antrea-wire.md §1). A cluster may hold both.
import type { Condition, MetaCondition } from '../../common/api/meta.js';
import type { ServiceExport } from '../../common/api/mcs.js';
import {
  CONDITION_TYPE,
  type ClusterSet,
  type MemberClusterAnnounce,
  type ResourceExport,
  type ResourceImport,
} from '../../common/api/antrea.js';
import { RE_LABEL_SOURCE_CLUSTER_ID, TIMESTAMP_ANNOTATION } from '../../common/api/names.js';
import { lastBeatOf } from '../../common/api/announce-times.js';
import { parseTimestamp } from '../../common/kube/time.js';
import { stuckDeletionProblem } from './stuck-deletion.js';

/** A condition as shown: what it says and since when. */
export interface ConditionView {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly since: string | undefined;
}

/** A Warning Event recorded on a ClusterSet, folded by reason. */
export interface EventView {
  readonly reason: string;
  readonly count: number;
  readonly lastMessage: string;
  readonly lastSeen: string | undefined;
}

export interface CredentialView {
  readonly secret: string;
  /** RFC 3339, from the token's `exp` claim; undefined when the token carries none. */
  readonly expiresAt: string | undefined;
  readonly expiresInSeconds: number | undefined;
  /** Why the expiry could not be read (Secret missing, no token, not a JWT). */
  readonly problem: string | undefined;
}

export interface ServiceExportView {
  readonly namespace: string;
  readonly name: string;
  readonly valid: ConditionView | undefined;
  readonly conflict: ConditionView | undefined;
}

/** One leader of a ClusterSet that lists several, as the member's status shows it. */
export interface LeaderView {
  readonly clusterID: string;
  readonly server: string;
  readonly ready: ConditionView | undefined;
  readonly isLeader: ConditionView | undefined;
  readonly lastHeartbeat: string | undefined;
  readonly lastHeartbeatAgeSeconds: number | undefined;
  /** The token in this leader's own Secret: each leader's expires on its own. */
  readonly credential: CredentialView;
}

export interface MemberClusterSetReport {
  readonly role: 'member';
  readonly namespace: string;
  readonly name: string;
  readonly clusterID: string;
  readonly leader: { readonly clusterID: string; readonly server: string; readonly namespace: string };
  readonly ready: ConditionView | undefined;
  readonly isLeader: ConditionView | undefined;
  readonly lastHeartbeat: string | undefined;
  readonly lastHeartbeatAgeSeconds: number | undefined;
  readonly credential: CredentialView;
  readonly imports: { readonly total: number; readonly rejected: number; readonly conflicts: number };
  /** Warning Events on the ClusterSet (rejected imports, conflicts, failures), newest first. */
  readonly warnings: readonly EventView[];
  readonly exports: readonly ServiceExportView[];
  readonly problems: readonly string[];
  /** With several leaders: each, in spec.leaders order (`leader` and the fields above are the first's). */
  readonly leaders?: readonly LeaderView[];
}

export interface MemberView {
  readonly clusterID: string;
  readonly ready: ConditionView | undefined;
  /** RFC 3339 time of the member's last heartbeat (its announce's touch-ts). */
  readonly lastBeat: string | undefined;
  readonly lastBeatAgeSeconds: number | undefined;
  readonly hasAnnounce: boolean;
  /**
   * Announced less than {@link JOINING_SECONDS} ago and not in the leader's status yet: the
   * leader writes a burst of joins together, within half its member timeout (15 s by default).
   */
  readonly joining: boolean;
}

/**
 * How long a new member may be missing from the leader's status before it is a problem: the
 * leader lists a join within half its member timeout (src/leader/decisions/status-coalescing.ts),
 * 15 s by default; this allows a timeout of 120 s.
 */
export const JOINING_SECONDS = 60;

export interface ExportView {
  readonly name: string;
  readonly sourceClusterID: string;
  readonly kind: string;
  readonly exportedName: string;
  /** `Failure` (refused by the leader), `Succeeded`, or `Pending` when the leader has not judged it. */
  readonly verdict: 'Failure' | 'Succeeded' | 'Pending';
  readonly reason: string;
  readonly message: string;
}

export interface LeaderClusterSetReport {
  readonly role: 'leader';
  readonly namespace: string;
  readonly name: string;
  readonly clusterID: string;
  readonly ready: ConditionView | undefined;
  readonly totalClusters: number;
  readonly readyClusters: number;
  readonly members: readonly MemberView[];
  readonly exports: { readonly total: number; readonly refused: readonly ExportView[]; readonly pending: number };
  readonly imports: { readonly total: number; readonly byKind: Readonly<Record<string, number>> };
  readonly warnings: readonly EventView[];
  readonly problems: readonly string[];
}

export type ClusterSetReport = MemberClusterSetReport | LeaderClusterSetReport;

/** A core/v1 Event, as much of it as the report reads. */
export interface EventInput {
  readonly type?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly count?: number;
  readonly lastTimestamp?: string | Date | null;
  readonly eventTime?: string | Date | null;
}

export interface MemberInput {
  readonly clusterSet: ClusterSet;
  /** The Secret's `token` (decoded), or a reason it could not be read. */
  readonly token: { readonly value: string } | { readonly problem: string };
  /** With several leaders: each leader's Secret's token by Secret name (the first's is `token`). */
  readonly leaderTokens?: Readonly<Record<string, { readonly value: string } | { readonly problem: string }>>;
  readonly events: readonly EventInput[];
  readonly serviceExports: readonly ServiceExport[];
  /** Why the chart's agent Pods in this namespace are not running (agent-pods.ts), one line each. */
  readonly agentPods?: readonly string[];
  readonly nowMs: number;
  /** A heartbeat older than this, while Ready says True, needs attention. Default {@link DEFAULT_STALE_AFTER_SECONDS}. */
  readonly staleAfterSeconds?: number;
}

export interface LeaderInput {
  readonly clusterSet: ClusterSet;
  readonly announces: readonly MemberClusterAnnounce[];
  readonly exports: readonly ResourceExport[];
  readonly imports: readonly ResourceImport[];
  readonly events: readonly EventInput[];
  /** Why the chart's `leader run` Pods are not running (agent-pods.ts), and its ConfigMap's problems (member-ids-check.ts). */
  readonly leaderPods?: readonly string[];
  readonly nowMs: number;
  /** A member shown connected whose last beat is older than this means the status is stale. Default {@link DEFAULT_STALE_AFTER_SECONDS}. */
  readonly staleAfterSeconds?: number;
}

/**
 * Five minutes. The member's lastHeartbeatTime advances at most once a minute, at the first
 * beat after it (so every minute plus one interval: 70 s at the default 10 s interval, 180 s at
 * 120 s); a member's touch-ts changes at every beat. Older than this, nothing is writing it.
 */
export const DEFAULT_STALE_AFTER_SECONDS = 300;

/** Conditions that are good when True; any other condition on a ClusterSet reports a problem while True (e.g. DuplicateClusterID). */
const GOOD_WHEN_TRUE: ReadonlySet<string> = new Set([CONDITION_TYPE.Ready, CONDITION_TYPE.IsLeader, 'ClusterConnected', 'ImportsSynced', 'AllLeadersConnected']);

/** Every condition but Ready that says something is wrong, one line each. */
export function warningConditions(conditions: readonly (Condition | MetaCondition)[]): string[] {
  const lines: string[] = [];
  for (const c of conditions) {
    if (c.type === CONDITION_TYPE.Ready) continue;
    const bad = GOOD_WHEN_TRUE.has(c.type ?? '') ? c.status !== 'True' : c.status === 'True';
    if (!bad) continue;
    const since = c.lastTransitionTime ? ` since ${c.lastTransitionTime}` : '';
    lines.push(`${c.type}=${c.status ?? 'Unknown'}${c.reason ? ` (${c.reason})` : ''}${since}${c.message ? `: ${c.message}` : ''}`);
  }
  return lines;
}

/** Seven days: below this a credential's expiry is a problem worth reporting. */
export const CREDENTIAL_WARNING_SECONDS = 7 * 24 * 3600;

export function isMemberClusterSet(cs: ClusterSet): boolean {
  return (cs.spec?.leaders ?? []).some((l) => (l.server ?? '') !== '');
}

function conditionView(c: Condition | MetaCondition | undefined): ConditionView | undefined {
  if (c === undefined) return undefined;
  return { status: c.status ?? 'Unknown', reason: c.reason ?? '', message: c.message ?? '', since: c.lastTransitionTime || undefined };
}

function ageSeconds(stamp: string | undefined, nowMs: number): number | undefined {
  const t = parseTimestamp(stamp);
  return t === undefined ? undefined : Math.max(0, Math.round((nowMs - t) / 1000));
}

function stampOf(value: string | Date | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toISOString();
}

/** Warning Events folded by reason (the recorder already folds repeats into `count`), newest first. */
export function foldWarnings(events: readonly EventInput[]): EventView[] {
  const byReason = new Map<string, { count: number; lastMessage: string; lastSeen: string | undefined; lastMs: number }>();
  for (const e of events) {
    if (e.type !== 'Warning' || e.reason === undefined) continue;
    const seen = stampOf(e.lastTimestamp) ?? stampOf(e.eventTime);
    const ms = parseTimestamp(seen) ?? 0;
    const entry = byReason.get(e.reason);
    const count = Math.max(1, e.count ?? 1);
    if (entry === undefined) {
      byReason.set(e.reason, { count, lastMessage: e.message ?? '', lastSeen: seen, lastMs: ms });
    } else {
      entry.count += count;
      if (ms >= entry.lastMs) Object.assign(entry, { lastMessage: e.message ?? '', lastSeen: seen, lastMs: ms });
    }
  }
  return [...byReason.entries()]
    .sort((a, b) => b[1].lastMs - a[1].lastMs || a[0].localeCompare(b[0]))
    .map(([reason, e]) => ({ reason, count: e.count, lastMessage: e.lastMessage, lastSeen: e.lastSeen }));
}

/**
 * The expiry of a ServiceAccount token, read from its `exp` claim. Display only: nothing is
 * verified, and nothing of the token but that claim leaves this function.
 */
export function tokenExpiry(token: string): { expiresAtMs: number } | { problem: string } | undefined {
  const parts = token.trim().split('.');
  if (parts.length !== 3) return { problem: 'the token is not a JWT; its expiry cannot be read' };
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    return { problem: 'the token is not a JWT; its expiry cannot be read' };
  }
  const exp = (claims as { exp?: unknown } | null)?.exp;
  if (exp === undefined) return undefined;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return { problem: "the token's exp claim is not a number" };
  return { expiresAtMs: exp * 1000 };
}

function credentialView(secret: string, token: MemberInput['token'], nowMs: number): CredentialView {
  if ('problem' in token) return { secret, expiresAt: undefined, expiresInSeconds: undefined, problem: token.problem };
  const expiry = tokenExpiry(token.value);
  if (expiry === undefined) return { secret, expiresAt: undefined, expiresInSeconds: undefined, problem: undefined };
  if ('problem' in expiry) return { secret, expiresAt: undefined, expiresInSeconds: undefined, problem: expiry.problem };
  return {
    secret,
    expiresAt: new Date(expiry.expiresAtMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    expiresInSeconds: Math.round((expiry.expiresAtMs - nowMs) / 1000),
    problem: undefined,
  };
}

function humanSeconds(seconds: number): string {
  const abs = Math.abs(seconds);
  if (abs >= 2 * 86_400) return `${Math.round(abs / 86_400)}d`;
  if (abs >= 2 * 3600) return `${Math.round(abs / 3600)}h`;
  if (abs >= 120) return `${Math.round(abs / 60)}m`;
  return `${abs}s`;
}

export function memberReport(input: MemberInput): MemberClusterSetReport {
  const { clusterSet: cs, nowMs } = input;
  const listed = (cs.spec?.leaders ?? []).filter((l) => (l.server ?? '') !== '');
  const leader = listed[0] ?? {};
  const leaderStatus = cs.status?.clusterStatuses?.find((s) => s.clusterID === leader.clusterID) ?? cs.status?.clusterStatuses?.[0];
  const ready = conditionView(cs.status?.conditions?.find((c) => c.type === CONDITION_TYPE.Ready));
  const isLeader = conditionView(leaderStatus?.conditions?.find((c) => c.type === CONDITION_TYPE.IsLeader));
  const lastHeartbeat = leaderStatus?.lastHeartbeatTime;
  const credential = credentialView(leader.secret ?? '', input.token, nowMs);
  const imports = { total: cs.status?.imports?.total ?? 0, rejected: cs.status?.imports?.rejected ?? 0, conflicts: cs.status?.imports?.conflicts ?? 0 };
  const exports = input.serviceExports
    .map((se) => ({
      namespace: se.metadata?.namespace ?? '',
      name: se.metadata?.name ?? '',
      valid: conditionView(se.status?.conditions?.find((c) => c.type === 'Valid')),
      conflict: conditionView(se.status?.conditions?.find((c) => c.type === 'Conflict')),
    }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));

  const agentPods = input.agentPods ?? [];
  const problems: string[] = [...agentPods];
  const stuck = stuckDeletionProblem(cs, nowMs, agentPods.length > 0);
  if (stuck !== undefined) problems.push(stuck);
  if (ready === undefined) problems.push(`no Ready condition yet: ${agentPods.length === 0 ? 'is the agent running in this cluster?' : 'the agent is not running (above)'}`);
  else if (ready.status !== 'True') problems.push(`not Ready (${ready.reason}): ${ready.message}`);
  const beatAge = ageSeconds(lastHeartbeat, nowMs);
  const staleAfter = input.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS;
  // With several leaders, Ready stands on any of them: the newest beat tells whether the agent runs.
  const newestBeat = listed.length > 1
    ? (cs.status?.clusterStatuses ?? []).map((s) => s.lastHeartbeatTime).filter((t): t is string => t !== undefined).sort().at(-1)
    : lastHeartbeat;
  const newestAge = ageSeconds(newestBeat, nowMs);
  if (ready?.status === 'True' && newestAge !== undefined && newestAge > staleAfter) {
    problems.push(`last heartbeat ${humanSeconds(newestAge)} ago (${newestBeat ?? ''}), over ${humanSeconds(staleAfter)}, while Ready still says True: the agent is not running, or cannot write its status`);
  }
  problems.push(...warningConditions(cs.status?.conditions ?? []));
  const leaders = listed.length > 1 ? listed.map((l, i) => leaderView(cs, l, i === 0 ? input.token : input.leaderTokens?.[l.secret ?? ''], nowMs)) : undefined;
  if (leaders === undefined) problems.push(...credentialProblems(credential, ''));
  else for (const l of leaders) problems.push(...credentialProblems(l.credential, `leader ${l.clusterID}: `));
  if (imports.rejected > 0) problems.push(`${imports.rejected} import(s) rejected by the member's import policy`);
  if (imports.conflicts > 0) problems.push(`${imports.conflicts} import(s) conflict with objects the agent does not own`);
  for (const e of exports) {
    if (e.conflict?.status === 'True') problems.push(`ServiceExport ${e.namespace}/${e.name} conflicts (${e.conflict.reason}): ${e.conflict.message}`);
    if (e.valid !== undefined && e.valid.status !== 'True') problems.push(`ServiceExport ${e.namespace}/${e.name} is not valid (${e.valid.reason}): ${e.valid.message}`);
  }
  return {
    role: 'member',
    namespace: cs.metadata?.namespace ?? '',
    name: cs.metadata?.name ?? '',
    clusterID: cs.spec?.clusterID ?? '',
    leader: { clusterID: leader.clusterID ?? '', server: leader.server ?? '', namespace: cs.spec?.namespace ?? '' },
    ready,
    isLeader,
    lastHeartbeat,
    lastHeartbeatAgeSeconds: beatAge,
    credential,
    imports,
    warnings: foldWarnings(input.events),
    exports,
    problems,
    ...(leaders !== undefined ? { leaders } : {}),
  };
}

/** What a leader token's expiry calls for: nothing, a warning within 7 days, or an expired token. */
function credentialProblems(credential: CredentialView, prefix: string): string[] {
  if (credential.problem !== undefined) return [`${prefix}credential: ${credential.problem}`];
  const left = credential.expiresInSeconds;
  if (left !== undefined && left <= 0) return [`${prefix}the leader token in Secret ${credential.secret} expired ${humanSeconds(left)} ago: issue a new one (leader create-member-token)`];
  if (left !== undefined && left < CREDENTIAL_WARNING_SECONDS) return [`${prefix}the leader token in Secret ${credential.secret} expires in ${humanSeconds(left)}: issue a new one (leader create-member-token)`];
  return [];
}

function leaderView(cs: ClusterSet, leader: { clusterID?: string; server?: string; secret?: string }, token: MemberInput['token'] | undefined, nowMs: number): LeaderView {
  const status = cs.status?.clusterStatuses?.find((s) => s.clusterID === leader.clusterID);
  return {
    credential: credentialView(leader.secret ?? '', token ?? { problem: `Secret ${leader.secret ?? ''} was not read` }, nowMs),
    clusterID: leader.clusterID ?? '',
    server: leader.server ?? '',
    ready: conditionView(status?.conditions?.find((c) => c.type === CONDITION_TYPE.Ready)),
    isLeader: conditionView(status?.conditions?.find((c) => c.type === CONDITION_TYPE.IsLeader)),
    lastHeartbeat: status?.lastHeartbeatTime,
    lastHeartbeatAgeSeconds: ageSeconds(status?.lastHeartbeatTime, nowMs),
  };
}

const FAILURE = 'Failure';
const SUCCEEDED = 'Succeeded';

function exportView(re: ResourceExport): ExportView {
  const conditions = re.status?.conditions ?? [];
  // Antrea writes a refusal as type Failure with status False (antrea-wire.md §3.5): the type
  // decides, as in the member's exporter.
  const failure = conditions.find((c) => c.type === FAILURE || (c.type === SUCCEEDED && c.status === 'False'));
  const succeeded = conditions.find((c) => c.type === SUCCEEDED && c.status === 'True');
  const spec = re.spec ?? {};
  const verdict = failure !== undefined ? 'Failure' : succeeded !== undefined ? 'Succeeded' : 'Pending';
  const shown = failure ?? succeeded;
  return {
    name: re.metadata?.name ?? '',
    sourceClusterID: re.metadata?.labels?.[RE_LABEL_SOURCE_CLUSTER_ID] ?? spec.clusterID ?? '',
    kind: spec.kind ?? '',
    exportedName: spec.namespace ? `${spec.namespace}/${spec.name ?? ''}` : spec.name ?? '',
    verdict,
    reason: shown?.reason ?? '',
    message: shown?.message ?? '',
  };
}

export function leaderReport(input: LeaderInput): LeaderClusterSetReport {
  const { clusterSet: cs, nowMs } = input;
  const statuses = cs.status?.clusterStatuses ?? [];
  const announced = new Map(input.announces.map((a) => [a.clusterID ?? '', a]));
  // The first entry per cluster ID, as a find() over the list would give.
  const listed = new Map(statuses.toReversed().map((s) => [s.clusterID ?? '', s]));
  const ids = new Set([...listed.keys(), ...announced.keys()].filter((id) => id !== ''));
  const members: MemberView[] = [...ids].sort().map((clusterID) => {
    const announce = announced.get(clusterID);
    const beat = announce === undefined ? undefined : lastBeatOf(announce);
    const lastBeat = beat === undefined ? announce?.metadata?.annotations?.[TIMESTAMP_ANNOTATION] : new Date(beat).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const entry = listed.get(clusterID);
    const created = Date.parse(String(announce?.metadata?.creationTimestamp ?? ''));
    return {
      clusterID,
      ready: conditionView(entry?.conditions?.find((c) => c.type === CONDITION_TYPE.Ready)),
      lastBeat,
      lastBeatAgeSeconds: beat === undefined ? undefined : Math.max(0, Math.round((nowMs - beat) / 1000)),
      hasAnnounce: announce !== undefined,
      joining: announce !== undefined && entry === undefined && Number.isFinite(created) && nowMs - created < JOINING_SECONDS * 1000,
    };
  });
  const views = input.exports.map(exportView);
  const refused = views.filter((v) => v.verdict === 'Failure').sort((a, b) => a.name.localeCompare(b.name));
  const byKind: Record<string, number> = {};
  for (const ri of input.imports) {
    const kind = ri.spec?.kind ?? '(none)';
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  const ready = conditionView(cs.status?.conditions?.find((c) => c.type === CONDITION_TYPE.Ready));
  const problems: string[] = [...(input.leaderPods ?? [])];
  if (ready === undefined) problems.push('no Ready condition yet: is the leader controller (leader run) running?');
  else if (ready.status !== 'True') problems.push(`not Ready (${ready.reason}): ${ready.message}`);
  problems.push(...warningConditions(cs.status?.conditions ?? []));
  // Shown connected, yet silent for longer than any heartbeat period: nobody refreshes the status.
  const staleAfter = input.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS;
  const stale = members.filter((m) => m.hasAnnounce && m.ready?.status === 'True' && m.lastBeatAgeSeconds !== undefined && m.lastBeatAgeSeconds > staleAfter);
  if (stale.length > 0) {
    const oldest = Math.max(...stale.map((m) => m.lastBeatAgeSeconds ?? 0));
    problems.push(`stale leader status: ${stale.map((m) => m.clusterID).join(', ')} shown connected, but last beat up to ${humanSeconds(oldest)} ago (over ${humanSeconds(staleAfter)}): is the leader controller (leader run) running?`);
  }
  for (const m of members) {
    if (stale.includes(m)) continue;
    if (!m.hasAnnounce) problems.push(`member ${m.clusterID} has no MemberClusterAnnounce: it left, or never joined`);
    else if (m.joining) continue;
    else if (m.ready === undefined) problems.push(`member ${m.clusterID} announced itself over ${humanSeconds(JOINING_SECONDS)} ago and is not in the leader's status: is the leader controller (leader run) running?`);
    else if (m.ready.status !== 'True') problems.push(`member ${m.clusterID} is disconnected${m.ready.message ? `: ${m.ready.message}` : ''}`);
  }
  for (const r of refused) problems.push(`export ${r.name} from ${r.sourceClusterID} refused${r.reason ? ` (${r.reason})` : ''}: ${r.message}`);
  return {
    role: 'leader',
    namespace: cs.metadata?.namespace ?? '',
    name: cs.metadata?.name ?? '',
    // A leader's own copy may leave spec.clusterID empty; its leader entry names it then.
    clusterID: cs.spec?.clusterID !== undefined && cs.spec.clusterID !== '' ? cs.spec.clusterID : cs.spec?.leaders[0]?.clusterID ?? '',
    ready,
    totalClusters: cs.status?.totalClusters ?? members.length,
    readyClusters: cs.status?.readyClusters ?? members.filter((m) => m.ready?.status === 'True').length,
    members,
    exports: { total: views.length, refused, pending: views.filter((v) => v.verdict === 'Pending').length },
    imports: { total: input.imports.length, byKind },
    warnings: foldWarnings(input.events),
    problems,
  };
}

/** 0 when nothing needs attention, else 3: `status` exits with it, so a script can gate on it. */
export const EXIT_HEALTHY = 0;
export const EXIT_NEEDS_ATTENTION = 3;

export function exitCodeOf(reports: readonly ClusterSetReport[]): number {
  return reports.some((r) => r.problems.length > 0) ? EXIT_NEEDS_ATTENTION : EXIT_HEALTHY;
}

export { humanSeconds };
