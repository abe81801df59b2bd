// The whole check, as the README's test command runs it: type-check, lint, build (or
// reuse) the real control-plane binaries (bare and fuller) and CoreDNS, run unit + integration tests, then prove no
// etcd/kube-apiserver outlived the tests.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const started = Date.now();
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  console.error(`Node ${process.versions.node} is running this script; the project pins Node 24 (run it through npm so node_modules/.bin/node is used).`);
  process.exit(1);
}

function step(title, command, args, env = process.env) {
  console.log(`\n=== ${title}`);
  const res = spawnSync(command, args, { stdio: 'inherit', env });
  if (res.status !== 0) {
    console.error(`=== ${title} failed (exit ${res.status ?? res.signal})`);
    process.exit(res.status ?? 1);
  }
}

step('type-check', 'tsc', ['-p', 'tsconfig.json', '--noEmit']);
step('lint', 'eslint', ['.']);

console.log('\n=== k8s binaries (built from Go modules on first use, then cached)');
const binsDir = process.env.K8S_BINS_DIR ||
  execFileSync('bash', ['test/k8s-bins/build-k8s-bins.sh'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
console.log(`using ${binsDir}`);
console.log('\n=== fuller control plane binaries: kube-controller-manager, kube-scheduler, kwok (own cache)');
const controlDir = process.env.K8S_CONTROL_BINS_DIR ||
  execFileSync('bash', ['test/k8s-control/build-control-bins.sh'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
console.log(`using ${controlDir}`);
console.log('\n=== CoreDNS v1.15.0, the clusterset.local server of test/integration/dns.test.ts (own cache)');
const corednsDir = process.env.COREDNS_DIR ||
  execFileSync('bash', ['test/coredns/build-coredns.sh'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
console.log(`using ${corednsDir}`);
console.log('\n=== MCS-API conformance suite v0.4.1 (test/integration/conformance.test.ts; own cache)');
console.log(`using ${execFileSync('bash', ['test/conformance/build-conformance.sh'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim()}`);

const files = (dir) => readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => path.join(dir, f));
const extra = process.argv.slice(2);
const selected = extra.length > 0 ? extra : [...files('test/unit'), ...files('test/integration')];
// Two files at a time by default (CSA_TEST_CONCURRENCY=1 for one): most of an integration file's
// time is spent waiting (heartbeats, retention timers, at-rest windows), not computing, and each
// file owns its control planes on free ports. Measured on this 2-core kind of machine: 1,218 s
// one at a time (quiet machine), 892 s two at a time (machine loaded by other builds), all green.
// This run's harness root: the sweep below must not kill another run's (or a benchmark's) processes.
const run = `run-${process.pid}-${Date.now().toString(36)}`;
const res = spawnSync('node', ['--import', 'tsx', '--test', `--test-concurrency=${process.env.CSA_TEST_CONCURRENCY ?? '2'}`, '--test-reporter=spec', ...selected],
  { stdio: 'inherit', env: { ...process.env, K8S_BINS_DIR: binsDir, K8S_CONTROL_BINS_DIR: controlDir, COREDNS_DIR: corednsDir, CSA_HARNESS_RUN: run } });

const root = path.join(os.tmpdir(), 'csa-harness', run) + '/';
const leftovers = [];
for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    if (cmdline.includes(root)) leftovers.push(`${pid} ${cmdline.slice(0, 160)}`);
  } catch { /* exited meanwhile */ }
}
if (leftovers.length > 0) {
  console.error(`\n=== ${leftovers.length} harness process(es) outlived the tests:\n${leftovers.join('\n')}`);
  for (const line of leftovers) { try { process.kill(Number(line.split(' ')[0]), 'SIGKILL'); } catch { /* gone */ } }
  process.exit(1);
}
// The run's root is empty unless a test kept its control-plane logs (CSA_KEEP_HARNESS=1).
try { rmdirSync(root); } catch { /* absent, or kept on purpose */ }
console.log(`\n=== no harness process left behind; total ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(res.status ?? 1);
