// Benchmark: `leader run` at fleet size, on the COMPILED build (the bundle bin/clusterset-agent.js
// starts, a child process with the image's memory settings), against a real leader control plane
// with the chart's admission policies installed.
//
//   npm run bench:leader -- [--members 100] [--services 2000] [--updates 1000] [--width 8]
//     [--period 10] [--joins 5] [--leaves 5] [--rest 60] [--after-restart 60] [--restarts 1]
//
// `--restarts N` restarts the leader N times in a row, each timed (start -> ready, then caught
// up before the next); with CSA_BENCH_LEADER_ENTRIES=<old bin/clusterset-agent.js>,<new one>
// the starts alternate between two builds: before and after a change, interleaved on one
// control plane and one fleet.
//
// The simulated fleet (members with their own tokens beating as Antrea's do, their exports, the
// churn with members joining and leaving, the restart; bench/fleet.ts describes it) runs against
// our leader, with the baseline: the same pipeline by a minimal client in the same run.
// `bench:antrea --mode leader` runs the same fleet against Antrea's leader as well.
//
// Prints, for the leader process: export -> import p50/p99 (and as a ratio of the baseline's);
// false Disconnected verdicts (a member whose last beat was within the timeout shown not Ready,
// read from the ClusterSet status watch: must be 0); liveness lag (last beat → Disconnected
// shown) of the members that stopped; RSS; CPU seconds per minute at rest and in churn; the
// event-loop lag (prom-client's monitorEventLoopDelay p99 and max, scraped every 5 s); writes
// per second to the API server by kind in each phase (the audit log; ClusterSet status writes
// must not grow with the beat rate) and per effective change; restart: ready time, catch-up and
// writes. Asserts nothing, but says which of issue 31's goals a figure misses. Exits 1 with the
// error when the run itself fails.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { buildDist, IMAGE_NODE_OPTIONS, runBench } from './common.js';
import { fleetOptions, runFleet, tearingDown } from './fleet.js';
import { ourLeader } from './fleet-leaders.js';
import { printFleet, summarize } from './fleet-report.js';

const { values } = parseArgs({ options: {
  members: { type: 'string', default: '100' }, services: { type: 'string', default: '2000' },
  updates: { type: 'string', default: '1000' }, width: { type: 'string', default: '8' },
  period: { type: 'string', default: '10' }, joins: { type: 'string' }, leaves: { type: 'string' },
  rest: { type: 'string', default: '60' }, 'after-restart': { type: 'string', default: '60' },
  restarts: { type: 'string', default: '1' },
} });

let cp: ControlPlane | undefined;
await runBench('bench:leader', async () => {
  const o = fleetOptions('bench:leader', values, true);
  buildDist();
  const tmp = mkdtempSync(path.join(tmpdir(), 'bench-leader-'));
  cp = await startControlPlane('bench-leader', { auditLog: true, startTimeoutSeconds: 180 });
  const f = await runFleet(cp, await ourLeader(cp, tmp), o);
  const s = summarize(f);
  console.log(`\nleader run at fleet size, compiled build (NODE_OPTIONS=${IMAGE_NODE_OPTIONS}), chart admission policies installed`);
  printFleet(f);
  const goals: [string, boolean][] = [
    ['p99 export→import ≤ 1 s', s.exportImportP99 <= 1000],
    ['0 false Disconnected', s.falseDisconnected === 0],
    ['Disconnected within timeout + one period (p99)', s.livenessP99 <= o.timeoutMs + o.periodMs],
    ['leader RSS ≤ 300 MiB', s.rssPeak <= 300 * 1024],
    ['event-loop lag p99 ≤ 50 ms (worst window)', s.lagP99Worst <= 50],
    ['ClusterSet status writes ≤ 1 per second', Math.max(s.statusRest, s.statusChurn, s.statusAfter) <= 60],
    ['restart ready ≤ 10 s with 0 writes', s.restartReadyMs <= 10_000 && s.restartWrites === 0],
  ];
  console.log(`  issue 31 goals: ${goals.map(([g, ok]) => `${g}: ${ok ? 'met' : 'MISSED'}`).join('; ')}`);
}, async () => {
  tearingDown.now = true;
  await cp?.stop();
});
