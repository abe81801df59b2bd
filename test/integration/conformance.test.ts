// The official MCS-API conformance suites (v0.4.1, API v1alpha1; v0.5.0, API v1beta1) against
// this project's leader and dual-stack agents: `npm run conformance` as a user runs it, every
// label but DNS and Connectivity (they exec into Pods: no data plane here). Every spec either
// suite runs must pass, every Required one among them, and the Optional [ExportedLabels] and
// [EndpointSlice] ones.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../harness/bins.js';

const SUITES = ['v0.4.1', 'v0.5.0'] as const;

/**
 * What a failed run printed that tells why: for each suite that did not exit 0, its first
 * failed spec and what follows Ginkgo's summary (the report, the agents' last log lines).
 * The run's tail alone showed only the last suite, which may have passed.
 */
function failureDigest(output: string): string {
  const parts = SUITES.map((version) => {
    const start = output.indexOf(`running the MCS conformance suite ${version}`);
    if (start < 0) return '';
    const end = output.indexOf(`suite ${version} exit code`, start);
    const part = output.slice(start, end < 0 ? undefined : output.indexOf('\n', end));
    if (end >= 0 && output.startsWith(`suite ${version} exit code 0;`, end)) return '';
    const failed = part.indexOf('[FAILED]');
    const summary = part.indexOf('Summarizing');
    return [`== ${version} ==`, failed < 0 ? '' : part.slice(Math.max(0, failed - 3000), summary > failed ? Math.min(failed + 3000, summary) : failed + 3000),
      '...', part.slice(summary < 0 ? -6000 : summary).slice(0, 12_000)].join('\n');
  }).filter(Boolean);
  return parts.length > 0 ? parts.join('\n\n') : output.slice(-8000);
}

describe('MCS-API conformance suites v0.4.1 and v0.5.0 (npm run conformance)', () => {
  it('both pass every Required spec and every Optional one the wire allows, 0 failed in each', { timeout: 40 * 60_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'conformance.ts'),
      '--suites', SUITES.join(','), '--label-filter', '!DNS && !Connectivity'],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    const code = await new Promise<number | null>((resolve) => { child.once('exit', resolve); });
    assert.equal(code, 0, `a suite failed:\n${failureDigest(output)}`);
    for (const [i, version] of SUITES.entries()) {
      const start = output.indexOf(`running the MCS conformance suite ${version}`);
      assert.ok(start >= 0, `suite ${version} did not run`);
      const next = SUITES[i + 1];
      const part = output.slice(start, next === undefined ? undefined : output.indexOf(`running the MCS conformance suite ${next}`));
      // Ginkgo's own summary: specs ran, none failed.
      assert.match(part, /Ran [1-9]\d* of \d+ Specs/, `${version}: Ginkgo's summary`);
      assert.match(part, /SUCCESS! -- \d+ Passed \| 0 Failed/, `${version}: 0 failed`);
      const report = part.slice(part.indexOf('the suite\'s own report'));
      const required = report.slice(report.indexOf('== Required =='), report.indexOf('== Optional =='));
      const rows = required.split('\n').filter((l) => /^(Yes|No|Unknown|Skipped)/.test(l));
      assert.ok(rows.length >= 14, `${version}: the suite has 14 Required specs:\n${required}`);
      const ran = rows.filter((l) => !l.includes('Connectivity to a service that is not exported'));
      assert.deepEqual(ran.filter((l) => !l.startsWith('Yes')), [], `${version}: every Required spec conformant`);
      assert.match(report, /^Yes +\[EndpointSlice\] Exporting a service should create an MCS EndpointSlice/m, version);
      // KEP-1645 labels and annotations (issue 27 item 4): both Optional specs ran and passed.
      const exported = report.split('\n').filter((l) => l.includes('[ExportedLabels]') || /labels and annotations specified as exported|conflicting annotations and labels/.test(l));
      assert.ok(exported.length >= 2 && exported.every((l) => l.startsWith('Yes')), `${version}: the [ExportedLabels] specs:\n${exported.join('\n')}`);
    }
  });
});
