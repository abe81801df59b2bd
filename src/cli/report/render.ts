// `clusterset-agent status` as text: one block per ClusterSet, problems first, so the answer
// to "is it working, and if not why" is the first thing on the screen. Pure.
import { humanSeconds, type ClusterSetReport, type ConditionView, type CredentialView, type EventView, type LeaderClusterSetReport, type MemberClusterSetReport } from './model.js';

function condition(c: ConditionView | undefined): string {
  if (c === undefined) return 'unknown (no condition yet)';
  const reason = c.reason === '' ? '' : ` (${c.reason})`;
  const since = c.since === undefined ? '' : ` since ${c.since}`;
  return `${c.status}${reason}${since}`;
}

function ago(seconds: number | undefined): string {
  return seconds === undefined ? '' : ` (${humanSeconds(seconds)} ago)`;
}

function warnings(lines: string[], events: readonly EventView[]): void {
  if (events.length === 0) return;
  lines.push('  Warning Events on the ClusterSet:');
  for (const e of events) lines.push(`    ${e.reason} x${e.count}${e.lastSeen === undefined ? '' : `, last ${e.lastSeen}`}: ${e.lastMessage}`);
}

function problems(lines: string[], report: ClusterSetReport): void {
  if (report.problems.length === 0) {
    lines.push('  OK: nothing needs attention');
    return;
  }
  lines.push(`  NEEDS ATTENTION (${report.problems.length}):`);
  for (const p of report.problems) lines.push(`    - ${p}`);
}

function expiry(c: CredentialView): string {
  return c.problem !== undefined ? c.problem
    : c.expiresAt === undefined ? 'no expiry in the token'
      : `expires ${c.expiresAt} (${c.expiresInSeconds !== undefined && c.expiresInSeconds <= 0 ? `expired ${humanSeconds(c.expiresInSeconds)} ago` : `in ${humanSeconds(c.expiresInSeconds ?? 0)}`})`;
}

function member(r: MemberClusterSetReport): string[] {
  const lines = [`ClusterSet ${r.namespace}/${r.name} (member ${r.clusterID || '(from ClusterClaim)'})`];
  problems(lines, r);
  lines.push(`  Leader:     ${r.leader.clusterID} at ${r.leader.server}, namespace ${r.leader.namespace}`);
  lines.push(`  Ready:      ${condition(r.ready)}`);
  if (r.ready !== undefined && r.ready.message !== '') lines.push(`              ${r.ready.message}`);
  if (r.isLeader !== undefined) lines.push(`  IsLeader:   ${condition(r.isLeader)}`);
  lines.push(`  Last beat:  ${r.lastHeartbeat ?? 'never'}${ago(r.lastHeartbeatAgeSeconds)}`);
  if (r.leaders !== undefined) {
    const connected = r.leaders.filter((l) => l.ready?.status === 'True' && l.isLeader?.status === 'True').length;
    lines.push(`  Leaders:    ${connected}/${r.leaders.length} connected`);
    for (const l of r.leaders) {
      lines.push(`    ${l.clusterID} at ${l.server}: Ready ${condition(l.ready)}, last beat ${l.lastHeartbeat ?? 'never'}${ago(l.lastHeartbeatAgeSeconds)}`);
      lines.push(`      credential: Secret ${l.credential.secret}, ${expiry(l.credential)}`);
    }
  } else {
    lines.push(`  Credential: Secret ${r.credential.secret}, ${expiry(r.credential)}`);
  }
  lines.push(`  Imports:    ${r.imports.total} imported, ${r.imports.rejected} rejected, ${r.imports.conflicts} conflicting`);
  if (r.exports.length === 0) lines.push('  Exports:    none (no ServiceExport in this cluster)');
  else {
    lines.push(`  Exports:    ${r.exports.length} ServiceExport(s)`);
    for (const e of r.exports) {
      const valid = e.valid === undefined ? 'Valid unknown' : `Valid=${e.valid.status}${e.valid.reason ? ` (${e.valid.reason})` : ''}`;
      const conflict = e.conflict?.status === 'True' ? `, Conflict=True (${e.conflict.reason}): ${e.conflict.message}` : '';
      lines.push(`    ${e.namespace}/${e.name}: ${valid}${conflict}`);
    }
  }
  warnings(lines, r.warnings);
  return lines;
}

function leader(r: LeaderClusterSetReport): string[] {
  const lines = [`ClusterSet ${r.namespace}/${r.name} (leader ${r.clusterID})`];
  problems(lines, r);
  lines.push(`  Ready:      ${condition(r.ready)}`);
  if (r.ready !== undefined && r.ready.message !== '') lines.push(`              ${r.ready.message}`);
  const joining = r.members.filter((m) => m.joining).length;
  lines.push(`  Members:    ${r.readyClusters} of ${r.totalClusters} ready${joining > 0 ? `, ${joining} joining (not in the leader's status yet)` : ''}`);
  for (const m of r.members) {
    const state = !m.hasAnnounce ? 'no announce' : m.joining ? 'joining' : m.ready?.status === 'True' ? 'connected' : 'DISCONNECTED';
    lines.push(`    ${m.clusterID}: ${state}, last beat ${m.lastBeat ?? 'never'}${ago(m.lastBeatAgeSeconds)}`);
  }
  lines.push(`  Exports:    ${r.exports.total} ResourceExport(s), ${r.exports.refused.length} refused, ${r.exports.pending} not yet judged`);
  for (const e of r.exports.refused) lines.push(`    ${e.name} (${e.kind} ${e.exportedName} from ${e.sourceClusterID}): ${e.reason}: ${e.message}`);
  const kinds = Object.entries(r.imports.byKind).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${n} ${k}`).join(', ');
  lines.push(`  Imports:    ${r.imports.total} ResourceImport(s)${kinds === '' ? '' : `: ${kinds}`}`);
  warnings(lines, r.warnings);
  return lines;
}

export function renderReports(reports: readonly ClusterSetReport[]): string {
  if (reports.length === 0) return 'No ClusterSet found.\n';
  return reports.map((r) => (r.role === 'member' ? member(r) : leader(r)).join('\n')).join('\n\n') + '\n';
}
