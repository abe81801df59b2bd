import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { startHttpServer, type CheckResult, type HttpServer } from '../../src/common/health/server.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';

describe('startHttpServer', () => {
  const servers: HttpServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  const start = async (options: Parameters<typeof startHttpServer>[0]) => {
    const server = await startHttpServer(options);
    servers.push(server);
    const base = `http://127.0.0.1:${String(server.port)}`;
    return { server, get: (path: string, init?: RequestInit) => fetch(`${base}${path}`, init) };
  };

  it('serves /healthz, /readyz and /metrics on an ephemeral loopback port', async () => {
    const metrics = new AgentMetrics({ defaultMetrics: false });
    metrics.setElected(true);
    const { server, get } = await start({ bindAddress: '127.0.0.1:0', metrics, readyz: () => ({ ok: true, detail: '' }) });
    assert.ok(server.port > 0);
    const healthz = await get('/healthz');
    assert.equal(healthz.status, 200);
    assert.equal(await healthz.text(), 'ok\n');
    assert.match(healthz.headers.get('content-type') ?? '', /^text\/plain/);
    const readyz = await get('/readyz');
    assert.equal(readyz.status, 200);
    assert.equal(await readyz.text(), 'ok\n');
    const scrape = await get('/metrics');
    assert.equal(scrape.status, 200);
    assert.equal(scrape.headers.get('content-type'), metrics.contentType);
    assert.match(await scrape.text(), /^clusterset_agent_is_leader 1$/m);
  });

  it('/readyz answers 503 with the detail naming the failing checks, and follows the check live', async () => {
    let result: CheckResult = { ok: false, detail: 'leader antrea/leader-a: not connected\ninformer: not synced' };
    const { get } = await start({ bindAddress: '127.0.0.1:0', readyz: () => result, healthz: () => ({ ok: true, detail: 'alive' }) });
    const failing = await get('/readyz');
    assert.equal(failing.status, 503);
    assert.equal(await failing.text(), 'leader antrea/leader-a: not connected\ninformer: not synced\n');
    assert.equal(await (await get('/healthz')).text(), 'alive\n', 'liveness is independent of readiness');
    result = { ok: true, detail: '2/2 leaders connected' };
    const passing = await get('/readyz');
    assert.equal(passing.status, 200);
    assert.equal(await passing.text(), '2/2 leaders connected\n');
  });

  it('a check that throws or rejects fails the probe instead of crashing', async () => {
    const { get } = await start({
      bindAddress: '127.0.0.1:0',
      readyz: () => { throw new Error('state unavailable'); },
      healthz: () => Promise.reject(new Error('wedged')),
    });
    const readyz = await get('/readyz');
    assert.equal(readyz.status, 503);
    assert.equal(await readyz.text(), 'check failed: state unavailable\n');
    const healthz = await get('/healthz');
    assert.equal(healthz.status, 503);
    assert.equal(await healthz.text(), 'check failed: wedged\n');
  });

  it('404 for unknown paths and /metrics without metrics, 405 for other methods, HEAD has no body', async () => {
    const { get } = await start({ bindAddress: '127.0.0.1:0', readyz: () => ({ ok: true, detail: '' }) });
    const missing = await get('/metrics');
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /\/readyz/);
    const post = await get('/readyz', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    await post.arrayBuffer();
    const head = await get('/healthz', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.equal((await get('/readyz?verbose')).status, 200, 'query strings are ignored');
  });

  it('a metrics-only server has no probes', async () => {
    const { get } = await start({ bindAddress: '127.0.0.1:0', metrics: new AgentMetrics({ defaultMetrics: false }) });
    assert.equal((await get('/metrics')).status, 200);
    assert.equal((await get('/readyz')).status, 404);
  });

  it("':0' listens on every interface", async () => {
    const { server } = await start({ bindAddress: ':0', readyz: () => ({ ok: true, detail: '' }) });
    const res = await fetch(`http://127.0.0.1:${String(server.port)}/healthz`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  });

  it('rejects an invalid bind address and a port in use', async () => {
    await assert.rejects(startHttpServer({ bindAddress: '8080', readyz: () => ({ ok: true, detail: '' }) }), /invalid bind address "8080"/);
    const { server } = await start({ bindAddress: '127.0.0.1:0', readyz: () => ({ ok: true, detail: '' }) });
    await assert.rejects(startHttpServer({ bindAddress: `127.0.0.1:${String(server.port)}`, readyz: () => ({ ok: true, detail: '' }) }), /EADDRINUSE/);
  });

  it('.close() - stops listening even with a keep-alive connection open, and is idempotent', async () => {
    const server = await startHttpServer({ bindAddress: '127.0.0.1:0', readyz: () => ({ ok: true, detail: '' }) });
    const res = await fetch(`http://127.0.0.1:${String(server.port)}/healthz`, { headers: { connection: 'keep-alive' } });
    await res.text();
    await Promise.all([server.close(), server.close()]);
    await assert.rejects(new Promise((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () => { socket.end(); resolve(undefined); });
      socket.once('error', reject);
    }), /ECONNREFUSED/);
  });
});
