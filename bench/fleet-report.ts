// What a fleet run (bench/fleet.ts) measured, as bench:leader prints it, and the figures
// bench:antrea --mode leader sets side by side.
import { percentile, type FleetFigures, type Phase } from './fleet.js';

const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const ms = (v: number) => `${v.toFixed(0)} ms`;
const sec = (v: number) => `${(v / 1000).toFixed(1)} s`;
const p = (v: readonly number[], q: number) => percentile(v, q);
const max = (v: readonly number[]) => (v.length === 0 ? NaN : Math.max(...v));

function phaseOf(f: FleetFigures, name: string): Phase {
  return f.phases.find((ph) => ph.name === name) ?? (() => { throw new Error(`no phase ${name}`); })();
}
const duration = (ph: Phase) => (Math.min(ph.endMs, Date.now()) - ph.startMs) / 1000;
const cpuPerMinute = (ph: Phase) => ((ph.cpuEnd - ph.cpuStart) / duration(ph)) * 60;
const count = (f: FleetFigures, ph: Phase, test: (key: string) => boolean) => [...(f.writes.get(ph.name) ?? [])].filter(([k]) => test(k)).reduce((a, [, v]) => a + v, 0);
/** ClusterSet status writes of the leader (ours and Antrea's both update the status subresource; a patch counts too). */
const statusWrites = (f: FleetFigures, ph: Phase) => count(f, ph, (k) => /^leader (update|patch) clustersets\/status$/.test(k));
const statusPerMinute = (f: FleetFigures, ph: Phase) => (statusWrites(f, ph) / duration(ph)) * 60;
const leaderWrites = (f: FleetFigures, ph: Phase) => count(f, ph, (k) => k.startsWith('leader '));

/** The figures both leaders have, by name, for the side-by-side table (NaN where a leader has none). */
export interface FleetSummary {
  populateMs: number;
  exportImportP50: number;
  exportImportP99: number;
  lost: number;
  falseDisconnected: number;
  livenessP99: number;
  livenessMeasured: number;
  goneP99: number;
  joinReadyP99: number;
  rssRest: number;
  rssPeak: number;
  cpuRest: number;
  cpuChurn: number;
  cpuAfter: number;
  lagP99Worst: number;
  importWritesPerChange: number;
  leaderWritesPerChange: number;
  statusRest: number;
  statusChurn: number;
  statusAfter: number;
  /** Over rest, churn and after the restart together: Antrea writes every 30 s whatever happens, ours when a member's state changes. */
  statusRun: number;
  restartReadyMs: number;
  restartWorkersMs: number;
  /** The first restart's, from its process's spawn: answering its probes as a ping does, and ready (LeaderUnderTest.lastStart). */
  restartSpawnToPingMs: number;
  restartSpawnToReadyMs: number;
  restartWrites: number;
  beatErrors: number;
  beatGapP99: number;
}

export function summarize(f: FleetFigures): FleetSummary {
  const rest = phaseOf(f, 'rest');
  const churn = phaseOf(f, 'churn');
  const after = phaseOf(f, 'after-restart');
  const restart = phaseOf(f, 'restart');
  const lags = [...rest.lagP99, ...churn.lagP99, ...after.lagP99];
  return {
    populateMs: f.populateMs,
    exportImportP50: p(f.latencies, 50),
    exportImportP99: p(f.latencies, 99),
    lost: f.lost,
    falseDisconnected: f.falseDisconnected.length,
    livenessP99: p(f.disconnectLag, 99),
    livenessMeasured: f.disconnectLag.length,
    goneP99: p(f.removedAfter, 99),
    joinReadyP99: p(f.joinReady, 99),
    rssRest: f.rss.rest,
    rssPeak: Math.max(f.rss.populated, f.rss.churnPeak, f.rss.restarted),
    cpuRest: cpuPerMinute(rest),
    cpuChurn: cpuPerMinute(churn),
    cpuAfter: cpuPerMinute(after),
    lagP99Worst: lags.length === 0 ? NaN : Math.max(...lags),
    // The import and its status subresource (Antrea's leader writes both for a change; ours the import only).
    importWritesPerChange: count(f, churn, (k) => /^leader (update|patch|create) resourceimports(\/status)?$/.test(k)) / f.options.updates,
    leaderWritesPerChange: leaderWrites(f, churn) / f.options.updates,
    statusRest: statusPerMinute(f, rest),
    statusChurn: statusPerMinute(f, churn),
    statusAfter: statusPerMinute(f, after),
    statusRun: ((statusWrites(f, rest) + statusWrites(f, churn) + statusWrites(f, after)) / (duration(rest) + duration(churn) + duration(after))) * 60,
    restartReadyMs: f.restartReadyMs,
    restartWorkersMs: f.restartWorkersMs,
    restartSpawnToPingMs: f.restarts[0]?.spawnToPingMs ?? NaN,
    restartSpawnToReadyMs: f.restarts[0]?.spawnToReadyMs ?? NaN,
    restartWrites: leaderWrites(f, restart) + leaderWrites(f, after),
    beatErrors: f.beatErrors,
    beatGapP99: p(f.beatGaps, 99),
  };
}

