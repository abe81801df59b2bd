// Issue 33, "the first hour on real clusters", on real control planes with the chart installed
// as the README installs it (a member whose image nobody serves, a leader whose `leader run`
// never started): `join` and `status` name the agent Pod that cannot pull its image and the
// leader's Pod that crash-loops, read from Pods made from the chart's own Deployments as the
// ReplicaSet controller would, with their status written as a kubelet would; the leader's
// missing, then stale, member-ID ConfigMap; the AdmissionDenied that follows, told apart from a
// wrong ServiceAccount; and a member ClusterSet stuck in deletion without its agent.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1ContainerStatus } from '@kubernetes/client-node';
import { CLUSTERSET, type ClusterSet } from '../../src/common/api/antrea.js';
import { k8sBins, repoRoot } from '../harness/bins.js';
import { chartReleases, startChartProcess } from '../harness/chart-processes.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { HARNESS_ROOT, type ManagedProcess } from '../harness/processes.js';
import { onFailureShowLogs } from '../harness/report.js';
import { runCli } from '../harness/cli.js';
import { waitFor } from '../harness/wait.js';

const execFileAsync = promisify(execFile);
const CHART = path.join(repoRoot, 'charts', 'clusterset-agent');
const AGENT_NS = 'clusterset-agent';
const LEADER_RELEASE_NS = 'csa-leader';
const LEADER_NS = 'antrea-multicluster';
const CS = 'first-hour';
const IMAGE = 'registry.invalid/team/clusterset-agent';

/** One Pod of the Deployment, as its ReplicaSet would create it, with a container status as its kubelet would write it. */
async function podOf(cp: ControlPlane, namespace: string, deployment: string, container: (image: string, name: string) => V1ContainerStatus, phase = 'Pending'): Promise<void> {
  const kc = cp.adminConfig();
  const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace, name: deployment });
  const core = kc.makeApiClient(CoreV1Api);
  const template = d.spec?.template;
  const name = `${deployment}-7d9f-x2k4q`;
  await core.createNamespacedPod({ namespace, body: { metadata: { name, labels: template?.metadata?.labels ?? {} }, spec: template?.spec ?? { containers: [] } } });
  const pod = await core.readNamespacedPod({ namespace, name });
  const first = pod.spec?.containers[0];
  pod.status = { phase, containerStatuses: [container(first?.image ?? '', first?.name ?? '')] };
  await core.replaceNamespacedPodStatus({ namespace, name, body: pod });
}

