// The chart's ServiceExport and ServiceImport CRDs are upstream's (sigs.k8s.io/mcs-api, the
// version in test/mcs-api/sync-crds.sh), byte for byte: never retyped, never edited by hand.
// Offline, their sha256 must be the ones the script recorded from the module; with `go` on the
// PATH the files are also compared with the module itself (the Go module cache, or the proxy).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const crds = path.join(repo, 'charts', 'clusterset-agent', 'crds');
const recorded = JSON.parse(readFileSync(path.join(repo, 'test', 'mcs-api', 'crds.json'), 'utf8')) as { version: string; files: Record<string, string> };
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const hasGo = spawnSync('go', ['version']).status === 0;

void describe('the chart\'s MCS CRDs are upstream\'s', () => {
  void it('both files carry the sha256 recorded from the module by test/mcs-api/sync-crds.sh', () => {
    assert.deepEqual(Object.keys(recorded.files).sort(), ['multicluster.x-k8s.io_serviceexports.yaml', 'multicluster.x-k8s.io_serviceimports.yaml']);
    for (const [file, sum] of Object.entries(recorded.files)) assert.equal(sha256(path.join(crds, file)), sum, `${file} is not upstream's (run bash test/mcs-api/sync-crds.sh)`);
  });

  void it('the release-version label says which upstream release they are', () => {
    for (const file of Object.keys(recorded.files)) {
      const crd = parse(readFileSync(path.join(crds, file), 'utf8')) as { metadata: { labels: Record<string, string> } };
      assert.equal(crd.metadata.labels['multicluster.x-k8s.io/release-version'], recorded.version, file);
    }
  });

  void it('equal the module\'s config/crd/ files', { skip: hasGo ? false : 'no go on the PATH' }, () => {
    execFileSync('bash', [path.join(repo, 'test', 'mcs-api', 'sync-crds.sh'), '--check'], { stdio: ['ignore', 'ignore', 'pipe'] });
  });
});
