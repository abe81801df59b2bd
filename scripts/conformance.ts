// `npm run conformance`: the official MCS-API conformance suites (sigs.k8s.io/mcs-api/conformance
// v0.4.1, API v1alpha1, and v0.5.0, API v1beta1, one after the other) against a ClusterSet of
// this project only. A leader running `clusterset-agent leader run` and two members (east,
// west) running the agent, each process with nothing but its chart ServiceAccount's token; the
// members are fuller control planes (kube-controller-manager, kube-scheduler, a kwok node)
// because every test deploys Pods and deletes its namespace, and dual-stack (IPv4 and IPv6
// Service ranges) so that v0.5.0's PreferDualStack Services really get two families. Each suite
// runs with `-contexts=east,west` and every label except DNS and Connectivity (they exec into
// Pods and need a data plane). Prints Ginkgo's output and each suite's own report (report.html,
// rendered as text); exits non-zero when a spec of either failed.
//
//   npm run conformance                       # both suites, then everything is stopped
//   npm run conformance -- --suites v0.5.0     # one of them
//   npm run conformance -- --focus 'Headless'  # a subset (Ginkgo --focus)
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { controlBins, k8sBins, repoRoot } from '../test/harness/bins.js';
import { AGENT_NS, CLUSTERSET_ID, LEADER_NS, readyCondition, clusterSetApi } from '../test/harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { chartAgentConfig, chartServiceAccountKubeconfig } from '../test/harness/chart-processes.js';
import { waitFor } from '../test/harness/wait.js';

const execFileAsync = promisify(execFile);
const { values } = parseArgs({ options: {
  focus: { type: 'string' }, 'label-filter': { type: 'string', default: '!DNS && !Connectivity' }, suites: { type: 'string', default: 'v0.4.1,v0.5.0' },
} });
const SUITES = values.suites.split(',').map((v) => v.trim()).filter((v) => v !== '');
const chart = path.join(repoRoot, 'charts', 'clusterset-agent');
const cli = ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts')];
const BUILD_SCRIPT = path.join(repoRoot, 'test', 'conformance', 'build-conformance.sh');
const say = (text: string) => { process.stdout.write(`\n▶ ${text}\n`); };
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;

const processes: { name: string; child: ChildProcess; log: string[] }[] = [];
const controlPlanes: ControlPlane[] = [];
let stopping = false;

async function stopAll(): Promise<void> {
  stopping = true;
  await Promise.all(processes.filter((p) => p.child.exitCode === null).map(async (p) => {
    p.child.kill('SIGTERM');
    await new Promise((resolve) => p.child.once('exit', resolve));
  }));
  await Promise.all(controlPlanes.map((cp) => cp.stop()));
}