describe('the first hour on real clusters (issue 33)', () => {
  let leader: ControlPlane;
  let east: ControlPlane;
  let agent: ManagedProcess | undefined;
  const dir = path.join(HARNESS_ROOT, `first-hour-${String(process.pid)}`);
  const helmHome = mkdtempSync(path.join(os.tmpdir(), 'csa-helm-'));
  const helm = (cp: ControlPlane, args: readonly string[]) => execFileAsync(k8sBins().helm, ['--kubeconfig', cp.kubeconfigPath, ...args], {
    encoding: 'utf8', timeout: 120_000,
    env: { ...process.env, HELM_CACHE_HOME: path.join(helmHome, 'cache'), HELM_CONFIG_HOME: path.join(helmHome, 'config'), HELM_DATA_HOME: path.join(helmHome, 'data') },
  });
  // A fresh apiserver answers 429 "storage is (re)initializing" for a moment after a CRD is
  // installed: status then exits 1 (could not read), and is asked again.
  const status = (cp: ControlPlane) => waitFor(`status of ${cp.name} read`, async () => {
    const res = await runCli('status', ['--kubeconfig', cp.kubeconfigPath]);
    if (res.code === 1) throw new Error(res.stderr);
    return res;
  }, { timeoutMs: 30_000, intervalMs: 500 });
  const memberClusterSet = async () => (await east.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS, name: CS,
  })) as ClusterSet;

  before(async () => {
    mkdirSync(dir, { recursive: true });
    [leader, east] = await Promise.all([startControlPlane('leader'), startControlPlane('east')]);
    await helm(leader, ['install', 'clusterset-leader', CHART, '-n', LEADER_RELEASE_NS, '--create-namespace', '--set', 'mode=leader']);
    await helm(east, ['install', 'clusterset-agent', CHART, '-n', AGENT_NS, '--create-namespace', '--set', `image.repository=${IMAGE}`, '--set', 'image.tag=0.1.0']);
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader?.stop(), east?.stop()]);
  });
  onFailureShowLogs(() => [leader, east]);

  it('join, while it waits, and status name the agent Pod that cannot pull its image; status on the leader names the crash-looping leader run', async () => {
    await podOf(east, AGENT_NS, 'clusterset-agent', (image, name) => ({
      name, image, imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` } },
    }));
    const pulled = /Pod clusterset-agent\/clusterset-agent-7d9f-x2k4q: container agent cannot pull image registry\.invalid\/team\/clusterset-agent:0\.1\.0 \(ImagePullBackOff\): Back-off pulling image .*set image\.repository and image\.tag/;
    const join = await runCli('join', ['--leader-kubeconfig', leader.kubeconfigPath, '--member-kubeconfig', east.kubeconfigPath,
      '--cluster-id', 'east', '--clusterset', CS, '--leader-cluster-id', 'leader', '--leader-server', leader.server, '--wait', '3']);
    assert.equal(join.code, 1, join.stdout + join.stderr);
    assert.match(join.stderr, /waiting for ClusterSet clusterset-agent\/first-hour: no Ready condition yet \(the agent is not running\); Pod clusterset-agent/);
    assert.match(join.stderr, pulled);
    const member = await status(east);
    assert.equal(member.code, 3, member.stdout + member.stderr);
    assert.match(member.stdout, pulled);
    assert.match(member.stdout, /no Ready condition yet: the agent is not running \(above\)/);

    await podOf(leader, LEADER_RELEASE_NS, 'clusterset-leader-clusterset-agent-leader', (image, name) => ({
      name, image, imageID: '', ready: false, restartCount: 5,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 2m40s restarting failed container' } }, lastState: { terminated: { exitCode: 2, reason: 'Error' } },
    }), 'Running');
    const onLeader = await status(leader);
    assert.equal(onLeader.code, 3, onLeader.stdout + onLeader.stderr);
    assert.match(onLeader.stdout, /Pod csa-leader\/clusterset-leader-clusterset-agent-leader-7d9f-x2k4q: container leader is not running \(CrashLoopBackOff, 5 restart\(s\); last exit 2 \(Error\)\)/);
    assert.match(onLeader.stdout, /kubectl logs -n csa-leader clusterset-leader-clusterset-agent-leader-7d9f-x2k4q -c leader --previous/);
  });

  it("without leader run, the member's AdmissionDenied says so (not the ServiceAccount), and status on the leader names the missing, then stale, ConfigMap", async () => {
    const onLeader = await status(leader);
    assert.match(onLeader.stdout, /ConfigMap antrea-multicluster\/clusterset-member-ids, which the leader's admission policies read, does not exist: `leader run` writes it, so it is not running/);
    const release = (await chartReleases(east)).find((r) => r.role === 'member');
    assert.ok(release);
    agent = await startChartProcess(release, dir, ['--heartbeat-interval', '2']);
    const denied = (cs: ClusterSet) => cs.status?.conditions?.find((c) => c.type === 'Ready' && c.reason === 'AdmissionDenied')?.message;
    const missing = await waitFor('Ready=False (AdmissionDenied) in the member', async () => denied(await memberClusterSet()), { timeoutMs: 60_000, intervalMs: 250 });
    assert.match(missing, /The leader's admission policies have no member-ID ConfigMap to read: `leader run` writes it, so it is not running on the leader/);

    // A ConfigMap `leader run` wrote before this member joined: stale.
    await leader.adminConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: LEADER_NS, body: { metadata: { name: 'clusterset-member-ids' }, data: { ClusterSetID: CS, LeaderClusterID: 'leader', 'member-other': 'other' } },
    });
    const stale = await status(leader);
    assert.equal(stale.code, 3);
    assert.match(stale.stdout, /ConfigMap antrea-multicluster\/clusterset-member-ids is stale: ServiceAccount member-east \(east\) has no entry there, so that member's announces are denied \(AdmissionDenied\)/);
    assert.doesNotMatch(stale.stdout, /clusterset-member-ids, which the leader's admission policies read, does not exist/);
    const noEntry = await waitFor('AdmissionDenied for the missing entry', async () => {
      const message = denied(await memberClusterSet());
      return message?.includes('has no entry for this member') === true ? message : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    assert.doesNotMatch(noEntry, /Wrong ServiceAccount/);
  });

  it('a member ClusterSet deleted while its agent is not running is named as stuck, with why', async () => {
    await agent?.stop();
    agent = undefined;
    const cs = await memberClusterSet();
    assert.ok(cs.metadata?.finalizers?.includes('clusterset-agent.multicluster.x-k8s.io/leave-leader'), JSON.stringify(cs.metadata));
    await east.adminConfig().makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS, name: CS,
    });
    const res = await status(east);
    assert.equal(res.code, 3, res.stdout + res.stderr);
    assert.match(res.stdout, /being deleted since \S+, held by the agent's finalizer clusterset-agent\.multicluster\.x-k8s\.io\/leave-leader, which only the running agent removes .*: the agent is not running \(above\)/);
  });
});
