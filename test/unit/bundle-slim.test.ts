// What the bundle takes from client-node and undici (scripts/slim-dependencies.mjs): none of
// client-node's generated APIs and models, nor undici's fetch, and what the agents use still
// works bundled: KubeConfig, ListWatch with its selectors and its events, undici's Agent and
// request.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { LEFT_OUT, slimDependencies } from '../../scripts/slim-dependencies.mjs';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..', '..');
const tmp = mkdtempSync(path.join(tmpdir(), 'bundle-slim-'));
after(() => { rmSync(tmp, { recursive: true, force: true }); });

const entry = `import { KubeConfig, ListWatch } from '@kubernetes/client-node';
import { Agent, fetch, request } from 'undici';
import http from 'node:http';

const server = http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('hello ' + req.url); });
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = 'http://127.0.0.1:' + String(server.address().port);
const agent = new Agent();
const answer = await request(origin + '/x?y=1', { dispatcher: agent });
const viaDispatcher = await agent.request({ origin, path: '/z', method: 'GET' });
const kc = new KubeConfig();
kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:6443' }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
const opts = {};
await kc.applyToHTTPSOptions(opts);
let watched;
let send;
const watch = { watch: async (path, query, callback) => { watched = { path, query }; send = callback; return { abort() {} }; } };
const informer = new ListWatch('/api/v1/configmaps', watch, async () => ({ metadata: { resourceVersion: '1' }, items: [] }), false, 'a=b,c!=d', 'metadata.name=x');
const added = [];
informer.on('add', (obj) => { added.push(obj.metadata.name); });
await informer.start();
send('ADDED', { metadata: { name: 'cm', namespace: 'ns', resourceVersion: '2' } });
const fetched = await fetch(origin).then(() => 'answered', (err) => String(err));
console.log(JSON.stringify({
  status: answer.statusCode, body: await answer.body.text(), other: await viaDispatcher.body.text(),
  server: kc.getCurrentCluster().server, token: opts.headers?.Authorization, watched, added, cached: informer.list().map((o) => o.metadata.name), fetched,
}));
await informer.stop();
await agent.close();
server.close();
`;

async function bundle(plugins: Plugin[]): Promise<{ inputs: string[]; out: string }> {
  const dir = mkdtempSync(path.join(tmp, 'b-'));
  writeFileSync(path.join(dir, 'entry.mjs'), entry);
  const out = path.join(dir, 'out.mjs');
  const result = await build({
    entryPoints: [path.join(dir, 'entry.mjs')], outfile: out, bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', metafile: true,
    nodePaths: [path.join(root, 'node_modules')], plugins,
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
  });
  return { inputs: Object.keys(result.metafile.inputs), out };
}

void describe('client-node and undici in the bundle', () => {
  void it('leave out the generated APIs and models and fetch, and what the agents use still works', async () => {
    const { inputs, out } = await bundle([slimDependencies]);
    assert.deepEqual(inputs.filter((f) => LEFT_OUT.some((p) => p.test(f))), []);
    const { stdout } = await run(process.execPath, [out], { env: { ...process.env, NODE_OPTIONS: '' } });
    assert.deepEqual(JSON.parse(stdout), {
      status: 200, body: 'hello /x?y=1', other: 'hello /z', server: 'https://127.0.0.1:6443', token: 'Bearer t',
      watched: { path: '/api/v1/configmaps', query: { resourceVersion: '1', labelSelector: 'a=b,c!=d', fieldSelector: 'metadata.name=x' } },
      added: ['cm'], cached: ['cm'],
      fetched: "Error: undici's fetch is not in this bundle (scripts/slim-dependencies.mjs): the agent sends its requests with undici's request",
    });
  });

  void it('(what it prevents: without it, all of them are bundled)', async () => {
    const { inputs } = await bundle([]);
    for (const pattern of LEFT_OUT) assert.ok(inputs.some((f) => pattern.test(f)), `${String(pattern)} is bundled without the plugin`);
  });
});
