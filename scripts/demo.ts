// The README's main command: a three-cluster ClusterSet with nothing but this project. A leader
// running `clusterset-agent leader run` and two members (east, west) running the agent, each a
// real kube-apiserver + etcd on loopback, the chart installed with the built helm, each member
// joined with `clusterset-agent join`, every process running with nothing but its chart
// ServiceAccount's token. east exports a Service; it appears in west as antrea-mc-<name> with
// east's endpoint; `clusterset-agent status` shows the ClusterSet; east leaves with
// `clusterset-agent leave` and the import disappears from west.
//
//   npm run demo              # runs until Ctrl-C, which stops everything
//   npm run demo -- --once    # stops by itself at the end (used by the e2e test)
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { k8sBins, repoRoot } from '../test/harness/bins.js';
import { AGENT_NS, CLUSTERSET_ID, LEADER_NS } from '../test/harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { chartAgentConfig, chartServiceAccountKubeconfig } from '../test/harness/chart-processes.js';
import { waitFor } from '../test/harness/wait.js';

const execFileAsync = promisify(execFile);
const { values } = parseArgs({ options: { once: { type: 'boolean', default: false }, interval: { type: 'string', default: '2' } } });
const chart = path.join(repoRoot, 'charts', 'clusterset-agent');
const cli = ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts')];
const say = (text: string) => { process.stdout.write(`\n▶ ${text}\n`); };
const show = (text: string) => { process.stdout.write(text.trimEnd().split('\n').map((l) => `    ${l}`).join('\n') + '\n'); };

const processes: ChildProcess[] = [];
const controlPlanes: ControlPlane[] = [];
let stopping: Promise<void> | undefined;

function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all(processes.filter((p) => p.exitCode === null).map(async (p) => {
      p.kill('SIGTERM');
      await new Promise((resolve) => p.once('exit', resolve));
    }));
    await Promise.all(controlPlanes.map((cp) => cp.stop()));
  })();
  return stopping;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping the agents, the leader and the control planes`);
    void stopAll().then(() => process.exit(130));
  });
}

async function run(cmd: string, args: readonly string[], input?: string): Promise<string> {
  const child = execFileAsync(cmd, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return (await child).stdout;
}

const bins = k8sBins();
const kubectl = (cp: ControlPlane, args: readonly string[], input?: string) => run(bins.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], input);
const helm = (cp: ControlPlane, args: readonly string[]) => run(bins.helm, ['--kubeconfig', cp.kubeconfigPath, ...args]);
const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-demo-'));

const serviceAccountKubeconfig = (cp: ControlPlane, namespace: string, instance: string) => chartServiceAccountKubeconfig(cp, namespace, instance, dir);

function spawnCli(name: string, args: readonly string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [...cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const log: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => { log.push(...chunk.toString('utf8').split('\n').filter(Boolean)); });
  child.once('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`${name} exited (${String(code)}); last log lines:\n${log.slice(-20).join('\n')}\n`);
      void stopAll().then(() => process.exit(1));
    }
  });
  processes.push(child);
  return child;
}

async function installMember(m: ControlPlane, id: string): Promise<void> {
  say(`${id}: helm install clusterset-agent (CRDs, ServiceAccount, least-privilege RBAC, config)`);
  show(await helm(m, ['install', 'clusterset-agent', chart, '--namespace', AGENT_NS, '--create-namespace']));
  const { sa, file } = await serviceAccountKubeconfig(m, AGENT_NS, 'clusterset-agent');
  const configFile = await chartAgentConfig(m, AGENT_NS, 'clusterset-agent', dir);
  say(`${id}: the agent as a local process with only the token of ServiceAccount ${AGENT_NS}/${sa} and the chart's config`);
  spawnCli(`${id} agent`, ['run', '--config', configFile, '--kubeconfig', file, '--namespace', AGENT_NS,
    '--heartbeat-interval', values.interval, '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'], { POD_NAMESPACE: AGENT_NS });
}

/** `clusterset-agent join`: the member's access on the leader, its Secret and ClusterSet, then Ready. */
async function joinMember(l: ControlPlane, m: ControlPlane, id: string, extra: readonly string[] = []): Promise<void> {
  const args = ['join', '--leader-kubeconfig', l.kubeconfigPath, '--member-kubeconfig', m.kubeconfigPath, '--cluster-id', id, '--clusterset', CLUSTERSET_ID,
    // Every cluster here is on loopback, so the members do reach the leader at its kubeconfig's URL:
    // said explicitly, as join refuses a loopback URL it would only have defaulted to.
    '--leader-server', l.server, ...extra];
  say(`clusterset-agent ${args.join(' ').replaceAll(dir, '…')}`);
  const child = execFileAsync(process.execPath, [...cli, ...args], { encoding: 'utf8' });
  child.child.stderr?.on('data', (chunk: Buffer) => { show(chunk.toString('utf8')); });
  show((await child).stdout);
}

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw err;
  }
}

