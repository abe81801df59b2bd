// Benchmark: initial import sync of N ResourceImports against a raw floor measured in the
// same run on the same member apiserver, and the propagation latency of ResourceImport updates.
//
//   npm run bench:imports -- [--n 2000] [--updates 1000]
//
// Prints figures only; it asserts nothing (that is the tests' job).
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, Watch, type V1Endpoints } from '@kubernetes/client-node';
import { createLogger } from '../src/log/logger.js';
import { loadConfig } from '../src/config/config.js';
import { startAgent } from '../src/agent.js';
import { AGENT_NS, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, setupLeader, waitForReady, writeLeaderSecret } from '../test/harness/clusterset.js';
import { startControlPlane } from '../test/harness/control-plane.js';
import { endpointsRI, leaderImports, serviceImportRI } from '../test/harness/imports.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000' }, updates: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '8' } } });
const N = Number(values.n);
const UPDATES = Number(values.updates);
const CONCURRENCY = Number(values.concurrency);

async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  }));
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const [leader, member] = await Promise.all([startControlPlane('bench-leader'), startControlPlane('bench-member')]);
try {
  await Promise.all([setupLeader(leader), installCrds(member)]);
  for (const ns of [AGENT_NS, 'bench', 'floor']) await createNamespace(member.adminConfig(), ns);
  const access = await createMemberAccess(leader, 'east');
  await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
  const half = Math.floor(N / 2);
  const names = Array.from({ length: half }, (_, i) => `svc-${String(i)}`);

  // Raw floor: the same local objects (Service, ServiceImport with the ClusterIP, Endpoints),
  // created by a minimal client with the same concurrency, nothing else.
  const core = member.adminConfig().makeApiClient(CoreV1Api);
  const custom = member.adminConfig().makeApiClient(CustomObjectsApi);
  const floorStart = performance.now();
  await pool(names, CONCURRENCY, async (name) => {
    const svc = await core.createNamespacedService({ namespace: 'floor', body: { metadata: { name: `antrea-mc-${name}` }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } });
    await custom.createNamespacedCustomObject({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespace: 'floor',
      body: { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', metadata: { name }, spec: { type: 'ClusterSetIP', ips: [svc.spec?.clusterIP], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } });
    await core.createNamespacedEndpoints({ namespace: 'floor', body: { metadata: { name: `antrea-mc-${name}` }, subsets: [{ addresses: [{ ip: '10.1.0.1' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] } });
  });
  const floorMs = performance.now() - floorStart;

  // The agent: the ResourceImports exist before it starts; time until all objects exist.
  const ri = leaderImports(leader.adminConfig());
  await pool(names, CONCURRENCY, async (name) => {
    await ri.create(serviceImportRI('bench', name, [{ name: 'http', port: 80 }]));
    await ri.create(endpointsRI('bench', name, ['10.1.0.1']));
  });
  await createClusterSet(member, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
  const config = loadConfig({ argv: ['--namespace', AGENT_NS, '--heartbeat-interval', '1', '--log-level', 'warn'], env: {} });
  const agentStart = performance.now();
  const agent = await startAgent(config, createLogger({ level: 'warn' }), member.adminConfig());
  await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 30_000);
  await waitFor(`${String(half * 3)} imported objects`, () => agent.imports.counts(CLUSTERSET_ID)?.total === half * 3, { timeoutMs: 30 * 60_000, intervalMs: 50 });
  await agent.imports.importerFor(CLUSTERSET_ID)?.onIdle();
  const agentMs = performance.now() - agentStart;

  // Propagation: update one Endpoints RI at a time and time until the member's Endpoints shows it.
  const seen = new Map<string, number>();
  const watch = new Watch(member.adminConfig());
  const controller = await watch.watch('/api/v1/namespaces/bench/endpoints', {}, (_type, obj: V1Endpoints) => {
    const ip = obj.subsets?.[0]?.addresses?.[0]?.ip;
    if (ip) seen.set(`${obj.metadata?.name ?? ''}/${ip}`, performance.now());
  }, () => undefined);
  const latencies: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const name = names[i % names.length] ?? 'svc-0';
    const ip = `10.2.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
    const current = await ri.get(`bench-${name}-endpoints`);
    const sent = performance.now();
    await ri.replace({ ...current, spec: { ...current.spec, endpoints: endpointsRI('bench', name, [ip]).spec?.endpoints } } as typeof current);
    const key = `antrea-mc-${name}/${ip}`;
    await waitFor(`update ${String(i)}`, () => seen.has(key), { timeoutMs: 30_000, intervalMs: 1 });
    latencies.push((seen.get(key) ?? sent) - sent);
  }
  controller.abort();
  latencies.sort((a, b) => a - b);
  await agent.stop();

  console.log(`initial sync of ${String(N)} ResourceImports (${String(half)} ServiceImport + ${String(half)} Endpoints -> ${String(half * 3)} local objects)`);
  console.log(`  raw floor (minimal client, concurrency ${String(CONCURRENCY)}): ${(floorMs / 1000).toFixed(2)} s`);
  console.log(`  agent (start -> all objects, incl. join and list):  ${(agentMs / 1000).toFixed(2)} s`);
  console.log(`  ratio agent / floor: ${(agentMs / floorMs).toFixed(2)}`);
  console.log(`propagation latency of ${String(UPDATES)} sequential ResourceImport updates (leader write -> member watch event)`);
  console.log(`  p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${percentile(latencies, 100).toFixed(1)} ms`);
} finally {
  await Promise.all([leader.stop(), member.stop()]);
}
