// The official MCS-API conformance suite (v0.4.1) against this project's leader and agents:
// `npm run conformance` as a user runs it, minus the specs the wire cannot carry (ExportedLabels,
// see the README). Every spec it runs must pass, every Required one among them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../harness/bins.js';

describe('MCS-API conformance suite v0.4.1 (npm run conformance)', () => {
  it('passes every Required spec and every Optional one the wire allows (DNS and Connectivity need a data plane)', { timeout: 15 * 60_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'conformance.ts'), '--label-filter', '!DNS && !Connectivity && !ExportedLabels'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    const code = await new Promise<number | null>((resolve) => { child.once('exit', resolve); });
    const report = output.slice(output.indexOf('the suite\'s own report'));
    assert.equal(code, 0, `the suite failed:\n${output.slice(-6000)}`);
    const required = report.slice(report.indexOf('== Required =='), report.indexOf('== Optional =='));
    const rows = required.split('\n').filter((l) => /^(Yes|No|Unknown|Skipped)/.test(l));
    assert.equal(rows.length, 14, `the suite has 14 Required specs:\n${required}`);
    const ran = rows.filter((l) => !l.includes('Connectivity to a service that is not exported'));
    assert.deepEqual(ran.filter((l) => !l.startsWith('Yes')), [], 'every Required spec conformant');
    assert.match(report, /^Yes +\[EndpointSlice\] Exporting a service should create an MCS EndpointSlice/m);
  });
});
