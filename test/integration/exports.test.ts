// Exports on real control planes: the member's ServiceExports and Gateway reach the leader as
// ResourceExports in Antrea's exact format, every one admitted by the chart's leader-side
// admission policy (Antrea ≥2.7's rules); updates propagate, nothing is written when nothing
// changed, a restart rewrites nothing, withdrawals delete, leaving removes every export, and
// every invalid case is a ServiceExport condition.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, type V1EndpointSlice } from '@kubernetes/client-node';
import { SERVICE_EXPORT, type ServiceExport } from '../../src/common/api/mcs.js';
import { GATEWAY, MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, type ResourceExport } from '../../src/common/api/antrea.js';
import {
  IMPORTED_SERVICE_ANNOTATION,
  mcaName,
  RE_LABEL_SOURCE_CLUSTER_ID,
  RESOURCE_EXPORT_FINALIZER,
} from '../../src/common/api/names.js';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { readAuditEvents } from '../harness/agent-process.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady,
  writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace } from '../harness/kube.js';
import { installLeaderAdmission } from '../harness/leader-admission.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;
const MEMBER_ID = 'east';
const converge = { timeoutMs: 15_000, intervalMs: 100 };

describe('exports to a leader', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  let log = capturedLogger();
  let writesBeforeAgent = 0;
  const config = () => loadConfig({
    flags: parseConfigFlags(['--config', 'agent.yaml']), env: {},
    readFile: () => `namespace: ${AGENT_NS}
heartbeat: { intervalSeconds: ${String(INTERVAL_S)}, failureThreshold: 3 }
exports: { serviceCIDR: 10.96.0.0/12, podCIDRs: [10.244.0.0/16], deniedNamespaces: [private] }
`,
  });
  const startMemberAgent = async () => {
    log = capturedLogger();
    agent = await startAgent(config(), log.logger, member.adminConfig());
  };
  const leaderREs = () => {
    const api = leader.adminConfig().makeApiClient(CustomObjectsApi);
    const ref = { group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS };
    return {
      list: async () => ((await api.listNamespacedCustomObject({ ...ref, labelSelector: `${RE_LABEL_SOURCE_CLUSTER_ID}=${MEMBER_ID}` })) as { items: ResourceExport[] }).items,
      get: async (name: string) => {
        try {
          return (await api.getNamespacedCustomObject({ ...ref, name })) as ResourceExport;
        } catch (err) {
          if ((err as { code?: number }).code === 404) return undefined;
          throw err;
        }
      },
      /** What a leader controller does with a withdrawn export: release its finalizer, so the delete completes. */
      releaseDeleted: async () => {
        for (const re of await leaderREs().list()) {
          if (!re.metadata?.deletionTimestamp || !re.metadata.finalizers?.length) continue;
          await api.patchNamespacedCustomObject({ ...ref, name: re.metadata.name ?? '', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
        }
      },
    };
  };
  const core = () => member.adminConfig().makeApiClient(CoreV1Api);
  const custom = () => member.adminConfig().makeApiClient(CustomObjectsApi);
  const seRef = (namespace: string) => ({ group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace });
  const createServiceExport = async (namespace: string, name: string) => {
    await custom().createNamespacedCustomObject({ ...seRef(namespace), body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name } } });
  };
  const validCondition = async (namespace: string, name: string) => {
    const se = (await custom().getNamespacedCustomObject({ ...seRef(namespace), name })) as ServiceExport;
    return se.status?.conditions?.find((c) => c.type === 'Valid');
  };
  const waitForValid = (namespace: string, name: string, status: string, reason: string) =>
    waitFor(`ServiceExport ${namespace}/${name} Valid=${status} ${reason}`, async () => {
      const c = await validCondition(namespace, name);
      if (c?.status === status && c.reason === reason) return c;
      throw new Error(`Valid is ${JSON.stringify(c)}`);
    }, converge);
  const createService = async (namespace: string, name: string, spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}) =>
    core().createNamespacedService({ namespace, body: { metadata: { name, annotations }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], ...spec } } });
  const createSlice = async (namespace: string, service: string, ips: string[], ready = true): Promise<V1EndpointSlice> =>
    member.adminConfig().makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace,
      body: {
        metadata: { name: `${service}-abc`, labels: { 'kubernetes.io/service-name': service } }, addressType: 'IPv4',
        endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready } })), ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    });
  /** Writes by the member's ServiceAccount to resourceexports on the leader, from its audit log. */
  const leaderWrites = () => readAuditEvents(leader.auditLogPath, (e) =>
    e.objectRef?.resource === 'resourceexports' && ['create', 'update', 'patch', 'delete'].includes(e.verb) && e.user.username.startsWith(`system:serviceaccount:${LEADER_NS}:member-`))
    .map((e) => `${e.verb} ${e.objectRef?.name ?? ''} ${String(e.responseStatus?.code)}`);

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader', { auditLog: true }), startControlPlane('member')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    for (const ns of [AGENT_NS, 'team-a', 'private']) await createNamespace(member.adminConfig(), ns);
    const access = await createMemberAccess(leader, MEMBER_ID);
    await installLeaderAdmission(leader, { [access.serviceAccount]: MEMBER_ID }, { token: access.token, clusterID: MEMBER_ID });
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    await createClusterSet(member, { clusterID: MEMBER_ID, server: leader.server, secret: 'leader-token' });
    writesBeforeAgent = leaderWrites().length; // the policy's own probe, denied on purpose
    await startMemberAgent();
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('publishes a ServiceExport as two ResourceExports in Antrea\'s format, admitted by the leader policy', async () => {
    const svc = await createService('team-a', 'web');
    await createSlice('team-a', 'web', ['10.244.1.5']);
    await createServiceExport('team-a', 'web');
    const re = await waitFor('both exports on the leader', async () => {
      const [s, e] = await Promise.all([leaderREs().get(`${MEMBER_ID}-team-a-web-service`), leaderREs().get(`${MEMBER_ID}-team-a-web-endpoints`)]);
      return s && e ? { s, e } : undefined;
    }, converge);
    for (const [object, kind] of [[re.s, 'Service'], [re.e, 'Endpoints']] as const) {
      assert.deepEqual(object.metadata?.labels, { sourceName: 'web', sourceNamespace: 'team-a', sourceClusterID: MEMBER_ID, sourceKind: kind });
      assert.deepEqual(object.metadata?.finalizers, [RESOURCE_EXPORT_FINALIZER]);
      assert.equal(object.spec?.clusterID, MEMBER_ID);
      assert.equal(object.spec?.kind, kind);
      assert.equal(object.spec?.name, 'web');
      assert.equal(object.spec?.namespace, 'team-a');
    }
    assert.deepEqual(re.s.spec?.service?.serviceSpec?.ports, [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }]);
    assert.deepEqual(re.e.spec?.endpoints?.subsets, [{ addresses: [{ ip: svc.spec?.clusterIP }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
      'ClusterIP mode: the Service ClusterIP is the one address');
    const valid = await waitForValid('team-a', 'web', 'True', 'Succeed');
    assert.equal(valid.message, 'The Service is exported successfully');
    const denied = leaderWrites().slice(writesBeforeAgent).filter((w) => !/ 20\d$/.test(w));
    assert.deepEqual(denied, [], 'every write was admitted');
  });

  it('propagates a port change, and writes nothing when nothing exported changed (a label, a pod IP in ClusterIP mode)', async () => {
    const before = leaderWrites().length;
    await core().patchNamespacedService({ namespace: 'team-a', name: 'web', body: [{ op: 'replace', path: '/spec/ports/0/port', value: 81 }] });
    await waitFor('the new port on the leader', async () => (await leaderREs().get(`${MEMBER_ID}-team-a-web-service`))?.spec?.service?.serviceSpec?.ports?.[0]?.port === 81, converge);
    await agent?.exports.exporterFor(CLUSTERSET_ID)?.onIdle();
    const afterPort = leaderWrites().slice(before);
    assert.ok(afterPort.every((w) => w.startsWith('update ')), JSON.stringify(afterPort));
    // An unrelated change (a label on the Service) changes no export.
    await core().patchNamespacedService({ namespace: 'team-a', name: 'web', body: [{ op: 'add', path: '/metadata/labels', value: { tier: 'front' } }] });
    // In ClusterIP mode the Service's ClusterIP is the exported address: a new pod IP changes nothing.
    await member.adminConfig().makeApiClient(DiscoveryV1Api).patchNamespacedEndpointSlice({
      namespace: 'team-a', name: 'web-abc', body: [{ op: 'add', path: '/endpoints/-', value: { addresses: ['10.244.1.6'], conditions: { ready: true } } }],
    });
    const settled = leaderWrites().length;
    await agent?.exports.exporterFor(CLUSTERSET_ID)?.onIdle();
    assert.equal(leaderWrites().length, settled, 'no write when nothing exported changed');
  });

  it('rewrites nothing after an agent restart', async () => {
    await agent?.exports.exporterFor(CLUSTERSET_ID)?.onIdle();
    const before = leaderWrites().length;
    const uids = (await leaderREs().list()).map((r) => `${r.metadata?.name ?? ''} ${r.metadata?.resourceVersion ?? ''}`).sort();
    await agent?.stop();
    await startMemberAgent();
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    await waitFor('the exporter resumed and settled', async () => {
      const exporter = agent?.exports.exporterFor(CLUSTERSET_ID);
      if (!exporter) return false;
      await exporter.onIdle();
      return true;
    }, converge);
    assert.deepEqual(leaderWrites().slice(before), [], 'no write after a restart');
    assert.deepEqual((await leaderREs().list()).map((r) => `${r.metadata?.name ?? ''} ${r.metadata?.resourceVersion ?? ''}`).sort(), uids);
  });

  it('reports every invalid case as a Valid=False condition, and exports nothing for it; exports a headless Service', async () => {
    await createService('team-a', 'ext', { type: 'ExternalName', externalName: 'example.com', ports: undefined });
    await createServiceExport('team-a', 'ext');
    await createServiceExport('team-a', 'missing');
    await createService('team-a', 'headless', { clusterIP: 'None' });
    await createSlice('team-a', 'headless', ['10.244.1.9']);
    await createServiceExport('team-a', 'headless');
    await createService('team-a', 'empty');
    await createServiceExport('team-a', 'empty');
    await createService('team-a', 'antrea-mc-imported', {}, { [IMPORTED_SERVICE_ANNOTATION]: 'true' });
    await createSlice('team-a', 'antrea-mc-imported', ['10.244.1.10']);
    await createServiceExport('team-a', 'antrea-mc-imported');
    await createService('private', 'secret-svc');
    await createSlice('private', 'secret-svc', ['10.244.1.11']);
    await createServiceExport('private', 'secret-svc');
    await waitForValid('team-a', 'ext', 'False', 'ServiceTypeNotSupported');
    await waitForValid('team-a', 'missing', 'False', 'ServiceNotFound');
    // KEP-1645 (unlike Antrea's member): a headless Service is exported with its Pod IPs.
    await waitForValid('team-a', 'headless', 'True', 'Succeed');
    await waitForValid('team-a', 'empty', 'False', 'ServiceWithoutEndpoints');
    await waitForValid('team-a', 'antrea-mc-imported', 'False', 'ImportedService');
    await waitForValid('private', 'secret-svc', 'False', 'NamespaceDenied');
    await agent?.events.flush();
    const events = (await core().listNamespacedEvent({ namespace: 'private' })).items.filter((e) => e.involvedObject.name === 'secret-svc');
    assert.ok(events.some((e) => e.type === 'Warning'), 'a refused export is an Event on its ServiceExport');
    const expected = [`${MEMBER_ID}-team-a-headless-endpoints`, `${MEMBER_ID}-team-a-headless-service`, `${MEMBER_ID}-team-a-web-endpoints`, `${MEMBER_ID}-team-a-web-service`];
    const names = await waitFor('the headless exports beside web', async () => {
      const n = (await leaderREs().list()).map((r) => r.metadata?.name).sort();
      return n.length >= expected.length ? n : undefined;
    }, converge);
    assert.deepEqual(names, expected, 'only the valid exports are on the leader');
    const headless = await leaderREs().get(`${MEMBER_ID}-team-a-headless-endpoints`);
    assert.deepEqual(headless?.spec?.endpoints?.subsets?.flatMap((s) => s.addresses?.map((a) => a.ip)), ['10.244.1.9']);
    assert.equal((await leaderREs().get(`${MEMBER_ID}-team-a-headless-service`))?.spec?.service?.serviceSpec?.['clusterIP'], 'None');
  });

  it('publishes ClusterInfo from a Gateway and withdraws it with the Gateway', async () => {
    const gw = { group: GATEWAY.group, version: GATEWAY.version, plural: GATEWAY.plural, namespace: AGENT_NS };
    await custom().createNamespacedCustomObject({ ...gw, body: { apiVersion: `${GATEWAY.group}/${GATEWAY.version}`, kind: GATEWAY.kind, metadata: { name: 'node-1' }, gatewayIP: '172.18.0.10', internalIP: '192.168.0.10' } });
    const info = await waitFor('the ClusterInfo export', () => leaderREs().get(`${MEMBER_ID}-clusterinfo`), converge);
    assert.deepEqual(info.metadata?.labels, { sourceKind: 'ClusterInfo', sourceClusterID: MEMBER_ID });
    assert.deepEqual(info.spec?.clusterInfo, { clusterID: MEMBER_ID, serviceCIDR: '10.96.0.0/12', gatewayInfos: [{ gatewayIP: '172.18.0.10' }], podCIDRs: ['10.244.0.0/16'] });
    assert.equal(info.spec?.kind, 'ClusterInfo');
    assert.equal(info.spec?.name, MEMBER_ID);
    assert.equal(info.spec?.namespace, AGENT_NS);
    await custom().deleteNamespacedCustomObject({ ...gw, name: 'node-1' });
    await waitFor('the ClusterInfo export gone', async () => {
      await leaderREs().releaseDeleted();
      return (await leaderREs().get(`${MEMBER_ID}-clusterinfo`)) === undefined;
    }, converge);
  });

  it('repairs an export deleted on the leader within one interval, and republishes all when its announce is created again', async () => {
    const api = leader.adminConfig().makeApiClient(CustomObjectsApi);
    const reRef = { group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS };
    const names = [`${MEMBER_ID}-team-a-web-endpoints`, `${MEMBER_ID}-team-a-web-service`] as const;
    const uids = () => Promise.all(names.map(async (n) => {
      const re = await leaderREs().get(n);
      return re?.metadata?.deletionTimestamp ? undefined : re?.metadata?.uid;
    }));
    const before = await uids();
    assert.ok(before.every(Boolean), 'both web exports are on the leader');
    // An admin deletes one; the leader's controller releases its finalizer.
    await api.deleteNamespacedCustomObject({ ...reRef, name: names[1] });
    await leaderREs().releaseDeleted();
    await waitFor('the deleted export back within one interval', async () => {
      const [, service] = await uids();
      return service !== undefined && service !== before[1];
    }, { timeoutMs: INTERVAL_S * 1000, intervalMs: 50 });

    // An admin deletes the announce; the leader sweeps the member's exports.
    const announceRef = { group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS };
    const announceUid = async () => {
      try {
        return ((await api.getNamespacedCustomObject({ ...announceRef, name: mcaName(MEMBER_ID) })) as { metadata?: { uid?: string } }).metadata?.uid;
      } catch {
        return undefined;
      }
    };
    const oldAnnounce = await announceUid();
    const swept = await uids();
    await api.deleteNamespacedCustomObject({ ...announceRef, name: mcaName(MEMBER_ID) });
    for (const name of names) await api.deleteNamespacedCustomObject({ ...reRef, name });
    await leaderREs().releaseDeleted();
    await waitFor('the announce created again', async () => {
      const uid = await announceUid();
      return uid !== undefined && uid !== oldAnnounce;
    }, { timeoutMs: 3 * INTERVAL_S * 1000, intervalMs: 50 });
    await waitFor('every export back within two intervals of the new announce', async () => {
      const now = await uids();
      return now.every((uid, i) => uid !== undefined && uid !== swept[i]);
    }, { timeoutMs: 2 * INTERVAL_S * 1000, intervalMs: 50 });
  });

  it('withdraws both exports when the endpoints go, the Service goes or the ServiceExport goes', async () => {
    const gone = () => waitFor('both web exports gone', async () => {
      await leaderREs().releaseDeleted();
      return (await leaderREs().get(`${MEMBER_ID}-team-a-web-service`)) === undefined && (await leaderREs().get(`${MEMBER_ID}-team-a-web-endpoints`)) === undefined;
    }, converge);
    const back = () => waitFor('both web exports back', async () =>
      (await leaderREs().get(`${MEMBER_ID}-team-a-web-service`)) !== undefined && (await leaderREs().get(`${MEMBER_ID}-team-a-web-endpoints`)) !== undefined, converge);
    const discovery = member.adminConfig().makeApiClient(DiscoveryV1Api);
    await discovery.deleteNamespacedEndpointSlice({ namespace: 'team-a', name: 'web-abc' });
    await gone();
    await waitForValid('team-a', 'web', 'False', 'ServiceWithoutEndpoints');
    await createSlice('team-a', 'web', ['10.244.1.5']);
    await back();
    await core().deleteNamespacedService({ namespace: 'team-a', name: 'web' });
    await gone();
    await waitForValid('team-a', 'web', 'False', 'ServiceNotFound');
    await createService('team-a', 'web');
    await back();
    await custom().deleteNamespacedCustomObject({ ...seRef('team-a'), name: 'web' });
    await gone();
  });

  it('removes every export of this member when the ClusterSet is deleted', async () => {
    await createServiceExport('team-a', 'web');
    await waitFor('web exported again', async () => (await leaderREs().list()).filter((r) => r.spec?.name === 'web').length === 2, converge);
    await clusterSetApi(member.adminConfig()).delete(CLUSTERSET_ID);
    await waitFor('no export of this member left', async () => {
      await leaderREs().releaseDeleted();
      return (await leaderREs().list()).length === 0;
    }, converge);
  });

  it('in PodIP mode exports the ready pod IPs and propagates an endpoint change', async () => {
    await agent?.stop();
    agent = undefined;
    await waitFor('the deleted ClusterSet gone', async () => {
      try {
        await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID);
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 404;
      }
    }, converge);
    await createClusterSet(member, { clusterID: MEMBER_ID, server: leader.server, secret: 'leader-token' });
    log = capturedLogger();
    agent = await startAgent(loadConfig({ flags: parseConfigFlags(['--namespace', AGENT_NS, '--heartbeat-interval', String(INTERVAL_S)]), env: { CSA_EXPORT_ENDPOINT_IP_TYPE: 'PodIP' } }),
      log.logger, member.adminConfig());
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    const addresses = async () => (await leaderREs().get(`${MEMBER_ID}-team-a-web-endpoints`))?.spec?.endpoints?.subsets?.[0]?.addresses?.map((a) => a.ip);
    await waitFor('the ready pod IPs exported', async () => JSON.stringify(await addresses()) === JSON.stringify(['10.244.1.5']), converge);
    await member.adminConfig().makeApiClient(DiscoveryV1Api).patchNamespacedEndpointSlice({
      namespace: 'team-a', name: 'web-abc', body: [{ op: 'add', path: '/endpoints/-', value: { addresses: ['10.244.1.7'], conditions: { ready: true } } }],
    });
    await waitFor('the new pod IP exported', async () => JSON.stringify(await addresses()) === JSON.stringify(['10.244.1.5', '10.244.1.7']), converge);
  });

  it('had every write it made through all of the above admitted by the leader policy', () => {
    const writes = leaderWrites().slice(writesBeforeAgent);
    assert.ok(writes.length > 10, `${String(writes.length)} writes`);
    // Admission refusals are 400/403/422; a 409 (a create racing a delete that is still finishing) is not one.
    assert.deepEqual(writes.filter((w) => / (400|403|422)$/.test(w)), [], 'nothing was refused');
  });
});
