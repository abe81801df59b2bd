// With Antrea's own ClusterSet CRD installed in the member (no status.imports, no
// clusterStatuses[].lastHeartbeatTime), the API server prunes our extension fields. The agent
// says so once (Event + log line naming the fields and the fix) and stops writing them, so it
// does not write a status that can never match what is stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
// Polling within an observation window (asserting that nothing is written), never synchronisation.
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { readAuditEvents } from '../harness/agent-process.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { applyCrds, createNamespace, loadCrdFiles } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;

type Schema = { properties?: Record<string, Schema>; items?: Schema };

/** The chart's CRDs with the ClusterSet CRD cut back to Antrea's: neither extension field, Antrea's columns. */
function antreaCrds(): V1CustomResourceDefinition[] {
  return loadCrdFiles().map((crd) => {
    if (crd.spec.names.plural !== 'clustersets') return crd;
    const copy = structuredClone(crd);
    for (const version of copy.spec.versions) {
      const status = (version.schema?.openAPIV3Schema as Schema | undefined)?.properties?.['status'];
      delete status?.properties?.['imports'];
      delete status?.properties?.['clusterStatuses']?.items?.properties?.['lastHeartbeatTime'];
      version.additionalPrinterColumns = (version.additionalPrinterColumns ?? []).filter((c) =>
        ['Leader Cluster Namespace', 'Total Clusters', 'Ready Clusters', 'Age'].includes(c.name));
    }
    return copy;
  });
}

describe("with Antrea's own ClusterSet CRD in the member", () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  const log = capturedLogger();

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader'), startControlPlane('member', { auditLog: true })]);
    await Promise.all([setupLeader(leader), applyCrds(member.adminConfig(), antreaCrds())]);
    await createNamespace(member.adminConfig(), AGENT_NS);
    const access = await createMemberAccess(leader, 'east');
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    await createClusterSet(member, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
    agent = await startAgent(loadConfig({ flags: parseConfigFlags(['--namespace', AGENT_NS, '--heartbeat-interval', String(INTERVAL_S)]), env: {} }), log.logger, member.adminConfig());
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('connects, says once which fields are lost and how to fix it, and stops writing them', async () => {
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    const event = await waitFor('a StatusFieldsPruned Event', async () => {
      const events = (await core.listNamespacedEvent({ namespace: AGENT_NS })).items.filter((e) => e.reason === 'StatusFieldsPruned');
      return events.length > 0 ? events : undefined;
    }, { timeoutMs: 10_000 });
    assert.equal(event.length, 1);
    assert.match(event[0]?.message ?? '', /drops status\.imports, status\.clusterStatuses\[\]\.lastHeartbeatTime/);
    assert.match(event[0]?.message ?? '', /Install the chart's CRDs/);
    assert.match(event[0]?.message ?? '', /allows one leader per ClusterSet \(spec\.leaders maxItems 1\)/);
    assert.equal(log.lines.filter((l) => l.includes('ClusterSet CRD prunes status fields')).length, 1);

    // Steady state: connected and the imports listed (ImportsSynced may come a write after
    // Ready on a busy machine). Then nothing new to say, so no status write at all over several
    // beats. Writes count by when the API server received them: the audit line of a write made
    // just before the window may land in the file after the window began.
    await waitFor('ImportsSynced=True stored', async () => {
      const stored = await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID);
      return stored.status?.conditions?.some((c) => c.type === 'ImportsSynced' && c.status === 'True') === true ? true : undefined;
    }, { timeoutMs: 10_000 });
    const windowStart = new Date().toISOString();
    const until = Date.now() + 4 * INTERVAL_S * 1000;
    while (Date.now() < until) await delay(500);
    const writes = readAuditEvents(member.auditLogPath, (e) => e.verb === 'update' && e.objectRef?.resource === 'clustersets'
      && e.user.username === 'test-admin' && Date.parse(e.requestReceivedTimestamp) >= Date.parse(windowStart));
    assert.deepEqual(writes.map((e) => `${e.requestReceivedTimestamp} ${e.requestURI ?? ''}`), [], 'no status write in steady state');
    const cs = await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID);
    assert.equal(cs.status?.readyClusters, 1);
    assert.equal(cs.status?.clusterStatuses?.[0]?.lastHeartbeatTime, undefined);
    assert.equal(log.lines.filter((l) => l.includes('ClusterSet CRD prunes status fields')).length, 1, 'said once');
  });
});
