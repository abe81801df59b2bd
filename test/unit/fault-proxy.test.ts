import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { type FaultProxy, generateLoopbackPki, startFaultProxy } from '../harness/fault-proxy.js';
import { waitFor } from '../harness/wait.js';

const DEADLINE = { timeoutMs: 5_000, intervalMs: 10 };

interface Upstream {
  readonly url: string;
  readonly caPem: string;
  /** Requests received, as "METHOD url". */
  readonly hits: string[];
  /** Open /stream responses, for the test to write to. */
  readonly streams: { res: http.ServerResponse; closed: boolean }[];
  /** Chunks received so far by /upload. */
  readonly uploadChunks: string[];
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fault-proxy-upstream-'));
  const pki = generateLoopbackPki(dir);
  rmSync(dir, { recursive: true, force: true });
  const hits: string[] = [];
  const streams: Upstream['streams'] = [];
  const uploadChunks: string[] = [];
  const server = https.createServer({ key: pki.keyPem, cert: pki.certPem }, (req, res) => {
    hits.push(`${req.method ?? ''} ${req.url ?? ''}`);
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname === '/stream') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED"}\n');
      const entry = { res, closed: false };
      res.once('close', () => { entry.closed = true; });
      streams.push(entry);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (pathname === '/upload') uploadChunks.push(chunk.toString());
    });
    req.on('end', () => {
      const body = JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${String(address.port)}`,
    caPem: pki.caPem,
    hits,
    streams,
    uploadChunks,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
      server.closeAllConnections();
      await closed;
    },
  };
}

interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

interface RequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs?: number;
}

function send(agent: https.Agent, base: string, urlPath: string, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${base}${urlPath}`, { agent, method: options.method ?? 'GET', headers: options.headers ?? {},
      timeout: options.timeoutMs ?? 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }); });
      res.on('error', reject);
    });
    req.on('timeout', () => { req.destroy(new Error('client timeout')); });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Opens a response and returns an iterator over its chunks. */
function open(agent: https.Agent, url: string): Promise<{ res: http.IncomingMessage; chunks: AsyncIterator<Buffer, undefined> }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { agent }, (res) => {
      resolve({ res, chunks: res[Symbol.asyncIterator]() as AsyncIterator<Buffer, undefined> });
    });
    req.on('error', reject);
  });
}

