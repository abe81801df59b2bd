// One leader's trouble says why in its own entry (issue 30 acceptance), on real control planes:
// two leaders running this project's leader controller, west exporting team-a/web to both,
// east listing both and importing it. On leader-a, in turn: east's Secret given a wrong CA,
// the leader's ClusterSet deleted, east's token revoked (its ServiceAccount deleted). Each
// time east's entry for leader-a is Ready=False with a reason naming the cause,
// AllLeadersConnected=False names leader-a, the ClusterSet stays Ready, and the import leader-b
// also holds is neither rewritten nor removed (uid@resourceVersion unchanged). Leader-a runs
// the chart in mode=leader (its admission policies in force, its controller with the chart's
// ServiceAccount), whose announce policy refuses a member's heartbeat once the leader's
// ClusterSet is gone: that is how the member learns it (it may not read leader ClusterSets).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, KubeConfig } from '@kubernetes/client-node';
import { CLUSTERSET, type ClusterSet } from '../../src/common/api/antrea.js';
import { SERVICE_IMPORT } from '../../src/common/api/mcs.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { LeaderController } from '../../src/leader/controller.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { agentConfig, prepareMemberOfLeaders } from '../harness/agents.js';
import { AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, LEADER_NS, setupLeader, writeLeaderSecret } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { installChartLeader } from '../harness/leader-admission.js';
import { onFailureShowLogs } from '../harness/report.js';
import { exportService } from '../harness/service-export.js';
import { waitFor } from '../harness/wait.js';

const LEADERS = ['leader-a', 'leader-b'] as const;
const MEMBERS = ['east', 'west'] as const;
type LeaderID = typeof LEADERS[number];
type MemberID = typeof MEMBERS[number];
const converge = { timeoutMs: 45_000, intervalMs: 200 };

type Conditions = readonly { type?: string; status?: string; reason?: string; message?: string }[] | undefined;
const condition = (conditions: Conditions, type: string) => (conditions ?? []).find((c) => c.type === type);