/** bench:leader's report of one run (every line but its heading and its goals). */
export function printFleet(f: FleetFigures): void {
  const o = f.options;
  const s = summarize(f);
  const rest = phaseOf(f, 'rest');
  const churn = phaseOf(f, 'churn');
  const after = phaseOf(f, 'after-restart');
  const restart = phaseOf(f, 'restart');
  const rate = (ph: Phase, who: string) => [...(f.writes.get(ph.name) ?? [])].filter(([k]) => k.startsWith(`${who} `))
    .sort(([, a], [, b]) => b - a).map(([k, v]) => `${k.slice(who.length + 1)} ${(v / duration(ph)).toFixed(2)}/s`).join(', ') || 'none';
  const lag = (ph: Phase) => ph.lagP99.length === 0 ? 'no sample' : `p99 ${ms(p(ph.lagP99, 50))} median of 5-s windows, ${ms(Math.max(...ph.lagP99))} worst window; max ${ms(Math.max(...ph.lagMax))}`;
  const cpu = (ph: Phase) => `${(ph.cpuEnd - ph.cpuStart).toFixed(1)} s CPU`;
  console.log(`  ${String(o.members)} members (own tokens, simulated), each beating every ${sec(o.periodMs)} ±5% (GET + PUT, spread over the period): made and announced in ${sec(f.fleetMs)}; ${String(f.beatErrors)} beats lost to errors`);
  console.log(`  beat gaps (touch-ts to touch-ts, last 20 beats of each member): p50 ${sec(p(f.beatGaps, 50))}, p99 ${sec(s.beatGapP99)}, max ${sec(max(f.beatGaps))}${s.beatGapP99 > o.timeoutMs ? ': the API server did not keep up with the fleet\'s beats, the liveness figures are the machine\'s' : ''}`);
  console.log(`  ${String(o.services)} Services x 2 exporters = ${String(4 * o.services)} exports -> ${String(2 * o.services)} imports in ${sec(f.populateMs)}`);
  console.log(`  churn: ${String(o.updates)} endpoint updates, ${String(o.width)} in flight; ${String(o.joins)} members joined, ${String(o.leaves)} stopped beating and left`);
  console.log(`  export -> import through the leader: p50 ${ms(s.exportImportP50)}, p99 ${ms(s.exportImportP99)}, max ${ms(max(f.latencies))}${f.lost > 0 ? ` (${String(f.lost)} lost)` : ''}; of which the member's own write (GET + PUT, sharing the fleet's connections): p50 ${ms(p(f.sends, 50))}, p99 ${ms(p(f.sends, 99))}`);
  if (f.floor !== undefined) {
    console.log(`  baseline (minimal client, same pipeline): p50 ${ms(p(f.floor, 50))}, p99 ${ms(p(f.floor, 99))}; ratio p50 ${(s.exportImportP50 / p(f.floor, 50)).toFixed(2)}, p99 ${(s.exportImportP99 / p(f.floor, 99)).toFixed(2)}`);
  }
  console.log(`  false Disconnected (beat within the timeout, shown not Ready): ${String(s.falseDisconnected)}${s.falseDisconnected > 0 ? ` (first: ${f.falseDisconnected.slice(0, 3).join('; ')})` : ''}; ${String(f.statusEvents)} ClusterSet events watched; beating members not Ready at the end: ${String(f.liveAtEnd)}`);
  console.log(`  liveness: last beat -> Disconnected shown (timeout ${sec(o.timeoutMs)}): p50 ${sec(p(f.disconnectLag, 50))}, p99 ${sec(s.livenessP99)}, max ${sec(max(f.disconnectLag))} (${String(f.disconnectLag.length)} of ${String(f.stopped)}; their last beats spanned ${sec(f.leaversLastBeatSpanMs)}); left -> gone from the status p99 ${sec(s.goneP99)}; join -> Ready shown p99 ${sec(s.joinReadyP99)} (${String(f.joinReady.length)} of ${String(o.joins)})${f.leaveProblems > 0 ? `; ${String(f.leaveProblems)} leave steps timed out` : ''}`);
  console.log(`  leader RSS: ${mib(f.rss.populated)} populated, ${mib(f.rss.rest)} after the rest, ${mib(f.rss.churnPeak)} peak in churn, ${mib(f.rss.afterChurn)} after; ${mib(f.rss.restarted)} after the restart`);
  // Per minute, and in all: a churn that takes longer on a busier machine lowers the rate, not the work.
  console.log(`  leader CPU: ${s.cpuRest.toFixed(2)} s/min at rest (${cpu(rest)} in ${duration(rest).toFixed(0)} s), ${s.cpuChurn.toFixed(2)} s/min in churn (${cpu(churn)} in ${duration(churn).toFixed(0)} s: the endpoint changes took ${(f.churnChangesMs / 1000).toFixed(0)} s, joins and leaves went on until the last member left), ${s.cpuAfter.toFixed(2)} s/min after the restart`);
  console.log(`  leader event-loop lag: at rest ${lag(rest)}; in churn ${lag(churn)}; after the restart ${lag(after)}`);
  for (const ph of [rest, churn, after]) {
    console.log(`  writes/s, ${ph.name} (${duration(ph).toFixed(0)} s): leader ${rate(ph, 'leader')}; members ${rate(ph, 'members')}`);
  }
  console.log(`  leader ClusterSet status writes per minute: ${s.statusRest.toFixed(1)} at rest, ${s.statusChurn.toFixed(1)} in churn, ${s.statusAfter.toFixed(1)} after the restart; ${s.statusRun.toFixed(1)} over the three`);
  console.log(`  leader writes in churn (audit log): ${(s.importWritesPerChange * o.updates).toFixed(0)} ResourceImport writes (spec or status) for ${String(o.updates)} effective changes = ${s.importWritesPerChange.toFixed(3)} per change; all its writes ${s.leaderWritesPerChange.toFixed(3)} per change (joins, leaves and status included)` +
    (f.churnWritesMetric === undefined ? '' : `; its own metric over the changes: ${String(f.churnWritesMetric)} = ${(f.churnWritesMetric / o.updates).toFixed(3)} per change`));
  if (f.restarts.length > 1) console.log(`  restarts, start -> ready each: ${f.restarts.map((r) => `${r.label} ${ms(r.readyMs)}`).join('; ')}`);
  const spawned = f.restarts[0]?.spawnToPingMs === undefined ? '' : ` (from its process's spawn: answering probes after ${ms(f.restarts[0].spawnToPingMs)}, ready after ${ms(f.restarts[0].spawnToReadyMs ?? NaN)})`;
  console.log(`  restart: ready after ${ms(f.restartReadyMs)}${spawned}${f.caughtUp === undefined ? '' : `, caught up after ${ms(f.caughtUp.afterMs)} more (${String(f.caughtUp.exports)} exports, ${String(f.caughtUp.imports)} imports)`}; leader writes from the restart to ${(f.restartWindowMs / 1000).toFixed(0)} s after: ${String(s.restartWrites)} (${rate(restart, 'leader')} during the restart)`);
}