async function run(cmd: string, args: readonly string[], input?: string): Promise<string> {
  const child = execFileAsync(cmd, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-conformance-'));

/** A kubeconfig holding only the token of the chart's ServiceAccount of release `instance`. */
async function serviceAccountKubeconfig(cp: ControlPlane, namespace: string, instance: string): Promise<string> {
  return (await chartServiceAccountKubeconfig(cp, namespace, instance, dir)).file;
}

/** Runs the CLI; its JSON log goes to `<dir>/<name>.log`, the last lines are shown if it dies. */
function spawnCli(name: string, args: readonly string[], env: Record<string, string>): void {
  const child = spawn(process.execPath, [...cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const entry = { name, child, log: [] as string[] };
  const keep = (chunk: Buffer) => { entry.log.push(...chunk.toString('utf8').split('\n').filter(Boolean)); if (entry.log.length > 2000) entry.log.splice(0, 1000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.once('exit', (code) => {
    if (!stopping) process.stderr.write(`${name} exited (${String(code)}); last log lines:\n${entry.log.slice(-20).join('\n')}\n`);
  });
  processes.push(entry);
}

async function startLeader(l: ControlPlane, kubectl: (cp: ControlPlane, args: readonly string[], input?: string) => Promise<string>,
  helm: (cp: ControlPlane, args: readonly string[]) => Promise<string>): Promise<void> {
  await helm(l, ['install', 'clusterset-leader', chart, '--set', 'mode=leader', '--namespace', 'default']);
  await kubectl(l, ['apply', '-f', '-'], `apiVersion: multicluster.crd.antrea.io/v1alpha2
kind: ClusterSet
metadata: { name: ${CLUSTERSET_ID}, namespace: ${LEADER_NS} }
spec: { clusterID: leader, leaders: [ { clusterID: leader } ] }
`);
  const file = await serviceAccountKubeconfig(l, 'default', 'clusterset-leader');
  spawnCli('leader', ['leader', 'run', '--kubeconfig', file, '--namespace', 'default',
    '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'], { CSA_LEADER_NAMESPACE: LEADER_NS });
}

async function joinMember(l: ControlPlane, m: ControlPlane, id: string, kubectl: (cp: ControlPlane, args: readonly string[], input?: string) => Promise<string>,
  helm: (cp: ControlPlane, args: readonly string[]) => Promise<string>): Promise<void> {
  await helm(m, ['install', 'clusterset-agent', chart, '--namespace', AGENT_NS, '--create-namespace']);
  const secretYaml = await run(process.execPath, [...cli, 'leader', 'create-member-token', '--member-id', id, '--kubeconfig', l.kubeconfigPath, '--member-namespace', AGENT_NS]);
  await kubectl(m, ['apply', '-f', '-'], secretYaml);
  const file = await serviceAccountKubeconfig(m, AGENT_NS, 'clusterset-agent');
  const configFile = await chartAgentConfig(m, AGENT_NS, 'clusterset-agent', dir);
  spawnCli(`${id} agent`, ['run', '--config', configFile, '--kubeconfig', file, '--namespace', AGENT_NS,
    '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'], { POD_NAMESPACE: AGENT_NS });
  await kubectl(m, ['apply', '-f', '-'], `apiVersion: multicluster.crd.antrea.io/v1alpha2
kind: ClusterSet
metadata: { name: ${CLUSTERSET_ID}, namespace: ${AGENT_NS} }
spec:
  clusterID: ${id}
  namespace: ${LEADER_NS}
  leaders: [ { clusterID: leader, server: "${l.server}", secret: leader-token } ]
`);
}

/** One kubeconfig with an admin context per member, named after the member (the suite's `-contexts`). */
function suiteKubeconfig(members: readonly [string, ControlPlane][]): string {
  const file = path.join(dir, 'suite.kubeconfig');
  const pki = (cp: ControlPlane, f: string) => path.join(cp.dir, 'pki', f);
  writeFileSync(file, `apiVersion: v1
kind: Config
clusters:
${members.map(([id, cp]) => `- { name: ${id}, cluster: { server: "${cp.server}", certificate-authority: ${cp.caFile} } }`).join('\n')}
users:
${members.map(([id, cp]) => `- { name: ${id}-admin, user: { client-certificate: ${pki(cp, 'admin.crt')}, client-key: ${pki(cp, 'admin.key')} } }`).join('\n')}
contexts:
${members.map(([id]) => `- { name: ${id}, context: { cluster: ${id}, user: ${id}-admin } }`).join('\n')}
current-context: ${members[0]?.[0] ?? ''}
`, { mode: 0o600 });
  return file;
}

/** The suite's report.html as text: one line per spec, grouped like the HTML. */
export function renderReport(html: string): string {
  const text = (s: string) => s.replace(/<[^>]*>/g, '').replace(/&#34;/g, '"').replace(/&#39;/g, '\'').replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim();
  const lines: string[] = [];
  for (const part of html.split(/<h3>/).slice(1)) {
    const [title = '', body = ''] = part.split('</h3>');
    lines.push('', `== ${text(title)} ==`);
    for (const row of body.split(/<tr>/).slice(1)) {
      const cells = [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => text(m[1] ?? ''));
      if (cells.length === 3) lines.push(`${(cells[0] ?? '').padEnd(12)} [${cells[1] ?? ''}] ${cells[2] ?? ''}`);
    }
  }
  const failure = /<p style="color: red">([\s\S]*?)<\/p>/.exec(html);
  if (failure) lines.unshift(`suite failure: ${text(failure[1] ?? '')}`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  say('building (or reusing) the k8s binaries, the fuller control plane\'s binaries and the conformance suite');
  const bins = k8sBins();
  controlBins();
  const suites = SUITES.map((version) => ({ version, binary: execFileSync('bash', [BUILD_SCRIPT, version], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim() }));
  const kubectl = (cp: ControlPlane, args: readonly string[], input?: string) => run(bins.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], input);
  const helm = (cp: ControlPlane, args: readonly string[]) => run(bins.helm, ['--kubeconfig', cp.kubeconfigPath, ...args]);

  say(`starting a bare leader and two fuller, dual-stack members, east and west (${elapsed()})`);
  const [l, east, west] = await Promise.all([
    startControlPlane('mcs-leader'),
    startControlPlane('mcs-east', { controllers: true, podCIDR: '10.244.0.0/16', dualStack: true }),
    startControlPlane('mcs-west', { controllers: true, podCIDR: '10.245.0.0/16', dualStack: true }),
  ]);
  controlPlanes.push(l, east, west);
  say(`leader: chart (mode=leader) and clusterset-agent leader run (${elapsed()})`);
  await startLeader(l, kubectl, helm);
  say(`east, west: chart, member token, the agent (${elapsed()})`);
  await joinMember(l, east, 'east', kubectl, helm);
  await joinMember(l, west, 'west', kubectl, helm);
  for (const m of [east, west]) {
    await waitFor(`${m.name} ClusterSet Ready`, async () => readyCondition(await clusterSetApi(m.adminConfig()).get(CLUSTERSET_ID))?.status === 'True', { timeoutMs: 90_000, intervalMs: 250 });
  }
  await waitFor('both members ready on the leader', async () => {
    const cs = (await l.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: 'multicluster.crd.antrea.io', version: 'v1alpha2', plural: 'clustersets', namespace: LEADER_NS, name: CLUSTERSET_ID })) as { status?: { readyClusters?: number } };
    return cs.status?.readyClusters === 2;
  }, { timeoutMs: 90_000, intervalMs: 250 });

  const kubeconfig = suiteKubeconfig([['east', east], ['west', west]]);
  let failed = 0;
  for (const suite of suites) {
    // Each suite in its own directory: its report.html is its own.
    const suiteDir = mkdtempSync(path.join(dir, `suite-${suite.version}-`));
    const args = [`-kubeconfig=${kubeconfig}`, '-contexts=east,west', '-test.timeout=60m', `--ginkgo.label-filter=${values['label-filter']}`,
      '--ginkgo.no-color', ...(values.focus ? [`--ginkgo.focus=${values.focus}`] : [])];
    say(`running the MCS conformance suite ${suite.version}: ${path.basename(suite.binary)} ${args.join(' ')} (${elapsed()})`);
    const suiteStarted = Date.now();
    const code = await new Promise<number>((resolve) => {
      const child = spawn(suite.binary, args, { cwd: suiteDir, stdio: ['ignore', 'inherit', 'inherit'] });
      child.once('exit', (c) => { resolve(c ?? 1); });
    });
    const suiteSeconds = ((Date.now() - suiteStarted) / 1000).toFixed(0);
    say(`the suite's own report, ${suite.version} (${path.join(suiteDir, 'report.html')}):`);
    try {
      process.stdout.write(`${renderReport(readFileSync(path.join(suiteDir, 'report.html'), 'utf8'))}\n`);
    } catch (err) {
      process.stdout.write(`no report.html: ${(err as Error).message}\n`);
    }
    if (code !== 0) {
      failed += 1;
      for (const p of processes) process.stdout.write(`\n--- ${p.name}: last log lines ---\n${p.log.slice(-40).join('\n')}\n`);
    }
    say(`suite ${suite.version} exit code ${String(code)}; suite ${suiteSeconds} s, whole run ${elapsed()}`);
  }
  return failed === 0 ? 0 : 1;
}

main().then(async (code) => {
  await stopAll();
  process.exit(code);
}, async (err: unknown) => {
  process.stderr.write(`conformance run failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  await stopAll();
  process.exit(1);
});
