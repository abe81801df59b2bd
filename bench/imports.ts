// Benchmark: initial import sync of N ResourceImports by the COMPILED agent (dist/, run as a
// child process the way users run it), against the best a minimal client can do, measured in
// the same run; then propagation latency of sequential and burst ResourceImport updates.
//
//   npm run bench:imports -- [--n 2000] [--updates 200] [--burst 1000] [--sweep 1,4,16,64]
//
// The floor is the FASTEST point of a concurrency sweep of a minimal keep-alive HTTPS client
// (node:https, raw JSON, no client library), each point on a FRESH member apiserver, creating
// the very objects the agent creates (its own rules build the bodies: Service, then
// ServiceImport with its ClusterIP, Endpoints and EndpointSlice, then the ServiceImport's status
// where v1beta1 is served). Not a copy of the agent's own settings.
// Every timed phase starts once the machine is quiet (a fresh apiserver keeps working for
// seconds after it is ready). Prints figures only; asserts nothing.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { CoreV1Api, Watch, type V1Endpoints } from '@kubernetes/client-node';
import { RESOURCE_IMPORT, type ResourceImport } from '../src/common/api/antrea.js';
import { readAuditEvents } from '../test/harness/agent-process.js';
import { desiredForImport, serviceAddresses, withServiceImportIPs } from '../src/importer/rules.js';
import { SERVICE_IMPORT } from '../src/common/api/mcs.js';
import { withOwnerReference } from '../src/importer/endpoint-slices.js';
import { isRecord } from '../src/common/kube/json.js';
import { AGENT_NS, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS, readyCondition, setupLeader, writeLeaderSecret } from '../test/harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { endpointsRI, leaderImports, serviceImportRI } from '../test/harness/imports.js';
import { createNamespace } from '../test/harness/kube.js';
import { waitFor } from '../test/harness/wait.js';
import { agentEntry, buildDist, cpuSeconds, IMAGE_ENV, IMAGE_NODE_ARGS, IMAGE_NODE_OPTIONS, metricSum, pool, rssKb, waitForQuietMachine } from './common.js';

const { values } = parseArgs({ options: {
  n: { type: 'string', default: '2000' },
  updates: { type: 'string', default: '200' },
  burst: { type: 'string', default: '1000' },
  sweep: { type: 'string', default: '1,4,16,64' },
  repeat: { type: 'string', default: '2' },
  // NODE_OPTIONS of the agent; by default what the image gives it under the chart's memory limit.
  'agent-node-options': { type: 'string', default: IMAGE_NODE_OPTIONS },
  // Node arguments added to the image's (V8 options refused in NODE_OPTIONS), e.g. --max-opt=999:
  // an optimisation tier given here replaces the member's own --max-opt=2 (bin/node-flags.js).
  'agent-node-args': { type: 'string', default: '' },
} });
const EXTRA_NODE_ARGS = values['agent-node-args'].split(' ').filter((a) => a !== '');
const N = Number(values.n);
const HALF = Math.floor(N / 2);
/** Per exported Service: its Service, ServiceImport, Endpoints and one EndpointSlice. */
const OBJECTS = HALF * 4;
/** The agent writes `status.endpointSliceObjects` where the served ServiceImport is v1beta1 (importer/manager.ts): so does the floor. */
const SLICES_PRESENT_STATUS = (SERVICE_IMPORT.version as string) === 'v1beta1';
const UPDATES = Number(values.updates);
const BURST = Math.min(Number(values.burst), HALF);
const SWEEP = values.sweep.split(',').map(Number);
const REPEAT = Number(values.repeat);
const NS = 'bench';
/** Who the agent imports as (its ClusterSet below); the floor writes the same objects. */
const OWNER = { clusterSetID: CLUSTERSET_ID, leaderClusterID: 'leader', leaderNamespace: LEADER_NS, agentNamespace: AGENT_NS, localClusterID: 'east' };
const names = Array.from({ length: HALF }, (_, i) => `svc-${String(i)}`);
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;

