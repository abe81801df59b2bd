// The README's main command, end to end: a three-cluster ClusterSet with nothing but this
// project. Charts installed with the built helm, members joined with `clusterset-agent join`,
// `leader run` and both agents running with only their chart ServiceAccount's token (which
// proves the charts' RBAC is enough); east exports a Service, west imports it with east's
// endpoint; east leaves and west's import disappears.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../harness/bins.js';
import { leftoverHarnessProcesses } from '../harness/processes.js';

describe('npm run demo', () => {
  it('shares a Service from east to west through this project\'s leader, un-imports it when east leaves, and leaves nothing behind', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'demo.ts'), '--once'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    const deadline = setTimeout(() => { child.kill('SIGINT'); }, 300_000);
    const code = await new Promise<number | null>((resolve) => { child.once('exit', resolve); });
    clearTimeout(deadline);
    assert.equal(code, 0, out.slice(-4000));
    // Both members joined, and the leader (this project) counts them ready.
    assert.equal([...out.matchAll(/test-clusterset\s+antrea-multicluster\s+1\s+1\s+leader\s+True\s+Connected/g)].length, 2);
    assert.match(out, /test-clusterset\s+2\s+2\s+leader\s+True\s/);
    assert.match(out, /east\s+Ready=True\s+Connected\n\s*west\s+Ready=True\s+Connected/);
    // The leader aggregated east's exports into imports, in Antrea's names.
    assert.match(out, /resourceimport\.multicluster\.crd\.antrea\.io\/default-web-service\s+ServiceImport\s+default\s+web/);
    assert.match(out, /resourceimport\.multicluster\.crd\.antrea\.io\/default-web-endpoints\s+Endpoints\s+default\s+web/);
    // west imported it with east's ClusterIP as the endpoint.
    const eastIP = /east's Service web has ClusterIP (\S+)/.exec(out)?.[1];
    assert.ok(eastIP, out.slice(-4000));
    assert.match(out, /service\/antrea-mc-web\s+ClusterIP\s+10\.0\.\d+\.\d+/);
    assert.match(out, new RegExp(`endpoints/antrea-mc-web\\s+${eastIP.replaceAll('.', '\\.')}:80`));
    assert.match(out, /serviceimport\.multicluster\.x-k8s\.io\/web\s+ClusterSetIP\s+\["10\.0\.\d+\.\d+"\]/);
    // east left: west's import is gone and the leader counts one member.
    const after = out.slice(out.indexOf('the import is gone with east'));
    assert.doesNotMatch(after, /antrea-mc-web/);
    assert.match(after, /test-clusterset\s+1\s+1\s+leader\s+True\s/);
    assert.match(out, /only the token of ServiceAccount default\/clusterset-leader-clusterset-agent/);
    assert.match(out, /only the token of ServiceAccount clusterset-agent\/clusterset-agent/);
    // Members joined with `join`, which waited for Ready; `status` and `leave` ran.
    assert.match(out, /member east joined ClusterSet test-clusterset \(leader leader\): Ready \(Connected\); \d+ object\(s\) written/);
    assert.match(out, /member west joined ClusterSet test-clusterset \(leader leader\): Ready \(Connected\)/);
    assert.match(out, /leader: created ClusterSet antrea-multicluster\/test-clusterset \(leader leader\)/);
    assert.match(out, /Members: {4}2 of 2 ready/);
    assert.match(out, /leader: deleted ServiceAccount antrea-multicluster\/member-east; every token issued for it is void/);
    assert.match(out, /left ClusterSet test-clusterset: \d+ object\(s\) removed/);
    assert.deepEqual(leftoverHarnessProcesses().filter((p) => /\/demo-(leader|east|west)-/.test(p.cmdline)), []);
  });
});
