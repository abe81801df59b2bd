// The real command line: configuration errors exit 2 before touching a cluster, `run` joins
// a leader and SIGTERM stops it cleanly (exit 0) while the announce stays on the leader.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE } from '../../src/api/types.js';
import { repoRoot } from '../harness/bins.js';
import {
  AGENT_NS, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret,
} from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';

const CLI = path.join(repoRoot, 'src', 'cli', 'main.ts');

function runCli(args: readonly string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => { output.stdout += c.toString('utf8'); });
  child.stderr.on('data', (c: Buffer) => { output.stderr += c.toString('utf8'); });
  const exited = new Promise<number | null>((resolve) => { child.once('exit', resolve); });
  return { child, output, exited };
}

describe('clusterset-agent CLI', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let token = '';

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('leader'), startControlPlane('member')]);
    await Promise.all([setupLeader(leader), installCrds(member)]);
    await createNamespace(member.adminConfig(), AGENT_NS);
    token = (await createMemberAccess(leader, 'east')).token;
    await writeLeaderSecret(member, 'leader-token', { caPem: leader.caPem, token });
    await createClusterSet(member, { clusterID: 'east', server: leader.server, secret: 'leader-token' });
  });
  after(async () => {
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member]);

  it('rejects bad configuration with exit 2 and every problem listed', async () => {
    const cli = runCli(['run', '--heartbeat-interval', '7', '--failure-threshold', '0', '--kubeconfig', member.kubeconfigPath]);
    assert.equal(await cli.exited, 2);
    assert.match(cli.output.stderr, /invalid configuration \(2 problems\)/);
    assert.match(cli.output.stderr, /heartbeat\.intervalSeconds=7 \(from flag --heartbeat-interval\)/);
    assert.match(cli.output.stderr, /heartbeat\.failureThreshold/);
  });

  it('names a missing kubeconfig and exits 2 instead of retrying anonymously', async () => {
    const missing = path.join(repoRoot, 'no-such-kubeconfig');
    const cli = runCli(['run', '--kubeconfig', missing, '--namespace', AGENT_NS, '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '0']);
    assert.equal(await cli.exited, 2);
    assert.ok(cli.output.stderr.includes(`kubeconfig ${missing} does not exist`), cli.output.stderr);
  });

  it('refuses to run with TLS verification switched off', async () => {
    const cli = runCli(['run', '--kubeconfig', member.kubeconfigPath, '--namespace', AGENT_NS, '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '0'],
      { NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    assert.equal(await cli.exited, 1);
    assert.match(cli.output.stdout, /NODE_TLS_REJECT_UNAUTHORIZED=0 would disable TLS verification/);
  });

  it('joins, then stops cleanly on SIGTERM leaving the announce in place, with JSON logs and no token in them', async () => {
    const cli = runCli(['run', '--kubeconfig', member.kubeconfigPath, '--namespace', AGENT_NS, '--heartbeat-interval', '2',
      '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '0']);
    await waitForReady(member, CLUSTERSET_ID, 'True', 'Connected', 20_000);
    cli.child.kill('SIGTERM');
    const started = Date.now();
    assert.equal(await cli.exited, 0, cli.output.stderr);
    assert.ok(Date.now() - started < 10_000, 'stops promptly');
    const lines = cli.output.stdout.trim().split('\n').map((l) => JSON.parse(l) as { message: string; level: string; clusterSet?: string; leader?: string });
    assert.ok(lines.some((l) => l.message === 'connected to leader: heartbeat accepted' && l.clusterSet === CLUSTERSET_ID && l.leader === 'leader'));
    assert.equal(lines.at(-1)?.message, 'stopped');
    assert.ok(!cli.output.stdout.includes(token) && !cli.output.stderr.includes(token), 'the token never reaches the logs');
    const mca = await leader.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace: LEADER_NS, name: 'member-announce-from-east',
    }) as { clusterID?: string };
    assert.equal(mca.clusterID, 'east', 'a stop is not a leave');
  });
});