buildDist();

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The minimal client: keep-alive HTTPS with the admin certificate, raw JSON, at most `width` sockets. */
function minimalClient(cp: ControlPlane, width: number) {
  const kc = cp.adminConfig();
  const user = kc.getCurrentUser();
  const agent = new https.Agent({
    keepAlive: true, maxSockets: width,
    ca: cp.caPem,
    cert: user?.certData ? Buffer.from(user.certData, 'base64') : readFileSync(user?.certFile ?? ''),
    key: user?.keyData ? Buffer.from(user.keyData, 'base64') : readFileSync(user?.keyFile ?? ''),
  });
  let connections = 0;
  let requests = 0;
  const seenSockets = new WeakSet<object>();
  const url = new URL(cp.server);
  const send = (method: 'POST' | 'PUT', p: string, body: unknown) => new Promise<Record<string, unknown>>((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    requests += 1;
    const req = https.request({ host: url.hostname, port: url.port, path: p, method, agent, headers: { 'content-type': 'application/json', 'content-length': data.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${p}: ${String(res.statusCode)} ${text.slice(0, 200)}`));
        else resolve(JSON.parse(text) as Record<string, unknown>);
      });
    });
    // Distinct sockets: `reusedSocket` is not set on a request that waited in the agent's queue.
    req.on('socket', (socket) => {
      if (!seenSockets.has(socket)) {
        seenSockets.add(socket);
        connections += 1;
      }
    });
    req.on('error', reject);
    req.end(data);
  });
  return {
    post: (p: string, body: unknown) => send('POST', p, body),
    put: (p: string, body: unknown) => send('PUT', p, body),
    stats: () => ({ connections, requests }),
    close: () => { agent.destroy(); },
  };
}

/** The bodies the agent writes for `name`'s two ResourceImports (its own rules: labels, annotations and all). */
function agentObjects(name: string): { service: Record<string, unknown>; serviceImport: Record<string, unknown>; endpoints: Record<string, unknown>; slice: Record<string, unknown> } {
  const bodies = [serviceImportRI(NS, name, [{ name: 'http', port: 80 }]), endpointsRI(NS, name, ['10.1.0.1'])].flatMap((ri) => {
    const plan = desiredForImport(ri, OWNER, { enableLabelIdentity: false });
    if (plan.kind !== 'apply') throw new Error(`the agent would not import ${ri.metadata?.name ?? ''}: ${plan.reason}`);
    return plan.objects.map((o) => o.body);
  });
  // By kind, not position: the agent's order (slices before their skip-mirror Endpoints) is its own business.
  const ofKind = (kind: string) => bodies.find((b) => b['kind'] === kind);
  const [service, serviceImport, endpoints, slice] = [ofKind('Service'), ofKind('ServiceImport'), ofKind('Endpoints'), ofKind('EndpointSlice')];
  if (bodies.length !== 4 || !service || !serviceImport || !endpoints || !slice) throw new Error(`expected a Service, a ServiceImport, Endpoints and an EndpointSlice, got ${bodies.map((b) => String(b['kind'])).join(', ')}`);
  return { service, serviceImport, endpoints, slice };
}

async function floorPoint(width: number): Promise<{ ms: number; cpuMs: number; connections: number; requests: number }> {
  // With an audit log, like the agent's member below (it reads the agent's requests from it):
  // writing it costs the apiserver CPU, and both sides must pay the same.
  const cp = await startControlPlane(`bench-floor-${String(width)}`, { auditLog: true });
  try {
    await installCrds(cp);
    await createNamespace(cp.adminConfig(), NS);
    const client = minimalClient(cp, width);
    await waitForQuietMachine();
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    await pool(names, width, async (name) => {
      const { service, serviceImport, endpoints, slice } = agentObjects(name);
      const svc = await client.post(`/api/v1/namespaces/${NS}/services`, service);
      // The ServiceImport with the Service's addresses, in the version the member serves, as the agent writes it.
      const { ips, ipFamilies } = serviceAddresses(svc['spec']);
      // The slice is owned by the ServiceImport (its uid), as the agent writes it; the Endpoints need neither.
      const [si] = await Promise.all([
        client.post(`/apis/${SERVICE_IMPORT.group}/${SERVICE_IMPORT.version}/namespaces/${NS}/${SERVICE_IMPORT.plural}`, withServiceImportIPs(serviceImport, ips, ipFamilies)),
        client.post(`/api/v1/namespaces/${NS}/endpoints`, endpoints),
      ]);
      const uid = (si['metadata'] as { uid?: string } | undefined)?.uid ?? '';
      await client.post(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, withOwnerReference(slice, name, uid));
      // Where v1beta1 is served, the ServiceImport's status says its slices are present
      // (mcs-api v0.5.1), as the agent writes it once they are: a status subresource cannot be
      // set by the create, so this is a second request for that object on either side.
      if (SLICES_PRESENT_STATUS) {
        const status = isRecord(si['status']) ? si['status'] : {};
        await client.put(`/apis/${SERVICE_IMPORT.group}/${SERVICE_IMPORT.version}/namespaces/${NS}/${SERVICE_IMPORT.plural}/${name}/status`, { ...si, status: { ...status, endpointSliceObjects: 'Present' } });
      }
    });
    const ms = performance.now() - start;
    const cpu = process.cpuUsage(cpuBefore);
    client.close();
    return { ms, cpuMs: (cpu.user + cpu.system) / 1000, ...client.stats() };
  } finally {
    await cp.stop();
  }
}

// ---- floor ---------------------------------------------------------------------------------
const floor: { width: number; ms: number; cpuMs: number; connections: number; requests: number }[] = [];
// Two cores are shared by the apiserver, etcd and the client: each point is run REPEAT times
// (a fresh apiserver each) and its best run counts, so noise cannot flatter the agent.
for (let round = 1; round <= REPEAT; round++) {
  for (const width of SWEEP) {
    const point = await floorPoint(width);
    floor.push({ width, ...point });
    console.log(`floor: concurrency ${String(width).padStart(2)}, run ${String(round)}: ${secs(point.ms)} (${(OBJECTS / (point.ms / 1000)).toFixed(0)} objects/s, ${String(point.connections)} connections, ${String(point.requests)} requests)`);
  }
}
const best = floor.reduce((a, b) => (b.ms < a.ms ? b : a));

// ---- the agent -----------------------------------------------------------------------------
const tmp = mkdtempSync(path.join(tmpdir(), 'bench-imports-'));
const errFile = path.join(tmp, 'agent.stderr.log');
const outFile = path.join(tmp, 'agent.stdout.log');
const [leader, member] = await Promise.all([startControlPlane('bench-leader'), startControlPlane('bench-member', { auditLog: true })]);
let agent: ReturnType<typeof spawn> | undefined;
try {
  await Promise.all([setupLeader(leader), installCrds(member)]);
  for (const ns of [AGENT_NS, NS]) await createNamespace(member.adminConfig(), ns);
  const access = await createMemberAccess(leader, 'east');
  await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
  const ri = leaderImports(leader.adminConfig());
  await pool(names, 16, async (name) => {
    await ri.create(serviceImportRI(NS, name, [{ name: 'http', port: 80 }]));
    await ri.create(endpointsRI(NS, name, ['10.1.0.1']));
  });

  const fds = [openSync(outFile, 'w'), openSync(errFile, 'w')] as const;
  agent = spawn(process.execPath, [...IMAGE_NODE_ARGS, ...EXTRA_NODE_ARGS, agentEntry, 'run', '--kubeconfig', member.kubeconfigPath, '--namespace', AGENT_NS,
    '--heartbeat-interval', '2', '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0', '--log-level', 'info'],
  { stdio: ['ignore', fds[0], fds[1]], env: { ...process.env, ...IMAGE_ENV, CSA_IMPORT_MAX_OBJECTS_PER_LEADER: String(OBJECTS + 10), NODE_OPTIONS: values['agent-node-options'] } });
  for (const fd of fds) closeSync(fd);
  let exited: number | null | undefined;
  agent.on('exit', (code) => { exited = code; });
  const alive = () => { if (exited !== undefined) throw new Error(`the agent exited (code ${String(exited)}); see ${errFile}`); };
  const metricsPort = await waitFor('the agent to listen', () => {
    alive();
    const m = /"metricsPort":(\d+)/.exec(readFileSync(outFile, 'utf8'));
    return m ? Number(m[1]) : undefined;
  }, { timeoutMs: 60_000, intervalMs: 50 });
  const metric = (prefix: string, having = ''): Promise<number> => metricSum(metricsPort, prefix, having);
  const agentRssKb = () => rssKb(agent?.pid ?? 0);
  const idleRss = agentRssKb();
  const connectionsBefore = await metric('clusterset_agent_apiserver_connections_opened_total');
  const auditBefore = readAuditEvents(member.auditLogPath).length;
  await waitForQuietMachine();

  // Scraping the agent's /metrics costs it CPU (prom-client reads /proc for its process
  // metrics) that the floor never pays, so completion is polled slowly and the end of the sync
  // is read from the member's audit log: when the apiserver completed the agent's last create.
  const agentCpuMs = () => cpuSeconds(agent?.pid ?? 0) * 1000;
  const agentCpuBefore = agentCpuMs();
  const start = performance.now();
  const startWall = Date.now();
  await createClusterSet(member, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
  let readyMs = NaN;
  const cs = clusterSetApi(member.adminConfig());
  await waitFor('the ClusterSet Ready', async () => {
    alive();
    if (readyCondition(await cs.get(CLUSTERSET_ID))?.status !== 'True') return false;
    readyMs = performance.now() - start;
    return true;
  }, { timeoutMs: 60_000, intervalMs: 50 });
  await waitFor(`${String(OBJECTS)} imported objects`, async () => {
    alive();
    return (await metric('clusterset_agent_imports_total{', 'outcome="created"')) >= OBJECTS;
  }, { timeoutMs: 30 * 60_000, intervalMs: 500 });
  // The sync's writes: every create, and where v1beta1 is served each ServiceImport's status
  // (written after its slices, so it may come after the last create).
  const isStatusWrite = (e: ReturnType<typeof readAuditEvents>[number]) => e.verb === 'update' && e.objectRef?.resource === SERVICE_IMPORT.plural &&
    (e.objectRef as { readonly subresource?: string } | undefined)?.subresource === 'status';
  const syncWrites = () => readAuditEvents(member.auditLogPath).slice(auditBefore)
    .filter((e) => e.user.username === 'test-admin' && e.objectRef?.namespace === NS && (e.verb === 'create' || isStatusWrite(e)));
  let writes = syncWrites();
  if (SLICES_PRESENT_STATUS) {
    await waitFor(`${String(HALF)} ServiceImport status writes`, () => {
      alive();
      writes = syncWrites();
      return writes.filter(isStatusWrite).length >= HALF;
    }, { timeoutMs: 5 * 60_000, intervalMs: 500 });
  }
  const creates = writes.filter((e) => e.verb === 'create');
  if (creates.length !== OBJECTS) throw new Error(`expected ${String(OBJECTS)} creates by the agent in the audit log, found ${String(creates.length)}`);
  const agentMs = Math.max(...writes.map((e) => Date.parse(e.stageTimestamp ?? e.requestReceivedTimestamp))) - startWall;
  const agentCpu = agentCpuMs() - agentCpuBefore;
  const firstCreateMs = Math.min(...creates.map((e) => Date.parse(e.requestReceivedTimestamp))) - startWall;
  // The floor's objects must be the agent's: compare one the agent wrote with the floor's body.
  const sample = await member.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: NS, name: `antrea-mc-${names[0] ?? ''}` });
  const floorBody = agentObjects(names[0] ?? '').service as { metadata: { labels?: unknown; annotations?: unknown } };
  if (!isDeepStrictEqual(sample.metadata?.labels, floorBody.metadata.labels) || !isDeepStrictEqual(sample.metadata?.annotations, floorBody.metadata.annotations)) {
    throw new Error(`the floor does not write what the agent writes: ${JSON.stringify(sample.metadata)} vs ${JSON.stringify(floorBody.metadata)}`);
  }
  const agentEvents = readAuditEvents(member.auditLogPath).slice(auditBefore)
    .filter((e) => e.user.username === 'test-admin' && e.objectRef?.resource !== 'clustersets');
  const agentRequests = agentEvents.length;
  // Which requests: the floor writes one per object and the ServiceImports' status; the agent may write more.
  const requestKinds = new Map<string, number>();
  for (const e of agentEvents) {
    // The audit log names a subresource (`status`); the harness's type leaves it out.
    const subresource = (e.objectRef as { readonly subresource?: string } | undefined)?.subresource;
    const what = `${e.verb} ${e.objectRef?.resource ?? '?'}${subresource !== undefined ? `/${subresource}` : ''}`;
    requestKinds.set(what, (requestKinds.get(what) ?? 0) + 1);
  }
  const agentConnections = (await metric('clusterset_agent_apiserver_connections_opened_total')) - connectionsBefore;
  const syncedRss = agentRssKb();
  // The same after 15 quiet seconds: V8 gives back memory freed after a burst only when idle.
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  const settledRss = agentRssKb();
  // Where the RSS goes: V8's live heap (used), what it holds for it (total), and buffers outside it.
  const heap = { used: await metric('nodejs_heap_size_used_bytes'), total: await metric('nodejs_heap_size_total_bytes'), external: await metric('nodejs_external_memory_bytes') };

  // ---- propagation -------------------------------------------------------------------------
  const seen = new Map<string, number>();
  const watch = new Watch(member.adminConfig());
  const stopWatch = await watch.watch(`/api/v1/namespaces/${NS}/endpoints`, {}, (_type, obj: V1Endpoints) => {
    const ip = obj.subsets?.[0]?.addresses?.[0]?.ip;
    if (ip) seen.set(`${obj.metadata?.name ?? ''}/${ip}`, performance.now());
  }, () => undefined);
  const update = async (name: string, ip: string): Promise<{ key: string; sent: number }> => {
    const current = await ri.get(`${NS}-${name}-endpoints`);
    const sent = performance.now();
    await ri.replace({ ...current, spec: { ...current.spec, endpoints: endpointsRI(NS, name, [ip]).spec?.endpoints } } as ResourceImport);
    return { key: `antrea-mc-${name}/${ip}`, sent };
  };
  const sequential: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const { key, sent } = await update(names[i % names.length] ?? 'svc-0', `10.2.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`);
    await waitFor(`update ${String(i)}`, () => seen.has(key), { timeoutMs: 30_000, intervalMs: 1 });
    sequential.push((seen.get(key) ?? sent) - sent);
  }
  sequential.sort((a, b) => a - b);
  // Burst: BURST updates written as fast as the leader takes them, by the floor's kind of
  // client (keep-alive, raw JSON, at the floor's best concurrency), so the writer is not what is
  // measured. The current objects are read first, so the burst is PUTs only; latency of each,
  // and until the last one is applied.
  const current = new Map<string, ResourceImport>();
  await pool(names.slice(0, BURST), 32, async (name) => { current.set(name, await ri.get(`${NS}-${name}-endpoints`)); });
  const writer = minimalClient(leader, best.width);
  const riPath = (name: string) => `/apis/${RESOURCE_IMPORT.group}/${RESOURCE_IMPORT.version}/namespaces/${LEADER_NS}/${RESOURCE_IMPORT.plural}/${NS}-${name}-endpoints`;
  await waitForQuietMachine();
  const burstStart = performance.now();
  const sent: { key: string; sent: number }[] = [];
  await pool(names.slice(0, BURST), best.width, async (name) => {
    const i = names.indexOf(name);
    const ip = `10.3.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
    const before = current.get(name) as ResourceImport;
    const at = performance.now();
    await writer.put(riPath(name), { ...before, spec: { ...before.spec, endpoints: endpointsRI(NS, name, [ip]).spec?.endpoints } });
    sent.push({ key: `antrea-mc-${name}/${ip}`, sent: at });
  });
  const written = performance.now() - burstStart;
  await waitFor('the burst applied', () => sent.every((s) => seen.has(s.key)), { timeoutMs: 120_000, intervalMs: 5 });
  const burst = sent.map((s) => (seen.get(s.key) ?? s.sent) - s.sent).sort((a, b) => a - b);
  const burstAll = Math.max(...sent.map((s) => seen.get(s.key) ?? 0)) - burstStart;
  stopWatch.abort();
  writer.close();

  console.log(`\nagent: ${Object.entries(IMAGE_ENV).map(([k, v]) => `${k}=${v}`).join(' ')} node ${[...IMAGE_NODE_ARGS, ...EXTRA_NODE_ARGS].join(' ')} bin/clusterset-agent.js, NODE_OPTIONS=${values['agent-node-options'] || '(none)'}`);
  console.log(`\ninitial sync of ${String(N)} ResourceImports (${String(HALF)} ServiceImport + ${String(HALF)} Endpoints -> ${String(OBJECTS)} member objects), compiled agent`);
  console.log(`  floor (fastest of concurrency ${SWEEP.join(', ')} × ${String(REPEAT)} runs, minimal keep-alive client, fresh apiserver each): ${secs(best.ms)} at concurrency ${String(best.width)}, ${String(best.connections)} connections`);
  console.log(`  agent (ClusterSet created -> last object written${SLICES_PRESENT_STATUS ? ' (creates and the ServiceImports\' status)' : ''}, incl. join and list; from the audit log): ${secs(agentMs)} (Ready after ${secs(readyMs)})`);
  console.log(`  ratio agent / floor: ${(agentMs / best.ms).toFixed(2)}`);
  console.log(`  CPU used on the 2 cores the apiserver needs: the agent ${secs(agentCpu)} (join, list and sync; measured until the sync was seen done), the floor's client ${secs(best.cpuMs)}`);
  console.log(`  the agent's first create reached the apiserver ${secs(firstCreateMs)} after the ClusterSet was created; from there ${secs(agentMs - firstCreateMs)} (${(OBJECTS / ((agentMs - firstCreateMs) / 1000)).toFixed(0)} objects/s; ratio ${((agentMs - firstCreateMs) / best.ms).toFixed(2)})`);
  console.log(`  agent requests to the member apiserver: ${String(agentRequests)} (floor: ${String(best.requests)}); TCP connections opened during the sync: ${String(agentConnections)}, since the agent started: ${String(connectionsBefore + agentConnections)}`);
  console.log(`  agent requests by verb and resource: ${[...requestKinds].sort((a, b) => b[1] - a[1]).map(([what, count]) => `${what} ${String(count)}`).join(', ')}`);
  console.log(`  agent RSS: ${mib(idleRss)} idle, ${mib(syncedRss)} with ${String(OBJECTS)} imported objects right after the sync, ${mib(settledRss)} 15 s later`);
  console.log(`  agent V8 heap then: ${mib(heap.used / 1024)} used of ${mib(heap.total / 1024)}, ${mib(heap.external / 1024)} external`);
  console.log(`propagation, leader write -> member watch event`);
  console.log(`  ${String(UPDATES)} sequential updates: p50 ${sequential[Math.floor(sequential.length / 2)]?.toFixed(1) ?? '?'} ms, p99 ${percentile(sequential, 99).toFixed(1)} ms, max ${percentile(sequential, 100).toFixed(1)} ms`);
  console.log(`  burst of ${String(BURST)} updates (written in ${secs(written)} at concurrency ${String(best.width)}): all applied ${secs(burstAll)} after the first write; per update p50 ${percentile(burst, 50).toFixed(0)} ms, p99 ${percentile(burst, 99).toFixed(0)} ms, max ${percentile(burst, 100).toFixed(0)} ms`);
} finally {
  if (agent && agent.exitCode === null) {
    agent.kill('SIGTERM');
    await new Promise((resolve) => agent?.once('exit', resolve));
  }
  await Promise.all([leader.stop(), member.stop()]);
}
