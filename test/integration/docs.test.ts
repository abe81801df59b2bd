// The docs cannot drift: every fenced block marked `sh runnable` in README.md and docs/*.md
// runs here, in order, as it is written, with bash, against real control planes reached as
// kubeconfig contexts `leader`, `east` and `west`, with `clusterset-agent`, `kubectl` and `helm`
// on the PATH. east is a fuller control plane (controller-manager, scheduler, a kwok node), so a
// Deployment gets Pods and EndpointSlices as in a real cluster. A bare control plane runs no
// Pods: after each block, this test does what a kubelet would for the chart's Deployments and
// starts the agent or `leader run` with the chart's own ServiceAccount token and config.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { k8sBins, repoRoot } from '../harness/bins.js';
import { chartReleases, CLI, startChartProcess } from '../harness/chart-processes.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { HARNESS_ROOT, type ManagedProcess } from '../harness/processes.js';
import { onFailureShowLogs } from '../harness/report.js';

const execFileAsync = promisify(execFile);

interface Block {
  readonly file: string;
  readonly line: number;
  readonly script: string;
}

/** The `sh runnable` blocks of README.md, then of docs/*.md in name order. */
function runnableBlocks(): Block[] {
  const files = ['README.md', ...readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  return files.flatMap((file) => {
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    return [...text.matchAll(/^```sh runnable\n([\s\S]*?)^```$/gm)].map((m) => ({
      file, line: text.slice(0, m.index).split('\n').length, script: m[1] ?? '',
    }));
  });
}

describe('the docs\' runnable commands', () => {
  const blocks = runnableBlocks();
  const cps: ControlPlane[] = [];
  const running = new Map<string, ManagedProcess>();
  const dir = path.join(HARNESS_ROOT, `docs-${String(process.pid)}`);
  const env: NodeJS.ProcessEnv = {};
  const outputs: string[] = [];

  /** A kubelet's part: every release of the chart gets its process, once. */
  const runChartDeployments = async () => {
    for (const cp of cps) {
      for (const release of await chartReleases(cp)) {
        const key = `${cp.name}/${release.namespace}/${release.instance}`;
        if (running.has(key)) continue;
        running.set(key, await startChartProcess(release, dir, release.role === 'member' ? ['--heartbeat-interval', '2'] : []));
      }
    }
  };

  before(async () => {
    mkdirSync(path.join(dir, 'bin'), { recursive: true });
    cps.push(...await Promise.all([
      startControlPlane('leader'), startControlPlane('east', { controllers: true, podCIDR: '10.244.1.0/24' }), startControlPlane('west'),
    ]));
    // One kubeconfig with the three contexts, as a user of three clusters has.
    const merged = path.join(dir, 'kubeconfig');
    const { stdout } = await execFileAsync(k8sBins().kubectl, ['config', 'view', '--flatten'], { env: { ...process.env, KUBECONFIG: cps.map((c) => c.kubeconfigPath).join(':') } });
    writeFileSync(merged, stdout, { mode: 0o600 });
    // clusterset-agent as installed (the bin runs the sources here), kubectl and helm.
    const cli = path.join(dir, 'bin', 'clusterset-agent');
    writeFileSync(cli, `#!/bin/sh\nexec "${process.execPath}" ${CLI.map((a) => `"${a}"`).join(' ')} "$@"\n`);
    chmodSync(cli, 0o755);
    symlinkSync(k8sBins().kubectl, path.join(dir, 'bin', 'kubectl'));
    symlinkSync(k8sBins().helm, path.join(dir, 'bin', 'helm'));
    Object.assign(env, {
      ...process.env, KUBECONFIG: merged, PATH: `${path.join(dir, 'bin')}:${process.env['PATH'] ?? ''}`,
      // What the README asks the reader to export: the image (nothing pulls it here) and the URL the
      // members reach the leader at (loopback here, as every control plane is).
      IMAGE_REPOSITORY: 'registry.example.com/team/clusterset-agent', LEADER_SERVER: cps[0]?.server ?? '',
      HELM_CACHE_HOME: path.join(dir, 'helm', 'cache'), HELM_CONFIG_HOME: path.join(dir, 'helm', 'config'), HELM_DATA_HOME: path.join(dir, 'helm', 'data'),
    });
  });
  after(async () => {
    await Promise.all([...running.values()].map((p) => p.stop()));
    await Promise.all(cps.map((cp) => cp.stop()));
  });
  onFailureShowLogs(() => cps, () => [
    ...outputs.slice(-3),
    ...[...running.values()].map((p) => `--- ${p.name} ---\n${(() => { try { return readFileSync(p.logFile, 'utf8').split('\n').slice(-30).join('\n'); } catch { return ''; } })()}`),
  ].join('\n'));

  it('finds the runnable blocks: the README\'s five-minute path at least', () => {
    assert.ok(blocks.filter((b) => b.file === 'README.md').length >= 4, JSON.stringify(blocks.map((b) => `${b.file}:${String(b.line)}`)));
    for (const b of blocks) assert.match(b.script, /\S/, `${b.file}:${String(b.line)} is empty`);
  });

  for (const [i, block] of blocks.entries()) {
    it(`${block.file}:${String(block.line)} runs as written`, { timeout: 300_000 }, async () => {
      const res = await execFileAsync('bash', ['-euo', 'pipefail', '-c', block.script], { cwd: repoRoot, env, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 })
        .then((r) => ({ code: 0, ...r }), (err: unknown) => err as { code: number; stdout: string; stderr: string });
      outputs.push(`--- block ${String(i + 1)} (${block.file}:${String(block.line)}) exit ${String(res.code)} ---\n${res.stdout}\n${res.stderr}`);
      // What a reader of the docs would see, in the test log.
      process.stdout.write(`${res.stdout}${res.stderr}`.split('\n').map((l) => `    | ${l}`).join('\n') + '\n');
      assert.equal(res.code, 0, `${block.file}:${String(block.line)} failed:\n${block.script}\n--- stdout ---\n${res.stdout}\n--- stderr ---\n${res.stderr}`);
      await runChartDeployments();
    });
  }
});
