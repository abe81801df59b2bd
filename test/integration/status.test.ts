// `clusterset-agent status` on real control planes: a leader running this project's leader
// controller, and two members (east, west) running the agent. One import the members' policy
// rejects, one export the leader refuses, one member that stopped: the status of each cluster
// names each of them, in text and JSON, and exits 3; as a kubectl plugin it says the same.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { SERVICE_EXPORT, type ServiceExport } from '../../src/common/api/mcs.js';
import { CLUSTERSET, RESOURCE_IMPORT, type ClusterSet } from '../../src/common/api/antrea.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/common/config/config.js';
import { LeaderController } from '../../src/leader/controller.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import type { ClusterSetReport, LeaderClusterSetReport, MemberClusterSetReport } from '../../src/cli/report/model.js';
import { k8sBins, repoRoot } from '../harness/bins.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { maybe, serviceImportRI } from '../harness/imports.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { runCli } from '../harness/cli.js';
import { waitFor } from '../harness/wait.js';

const INTERVAL_S = 2;
const converge = { timeoutMs: 30_000, intervalMs: 200 };

const status = (args: readonly string[]) => runCli('status', args);

describe('clusterset-agent status: a ClusterSet explained from either side', () => {
  let leader: ControlPlane;
  const cps: Record<'east' | 'west', ControlPlane> = {} as never;
  const agents: Partial<Record<'east' | 'west', Agent>> = {};
  const logs = { leader: capturedLogger(), east: capturedLogger(), west: capturedLogger() };
  let controller: LeaderController | undefined;

  const exportService = async (cp: ControlPlane, name: string, port: number) => {
    const kc = cp.adminConfig();
    await kc.makeApiClient(CoreV1Api).createNamespacedService({ namespace: 'team-a', body: { metadata: { name }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port, protocol: 'TCP', targetPort: 8080 }] } } });
    await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace: 'team-a',
      body: {
        metadata: { name: `${name}-abc`, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4',
        endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    });
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a',
      body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name } },
    });
  };

  before(async () => {
    const [l, east, west] = await Promise.all([startControlPlane('leader'), startControlPlane('east'), startControlPlane('west')]);
    leader = l;
    cps.east = east;
    cps.west = west;
    await setupLeader(leader);
    controller = new LeaderController({
      kubeConfig: leader.adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 3 * INTERVAL_S * 1000, staleMemberMs: 86_400_000,
      logger: logs.leader.logger, metrics: new AgentMetrics({ defaultMetrics: false }),
    });
    await controller.start();
    for (const id of ['east', 'west'] as const) {
      const cp = cps[id];
      await installCrds(cp);
      for (const ns of [AGENT_NS, 'team-a']) await createNamespace(cp.adminConfig(), ns);
      // east's token lasts 30 days, west's one hour: only west's expiry needs attention.
      const access = await createMemberAccess(leader, id, { expirationSeconds: id === 'east' ? 30 * 86_400 : 3600 });
      await writeLeaderSecret(cp, 'leader-token', { caPem: leader.caPem, token: access.token });
      await createClusterSet(cp, { clusterID: id, server: leader.server, secret: 'leader-token' });
      const config = loadConfig({ env: {}, readFile: () => '' });
      agents[id] = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: INTERVAL_S, requestTimeoutSeconds: 1 } }, logs[id].logger, cp.adminConfig());
    }
    await Promise.all((['east', 'west'] as const).map((id) => waitForReady(cps[id], CLUSTERSET_ID, 'True', 'Connected', 30_000)));
  });
  after(async () => {
    await Promise.all(Object.values(agents).map((a) => a.stop()));
    await controller?.stop();
    await Promise.all([leader.stop(), cps.east.stop(), cps.west.stop()]);
  });
  onFailureShowLogs(() => [leader, cps.east, cps.west], () =>
    `--- leader log ---\n${logs.leader.text()}\n--- east log ---\n${logs.east.text()}\n--- west log ---\n${logs.west.text()}`);

  it('a healthy ClusterSet: exit 0 on the leader and east, west told its token expires within the hour', async () => {
    await waitFor('leader ClusterSet with two ready members', async () => {
      const cs = (await leader.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: LEADER_NS, name: CLUSTERSET_ID,
      })) as ClusterSet;
      return cs.status?.readyClusters === 2;
    }, converge);
    const onLeader = await status(['--kubeconfig', leader.kubeconfigPath]);
    assert.equal(onLeader.code, 0, onLeader.stdout + onLeader.stderr);
    assert.match(onLeader.stdout, new RegExp(`ClusterSet ${LEADER_NS}/${CLUSTERSET_ID} \\(leader leader\\)`));
    assert.match(onLeader.stdout, /Members: {4}2 of 2 ready/);
    assert.match(onLeader.stdout, /east: connected, last beat \d{4}-/);
    const onEast = await status(['--kubeconfig', cps.east.kubeconfigPath]);
    assert.equal(onEast.code, 0, onEast.stdout + onEast.stderr);
    assert.match(onEast.stdout, /Ready: {6}True \(Connected\)/);
    assert.match(onEast.stdout, /Credential: Secret leader-token, expires \d{4}-\d\d-\d\dT\S+ \(in 30d\)/);
    const onWest = await status(['--kubeconfig', cps.west.kubeconfigPath]);
    assert.equal(onWest.code, 3, onWest.stdout + onWest.stderr);
    assert.match(onWest.stdout, /NEEDS ATTENTION \(1\):\n {4}- the leader token in Secret leader-token expires in (59|60)m: issue a new one/);
  });

  it('one rejected import, one refused export and one stopped member: each named where it shows, exit 3', async () => {
    // An import into kube-system, which every member's import policy refuses.
    await leader.adminConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: RESOURCE_IMPORT.group, version: RESOURCE_IMPORT.version, plural: RESOURCE_IMPORT.plural, namespace: LEADER_NS,
      body: serviceImportRI('kube-system', 'sneaky', [{ name: 'http', port: 80 }]),
    });
    // Two exports of one Service whose ports disagree: the leader keeps east's and refuses west's.
    await exportService(cps.east, 'api', 80);
    await waitFor('east api imported on the leader', () => maybe(() => leader.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: RESOURCE_IMPORT.group, version: RESOURCE_IMPORT.version, plural: RESOURCE_IMPORT.plural, namespace: LEADER_NS, name: 'team-a-api-service',
    })), converge);
    await exportService(cps.west, 'api', 81);
    await waitFor('west ServiceExport Conflict=True', async () => {
      const se = (await cps.west.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a', name: 'api',
      })) as ServiceExport;
      return se.status?.conditions?.some((c) => c.type === 'Conflict' && c.status === 'True');
    }, { timeoutMs: 40_000, intervalMs: 200 });
    await waitFor('east counts the rejected import', async () => {
      const r = JSON.parse((await status(['--kubeconfig', cps.east.kubeconfigPath, '-o', 'json'])).stdout) as { clusterSets: MemberClusterSetReport[] };
      return (r.clusterSets[0]?.imports.rejected ?? 0) >= 1;
    }, converge);

    const onWest = await status(['--kubeconfig', cps.west.kubeconfigPath, CLUSTERSET_ID]);
    assert.equal(onWest.code, 3, onWest.stdout + onWest.stderr);
    assert.match(onWest.stdout, /ServiceExport team-a\/api conflicts \(/, onWest.stdout);

    const onEast = await status(['--kubeconfig', cps.east.kubeconfigPath]);
    assert.equal(onEast.code, 3, onEast.stdout + onEast.stderr);
    assert.match(onEast.stdout, /1 import\(s\) rejected by the member's import policy/);
    assert.match(onEast.stdout, /ImportRejectedNamespaceDenied x\d+.*kube-system/, onEast.stdout);

    await agents.west?.stop();
    delete agents.west;
    const json = await waitFor('the leader reports west disconnected', async () => {
      const res = await status(['--kubeconfig', leader.kubeconfigPath, '-n', LEADER_NS, '-o', 'json']);
      const report = (JSON.parse(res.stdout) as { clusterSets: ClusterSetReport[] }).clusterSets[0] as LeaderClusterSetReport | undefined;
      return report?.members.find((m) => m.clusterID === 'west')?.ready?.status === 'False' ? { res, report } : undefined;
    }, converge);
    assert.equal(json.res.code, 3);
    const text = await status(['--kubeconfig', leader.kubeconfigPath]);
    assert.equal(text.code, 3);
    assert.match(text.stdout, /member west is disconnected: No MemberClusterAnnounce update after/);
    assert.match(text.stdout, /west: DISCONNECTED, last beat \d{4}-/);
    assert.match(text.stdout, /export west-team-a-api-service from west refused \(ConvergeFailure\): .*conflict/);
    assert.ok(json.report.exports.refused.some((e) => e.name === 'west-team-a-api-service' && e.sourceClusterID === 'west'));
  });

  it("a stopped agent and a stopped leader controller: Ready still says True on both sides, status exits 3 and says why", async () => {
    // west's agent stopped in the test before: its ClusterSet still says Ready=True, but its
    // lastHeartbeatTime (advanced once a minute, at the first 2 s beat after it) stops.
    const staleAfter = ['--stale-after', '75s'];
    const onWest = await waitFor('west: the last heartbeat judged stale', async () => {
      const res = await status(['--kubeconfig', cps.west.kubeconfigPath, ...staleAfter]);
      return res.stdout.includes('last heartbeat') ? res : undefined;
    }, { timeoutMs: 120_000, intervalMs: 1000 });
    assert.equal(onWest.code, 3, onWest.stdout + onWest.stderr);
    assert.match(onWest.stdout, /Ready: {6}True \(Connected\)/);
    assert.match(onWest.stdout, /- last heartbeat \d+s ago \(\S+\), over 75s, while Ready still says True: the agent is not running, or cannot write its status/);
    const onEast = await status(['--kubeconfig', cps.east.kubeconfigPath, ...staleAfter]);
    assert.doesNotMatch(onEast.stdout, /last heartbeat/, 'east\'s agent runs: its heartbeat is not stale');

    // The leader controller stops, then east's agent: the leader's status keeps east connected.
    await controller?.stop();
    controller = undefined;
    await agents.east?.stop();
    delete agents.east;
    const onLeader = await waitFor('the leader status judged stale', async () => {
      const res = await status(['--kubeconfig', leader.kubeconfigPath, '--stale-after', '10s']);
      return res.stdout.includes('stale leader status') ? res : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    assert.equal(onLeader.code, 3);
    assert.match(onLeader.stdout, /east: connected, last beat/);
    assert.match(onLeader.stdout, /- stale leader status: east shown connected, but last beat up to \d+s ago \(over 10s\): is the leader controller \(leader run\) running\?/);
  });

  it('as a kubectl plugin: kubectl clusterset status says the same', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-plugin-'));
    try {
      // What a symlink to the installed clusterset-agent does, from the source tree.
      const plugin = path.join(dir, 'kubectl-clusterset');
      writeFileSync(plugin, `#!/bin/sh\nexec "${process.execPath}" --import tsx "${path.join(repoRoot, 'src', 'cli', 'main.ts')}" "$@"\n`);
      chmodSync(plugin, 0o755);
      const res = await promisify(execFile)(k8sBins().kubectl, ['clusterset', 'status', CLUSTERSET_ID], {
        cwd: repoRoot, env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, KUBECONFIG: cps.east.kubeconfigPath },
      }).then((r) => ({ code: 0, ...r }), (err: unknown) => err as { code: number; stdout: string; stderr: string });
      assert.equal(res.code, 3, res.stderr);
      assert.match(res.stdout, new RegExp(`ClusterSet ${AGENT_NS}/${CLUSTERSET_ID} \\(member east\\)`));
      assert.match(res.stdout, /1 import\(s\) rejected/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a cluster without the CRDs, an unknown ClusterSet and a bad --output: clear errors, exit 1 or 2', async () => {
    const bare = await startControlPlane('bare');
    try {
      const res = await status(['--kubeconfig', bare.kubeconfigPath]);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /serves no clustersets\.multicluster\.crd\.antrea\.io\/v1alpha2: the chart \(its CRDs\) is not installed here/);
    } finally {
      await bare.stop();
    }
    const unknown = await status(['--kubeconfig', cps.east.kubeconfigPath, 'nope']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no ClusterSet nope/);
    const bad = await status(['--kubeconfig', cps.east.kubeconfigPath, '-o', 'yaml']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--output must be text or json/);
  });
});
