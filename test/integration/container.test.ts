// The agent's container image, end to end: built by scripts/image.sh (cached), then run with
// podman exactly as the chart's Deployment would run it, every setting read from the Deployment
// the chart rendered into a real member apiserver: its user, read-only root filesystem, /tmp,
// dropped capabilities, no privilege escalation, memory limit, args, env and the chart's
// ConfigMap at its mount path; only the chart ServiceAccount's token, CA and namespace at the
// in-cluster path; KUBERNETES_SERVICE_HOST/PORT pointing at the loopback member apiserver;
// host network, as a Pod's ports would be. Against a real leader it must answer its probes,
// join, import, keep its V8 heap below the memory limit, stop cleanly on SIGTERM and restart
// without changing anything. A machine where the image cannot be built or run fails here.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Container, type V1Deployment, type V1PodSpec, type V1Volume } from '@kubernetes/client-node';
import { IMAGE_ENV } from '../../bench/common.js';
import { MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { TIMESTAMP_ANNOTATION } from '../../src/common/api/names.js';
import { findSamples, httpGet, parseMetrics, type MetricSample } from '../harness/agent-process.js';
import { k8sBins, repoRoot } from '../harness/bins.js';
import {
  AGENT_NS, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, LEADER_NS, readyCondition, setupLeader,
  waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { buildImage, podmanWith, quantityToBytes, type BuiltImage } from '../harness/container.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { issueToken } from '../harness/kube.js';
import { endpointsRI, leaderImports, memberReads, serviceImportRI } from '../harness/imports.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { AGENT_V8_OPTIONS } from '../../bin/node-flags.js';

const execFileAsync = promisify(execFile);

const CHART = path.join(repoRoot, 'charts', 'clusterset-agent');
const RELEASE = 'csa';
const RELEASE_NS = AGENT_NS;
const FULLNAME = 'csa-clusterset-agent';
const MEMBER_ID = 'east';
const INTERVAL_S = 2;
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Kubernetes' default terminationGracePeriodSeconds: what `podman stop` waits before SIGKILL. */
const GRACE_S = 30;
const LABEL = 'io.clusterset-agent.test=container';

/** A port free on every interface (host networking binds the agent's `:port` on all of them). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, resolve); });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

interface RunPlan {
  readonly args: string[];
  readonly memoryBytes: number;
  readonly image: string;
}

/**
 * `podman run` arguments reproducing the rendered Deployment's single container. Anything in the
 * Pod spec this function cannot reproduce fails the test instead of being silently dropped.
 */
function runPlan(deployment: V1Deployment, options: {
  name: string; configDir: string; serviceAccountDir: string; apiserverPort: number;
}): RunPlan {
  const pod: V1PodSpec | undefined = deployment.spec?.template.spec;
  assert.ok(pod, 'the Deployment has a Pod template');
  assert.equal(pod.containers.length, 1, 'one container');
  assert.equal(pod.initContainers, undefined, 'no init containers to reproduce');
  const container: V1Container | undefined = pod.containers[0];
  assert.ok(container?.image, 'the container names an image');
  const sc = container.securityContext ?? {};
  const psc = pod.securityContext ?? {};
  const user = sc.runAsUser ?? psc.runAsUser;
  const group = sc.runAsGroup ?? psc.runAsGroup;
  assert.equal(typeof user, 'number', 'runAsUser is set');
  assert.equal(typeof group, 'number', 'runAsGroup is set');
  assert.equal(sc.runAsNonRoot ?? psc.runAsNonRoot, true);
  assert.equal(sc.privileged ?? false, false);
  assert.deepEqual(sc.capabilities?.add ?? [], [], 'no added capabilities');
  assert.equal((sc.seccompProfile ?? psc.seccompProfile)?.type, 'RuntimeDefault', 'podman applies its default seccomp profile, the runtime default');
  const memory = container.resources?.limits?.['memory'];
  assert.ok(memory !== undefined, 'the chart sets a memory limit');
  const memoryBytes = quantityToBytes(memory);

  const args = ['run', '--detach', '--pull=never', '--name', options.name, '--label', LABEL,
    '--network', 'host', '--user', `${String(user)}:${String(group)}`,
    // Kubernetes gives containers no swap by default.
    '--memory', String(memoryBytes), '--memory-swap', String(memoryBytes),
    '--stop-timeout', String(pod.terminationGracePeriodSeconds ?? GRACE_S)];
  if (sc.readOnlyRootFilesystem === true) args.push('--read-only');
  for (const cap of sc.capabilities?.drop ?? []) args.push('--cap-drop', cap);
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');

  for (const mount of container.volumeMounts ?? []) {
    const volume: V1Volume | undefined = pod.volumes?.find((v) => v.name === mount.name);
    assert.ok(volume, `volume ${mount.name} exists`);
    if (volume.configMap) {
      assert.equal(volume.configMap.name, FULLNAME, 'the config volume is the chart\'s ConfigMap');
      args.push('--volume', `${options.configDir}:${mount.mountPath}:${mount.readOnly === true ? 'ro' : 'rw'}`);
    } else if (volume.emptyDir) {
      // An emptyDir on tmpfs, as large as its sizeLimit.
      const size = volume.emptyDir.sizeLimit === undefined ? '' : `,size=${String(quantityToBytes(volume.emptyDir.sizeLimit))}`;
      args.push('--tmpfs', `${mount.mountPath}:rw,mode=1777,nosuid,nodev${size}`);
    } else {
      assert.fail(`volume ${mount.name} is of a kind this test cannot reproduce: ${JSON.stringify(volume)}`);
    }
  }
  assert.notEqual(pod.automountServiceAccountToken, false, 'the ServiceAccount token is mounted');
  args.push('--volume', `${options.serviceAccountDir}:${SA_DIR}:ro`);

  // What the kubelet injects, then the container's own env.
  args.push('--env', 'KUBERNETES_SERVICE_HOST=127.0.0.1', '--env', `KUBERNETES_SERVICE_PORT=${String(options.apiserverPort)}`);
  for (const env of container.env ?? []) {
    if (env.value !== undefined) args.push('--env', `${env.name}=${env.value}`);
    else if (env.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') args.push('--env', `${env.name}=${RELEASE_NS}`);
    else assert.fail(`env ${env.name} has a source this test cannot reproduce: ${JSON.stringify(env.valueFrom)}`);
  }
  assert.equal(container.command, undefined, 'the image\'s ENTRYPOINT runs');
  args.push(container.image, ...(container.args ?? []));
  return { args, memoryBytes, image: container.image };
}

describe('container image run as the chart Deployment runs it', () => {
  let built: BuiltImage;
  let podman: ReturnType<typeof podmanWith>;
  let leader: ControlPlane | undefined;
  let member: ControlPlane | undefined;
  let work: string | undefined;
  let helmHome: string | undefined;
  let plan: RunPlan;
  let memberToken = '';
  const name = `csa-e2e-${randomBytes(4).toString('hex')}`;
  let started = false;
  let healthPort = 0;
  let metricsPort = 0;

  const get = (port: number, p: string) => httpGet(port, p);
  const metrics = async (): Promise<MetricSample[]> => {
    const answer = await get(metricsPort, '/metrics');
    assert.equal(answer.status, 200, answer.body);
    return parseMetrics(answer.body);
  };
  const importOutcomes = (samples: readonly MetricSample[]): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const s of findSamples(samples, 'clusterset_agent_imports_total', { clusterset: CLUSTERSET_ID })) {
      out[`${s.labels['kind'] ?? ''}/${s.labels['outcome'] ?? ''}`] = s.value;
    }
    return out;
  };
  const readAnnounce = async () => (await (leader as ControlPlane).adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural,
    namespace: LEADER_NS, name: `member-announce-from-${MEMBER_ID}`,
  })) as MemberClusterAnnounce;
  const inspect = async (format: string) => (await podman.ok(['inspect', '--format', format, name])).trim();
  const waitProbes = async (what: string) => {
    await waitFor(`${what}: /healthz and /readyz answer 200`, async () => {
      const state = await inspect('{{.State.Status}}');
      if (state !== 'running') throw new Error(`container is ${state}; it exited early:\n${podman.sync(['logs', '--tail', '30', name])}`);
      const [healthz, readyz] = [await get(healthPort, '/healthz'), await get(healthPort, '/readyz')];
      return healthz.status === 200 && readyz.status === 200 ? { healthz, readyz } : false;
    }, { timeoutMs: 90_000, intervalMs: 250 });
  };

  before(async () => {
    // The image first: if this machine cannot build or run it, every test below fails with why.
    built = await buildImage();
    process.stderr.write(`# image ${built.image} (${(built.size / 1e6).toFixed(0)} MB) ready in ${built.seconds.toFixed(1)} s, base ${built.base}\n`);
    podman = podmanWith(built.containersConf);
    // Anything an interrupted earlier run left behind.
    const stale = (await podman.ok(['ps', '--all', '--quiet', '--filter', `label=${LABEL}`])).split('\n').filter(Boolean);
    if (stale.length > 0) await podman.ok(['rm', '--force', '--time', '0', ...stale]);

    [leader, member] = await Promise.all([startControlPlane('container-leader'), startControlPlane('container-member')]);
    await setupLeader(leader);
    [healthPort, metricsPort] = [await freePort(), await freePort()];

    // The chart, installed with the built helm, renders the Deployment and ConfigMap we run.
    helmHome = mkdtempSync(path.join(os.tmpdir(), 'csa-helm-'));
    await execFileAsync(k8sBins().helm, ['--kubeconfig', member.kubeconfigPath, 'install', RELEASE, CHART, '--namespace', RELEASE_NS, '--create-namespace',
      '--set', `health.port=${String(healthPort)},metrics.port=${String(metricsPort)},config.heartbeat.intervalSeconds=${String(INTERVAL_S)}`],
    { env: { ...process.env, HELM_CACHE_HOME: path.join(helmHome, 'cache'), HELM_CONFIG_HOME: path.join(helmHome, 'config'), HELM_DATA_HOME: path.join(helmHome, 'data') }, timeout: 120_000 });

    const admin = member.adminConfig();
    const deployment = await admin.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: RELEASE_NS, name: FULLNAME });
    const configMap = await admin.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: RELEASE_NS, name: FULLNAME });
    const configText = configMap.data?.['config.yaml'];
    assert.ok(configText !== undefined, 'the chart\'s ConfigMap holds config.yaml');

    work = mkdtempSync(path.join(os.tmpdir(), 'csa-container-'));
    const configDir = path.join(work, 'config');
    mkdirSync(configDir, { mode: 0o755 });
    writeFileSync(path.join(configDir, 'config.yaml'), configText, { mode: 0o644 });
    // Only what the kubelet projects for the chart's ServiceAccount: token, ca.crt, namespace,
    // readable by the container's user alone.
    const uid = deployment.spec?.template.spec?.securityContext?.runAsUser ?? 1000;
    const gid = deployment.spec?.template.spec?.securityContext?.runAsGroup ?? 1000;
    const saDir = path.join(work, 'serviceaccount');
    mkdirSync(saDir, { mode: 0o700 });
    memberToken = await issueToken(admin, RELEASE_NS, FULLNAME);
    for (const [file, content] of [['token', memberToken], ['ca.crt', member.caPem], ['namespace', RELEASE_NS]] as const) {
      writeFileSync(path.join(saDir, file), content, { mode: 0o400 });
      chownSync(path.join(saDir, file), uid, gid);
    }
    chownSync(saDir, uid, gid);
    plan = runPlan(deployment, { name, configDir, serviceAccountDir: saDir, apiserverPort: Number(new URL(member.server).port) });

    const access = await createMemberAccess(leader, MEMBER_ID);
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
  });

  after(async () => {
    // The container goes whatever happened; then prove it is gone.
    if (started) {
      await podman.run(['rm', '--force', '--time', '0', name]);
      const left = await podman.run(['ps', '--all', '--quiet', '--filter', `name=^${name}$`]);
      assert.equal(left.stdout.trim(), '', `container ${name} is still there after removal`);
    }
    await Promise.all([leader?.stop(), member?.stop()]);
    for (const dir of [work, helmHome]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  onFailureShowLogs(() => [leader, member], () => started ? `--- container ${name} log ---\n${podman.sync(['logs', '--tail', '60', name])}` : '(no container started)');

  it('runs the chart\'s image with the Deployment\'s settings and answers /healthz and /readyz', async () => {
    assert.equal(plan.image, 'clusterset-agent:0.1.0', 'the chart\'s default image');
    assert.ok(built.image.endsWith(`/${plan.image}`), `scripts/image.sh builds the image the chart runs (${built.image} vs ${plan.image})`);
    process.stderr.write(`# podman ${plan.args.join(' ')}\n`);
    started = true;
    // Also when the test process is interrupted (the harness exits on SIGINT/SIGTERM): after() would not run.
    process.once('exit', () => { podman.sync(['rm', '--force', '--time', '0', name]); });
    await podman.ok(plan.args);
    await waitProbes('first start');
    // The settings that matter, as the runtime applied them.
    const hostConfig = JSON.parse(await inspect('{{json .HostConfig}}')) as { ReadonlyRootfs: boolean; Memory: number; CapDrop: string[] | null; SecurityOpt: string[] | null; NetworkMode: string };
    assert.equal(hostConfig.ReadonlyRootfs, true);
    assert.equal(hostConfig.Memory, plan.memoryBytes);
    assert.equal(hostConfig.NetworkMode, 'host');
    assert.ok((hostConfig.SecurityOpt ?? []).includes('no-new-privileges'), JSON.stringify(hostConfig.SecurityOpt));
    const status = await podman.ok(['exec', name, 'sh', '-c', 'id -u; id -g; grep CapEff /proc/1/status; touch /should-fail 2>&1 || true; touch /tmp/ok && echo tmp-writable']);
    const [uidLine, gidLine, capLine] = status.split('\n');
    assert.equal(uidLine, '1000');
    assert.equal(gidLine, '1000');
    assert.match(capLine ?? '', /CapEff:\s+0+$/, 'no effective capabilities');
    assert.match(status, /Read-only file system/);
    assert.match(status, /tmp-writable/);
    const scrape = await metrics();
    assert.equal(findSamples(scrape, 'clusterset_agent_is_leader')[0]?.value, 1, 'a single replica without election leads');
  });

  it('joins the leader with the chart ServiceAccount\'s token: the ClusterSet turns Ready', async () => {
    assert.ok(leader && member);
    await waitFor('ClusterSet CRD served', async () => {
      await createClusterSet(member as ControlPlane, { clusterID: MEMBER_ID, server: (leader as ControlPlane).server, secret: 'leader-token' });
      return true;
    }, { timeoutMs: 30_000, intervalMs: 250 });
    const cs = await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 60_000);
    assert.equal(cs.status?.readyClusters, 1);
    assert.equal((await readAnnounce()).clusterID, MEMBER_ID);
  });

  it('imports the leader\'s ResourceImports into the member', async () => {
    assert.ok(leader && member);
    const ri = leaderImports(leader.adminConfig());
    await ri.create(serviceImportRI('default', 'web', [{ name: 'http', port: 80 }]));
    await ri.create(endpointsRI('default', 'web', ['10.9.0.1', '10.9.0.2']));
    const local = memberReads(member.adminConfig());
    const endpoints = await waitFor('imported Service, ServiceImport and Endpoints', async () => {
      const [service, serviceImport, eps] = [await local.service('default', 'antrea-mc-web'), await local.serviceImport('default', 'web'), await local.endpoints('default', 'antrea-mc-web')];
      return service && serviceImport?.spec?.ips?.length === 1 && eps ? eps : false;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    assert.deepEqual(endpoints.subsets?.[0]?.addresses?.map((a) => a.ip).sort(), ['10.9.0.1', '10.9.0.2']);
    await waitFor('import metrics', async () => {
      const outcomes = importOutcomes(await metrics());
      // The Endpoints import writes the Endpoints and its EndpointSlice.
      return outcomes['ServiceImport/created'] === 2 && outcomes['Endpoints/created'] === 2;
    }, { timeoutMs: 10_000, intervalMs: 200 });
  });

  it('keeps the V8 heap limit below the memory limit, derived from it, with a small young generation', async () => {
    const probe = 'console.log(JSON.stringify({ heap: v8.getHeapStatistics().heap_size_limit, constrained: process.constrainedMemory(), options: process.env.NODE_OPTIONS ?? "" }))';
    const inside = JSON.parse(await podman.ok(['exec', name, 'node', '-e', probe])) as { heap: number; constrained: number; options: string };
    // The agent itself (PID 1) runs with the same options and in the same cgroup as the probe.
    const pid1Env = (await podman.ok(['exec', name, 'cat', '/proc/1/environ'])).split('\0');
    const pid1Cmd = (await podman.ok(['exec', name, 'cat', '/proc/1/cmdline'])).split('\0').filter(Boolean);
    const status = await podman.ok(['exec', name, 'cat', '/proc/1/status']);
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]);
    const rssKiB = kib('VmRSS');
    const heapUsed = findSamples(await metrics(), 'nodejs_heap_size_used_bytes')[0]?.value ?? NaN;
    process.stderr.write(`# memory limit ${String(plan.memoryBytes / 2 ** 20)} MiB: heap limit ${(inside.heap / 2 ** 20).toFixed(1)} MiB ` +
      `(NODE_OPTIONS=${inside.options}); agent heap used ${(heapUsed / 2 ** 20).toFixed(1)} MiB, RSS ${(rssKiB / 1024).toFixed(1)} MiB ` +
      `(anonymous ${(kib('RssAnon') / 1024).toFixed(1)}, file-backed ${(kib('RssFile') / 1024).toFixed(1)})\n`);
    assert.equal(inside.constrained, plan.memoryBytes, 'Node sees the container\'s memory limit');
    assert.ok(inside.heap < plan.memoryBytes, `heap limit ${String(inside.heap)} must be below the memory limit ${String(plan.memoryBytes)}`);
    assert.ok(pid1Env.includes(`NODE_OPTIONS=${inside.options}`), `the agent process has NODE_OPTIONS=${inside.options}`);
    assert.match(inside.options, /--max-old-space-size-percentage=\d+/);
    // The ENTRYPOINT's node --optimize-for-size and the agents' V8 options (bin/node-flags.js), which the launcher then need not add.
    assert.deepEqual(pid1Cmd.slice(0, 2 + AGENT_V8_OPTIONS.length), ['node', '--optimize-for-size', ...AGENT_V8_OPTIONS]);
    assert.match(pid1Cmd[2 + AGENT_V8_OPTIONS.length] ?? '', /(^|\/)bin\/clusterset-agent\.js$/);
    assert.match(inside.options, /--max-semi-space-size=2\b/);
    // The benchmarks run the agent with the image's environment: what they measure is what runs here.
    for (const [key, value] of Object.entries(IMAGE_ENV)) assert.ok(pid1Env.includes(`${key}=${value}`), `the agent process has ${key}=${value}`);
    // The bundle is the whole program: no dependency tree ships in the image.
    await podman.ok(['exec', name, 'sh', '-c', 'test -s /app/dist/bundle/clusterset-agent.mjs && test ! -e /app/node_modules']);
    assert.ok(rssKiB * 1024 < plan.memoryBytes, 'the running agent fits its limit');

    // Derived, not a constant: twice the limit gives about twice the heap.
    const doubled = JSON.parse(await podman.ok(['run', '--rm', '--pull=never', '--label', LABEL, '--memory', String(2 * plan.memoryBytes),
      '--user', '1000:1000', '--entrypoint', 'node', plan.image, '-e', probe])) as { heap: number };
    assert.ok(doubled.heap > 1.8 * inside.heap && doubled.heap < 2 * plan.memoryBytes, `heap ${String(doubled.heap)} with twice the limit vs ${String(inside.heap)}`);
  });

  it('stops on SIGTERM (podman stop) with exit code 0, and a restart changes nothing', async () => {
    assert.ok(leader && member);
    const local = memberReads(member.adminConfig());
    const clusterSets = clusterSetApi(member.adminConfig());
    const before = await local.snapshot();
    assert.equal(before.filter((row) => / default\/(antrea-mc-)?web /.test(row)).length, 3, before.join('\n'));
    const readyBefore = readyCondition(await clusterSets.get(CLUSTERSET_ID));
    const announceBefore = await readAnnounce();

    const t0 = Date.now();
    await podman.ok(['stop', '--time', String(GRACE_S), name], (GRACE_S + 30) * 1000);
    const stopMs = Date.now() - t0;
    const exit = await inspect('{{.State.ExitCode}}');
    const logs = podman.sync(['logs', name]);
    process.stderr.write(`# podman stop: exit ${exit} after ${String(stopMs)} ms\n`);
    assert.equal(exit, '0', `exit code after SIGTERM; last log lines:\n${logs.split('\n').slice(-10).join('\n')}`);
    assert.ok(stopMs < GRACE_S * 1000, `stopped by SIGTERM within the grace period, not killed (${String(stopMs)} ms)`);
    assert.match(logs, /"signal":"SIGTERM"/);
    assert.match(logs, /"message":"stopped"/);
    assert.ok(!logs.includes(memberToken), 'the member token never appears in the logs');
    assert.deepEqual(await local.snapshot(), before, 'stopping removes nothing: a restart is not a leave');

    await podman.ok(['start', name]);
    await waitProbes('after restart');
    // The restarted process has judged every imported object again and found nothing to do.
    const outcomes = await waitFor('the restarted agent to resync its imports', async () => {
      const o = importOutcomes(await metrics());
      return o['ServiceImport/unchanged'] === 2 && o['Endpoints/unchanged'] === 2 ? o : false;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    assert.deepEqual(outcomes, { 'ServiceImport/unchanged': 2, 'Endpoints/unchanged': 2 }, 'nothing created, updated or deleted');
    const stamp = announceBefore.metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '';
    await waitFor('a heartbeat from the restarted agent', async () => ((await readAnnounce()).metadata?.annotations?.[TIMESTAMP_ANNOTATION] ?? '') > stamp,
      { timeoutMs: 4 * INTERVAL_S * 1000, intervalMs: 100 });
    assert.deepEqual(await local.snapshot(), before, 'imported objects keep their uid and resourceVersion');
    assert.equal((await readAnnounce()).metadata?.uid, announceBefore.metadata?.uid, 'the announce is not recreated');
    const readyAfter = readyCondition(await clusterSets.get(CLUSTERSET_ID));
    assert.equal(readyAfter?.status, 'True');
    assert.equal(readyAfter?.lastTransitionTime, readyBefore?.lastTransitionTime, 'no Ready transition');
  });
});
