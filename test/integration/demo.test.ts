// The README's main command, end to end: chart installed with the built helm, member token
// from the agent's own helper, the agent running with only the chart ServiceAccount's token
// (which proves the chart's RBAC is enough), Ready, and an import materialised.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../harness/bins.js';
import { leftoverHarnessProcesses } from '../harness/processes.js';

describe('npm run demo', () => {
  it('joins with the chart ServiceAccount, turns Ready, imports a Service, and leaves nothing behind', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'demo.ts'), '--once'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    const deadline = setTimeout(() => { child.kill('SIGINT'); }, 240_000);
    const code = await new Promise<number | null>((resolve) => { child.once('exit', resolve); });
    clearTimeout(deadline);
    assert.equal(code, 0, out.slice(-4000));
    assert.match(out, /test-clusterset\s+antrea-multicluster\s+1\s+1\s+leader\s+True\s+Connected/);
    assert.match(out, /member-announce-from-east\s+east\s+test-clusterset\s+\S+/);
    assert.match(out, /service\/antrea-mc-web\s+ClusterIP\s+10\.0\.\d+\.\d+/);
    assert.match(out, /serviceimport\.multicluster\.x-k8s\.io\/web\s+ClusterSetIP\s+\["10\.0\.\d+\.\d+"\]/);
    assert.match(out, /ServiceAccount clusterset-agent\/clusterset-agent/);
    assert.deepEqual(leftoverHarnessProcesses().filter((p) => /\/demo-(leader|member)-/.test(p.cmdline)), []);
  });
});
