// The README's main command: a local leader and member (real kube-apiserver + etcd), the
// chart installed with the built helm, a member token issued by the agent's own helper, the
// agent joining with nothing but the chart ServiceAccount's token, and an import arriving.
//
//   npm run demo              # runs until Ctrl-C, which stops everything
//   npm run demo -- --once    # stops by itself after the import arrived (used by the e2e test)
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { k8sBins, repoRoot } from '../test/harness/bins.js';
import { AGENT_NS, CLUSTERSET_ID, LEADER_NS, readyCondition, clusterSetApi } from '../test/harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { issueToken } from '../test/harness/kube.js';
import { serviceImportRI, leaderImports } from '../test/harness/imports.js';
import { waitFor } from '../test/harness/wait.js';

const execFileAsync = promisify(execFile);
const { values } = parseArgs({ options: { once: { type: 'boolean', default: false }, interval: { type: 'string', default: '2' } } });
const chart = path.join(repoRoot, 'charts', 'clusterset-agent');
const cli = ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts')];
const say = (text: string) => { process.stdout.write(`\n▶ ${text}\n`); };
const show = (text: string) => { process.stdout.write(text.trimEnd().split('\n').map((l) => `    ${l}`).join('\n') + '\n'); };

let leader: ControlPlane | undefined;
let member: ControlPlane | undefined;
let agent: ChildProcess | undefined;
let stopping: Promise<void> | undefined;

