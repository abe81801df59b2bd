// The bundle's ES imports of Node's built-ins (scripts/builtins-through-require.mjs): their
// getters do not run (Node's own undici stays unloaded: issue 31, the leader's memory and
// start), and every import form still gets its values.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { builtinsThroughRequire } from '../../scripts/builtins-through-require.mjs';

const run = promisify(execFile);
const tmp = mkdtempSync(path.join(tmpdir(), 'bundle-builtins-'));
after(() => { rmSync(tmp, { recursive: true, force: true }); });

// The import forms the bundle holds: named (the health server's createServer), namespace and
// default (client-node's), a named getter (join's BlockList), process as a default import.
const entry = `import { STATUS_CODES, createServer } from 'node:http';
import * as ns from 'http';
import http from 'node:http';
import { BlockList } from 'node:net';
import { readFileSync } from 'fs';
import process from 'node:process';
import tls from 'node:tls';
const loaded = (name) => process.moduleLoadList.some((m) => m.includes(name));
console.log(JSON.stringify({
  ok: STATUS_CODES[200], createServer: typeof createServer, request: typeof ns.request, agent: http.globalAgent instanceof http.Agent,
  blockList: typeof new BlockList().addAddress, readFileSync: typeof readFileSync, connect: typeof tls.connect,
  nodeUndici: loaded('deps/undici'),
}));
`;

async function bundleAndRun(plugins: Plugin[]): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmp, 'b-'));
  writeFileSync(path.join(dir, 'entry.mjs'), entry);
  await build({ entryPoints: [path.join(dir, 'entry.mjs')], outfile: path.join(dir, 'out.mjs'), bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', plugins });
  const { stdout } = await run(process.execPath, [path.join(dir, 'out.mjs')], { env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(stdout) as Record<string, unknown>;
}

void describe('Node\'s built-ins in the bundle', () => {
  void it('are read through require: Node\'s own undici is not loaded, and every import form gets its values', async () => {
    assert.deepEqual(await bundleAndRun([builtinsThroughRequire]), {
      ok: 'OK', createServer: 'function', request: 'function', agent: true, blockList: 'function', readFileSync: 'function', connect: 'function', nodeUndici: false,
    });
  });

  void it('(what it prevents: imported as ES modules, the namespaces read the getters that load it)', async () => {
    assert.equal((await bundleAndRun([])).nodeUndici, true);
  });
});
