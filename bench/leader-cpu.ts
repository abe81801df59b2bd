// Benchmark (issue 29, item 4): what one member's payload costs the leader's pure decisions,
// on the COMPILED build (dist/), in-process, without an API server.
//
//   npm run bench:leader-cpu -- [--ports 30000] [--cidrs 60000] [--members 50]
//
// * mergePorts over one export of `ports` ports and over one of a tenth as many: a linear merge
//   costs ~10x for 10x the ports, a quadratic one ~100x. Baseline in the same run: reading the
//   ports (servicePorts), which any merge must do.
// * The ClusterInfo verdicts after one change, as the leader asks them: one judgement per
//   member's import key (`members` of them) with one member holding `cidrs` /32 pod CIDRs.
//   Baseline: parsing those CIDRs once.
// Prints the times and ratios; asserts nothing.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ResourceExport } from '../src/common/api/antrea.js';
import { clusterInfoExportOf, serviceExport as harnessServiceExport, storedExport } from '../test/harness/resource-export.js';
import { buildDist, repoRoot } from './common.js';

const { values } = parseArgs({ options: {
  ports: { type: 'string', default: '30000' }, cidrs: { type: 'string', default: '60000' }, members: { type: 'string', default: '50' },
} });
const PORTS = Number(values.ports);
const CIDRS = Number(values.cidrs);
const MEMBERS = Number(values.members);

buildDist();
const dist = (file: string) => pathToFileURL(path.join(repoRoot, 'dist', file)).href;
const aggregate = (await import(dist('leader/decisions/aggregate.js'))) as typeof import('../src/leader/decisions/aggregate.js');
const check = (await import(dist('leader/decisions/clusterinfo-check.js'))) as typeof import('../src/leader/decisions/clusterinfo-check.js');
// (Before issue 29 the leader's parser lived in clusterinfo-check.)
const net = (await import(dist('common/net/cidr.js')).catch(() => import(dist('leader/decisions/clusterinfo-check.js')))) as Pick<typeof import('../src/common/net/cidr.js'), 'parseCidr'>;

/** Best of `runs` timings of `fn`, in ms. */
function best(runs: number, fn: () => unknown): number {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

function serviceExport(cluster: string, ports: number): ResourceExport {
  return storedExport(harnessServiceExport(cluster, 'bench', 'wide', {
    ports: Array.from({ length: ports }, (_, p) => ({ name: `p${String(p)}`, port: 1024 + p, protocol: 'TCP' })),
  }), '2026-01-01T00:00:00Z');
}

const small = [serviceExport('east', PORTS / 10)];
const large = [serviceExport('east', PORTS)];
const readSmall = best(5, () => aggregate.servicePorts(small[0] as ResourceExport));
const readLarge = best(5, () => aggregate.servicePorts(large[0] as ResourceExport));
const mergeSmall = best(3, () => aggregate.mergePorts(small));
const mergeLarge = best(3, () => aggregate.mergePorts(large));
console.log(`\nleader decisions, compiled build`);
console.log(`  mergePorts, ${String(PORTS / 10)} ports: ${mergeSmall.toFixed(1)} ms; ${String(PORTS)} ports: ${mergeLarge.toFixed(1)} ms; ` +
  `10x the ports costs ${(mergeLarge / mergeSmall).toFixed(1)}x (linear ~10, quadratic ~100)`);
console.log(`  baseline (reading the ports): ${readLarge.toFixed(1)} ms for ${String(PORTS)} (${(readLarge / readSmall).toFixed(1)}x for 10x); mergePorts / baseline at ${String(PORTS)}: ${(mergeLarge / readLarge).toFixed(1)}`);

const cidrs = Array.from({ length: CIDRS }, (_, i) => `100.${String(64 + Math.floor(i / 65_536))}.${String(Math.floor(i / 256) % 256)}.${String(i % 256)}/32`);
const members: ResourceExport[] = Array.from({ length: MEMBERS }, (_, m) => {
  const re = storedExport(clusterInfoExportOf(`m${String(m)}`, {
    serviceCIDR: `192.168.${String(m)}.0/24`, gatewayIP: `172.18.0.${String(m + 2)}`, podCIDRs: m === 0 ? cidrs : [`10.${String(m)}.0.0/16`],
  }), new Date(1_700_000_000_000 + m * 1000).toISOString());
  return { ...re, metadata: { ...re.metadata, resourceVersion: '1' } };
});
const parseOnce = best(3, () => cidrs.map((c) => net.parseCidr(c)));
// What the leader runs after the big member's ClusterInfo changed: every member's key asks.
// (A build without ClusterInfoJudge, before issue 29: every key judges all.)
const judge = (check as Partial<typeof check>).ClusterInfoJudge === undefined
  ? { judged: 0, verdicts(mine: ResourceExport[], all: ResourceExport[]) { this.judged += 1; return check.clusterInfoVerdicts(mine, all); } }
  : new check.ClusterInfoJudge();
const judgeTime = best(1, () => { for (const re of members) judge.verdicts([re], members); });
console.log(`  ClusterInfo verdicts after one change, ${String(MEMBERS)} keys asking, one member with ${String(CIDRS)} /32s: ${judgeTime.toFixed(0)} ms ` +
  `(judged ${String(judge.judged)} time(s)); baseline (parsing the ${String(CIDRS)} CIDRs once): ${parseOnce.toFixed(0)} ms; ratio ${(judgeTime / parseOnce).toFixed(1)}`);
