// The real command line: help, version and a bad command line need no cluster; configuration
// errors exit 2 before touching one, `run` joins a leader and SIGTERM stops it cleanly (exit 0)
// while the announce stays on the leader.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE } from '../../src/common/api/antrea.js';
import { CONFIG_SETTINGS } from '../../src/common/config/config.js';
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

async function cli(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = runCli(args, env);
  const code = await c.exited;
  return { code, ...c.output };
}

/** Help text with commander's column padding and line wrapping folded to single spaces. */
const flat = (text: string): string => text.replace(/\s+/g, ' ');

describe('clusterset-agent command line, without a cluster', () => {
  const VERSION = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

  it('lists every configuration flag with its environment variable and default, for run and leader run, exit 0', async () => {
    for (const args of [['run', '--help'], ['help', 'run'], ['leader', 'run', '--help'], ['help', 'leader', 'run'], ['leader', 'help', 'run']]) {
      const res = await cli(args);
      assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(res.stderr, '');
      const help = flat(res.stdout);
      assert.match(help, new RegExp(`^Usage: clusterset-agent ${args.includes('leader') ? 'leader ' : ''}run \\[options\\]`));
      const flags = CONFIG_SETTINGS.filter((s) => s.flag !== undefined);
      assert.equal(flags.length, 9, 'nine flags: --config and the eight settings that have one');
      for (const s of flags) {
        const env = s.fallbackEnv === undefined ? s.env : `${s.env}, or ${s.fallbackEnv} ranked below the config file`;
        const extras = s.defaultText === undefined ? `env: ${env}` : `env: ${env}; default: ${s.defaultText}`;
        const value = s.boolean ? `[${s.flagValue}]` : `<${s.flagValue}>`;
        assert.ok(help.includes(`--${s.flag ?? ''} ${value} ${flat(s.description)} (${extras})`), `${args.join(' ')}: --${s.flag ?? ''} with ${extras}`);
      }
      assert.ok(help.includes('--no-leader-elect same as --leader-elect=false'));
      // The settings without a flag follow, with their variables.
      assert.ok(help.includes('heartbeat.requestTimeoutSeconds CSA_HEARTBEAT_TIMEOUT (default: interval/2, ≤ 10)'), help);
      assert.ok(help.includes('leader.staleMemberSeconds CSA_LEADER_STALE_MEMBER_SECONDS (default: 86400)'));
    }
  });

  it('has --help on every command, with its flags and defaults, exit 0', async () => {
    const root = await cli(['--help']);
    assert.equal(root.code, 0);
    for (const command of ['run', 'leader', 'version', 'help']) assert.match(root.stdout, new RegExp(`^  ${command}\\b`, 'm'), command);
    const leader = await cli(['help', 'leader']);
    assert.equal(leader.code, 0);
    for (const command of ['run', 'create-member-token']) assert.match(leader.stdout, new RegExp(`^  ${command}\\b`, 'm'), command);
    const token = await cli(['leader', 'create-member-token', '--help']);
    assert.equal(token.code, 0);
    const help = flat(token.stdout);
    assert.match(help, /^Usage: clusterset-agent leader create-member-token --member-id ID \[options\]/);
    for (const expected of ['--member-id <id>', '--namespace <ns> The leader namespace. (default: antrea-multicluster)', '(env: KUBECONFIG; default: ~/.kube/config)',
      '--service-account <name>', '(default: member-ID)', '(default: 8760h)', '(default: leader-token)', '(default: clusterset-agent)']) {
      assert.ok(help.includes(expected), `${expected} in:\n${token.stdout}`);
    }
    const version = await cli(['version', '--help']);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^Usage: clusterset-agent version/);
  });

  it('prints the version from package.json, as a command and as --version', async () => {
    for (const args of [['version'], ['--version'], ['-V']]) {
      const res = await cli(args);
      assert.deepEqual([res.code, res.stdout, res.stderr], [0, `${VERSION}\n`, ''], args.join(' '));
    }
  });

  it('exits 2 on an unknown flag, suggesting the intended one, before loading any configuration', async () => {
    for (const prefix of [['run'], ['leader', 'run']]) {
      const res = await cli([...prefix, '--heartbeat-intervl', '5'], { CSA_HEARTBEAT_INTERVAL: '7' });
      assert.equal(res.code, 2);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, /^error: unknown option '--heartbeat-intervl'\n\(Did you mean --heartbeat-interval\?\)\n/);
      assert.ok(res.stderr.includes(`(see 'clusterset-agent ${prefix.join(' ')} --help')`), res.stderr);
      assert.doesNotMatch(res.stderr, /invalid configuration/);
    }
  });

  it('exits 2 on an unknown command, a missing command, a stray argument and a flag given as a value', async () => {
    const cases: [readonly string[], RegExp][] = [
      [['runn'], /^error: unknown command 'runn'\n\(Did you mean run\?\)/],
      [['leader', 'nope'], /^error: unknown command 'nope'/],
      [['help', 'leader', 'nope'], /^error: unknown command 'nope' \(commands of 'clusterset-agent leader': run, create-member-token\)/],
      [[], /^Usage: clusterset-agent \[options\] \[command\]/],
      [['leader'], /^Usage: clusterset-agent leader \[options\] \[command\]/],
      [['run', 'extra'], /^error: too many arguments for 'run'/],
      [['run', '--namespace', '--kubeconfig', '/k'], /^error: option '--namespace <ns>' argument '--kubeconfig' is invalid\. that is the flag --kubeconfig: --namespace needs a value before it/],
      [['leader', 'create-member-token', '--member-id', 'e', '--bogus'], /^error: unknown option '--bogus'/],
    ];
    for (const [args, stderr] of cases) {
      const res = await cli(args);
      assert.equal(res.code, 2, args.join(' '));
      assert.equal(res.stdout, '', args.join(' '));
      assert.match(res.stderr, stderr, args.join(' '));
    }
  });

  it('leader run: the same configuration flags and checks as run, every problem listed, exit 2', async () => {
    const res = await cli(['leader', 'run', '--heartbeat-interval', '7', '--leader-elect=maybe'], { CSA_LEADER_STALE_MEMBER_SECONDS: '5' });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /^invalid configuration \(3 problems\):/);
    assert.match(res.stderr, /leaderElection\.enabled="maybe" \(from flag --leader-elect\): must be true or false/);
    assert.match(res.stderr, /heartbeat\.intervalSeconds=7 \(from flag --heartbeat-interval\): must be one of/);
    assert.match(res.stderr, /leader\.staleMemberSeconds=5 \(from env CSA_LEADER_STALE_MEMBER_SECONDS\): must be at least leader\.memberTimeoutSeconds/);
    assert.ok(res.stderr.includes("(see 'clusterset-agent leader run --help' for the flags and their environment variables)"), res.stderr);
  });

  it('leader run: flags, environment and file reach the leader process in their precedence', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-cli-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
      const config = path.join(dir, 'config.yaml');
      writeFileSync(config, 'logLevel: warn\nleader:\n  memberTimeoutSeconds: 40\n  namespace: from-file\n');
      const c = runCli(['leader', 'run', '--config', config, '--kubeconfig', kubeconfig, '--namespace', 'from-flag', '--log-level', 'info', '--no-leader-elect',
        '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '0'], { CSA_LEADER_NAMESPACE: 'from-env', CSA_LEADER_ELECT: 'true', CSA_NAMESPACE: 'from-env' });
      // The process starter gets the loaded configuration; whether the leader process then
      // fails to start (exit 1) or runs until SIGTERM (exit 0) is its own business.
      const running = await new Promise<boolean>((resolve) => {
        c.child.stdout.on('data', () => { if (c.output.stdout.includes('"agent running"')) resolve(true); });
        void c.exited.then(() => { resolve(false); });
      });
      if (running) c.child.kill('SIGTERM');
      const code = await c.exited;
      const line = c.output.stdout.split('\n').find((l) => l.includes('"starting clusterset-agent leader"'));
      assert.ok(line !== undefined, `no start-up line; exit ${String(code)}\n${c.output.stdout}\n${c.output.stderr}`);
      const starting = JSON.parse(line) as { config: Record<string, unknown> };
      assert.ok(code === 0 || code === 1, `stopped by SIGTERM (0) or failed to start (1), got ${String(code)}: ${c.output.stderr}`);
      assert.equal(starting.config['namespace'], 'from-flag');
      assert.equal(starting.config['logLevel'], 'info');
      assert.equal(starting.config['leaderElection.enabled'], false);
      assert.equal(starting.config['leader.namespace'], 'from-env');
      assert.equal(starting.config['leader.memberTimeoutSeconds'], 40);
      assert.equal(starting.config['kubeconfig'], kubeconfig);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

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