async function nextChunk(chunks: AsyncIterator<Buffer, undefined>, timeoutMs = 5_000): Promise<IteratorResult<Buffer, undefined>> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => { reject(new Error(`no chunk within ${String(timeoutMs)} ms`)); }, timeoutMs);
  });
  try {
    return await Promise.race([chunks.next(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function isReset(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException;
  return e.code === 'ECONNRESET' || /socket hang up|ECONNRESET|disconnected/.test(e.message);
}

describe('startFaultProxy', () => {
  let upstream: Upstream;
  let proxy: FaultProxy;
  const agents: https.Agent[] = [];
  const newAgent = (options: https.AgentOptions = {}) => {
    const agent = new https.Agent({ keepAlive: true, ca: proxy.caPem, ...options });
    agents.push(agent);
    return agent;
  };

  before(async () => {
    upstream = await startUpstream();
    proxy = await startFaultProxy({ upstream: upstream.url, upstreamCaPem: upstream.caPem, seed: 42 });
  });
  afterEach(() => {
    for (const agent of agents.splice(0)) agent.destroy();
    proxy.setFaults({});
    proxy.respondWith(undefined);
    proxy.partition(false);
    proxy.resetStats();
    proxy.resetRequests();
    upstream.hits.length = 0;
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  it('forwards method, path with query, headers (Authorization included) and body, and never records Authorization', async () => {
    assert.match(proxy.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const reply = await send(newAgent(), proxy.url, '/echo/x?labelSelector=a%3Db&limit=5', {
      method: 'POST',
      headers: { authorization: 'Bearer s3cret-token', 'x-custom': 'kept', 'content-type': 'application/json' },
      body: '{"hello":"world"}',
    });
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['x-upstream'], 'yes');
    const echoed = JSON.parse(reply.body) as { method: string; url: string; headers: Record<string, string>; body: string };
    assert.equal(echoed.method, 'POST');
    assert.equal(echoed.url, '/echo/x?labelSelector=a%3Db&limit=5');
    assert.equal(echoed.headers['authorization'], 'Bearer s3cret-token');
    assert.equal(echoed.headers['x-custom'], 'kept');
    assert.equal(echoed.body, '{"hello":"world"}');
    const log = proxy.requests();
    assert.deepEqual(log.map((r) => [r.method, r.path, r.query, r.status, r.outcome, r.injected]),
      [['POST', '/echo/x', '?labelSelector=a%3Db&limit=5', 200, 'forwarded', false]]);
    assert.doesNotMatch(JSON.stringify({ log, stats: proxy.stats() }), /s3cret/);
  });

  it('streams a request body to the upstream as it is written', async () => {
    const agent = newAgent();
    const replied = new Promise<Reply>((resolve, reject) => {
      const req = https.request(`${proxy.url}/upload`, { agent, method: 'PUT' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }); });
      });
      req.on('error', reject);
      req.write('first-part;');
      void waitFor('first part upstream', () => upstream.uploadChunks.join('') === 'first-part;', DEADLINE)
        .then(() => { req.end('second-part'); }, (err: unknown) => { req.destroy(err as Error); });
    });
    const reply = await replied;
    assert.equal(reply.status, 200);
    assert.equal((JSON.parse(reply.body) as { body: string }).body, 'first-part;second-part');
  });

  it('streams a chunked response (a watch) through as it is written', async () => {
    const agent = newAgent();
    const { res, chunks } = await open(agent, `${proxy.url}/stream?watch=true&resourceVersion=1`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal((await nextChunk(chunks)).value?.toString(), '{"type":"ADDED"}\n');
    const stream = upstream.streams.at(-1);
    assert.ok(stream && !stream.closed, 'the upstream response is still open');
    assert.equal(proxy.stats().inFlight, 1);
    stream.res.write('{"type":"MODIFIED"}\n');
    assert.equal((await nextChunk(chunks)).value?.toString(), '{"type":"MODIFIED"}\n');
    stream.res.end();
    assert.equal((await nextChunk(chunks)).done, true);
    await waitFor('no request in flight', () => proxy.stats().inFlight === 0, DEADLINE);
    assert.deepEqual(proxy.stats().byMethodPath, { 'GET /stream (watch)': 1 });
    assert.equal(proxy.requests()[0]?.watch, true);
  });

  it("failure '503' answers a Kubernetes Status 503 without reaching the upstream", async () => {
    proxy.setFaults({ failureRate: 1, failure: '503' });
    const reply = await send(newAgent(), proxy.url, '/echo');
    assert.equal(reply.status, 503);
    assert.equal(reply.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(reply.body), {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'injected', reason: 'ServiceUnavailable', code: 503,
    });
    assert.deepEqual(upstream.hits, []);
    const stats = proxy.stats();
    assert.equal(stats.injectedFailures, 1);
    assert.equal(stats.injected503, 1);
    assert.equal(stats.forwarded, 0);
    assert.deepEqual(proxy.requests().map((r) => [r.status, r.outcome, r.injected]), [[503, 'injected-503', true]]);
  });

  it("failure 'reset' destroys the connection without an answer and without reaching the upstream", async () => {
    proxy.setFaults({ failureRate: 1, failure: 'reset' });
    await assert.rejects(send(newAgent(), proxy.url, '/echo'), (err) => isReset(err));
    assert.deepEqual(upstream.hits, []);
    assert.equal(proxy.stats().injectedResets, 1);
    assert.equal(proxy.requests()[0]?.outcome, 'injected-reset');
  });

  it('failureRate 0.2 over 200 requests injects 20..60, the same requests again for the same seed', async () => {
    const run = async (target: FaultProxy) => {
      target.setFaults({ failureRate: 0.2, failure: '503' });
      const agent = new https.Agent({ keepAlive: true, ca: target.caPem });
      agents.push(agent);
      const injected: number[] = [];
      for (let i = 0; i < 200; i += 1) {
        const reply = await send(agent, target.url, `/echo?i=${String(i)}`);
        if (reply.status === 503) injected.push(i);
        else assert.equal(reply.status, 200);
      }
      return injected;
    };
    const start = () => startFaultProxy({ upstream: upstream.url, upstreamCaPem: upstream.caPem, seed: 7 });
    const [one, two] = [await start(), await start()];
    try {
      assert.equal(one.seed, 7);
      const first = await run(one);
      assert.ok(first.length >= 20 && first.length <= 60, `${String(first.length)} injected`);
      assert.equal(one.stats().injectedFailures, first.length);
      assert.equal(upstream.hits.length, 200 - first.length);
      assert.equal(one.stats().connections, 1, 'a keep-alive client keeps one connection across 503s');
      assert.deepEqual(await run(two), first);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it("'mixed' injects both kinds, and match limits faults (and latency) to the selected requests", async () => {
    proxy.setFaults({ failureRate: 1, failure: 'mixed', match: (req) => req.path.startsWith('/echo/faulty') });
    const agent = newAgent();
    const outcomes = new Set<string>();
    for (let i = 0; i < 20; i += 1) {
      outcomes.add(await send(agent, proxy.url, '/echo/faulty').then((r) => String(r.status), (err: unknown) => (isReset(err) ? 'reset' : 'other')));
    }
    assert.deepEqual([...outcomes].sort(), ['503', 'reset']);
    assert.equal((await send(agent, proxy.url, '/echo/healthy')).status, 200);
    assert.equal(proxy.stats().injectedFailures, 20);
    assert.deepEqual(upstream.hits, ['GET /echo/healthy']);
  });

  it('latencyMs delays the answer', async () => {
    proxy.setFaults({ latencyMs: 150 });
    const started = performance.now();
    assert.equal((await send(newAgent(), proxy.url, '/echo')).status, 200);
    assert.ok(performance.now() - started >= 145, 'answered after the latency');
    assert.throws(() => { proxy.setFaults({ failureRate: 1.5 }); }, RangeError);
  });

  it('partition cuts an open stream and fails new requests; healing restores service', async () => {
    const agent = newAgent();
    const { res, chunks } = await open(agent, `${proxy.url}/stream?watch=true`);
    await nextChunk(chunks);
    const stream = upstream.streams.at(-1);
    assert.ok(stream);
    const clientClosed = new Promise<void>((resolve) => { res.once('close', resolve); });
    proxy.partition(true);
    await assert.rejects(nextChunk(chunks), (err) => isReset(err) || /aborted/.test((err as Error).message));
    await clientClosed;
    await waitFor('upstream stream closed', () => stream.closed, DEADLINE);
    await assert.rejects(send(agent, proxy.url, '/echo'), (err) => isReset(err));
    assert.equal(proxy.stats().droppedConnections, 1);
    assert.equal(proxy.stats().inFlight, 0);
    proxy.partition(false);
    assert.equal((await send(agent, proxy.url, '/echo')).status, 200);
  });

  it("partition 'blackhole' holds new connections unanswered until healed", async () => {
    proxy.partition(true, 'blackhole');
    await assert.rejects(send(newAgent(), proxy.url, '/echo', { timeoutMs: 300 }), /client timeout/);
    assert.equal(proxy.stats().droppedConnections, 1);
    proxy.partition(false);
    await waitFor('held connection released', () => proxy.stats().openConnections === 0, DEADLINE);
    assert.equal((await send(newAgent(), proxy.url, '/echo')).status, 200);
  });

  it('respondWith answers every request with the canned response until cleared', async () => {
    const html = '<!DOCTYPE html><html><body>Down for maintenance</body></html>';
    proxy.respondWith({ status: 503, contentType: 'text/html', body: html });
    const agent = newAgent();
    for (const urlPath of ['/api/v1/namespaces', '/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/x/resourceexports?watch=true']) {
      const reply = await send(agent, proxy.url, urlPath);
      assert.equal(reply.status, 503);
      assert.equal(reply.headers['content-type'], 'text/html');
      assert.equal(reply.body, html);
    }
    assert.deepEqual(upstream.hits, []);
    assert.equal(proxy.stats().responded, 2);
    proxy.respondWith(undefined);
    assert.equal((await send(agent, proxy.url, '/echo')).status, 200);
  });

  it('counts connections: sequential requests on a keep-alive client use one', async () => {
    const agent = newAgent({ maxSockets: 1 });
    for (let i = 0; i < 5; i += 1) assert.equal((await send(agent, proxy.url, '/echo')).status, 200);
    const stats = proxy.stats();
    assert.equal(stats.connections, 1);
    assert.equal(stats.requests, 5);
    assert.equal(stats.forwarded, 5);
    assert.deepEqual(stats.byMethodPath, { 'GET /echo': 5 });
    proxy.resetStats();
    assert.equal(proxy.stats().requests, 0);
    assert.equal(proxy.requests().length, 5, 'resetStats keeps the request log');
    proxy.resetRequests();
    assert.deepEqual(proxy.requests(), []);
  });
});

describe('startFaultProxy upstream failures and close()', () => {
  it('answers 502 with a Status when the upstream is unreachable', async () => {
    const spare = net.createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', resolve));
    const port = (spare.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => spare.close(() => { resolve(); }));
    const proxy = await startFaultProxy({ upstream: `https://127.0.0.1:${String(port)}`, upstreamCaPem: 'unused' });
    const agent = new https.Agent({ keepAlive: true, ca: proxy.caPem });
    try {
      const reply = await send(agent, proxy.url, '/api');
      assert.equal(reply.status, 502);
      assert.equal((JSON.parse(reply.body) as { kind: string }).kind, 'Status');
      assert.equal(proxy.stats().upstreamErrors, 1);
    } finally {
      agent.destroy();
      await proxy.close();
    }
  });

  it('close() cuts open streams and idle connections, removes its dir and leaves no handles', async () => {
    const upstream = await startUpstream();
    const proxy = await startFaultProxy({ upstream: upstream.url, upstreamCaPem: upstream.caPem });
    const agent = new https.Agent({ keepAlive: true, ca: proxy.caPem });
    assert.equal((await send(agent, proxy.url, '/echo')).status, 200);
    const { res, chunks } = await open(agent, `${proxy.url}/stream?watch=true`);
    await nextChunk(chunks);
    const clientClosed = new Promise<void>((resolve) => { res.once('close', resolve); });
    assert.ok(existsSync(proxy.dir));
    await proxy.close();
    await clientClosed;
    assert.equal(existsSync(proxy.dir), false);
    await proxy.close();
    agent.destroy();
    await upstream.close();
    // (PipeWrap handles are the test runner's own stdio.)
    await waitFor('no sockets or servers left',
      () => process.getActiveResourcesInfo().filter((name) => /TCP|TLS/.test(name)).length === 0, DEADLINE);
  });
});
