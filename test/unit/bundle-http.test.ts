// The bundle's ES imports of node:http (scripts/http-through-require.mjs): Node's own undici stays
// unloaded (issue 31, the leader's memory), and the imports still get what they name.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { httpThroughRequire } from '../../scripts/http-through-require.mjs';

const run = promisify(execFile);
const tmp = mkdtempSync(path.join(tmpdir(), 'bundle-http-'));
after(() => { rmSync(tmp, { recursive: true, force: true }); });

// Three import forms the bundle holds (client-node's namespace and default imports, the health server's named one).
const entry = `import { STATUS_CODES, createServer } from 'node:http';
import * as ns from 'http';
import http from 'node:http';
console.log(JSON.stringify({
  ok: STATUS_CODES[200], createServer: typeof createServer, request: typeof ns.request, agent: http.globalAgent instanceof http.Agent,
  nodeUndici: process.moduleLoadList.some((m) => m.includes('deps/undici')),
}));
`;

async function bundleAndRun(plugins: typeof httpThroughRequire[]): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmp, 'b-'));
  writeFileSync(path.join(dir, 'entry.mjs'), entry);
  await build({ entryPoints: [path.join(dir, 'entry.mjs')], outfile: path.join(dir, 'out.mjs'), bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', plugins });
  const { stdout } = await run(process.execPath, [path.join(dir, 'out.mjs')]);
  return JSON.parse(stdout) as Record<string, unknown>;
}

void describe('node:http in the bundle', () => {
  void it('is read through require: Node\'s own undici is not loaded, and every import form gets its values', async () => {
    assert.deepEqual(await bundleAndRun([httpThroughRequire]), { ok: 'OK', createServer: 'function', request: 'function', agent: true, nodeUndici: false });
  });

  void it('(what it prevents: imported as an ES module, the namespace reads the getters that load it)', async () => {
    assert.equal((await bundleAndRun([])).nodeUndici, true);
  });
});
