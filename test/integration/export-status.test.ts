// One ServiceExport exported to two ClusterSets whose leaders disagree (one refuses, one
// accepts): the agent's one status writer shows Conflict=True naming the refusing ClusterSet,
// with at most one status write per change of the verdict and none at rest (member audit log);
// a verdict carried by a replaced RE from the previous spec is never written.
// The same rest window measures the member requests a minute of an idle agent.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { SERVICE_EXPORT, type ServiceExport } from '../../src/common/api/mcs.js';
import { RESOURCE_EXPORT, type ResourceExport } from '../../src/common/api/antrea.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { readAuditEvents } from '../harness/agent-process.js';
import { AGENT_NS, capturedLogger, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;
const MEMBER_ID = 'east';
const REST_S = 60;
const converge = { timeoutMs: 30_000, intervalMs: 200 };

describe('ServiceExport status with two ClusterSets whose leaders disagree', () => {
  let refusing: ControlPlane;
  let accepting: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  const log = capturedLogger();

  const reName = `${MEMBER_ID}-team-a-web-service`;
  const reRef = { group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS };
  /** What a leader does once it judged an export: writes Succeeded or Failure into its status. */
  const judge = async (leader: ControlPlane, condition: Record<string, string>) => {
    const api = leader.adminConfig().makeApiClient(CustomObjectsApi);
    const re = await waitFor(`ResourceExport ${reName}`, async () => (await api.getNamespacedCustomObject({ ...reRef, name: reName })) as ResourceExport, converge);
    await api.replaceNamespacedCustomObjectStatus({ ...reRef, name: reName, body: { ...re, status: { conditions: [{ lastTransitionTime: new Date().toISOString(), ...condition }] } } });
  };
  const seRef = { group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: 'team-a' };
  const serviceExport = async () => (await member.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ ...seRef, name: 'web' })) as ServiceExport;
  const statusWrites = () => readAuditEvents(member.auditLogPath, (e) => e.objectRef?.resource === 'serviceexports' && e.verb === 'update'
    && (e.requestURI ?? '').includes('/status'));

  before(async () => {
    [refusing, accepting, member] = await Promise.all([startControlPlane('leader-a'), startControlPlane('leader-b'), startControlPlane('member', { auditLog: true })]);
    await Promise.all([setupLeader(refusing, 'leader-a'), setupLeader(accepting, 'leader-b'), installCrds(member)]);
    for (const ns of [AGENT_NS, 'team-a']) await createNamespace(member.adminConfig(), ns);
    for (const [set, leader] of [['set-a', refusing], ['set-b', accepting]] as const) {
      const access = await createMemberAccess(leader, MEMBER_ID);
      await writeLeaderSecret(member, `token-${set}`, { caPem: leader.caPem, token: access.token });
      await createClusterSet(member, { name: set, clusterID: MEMBER_ID, leaderClusterID: set === 'set-a' ? 'leader-a' : 'leader-b', server: leader.server, secret: `token-${set}` });
    }
    const config = loadConfig({
      flags: parseConfigFlags(['--config', 'agent.yaml']), env: {},
      readFile: () => `namespace: ${AGENT_NS}
heartbeat: { intervalSeconds: ${String(INTERVAL_S)}, failureThreshold: 3 }
exports: { serviceCIDR: 10.96.0.0/12, podCIDRs: [10.244.0.0/16] }
`,
    });
    agent = await startAgent(config, log.logger, member.adminConfig());
    await waitForReady(member, 'set-a', 'True', 'Connected', 5 * INTERVAL_S * 1000);
    await waitForReady(member, 'set-b', 'True', 'Connected', 5 * INTERVAL_S * 1000);
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([refusing.stop(), accepting.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [refusing, accepting, member], () => `--- agent log ---\n${log.text()}`);

  it('Conflict=True names the refusing ClusterSet; one status write per verdict change, none at rest', async (t) => {
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedService({ namespace: 'team-a', body: { metadata: { name: 'web' }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } } });
    await member.adminConfig().makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({ namespace: 'team-a', body: {
      metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4',
      endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    } });
    await member.adminConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ ...seRef, body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name: 'web' } } });
    // Both leaders judge right after the export arrives (the agent re-reads its exports after a write).
    await Promise.all([
      judge(refusing, { type: 'Failure', status: 'False', reason: 'ConvergeFailure', message: 'ports http:80/TCP of cluster east conflict with http:81/TCP exported first by cluster west' }),
      judge(accepting, { type: 'Succeeded', status: 'True' }),
    ]);
    const conflict = await waitFor('Conflict=True', async () => (await serviceExport()).status?.conditions?.find((c) => c.type === 'Conflict' && c.status === 'True'), converge);
    assert.equal(conflict.reason, 'ConvergeFailure');
    assert.match(conflict.message, /^ClusterSet set-a: the leader rejected ResourceExport antrea-multicluster\/east-team-a-web-service: ports http:80\/TCP/);
    assert.ok(!conflict.message.includes('set-b'), 'the accepting ClusterSet is not named');
    await agent?.exports.exporterFor('set-a')?.onIdle();
    await agent?.exports.exporterFor('set-b')?.onIdle();
    // Valid=True, then Conflict=True: two verdict changes at most (one write when they coincide).
    const settled = statusWrites();
    assert.ok(settled.length >= 1 && settled.length <= 2, `${String(settled.length)} status writes: ${JSON.stringify(settled.map((e) => e.requestReceivedTimestamp))}`);

    // At rest: no status write, and the agent's member requests a minute.
    const from = new Date().toISOString();
    await delay(REST_S * 1000);
    const to = new Date().toISOString();
    assert.equal(statusWrites().length, settled.length, 'no status write at rest');
    const atRest = readAuditEvents(member.auditLogPath, (e) => e.requestReceivedTimestamp >= from && e.requestReceivedTimestamp < to && e.user.username === 'test-admin');
    const perMinute = atRest.length / (REST_S / 60);
    t.diagnostic(`member requests at rest: ${String(perMinute)}/min (${atRest.map((e) => `${e.verb} ${e.objectRef?.resource ?? ''}`).join(', ')})`);
    assert.equal((await serviceExport()).status?.conditions?.find((c) => c.type === 'Conflict')?.status, 'True');
  });

  // Item 5 of issue 21: a verdict is tied to the RE version it was written on. After the
  // Service changes, the REs are replaced and still carry the previous spec's verdicts (status
  // is a subresource): that is no verdict on the new spec, so nothing is written until the
  // leaders judge the new version, and then once. (A carried verdict equals the one shown, so
  // taking it would show nothing new here; the watch bringing an older version after our
  // replace, where it would, is exporter.test.ts' "verdicts tied to the version" case.)
  it('a spec change writes no verdict until the leaders judge the new version, then one write', async () => {
    const reApi = (leader: ControlPlane) => leader.adminConfig().makeApiClient(CustomObjectsApi);
    const port = async (leader: ControlPlane) => ((await reApi(leader).getNamespacedCustomObject({ ...reRef, name: reName })) as ResourceExport).spec?.service?.serviceSpec?.ports?.[0]?.port;
    const before = statusWrites().length;
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    const svc = await core.readNamespacedService({ namespace: 'team-a', name: 'web' });
    assert.ok(svc.spec);
    svc.spec.ports = [{ name: 'http', port: 81, protocol: 'TCP', targetPort: 8080 }];
    await core.replaceNamespacedService({ namespace: 'team-a', name: 'web', body: svc });
    await waitFor('both leaders hold the new spec', async () => (await port(refusing)) === 81 && (await port(accepting)) === 81, converge);
    const carried = (await reApi(refusing).getNamespacedCustomObject({ ...reRef, name: reName })) as ResourceExport;
    assert.equal(carried.status?.conditions?.[0]?.type, 'Failure', 'the replaced RE still carries the verdict on the previous spec');
    await agent?.exports.exporterFor('set-a')?.onIdle();
    await agent?.exports.exporterFor('set-b')?.onIdle();
    assert.equal(statusWrites().length, before, 'no ServiceExport status write from a verdict on the previous spec');

    await Promise.all([judge(refusing, { type: 'Succeeded', status: 'True' }), judge(accepting, { type: 'Succeeded', status: 'True' })]);
    const cleared = await waitFor('Conflict=False once both leaders accept the new spec', async () =>
      (await serviceExport()).status?.conditions?.find((c) => c.type === 'Conflict' && c.status === 'False'), converge);
    assert.equal(cleared.reason, 'NoConflict');
    await agent?.exports.exporterFor('set-a')?.onIdle();
    await agent?.exports.exporterFor('set-b')?.onIdle();
    assert.equal(statusWrites().length, before + 1, 'one status write for the one verdict change');
  });

  // Item 6 of issue 29: a leader's verdict message is the leader's text. One of 1 MB (what an
  // unbounded leader writes for 30,000 differing ports) would fail the ServiceExport status
  // write forever (the CRD's condition message has maxLength 32768): the member cuts it.
  it('a 1 MB verdict (30,000 differing ports) still ends in a written, bounded Conflict condition', async () => {
    const huge = `ports differ (cluster west: ${Array.from({ length: 30_000 }, (_, i) => `p${String(i)}:${String(i + 1)}/TCP`).join(', ')})`;
    assert.ok(huge.length > 300_000);
    await judge(refusing, { type: 'Failure', status: 'False', reason: 'ConvergeFailure', message: huge });
    const conflict = await waitFor('Conflict=True carrying the start of the huge verdict', async () =>
      (await serviceExport()).status?.conditions?.find((c) => c.type === 'Conflict' && c.status === 'True' && c.message.includes('p0:1/TCP, p1:2/TCP')), converge);
    assert.ok(Buffer.byteLength(conflict.message, 'utf8') <= 8192, `${String(Buffer.byteLength(conflict.message, 'utf8'))} bytes`);
    assert.match(conflict.message, /^ClusterSet set-a: the leader rejected ResourceExport antrea-multicluster\/east-team-a-web-service: ports differ/);
    assert.match(conflict.message, /… and \d+ more characters$/);
    assert.ok(!log.lines.some((l) => l.includes('writing ServiceExport status failed')), 'no failed status write');
  });
});
