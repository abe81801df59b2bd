// How fast clusterset.local follows the imports: a leader and one member (bare control planes,
// `leader run` and the agent in this process), the real CoreDNS v1.15.0 against the member with
// `multicluster clusterset.local` (test/harness/coredns.ts). One Service is exported and
// unexported `--changes` times; each time the benchmark takes
//   import → resolvable:  the watch event of the ServiceImport with its IP → the first A answer
//   unexport → NXDOMAIN:  the watch event of its deletion → the first NXDOMAIN
// (the watch runs in this process, as CoreDNS's informer does in its own), and end to end from
// the ServiceExport's create/delete. DNS is polled every `--poll-ms`. Prints p50/p99/max.
//   npm run bench:dns -- [--changes 50] [--poll-ms 2]
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, Watch } from '@kubernetes/client-node';
import { SERVICE_EXPORT, SERVICE_IMPORT, type ServiceImport } from '../src/common/api/mcs.js';
import { loadConfig } from '../src/common/config/config.js';
import { createLogger } from '../src/common/log/logger.js';
import { startAgent, type Agent } from '../src/agent.js';
import { LeaderController } from '../src/leader/controller.js';
import { AGENT_NS, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret } from '../test/harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { lookup, startCoreDNS, type CoreDNS } from '../test/harness/coredns.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';

const { values } = parseArgs({ options: { changes: { type: 'string', default: '50' }, 'poll-ms': { type: 'string', default: '2' } } });
const changes = Number(values.changes);
const pollMs = Number(values['poll-ms']);
const NS = 'bench';
const NAME = 'web';
const FQDN = `${NAME}.${NS}.svc.clusterset.local`;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
function summary(label: string, samples: readonly number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const f = (v: number) => `${v.toFixed(1)} ms`;
  return `${label.padEnd(34)} n=${String(s.length)}  p50 ${f(percentile(s, 50))}  p99 ${f(percentile(s, 99))}  max ${f(s.at(-1) ?? NaN)}`;
}

const planes: ControlPlane[] = [];
let controller: LeaderController | undefined;
let agent: Agent | undefined;
let coredns: CoreDNS | undefined;
let abortWatch: (() => void) | undefined;
try {
  const [leader, member] = await Promise.all([startControlPlane('bench-dns-leader'), startControlPlane('bench-dns-member')]);
  planes.push(leader, member);
  const quiet = createLogger({ level: 'error' });
  await setupLeader(leader);
  controller = new LeaderController({ kubeConfig: leader.adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 30_000, staleMemberMs: 86_400_000, logger: quiet });
  await controller.start();
  await installCrds(member);
  for (const ns of [AGENT_NS, NS]) await createNamespace(member.adminConfig(), ns);
  const access = await createMemberAccess(leader, 'east');
  await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
  await createClusterSet(member, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
  const config = loadConfig({ env: {}, readFile: () => '' });
  agent = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: 2 } }, quiet, member.adminConfig());
  await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 60_000);
  coredns = await startCoreDNS(member);
  const dnsServer = coredns;

  const kc = member.adminConfig();
  await kc.makeApiClient(CoreV1Api).createNamespacedService({ namespace: NS, body: { metadata: { name: NAME }, spec: { ports: [{ name: 'http', port: 80 }] } } });
  await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({ namespace: NS, body: { metadata: { name: `${NAME}-local`, labels: { 'kubernetes.io/service-name': NAME } },
    addressType: 'IPv4', endpoints: [{ addresses: ['10.7.0.1'], conditions: { ready: true } }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
  const custom = kc.makeApiClient(CustomObjectsApi);
  const exportRef = { group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: NS };

  // The import as the member's API tells it, timestamped on arrival.
  const events: { type: string; hasIP: boolean; at: number }[] = [];
  const watch = await new Watch(kc).watch(`/apis/${SERVICE_IMPORT.group}/${SERVICE_IMPORT.version}/namespaces/${NS}/${SERVICE_IMPORT.plural}`, {},
    (type: string, obj: ServiceImport) => { events.push({ type, hasIP: (obj.spec?.ips ?? []).length > 0, at: performance.now() }); },
    (err: unknown) => { if (err !== null && err !== undefined) console.error(`watch ended: ${err instanceof Error ? err.message : JSON.stringify(err)}`); });
  abortWatch = () => { watch.abort(); };

  const firstDNS = async (want: (answer: unknown) => boolean): Promise<number> => {
    for (;;) {
      const answer = await lookup(() => dnsServer.resolver().resolve4(FQDN));
      if (want(answer)) return performance.now();
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };
  const eventAt = (match: (e: { type: string; hasIP: boolean }) => boolean, from: number) =>
    waitFor('the ServiceImport watch event', () => events.slice(from).find(match)?.at, { timeoutMs: 30_000, intervalMs: 5 });

  const importToDNS: number[] = [];
  const exportToDNS: number[] = [];
  const deleteToNX: number[] = [];
  const unexportToNX: number[] = [];
  for (let i = 0; i < changes; i++) {
    let from = events.length;
    const exportedAt = performance.now();
    await custom.createNamespacedCustomObject({ ...exportRef, body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name: NAME } } });
    const resolvedAt = await firstDNS((a) => Array.isArray(a) && a.length > 0);
    importToDNS.push(resolvedAt - await eventAt((e) => e.type !== 'DELETED' && e.hasIP, from));
    exportToDNS.push(resolvedAt - exportedAt);

    from = events.length;
    const unexportedAt = performance.now();
    await custom.deleteNamespacedCustomObject({ ...exportRef, name: NAME });
    const nxAt = await firstDNS((a) => (a as { error?: string }).error === 'ENOTFOUND');
    deleteToNX.push(nxAt - await eventAt((e) => e.type === 'DELETED', from));
    unexportToNX.push(nxAt - unexportedAt);
    process.stderr.write(`\r${String(i + 1)}/${String(changes)}`);
  }
  process.stderr.write('\n');
  console.log(`clusterset.local latency, CoreDNS v1.15.0 polled every ${String(pollMs)} ms, ${String(changes)} exports and ${String(changes)} unexports`);
  console.log(summary('import → resolvable', importToDNS));
  console.log(summary('ServiceImport deleted → NXDOMAIN', deleteToNX));
  console.log(summary('export → resolvable (end to end)', exportToDNS));
  console.log(summary('unexport → NXDOMAIN (end to end)', unexportToNX));
  console.log('(negative: CoreDNS answered before this process saw the watch event)');
} catch (err) {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exitCode = 1;
} finally {
  abortWatch?.();
  await coredns?.stop();
  await agent?.stop();
  await controller?.stop();
  await Promise.all(planes.map((p) => p.stop()));
  process.exit(process.exitCode ?? 0);
}
