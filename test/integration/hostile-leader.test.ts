// A hostile leader publishes crafted ResourceImports (system and forbidden namespaces,
// loopback and metadata addresses, oversize, unknown kinds, taking over a user's Service...).
// On a real member: zero local objects created or changed by them, and one specific reason
// each (an Event naming the ResourceImport and the rule), while well-formed imports still land.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { CoreV1Api, type CoreV1Event, type V1Service } from '@kubernetes/client-node';
import { loadConfig } from '../../src/common/config/config.js';
import { startAgent, type Agent } from '../../src/agent.js';
import {
  BENIGN_IMPORTS, HOSTILE_ALLOWED_NAMESPACES, HOSTILE_CREATED_NAMESPACES, HOSTILE_IMPORTS, HOSTILE_LOCAL_CLUSTER_ID, HOSTILE_USER_SERVICE,
} from '../fixtures/hostile-imports.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, clusterSetApi, createClusterSet, createMemberAccess, installCrds, LEADER_NS, readyCondition, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { startFaultProxy } from '../harness/fault-proxy.js';
import { IMAGE_NODE_OPTIONS } from '../../bench/common.js';
import { leaderImports, memberReads } from '../harness/imports.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const INTERVAL_S = 2;

describe('a hostile leader', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  const log = capturedLogger();
  let initial: string[] = [];
  let events: CoreV1Event[] = [];
  const rejected = HOSTILE_IMPORTS.filter((h) => h.expect !== 'Skip' && h.expect !== 'Conflict');

  before(async () => {
    assert.ok(HOSTILE_IMPORTS.length >= 15, 'at least 15 crafted imports');
    [leader, member] = await Promise.all([startControlPlane('leader'), startControlPlane('member')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    for (const ns of [AGENT_NS, ...HOSTILE_CREATED_NAMESPACES]) await createNamespace(member.adminConfig(), ns);
    await member.adminConfig().makeApiClient(CoreV1Api).createNamespacedService({ namespace: 'team-a', body: structuredClone(HOSTILE_USER_SERVICE) as unknown as V1Service });
    const access = await createMemberAccess(leader, HOSTILE_LOCAL_CLUSTER_ID);
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token: access.token });
    await createClusterSet(member, { clusterID: HOSTILE_LOCAL_CLUSTER_ID, server: leader.server, secret: 'leader-token' });
    initial = await memberReads(member.adminConfig()).snapshot();
    const config = loadConfig({
      flags: parseConfigFlags(['--namespace', AGENT_NS, '--heartbeat-interval', String(INTERVAL_S)]),
      env: { CSA_IMPORT_ALLOWED_NAMESPACES: HOSTILE_ALLOWED_NAMESPACES.join(',') },
    });
    agent = await startAgent(config, log.logger, member.adminConfig());
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 2 * INTERVAL_S * 1000);
    const ri = leaderImports(leader.adminConfig());
    for (const h of HOSTILE_IMPORTS) await ri.create(h.ri);
    for (const b of BENIGN_IMPORTS) await ri.create(b);
    await waitFor('every hostile import judged and the benign ones applied', () => {
      const counts = agent?.imports.counts(CLUSTERSET_ID);
      return counts?.rejected === rejected.length && counts.conflicts === 1 && counts.total === 5;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    await agent?.imports.importerFor(CLUSTERSET_ID)?.onIdle();
    await agent?.events.flush();
    const core = member.adminConfig().makeApiClient(CoreV1Api);
    events = (await core.listNamespacedEvent({ namespace: AGENT_NS })).items.filter((e) => e.involvedObject.name === CLUSTERSET_ID);
  });
  after(async () => {
    await agent?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('creates or changes no local object for any hostile import, while the benign ones land', async () => {
    const afterImport = await memberReads(member.adminConfig()).snapshot();
    const removed = initial.filter((row) => !afterImport.includes(row));
    const added = afterImport.filter((row) => !initial.includes(row)).map((row) => row.split(' ').slice(0, 2).join(' '));
    assert.deepEqual(removed, [], 'nothing that existed was changed or deleted (incl. the user Service antrea-mc-web)');
    assert.deepEqual(added.sort(), [
      'Endpoints team-a/antrea-mc-api',
      'Service team-a/antrea-mc-api',
      `clusterinfoimports ${AGENT_NS}/member-c-clusterinfo`,
      'serviceimports team-a/api',
    ]);
  });

  // Every judgement is one specific log line; Events are correlated like client-go's (at most
  // 10 distinct messages per reason, then one combined Event; 25 per ClusterSet in a burst),
  // so an Event may be folded into another, but it never names the wrong rule.
  const logged = (message: string, name: string) => log.lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l['message'] === message && l['resourceImport'] === name);

  for (const h of HOSTILE_IMPORTS) {
    const name = h.ri.metadata?.name ?? '';
    it(`${h.title} → ${h.expect}`, () => {
      const mentioning = events.filter((e) => e.message?.includes(`${LEADER_NS}/${name} `) || e.message?.includes(`${LEADER_NS}/${name}:`));
      const rejections = logged('resource import rejected', name);
      if (h.expect === 'Skip') {
        assert.deepEqual(mentioning.map((e) => e.reason), [], 'a skipped import is not an error');
        assert.deepEqual(rejections, []);
        return;
      }
      if (h.expect === 'Conflict') {
        assert.equal(logged('import conflicts with an existing object', name).length, 1, `one conflict log line for ${name}`);
      } else {
        assert.deepEqual(rejections.map((l) => l['rule']), [h.expect], `exactly one ${h.expect} log line for ${name}`);
      }
      const reason = h.expect === 'Conflict' ? 'ImportConflict' : `ImportRejected${h.expect}`;
      for (const e of mentioning) {
        assert.equal(e.reason, reason, `an Event about ${name} names its rule`);
        assert.equal(e.type, 'Warning');
      }
    });
  }

  it('sends a bounded number of correlated Events, not one per rejection', () => {
    const judged = events.filter((e) => e.reason?.startsWith('ImportRejected') || e.reason === 'ImportConflict');
    assert.ok(judged.length >= 1 && judged.length <= 25, `${String(judged.length)} Events for ${String(rejected.length + 1)} judgements`);
    const combined = events.filter((e) => e.message?.startsWith('(combined from similar events):'));
    assert.ok(combined.every((e) => e.reason === 'ImportRejectedAddressRejected'), 'only the reason with more than 10 distinct messages is combined');
  });

  it('counts rejections and conflicts in the ClusterSet status', async () => {
    // The status is written at most every 500 ms: wait for the write that carries the final counts.
    const expected = { total: 5, rejected: rejected.length, conflicts: 1 };
    const cs = await waitFor(`status imports ${JSON.stringify(expected)}`, async () => {
      const found = await clusterSetApi(member.adminConfig()).get(CLUSTERSET_ID);
      if (!isDeepStrictEqual(found.status?.imports, expected)) throw new Error(`status.imports is ${JSON.stringify(found.status?.imports)}`);
      return found;
    }, { timeoutMs: 10_000, intervalMs: 200 });
    assert.deepEqual(cs.status?.imports, expected);
  });

  // A leader answer larger than the agent can hold: the agent runs as its own process with the
  // image's heap settings (about 160 MiB: a cap near 20 MiB), the "leader" answers 96 MiB to
  // everything. Without the cap that answer alone exceeds the heap and the process dies.
  it('a leader answer larger than the cap: UnexpectedResponse naming the leader and the size, RSS below the limit', async () => {
    const ns = 'capped-agent';
    const proxy = await startFaultProxy({ upstream: leader.server, upstreamCaPem: leader.caPem });
    const huge = Buffer.alloc(96 * 1024 * 1024, 0x20);
    huge.write('{"kind":"List","apiVersion":"v1","items":[],"pad":"', 0);
    huge.write('"}', huge.length - 2);
    proxy.respondWith({ status: 200, contentType: 'application/json', body: huge });
    const access = await createMemberAccess(leader, 'capped-member');
    await writeLeaderSecret(member, 'leader-token', { caPem: proxy.caPem, token: access.token }, ns);
    await createClusterSet(member, { name: 'capped', clusterID: 'capped-member', server: proxy.url, secret: 'leader-token' }, ns);
    const cli = path.join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');
    const child = spawn(process.execPath, [...IMAGE_NODE_OPTIONS.split(' '), '--import', 'tsx', cli, 'run', '--kubeconfig', member.kubeconfigPath, '--namespace', ns,
      '--heartbeat-interval', String(INTERVAL_S), '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString('utf8'); });
    let exited: number | null | undefined;
    child.once('exit', (code) => { exited = code; });
    const peakRssMiB = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(child.pid)}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
    try {
      const cs = await waitFor('Ready=False UnexpectedResponse for the oversize answer', async () => {
        if (exited !== undefined) throw new Error(`the agent exited (${String(exited)}):\n${output.slice(-3000)}`);
        const found = await clusterSetApi(member.adminConfig(), ns).get('capped');
        const ready = readyCondition(found);
        if (ready?.status === 'False' && ready.reason === 'UnexpectedResponse') return found;
        throw new Error(`Ready is ${JSON.stringify(ready)}`);
      }, { timeoutMs: 60_000, intervalMs: 200 });
      const message = readyCondition(cs)?.message ?? '';
      assert.ok(message.includes(proxy.url), `names the leader: ${message}`);
      assert.match(message, new RegExp(`answer of ${String(huge.length)} bytes, larger than (1\\d|2\\d)\\.\\d MiB, the cap derived from the agent's heap limit`));
      // A few more answers refused, then the peak RSS of the whole process.
      await waitFor('more answers refused', () => (output.match(/, larger than \d+\.\d MiB, the cap/g) ?? []).length >= 3, { timeoutMs: 30_000, intervalMs: 200 });
      assert.equal(exited, undefined, 'the agent is still running');
      const peak = peakRssMiB();
      assert.ok(peak < 256, `peak RSS ${peak.toFixed(0)} MiB stays below the chart's 256Mi limit`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => { if (exited !== undefined) resolve(undefined); else child.once('exit', resolve); });
      await proxy.close();
    }
  });
});