async function main(): Promise<void> {
  say('starting a leader and two members, east and west (etcd + kube-apiserver each, on loopback)');
  const [l, east, west] = await Promise.all([startControlPlane('demo-leader'), startControlPlane('demo-east'), startControlPlane('demo-west')]);
  controlPlanes.push(l, east, west);
  show(`leader ${l.server}\neast   ${east.server}\nwest   ${west.server}`);

  say('leader: helm install (mode=leader): CRDs, the leader namespace, the member Role, admission policies, the leader controller');
  show(await helm(l, ['install', 'clusterset-leader', chart, '--set', 'mode=leader', '--namespace', 'default']));
  const leaderAccess = await serviceAccountKubeconfig(l, 'default', 'clusterset-leader');
  say(`leader: clusterset-agent leader run, as a local process with only the token of ServiceAccount default/${leaderAccess.sa}`);
  spawnCli('leader', ['leader', 'run', '--kubeconfig', leaderAccess.file, '--namespace', 'default',
    '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'], { CSA_LEADER_NAMESPACE: LEADER_NS });

  await installMember(east, 'east');
  await installMember(west, 'west');
  // The first join also creates the leader's ClusterSet; the second finds it.
  await joinMember(l, east, 'east', ['--leader-cluster-id', 'leader']);
  await joinMember(l, west, 'west');
  say('east, west: kubectl get clustersets');
  show(await kubectl(east, ['get', 'clustersets', '-n', AGENT_NS]));
  show(await kubectl(west, ['get', 'clustersets', '-n', AGENT_NS]));
  await waitFor('both members ready on the leader', async () => {
    const cs = (await l.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: 'multicluster.crd.antrea.io', version: 'v1alpha2', plural: 'clustersets', namespace: LEADER_NS, name: CLUSTERSET_ID })) as { status?: { readyClusters?: number } };
    return cs.status?.readyClusters === 2;
  }, { timeoutMs: 60_000, intervalMs: 250 });
  say('leader: kubectl get clustersets,memberclusterannounces (liveness from each announce\'s touch-ts)');
  show(await kubectl(l, ['get', 'clustersets', '-n', LEADER_NS]));
  show(await kubectl(l, ['get', 'clusterset', CLUSTERSET_ID, '-n', LEADER_NS, '-o',
    'jsonpath={range .status.clusterStatuses[*]}{.clusterID}{"\\t"}{.conditions[0].type}={.conditions[0].status}{"\\t"}{.conditions[0].reason}{"\\n"}{end}']));

  say('east: a Service default/web with one ready endpoint, and a ServiceExport for it');
  const svc = await east.adminConfig().makeApiClient(CoreV1Api).createNamespacedService({ namespace: 'default', body: { metadata: { name: 'web' }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } } });
  await east.adminConfig().makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({ namespace: 'default', body: {
    metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4',
    endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  } });
  await kubectl(east, ['apply', '-f', '-'], 'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: { name: web, namespace: default }\n');
  show(`east's Service web has ClusterIP ${svc.spec?.clusterIP ?? '?'}`);
  const westCore = west.adminConfig().makeApiClient(CoreV1Api);
  await waitFor('antrea-mc-web in west with east\'s endpoint', async () => {
    try {
      const ep = await westCore.readNamespacedEndpoints({ namespace: 'default', name: 'antrea-mc-web' });
      return (ep.subsets ?? []).some((s) => (s.addresses ?? []).some((a) => a.ip === svc.spec?.clusterIP));
    } catch {
      return false;
    }
  }, { timeoutMs: 60_000, intervalMs: 250 });
  say('leader: the ResourceExports from east and the ResourceImports the leader made of them');
  show(await kubectl(l, ['get', 'resourceexports,resourceimports', '-n', LEADER_NS]));
  say('west: the imported Service, its Endpoints (east\'s ClusterIP) and the ServiceImport');
  show(await kubectl(west, ['get', 'services,endpoints,serviceimports', '-n', 'default', '-l', 'app.kubernetes.io/managed-by=clusterset-agent']));

  say('clusterset-agent status (against the leader): members, exports, imports at a glance');
  // Exit 3 (something needs attention) is an answer too: show it either way.
  show((await execFileAsync(process.execPath, [...cli, 'status', '--kubeconfig', l.kubeconfigPath], { encoding: 'utf8' })
    .catch((err: unknown) => err as { stdout: string })).stdout);
  say(`clusterset-agent leave --clusterset ${CLUSTERSET_ID} (east leaves: its ClusterSet, Secret and access on the leader)`);
  const leaving = execFileAsync(process.execPath, [...cli, 'leave', '--leader-kubeconfig', l.kubeconfigPath, '--member-kubeconfig', east.kubeconfigPath, '--clusterset', CLUSTERSET_ID], { encoding: 'utf8' });
  leaving.child.stderr?.on('data', (chunk: Buffer) => { show(chunk.toString('utf8')); });
  show((await leaving).stdout);
  await waitFor('antrea-mc-web gone from west', async () => !(await exists(() => westCore.readNamespacedService({ namespace: 'default', name: 'antrea-mc-web' }))), { timeoutMs: 60_000, intervalMs: 250 });
  say('west: the import is gone with east');
  show(await kubectl(west, ['get', 'services', '-n', 'default']));
  // The leader writes its ClusterSet status at most once a second: the import may go first.
  await waitFor('the leader counts one member', async () => (await kubectl(l, ['get', 'clusterset', CLUSTERSET_ID, '-n', LEADER_NS, '-o', 'jsonpath={.status.totalClusters}'])).trim() === '1',
    { timeoutMs: 30_000, intervalMs: 250 });
  show(await kubectl(l, ['get', 'clustersets', '-n', LEADER_NS]));

  if (values.once) {
    say('done (--once): stopping');
    await stopAll();
    return;
  }
  say(`running; kubeconfigs: leader ${l.kubeconfigPath}, east ${east.kubeconfigPath}, west ${west.kubeconfigPath}. Ctrl-C stops everything.`);
  await new Promise(() => undefined);
}

main().catch(async (err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
  await stopAll();
  process.exit(1);
});