function stopAll(): Promise<void> {
  stopping ??= (async () => {
    if (agent && agent.exitCode === null) {
      agent.kill('SIGTERM');
      await new Promise((resolve) => agent?.once('exit', resolve));
    }
    await Promise.all([leader?.stop(), member?.stop()]);
  })();
  return stopping;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping the agent and both control planes`);
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

async function main(): Promise<void> {
  const bins = k8sBins();
  say('starting a leader and a member control plane (etcd + kube-apiserver each, on loopback)');
  [leader, member] = await Promise.all([startControlPlane('demo-leader'), startControlPlane('demo-member')]);
  show(`leader ${leader.server}\nmember ${member.server}`);
  const l = leader;
  const m = member;
  const kubectl = (cp: ControlPlane, args: readonly string[], input?: string) => run(bins.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], input);
  const helm = (cp: ControlPlane, args: readonly string[]) => run(bins.helm, ['--kubeconfig', cp.kubeconfigPath, ...args]);

  say('leader: helm install (mode=leader): CRDs, the leader namespace, the member Role');
  show(await helm(l, ['install', 'clusterset-leader', chart, '--set', 'mode=leader', '--namespace', 'default']));
  await kubectl(l, ['apply', '-f', '-'], `apiVersion: multicluster.crd.antrea.io/v1alpha2
kind: ClusterSet
metadata: { name: ${CLUSTERSET_ID}, namespace: ${LEADER_NS} }
spec: { clusterID: leader, leaders: [ { clusterID: leader } ] }
`);

  say('member: helm install clusterset-agent (CRDs, ServiceAccount, least-privilege RBAC, config)');
  show(await helm(m, ['install', 'clusterset-agent', chart, '--namespace', AGENT_NS, '--create-namespace']));

  say('leader: clusterset-agent leader create-member-token --member-id east | kubectl apply (member)');
  const secretYaml = await run(process.execPath, [...cli, 'leader', 'create-member-token', '--member-id', 'east', '--kubeconfig', l.kubeconfigPath,
    '--member-namespace', AGENT_NS]);
  show(await kubectl(m, ['apply', '-f', '-'], secretYaml));

  say('member: the agent runs as a local process with only the chart ServiceAccount token (no pods here)');
  const sa = (await m.adminConfig().makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace: AGENT_NS, labelSelector: 'app.kubernetes.io/instance=clusterset-agent' })).items[0]?.metadata?.name;
  if (!sa) throw new Error('the chart created no ServiceAccount');
  const token = await issueToken(m.adminConfig(), AGENT_NS, sa);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-demo-'));
  const kubeconfig = path.join(dir, 'agent.kubeconfig');
  writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters: [ { name: member, cluster: { server: ${m.server}, certificate-authority: ${m.caFile} } } ]
users: [ { name: ${sa}, user: { token: ${token} } } ]
contexts: [ { name: agent, context: { cluster: member, user: ${sa} } } ]
current-context: agent
`, { mode: 0o600 });
  const configMap = parse(await kubectl(m, ['get', 'configmap', '-n', AGENT_NS, '-l', 'app.kubernetes.io/instance=clusterset-agent', '-o', 'yaml'])) as { items: { data?: Record<string, string> }[] };
  const configText = Object.values(configMap.items[0]?.data ?? {})[0];
  if (!configText) throw new Error('the chart rendered no agent config');
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(configFile, configText);
  show(`ServiceAccount ${AGENT_NS}/${sa}; config from the chart's ConfigMap`);
  agent = spawn(process.execPath, [...cli, 'run', '--config', configFile, '--kubeconfig', kubeconfig, '--namespace', AGENT_NS,
    '--heartbeat-interval', values.interval, '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'],
  { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, POD_NAMESPACE: AGENT_NS } });
  const agentLog: string[] = [];
  agent.stdout?.on('data', (chunk: Buffer) => { agentLog.push(...chunk.toString('utf8').split('\n').filter(Boolean)); });
  agent.once('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`agent exited (${String(code)}); last log lines:\n${agentLog.slice(-20).join('\n')}\n`);
      void stopAll().then(() => process.exit(1));
    }
  });

  say('member: kubectl apply ClusterSet');
  await kubectl(m, ['apply', '-f', '-'], `apiVersion: multicluster.crd.antrea.io/v1alpha2
kind: ClusterSet
metadata: { name: ${CLUSTERSET_ID}, namespace: ${AGENT_NS} }
spec:
  clusterID: east
  namespace: ${LEADER_NS}
  leaders: [ { clusterID: leader, server: "${l.server}", secret: leader-token } ]
`);
  show(await kubectl(m, ['get', 'clustersets', '-n', AGENT_NS]));
  await waitFor('ClusterSet Ready', async () => readyCondition(await clusterSetApi(m.adminConfig()).get(CLUSTERSET_ID))?.status === 'True', { timeoutMs: 60_000, intervalMs: 250 });
  say('member: kubectl get clustersets (Ready)');
  show(await kubectl(m, ['get', 'clustersets', '-n', AGENT_NS]));
  show(await kubectl(l, ['get', 'memberclusterannounces', '-n', LEADER_NS, '-o', 'custom-columns=NAME:.metadata.name,CLUSTER:.clusterID,CLUSTERSET:.clusterSetID,LAST-SEEN:.metadata.annotations.touch-ts']));

  say('leader: publish a ResourceImport for Service default/web');
  await leaderImports(l.adminConfig()).create(serviceImportRI('default', 'web', [{ name: 'http', port: 80 }]));
  await waitFor('imported Service', async () => {
    try {
      await m.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: 'default', name: 'antrea-mc-web' });
      return true;
    } catch {
      return false;
    }
  }, { timeoutMs: 60_000, intervalMs: 250 });
  say('member: the imported Service and ServiceImport');
  show(await kubectl(m, ['get', 'services,serviceimports', '-n', 'default', '-l', 'app.kubernetes.io/managed-by=clusterset-agent']));

  if (values.once) {
    say('done (--once): stopping');
    await stopAll();
    return;
  }
  say(`running; kubeconfigs: leader ${l.kubeconfigPath}, member ${m.kubeconfigPath}. Ctrl-C stops everything.`);
  await new Promise(() => undefined);
}

main().catch(async (err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
  await stopAll();
  process.exit(1);
});
