// The harness's one way to find a build script's cached binaries (test/harness/bins.ts
// builtFiles), which the k8s, control-plane, Antrea and CoreDNS binaries all go through: the
// variable a parent set wins, else the script answers and its answer is kept for children, and
// a missing file names the script to rerun.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { builtFiles } from '../harness/bins.js';

const VAR = 'CSA_TEST_BUILT_DIR';

describe('harness builtFiles', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'csa-built-dir-'));
  const cache = path.join(tmp, 'cache');
  const script = path.join(tmp, 'build.sh');
  const ran = path.join(tmp, 'ran');
  // The script answers like the real ones: the cache folder on stdout. It leaves a mark when run.
  writeFileSync(script, `mkdir -p '${cache}' && touch '${cache}/tool' '${ran}' && echo '${cache}'\n`);
  after(() => {
    delete process.env['CSA_TEST_BUILT_DIR'];
    rmSync(tmp, { recursive: true, force: true });
  });

  it('asks the script when the variable is unset, and keeps its answer in the variable', () => {
    delete process.env['CSA_TEST_BUILT_DIR'];
    assert.deepEqual(builtFiles(VAR, script, { tool: 'tool' }), { dir: cache, tool: path.join(cache, 'tool') });
    assert.equal(process.env[VAR], cache);
  });

  it('takes the variable when set, without running the script', () => {
    rmSync(ran, { force: true });
    process.env[VAR] = cache;
    assert.equal(builtFiles(VAR, script, { tool: 'tool' }).dir, cache);
    assert.equal(existsSync(ran), false, 'the script did not run');
  });

  it('a file missing from the folder: throws naming it, the variable and the script to rerun', () => {
    process.env[VAR] = cache;
    assert.throws(() => builtFiles(VAR, script, { tool: 'tool', other: 'other' }),
      (err: unknown) => err instanceof Error && err.message === `other missing: ${path.join(cache, 'other')} (${VAR}=${cache}); rerun ${script}`);
  });
});