describe("one leader's trouble: its entry says why, the others keep the imports", () => {
  const leaders: Partial<Record<LeaderID, ControlPlane>> = {};
  const members: Partial<Record<MemberID, ControlPlane>> = {};
  const controllers: LeaderController[] = [];
  const agents: Agent[] = [];
  const logs = { 'leader-a': capturedLogger(), 'leader-b': capturedLogger(), east: capturedLogger(), west: capturedLogger() };
  const leader = (id: LeaderID): ControlPlane => leaders[id] ?? assert.fail(`leader ${id} not started`);
  const member = (id: MemberID): ControlPlane => members[id] ?? assert.fail(`member ${id} not started`);
  const eastCS = () => clusterSetApi(member('east').adminConfig()).get(CLUSTERSET_ID);

  /** uid@resourceVersion of every object east imported: any write or delete changes it. */
  async function imported(): Promise<Record<string, string>> {
    const kc = member('east').adminConfig();
    const selector = { namespace: 'team-a', labelSelector: 'app.kubernetes.io/managed-by=clusterset-agent' };
    type Meta = { metadata?: { name?: string; uid?: string; resourceVersion?: string } };
    const tagged = (kind: string, items: readonly Meta[]) => items.map((o) => [`${kind}/${o.metadata?.name ?? ''}`, `${o.metadata?.uid ?? ''}@${o.metadata?.resourceVersion ?? ''}`] as const);
    return Object.fromEntries([
      ...tagged('Service', (await kc.makeApiClient(CoreV1Api).listNamespacedService(selector)).items),
      ...tagged('EndpointSlice', (await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice(selector)).items),
      ...tagged('ServiceImport', ((await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, ...selector,
      })) as { items: Meta[] }).items),
    ]);
  }

  /**
   * Waits until east's entry for leader-a is Ready=False with `reason`, then checks the rest:
   * the message names the cause, AllLeadersConnected=False names leader-a, Ready stays True,
   * and the imports are as `before`.
   */
  async function leaderATrouble(reason: string, message: RegExp, before: Record<string, string>, timeoutMs = converge.timeoutMs): Promise<void> {
    const cs = await waitFor(`east's entry for leader-a says ${reason}`, async () => {
      const got = await eastCS();
      const entry = got.status?.clusterStatuses?.find((s) => s.clusterID === 'leader-a');
      const ready = condition(entry?.conditions, 'Ready');
      if (ready?.status !== 'False' || ready.reason !== reason) throw new Error(`leader-a entry: ${JSON.stringify(entry)}`);
      return got;
    }, { ...converge, timeoutMs });
    const ready = condition(cs.status?.clusterStatuses?.find((s) => s.clusterID === 'leader-a')?.conditions, 'Ready');
    assert.match(ready?.message ?? '', message);
    assert.equal(condition(cs.status?.conditions, 'Ready')?.status, 'True', JSON.stringify(cs.status));
    const all = condition(cs.status?.conditions, 'AllLeadersConnected');
    assert.equal(all?.status, 'False');
    assert.match(all?.message ?? '', new RegExp(`1/2 leaders connected; not connected: leader-a \\(${reason}`));
    assert.equal(condition(cs.status?.clusterStatuses?.find((s) => s.clusterID === 'leader-b')?.conditions, 'Ready')?.status, 'True');
    await agents[1]?.imports.importerFor(CLUSTERSET_ID, 'leader-b')?.onIdle();
    assert.deepEqual(await imported(), before, 'the import leader-b holds is neither rewritten nor removed');
  }

  const bothConnected = () => waitFor('east connected to both leaders', async () => (await eastCS()).status?.leaders === '2/2', converge);

  before(async () => {
    const started = await Promise.all([...LEADERS, ...MEMBERS].map((id) => startControlPlane(id)));
    for (const cp of started) {
      if ((LEADERS as readonly string[]).includes(cp.name)) leaders[cp.name as LeaderID] = cp;
      else members[cp.name as MemberID] = cp;
    }
    for (const id of LEADERS) {
      await setupLeader(leader(id), id);
      // leader-a as an operator installs it: the chart's policies, `leader run` as its ServiceAccount.
      let kubeConfig = leader(id).adminConfig();
      if (id === 'leader-a') {
        kubeConfig = new KubeConfig();
        kubeConfig.loadFromFile(await installChartLeader(leader(id), leader(id).dir));
      }
      const controller = new LeaderController({
        kubeConfig, namespace: LEADER_NS, memberTimeoutMs: 30_000, staleMemberMs: 86_400_000,
        logger: logs[id].logger, metrics: new AgentMetrics({ defaultMetrics: false }),
      });
      controllers.push(controller);
      await controller.start();
    }
    for (const id of ['west', 'east'] as const) {
      const cp = member(id);
      await prepareMemberOfLeaders(cp, id, LEADERS.map((l) => [l, leader(l)] as const), 'team-a');
      agents.push(await startAgent(agentConfig({ heartbeat: { intervalSeconds: 2, requestTimeoutSeconds: 1 } }), logs[id].logger, cp.adminConfig()));
    }
    await exportService(member('west').adminConfig(), 'team-a', 'web', {
      spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] },
      endpoints: { addresses: ['10.244.1.5'], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
    });
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await Promise.all(controllers.map((c) => c.stop()));
    await Promise.all([...Object.values(leaders), ...Object.values(members)].map(async (cp) => { await cp.stop(); }));
  });
  onFailureShowLogs(() => [...Object.values(leaders), ...Object.values(members)], () => Object.entries(logs).map(([id, l]) => `--- ${id} log ---\n${l.text()}`).join('\n'));

  it('east imports team-a/web from both leaders', async () => {
    await bothConnected();
    await waitFor('east imports team-a/web', async () => Object.keys(await imported()).length === 3, converge);
  });

  it("leader-a's CA wrong in east's Secret: TLSVerificationFailed in its entry", async () => {
    const before = await imported();
    await writeLeaderSecret(member('east'), 'leader-a-token', { caPem: leader('leader-b').caPem, token: await tokenOf('leader-a-token') });
    await leaderATrouble('TLSVerificationFailed', /TLS verification of https:\/\/127\.0\.0\.1:\d+ failed .*check that the Secret's ca\.crt is the CA of the leader's API server/, before);
    await writeLeaderSecret(member('east'), 'leader-a-token', { caPem: leader('leader-a').caPem, token: await tokenOf('leader-a-token') });
    await bothConnected();
  });

  it("leader-a's own ClusterSet deleted: the leader refuses east's heartbeat, and east's entry says the ClusterSet is gone", async () => {
    const before = await imported();
    const custom = leader('leader-a').adminConfig().makeApiClient(CustomObjectsApi);
    const ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: LEADER_NS };
    const saved = (await custom.getNamespacedCustomObject({ ...ref, name: CLUSTERSET_ID })) as ClusterSet;
    await custom.deleteNamespacedCustomObject({ ...ref, name: CLUSTERSET_ID });
    try {
      await leaderATrouble('AdmissionDenied', new RegExp(`no ClusterSet found in Namespace ${LEADER_NS}.*The leader has no ClusterSet of this name`), before);
    } finally {
      await custom.createNamespacedCustomObject({ ...ref, body: { apiVersion: saved.apiVersion, kind: saved.kind, metadata: { name: CLUSTERSET_ID }, spec: saved.spec } });
      await bothConnected();
    }
  });

  it("east's token on leader-a revoked (its ServiceAccount deleted): Unauthorized in its entry", async () => {
    const before = await imported();
    await leader('leader-a').adminConfig().makeApiClient(CoreV1Api).deleteNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east' });
    await leaderATrouble('Unauthorized', /401|token/i, before);
  });

  async function tokenOf(secret: string): Promise<string> {
    const s = await member('east').adminConfig().makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: AGENT_NS, name: secret });
    return Buffer.from(s.data?.token ?? '', 'base64').toString('utf8');
  }
});
