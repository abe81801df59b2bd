// The REST client against a real local HTTPS server (throwaway self-signed certificate):
// validation of every answer, keep-alive, timeouts, the watch contract ListWatch relies on,
// and that the token never leaks into an error.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { inspect } from 'node:util';
import { after, afterEach, before, describe, it } from 'node:test';
import { ListWatch, type KubernetesObject, type Watch } from '@kubernetes/client-node';
import { apiStatus, describeError, httpStatus, isGone, isNotFound, isTlsVerificationError, networkErrorCode } from '../../src/common/kube/errors.js';
import { HttpsAgentPool } from '../../src/common/kube/https-agent-pool.js';
import { ApiError, createRestClient, responseCapBytes, type RestClient, type RestClientOptions, UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { selfSignedLoopbackCert } from '../harness/pki.js';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzZWNyZXQtbWVtYmVyIn0.dG9rZW4tbXVzdC1ub3QtbGVhaw';


type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const routes = new Map<string, Handler>();
let server: https.Server;
let base: string;
let otherCa: string;
let ca: string;
let connections = 0;
const requestsOnSocket = new WeakMap<Socket, number>();
const clients: RestClient[] = [];

function json(res: ServerResponse, code: number, body: unknown, type = 'application/json'): void {
  res.writeHead(code, { 'content-type': type });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function status(code: number, reason: string, message: string, details?: object): object {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details && { details }) };
}

/** A client with connections of its own unless `overrides.agentPool` says otherwise. */
function client(overrides: Partial<RestClientOptions> = {}): RestClient {
  const c = createRestClient({ server: `${base}/prefix`, caPem: ca, token: TOKEN, timeoutMs: 5000, peer: 'leader', agentPool: new HttpsAgentPool(), ...overrides });
  clients.push(c);
  return c;
}

/** Rejects if `promise` does not settle within `ms`: a hung test fails instead of stalling. */
function within<T>(promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`not settled within ${String(ms)} ms`)); }, ms);
  })]).finally(() => { clearTimeout(timer); });
}

function assertNoToken(err: unknown): void {
  for (const text of [(err as Error).message, JSON.stringify(err), inspect(err, { depth: 5 })]) {
    assert.ok(!text.includes(TOKEN), `token leaked into ${text}`);
  }
}

before(() => {
  const tls = selfSignedLoopbackCert();
  otherCa = selfSignedLoopbackCert().cert;
  ca = tls.cert;
  server = https.createServer(tls, (req, res) => {
    const socket = req.socket;
    requestsOnSocket.set(socket, (requestsOnSocket.get(socket) ?? 0) + 1);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = routes.get((req.url ?? '').split('?')[0] ?? '');
      if (route) route(req, res, Buffer.concat(chunks).toString('utf8'));
      else json(res, 500, status(500, 'InternalError', `no route for ${req.url ?? ''}`));
    });
  });
  server.on('secureConnection', () => { connections += 1; });
  return new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => {
    base = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    resolve();
  }));
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  routes.clear();
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('RestClient.request()', () => {
  it('returns a JSON object, keeping the server path prefix and sending the expected headers', async () => {
    let seen: IncomingMessage | undefined;
    let sent = '';
    routes.set('/prefix/apis/g/v1/things', (req, res, body) => { seen = req; sent = body; json(res, 201, { kind: 'Thing', apiVersion: 'g/v1' }); });
    const obj = await client().request<{ kind: string }>('POST', '/apis/g/v1/things', { query: { limit: 5, dryRun: undefined, watch: false }, body: { a: 1 } });
    assert.equal(obj.kind, 'Thing');
    assert.equal(seen?.url, '/prefix/apis/g/v1/things?limit=5&watch=false');
    assert.equal(seen?.headers.accept, 'application/json');
    assert.equal(seen?.headers['content-type'], 'application/json');
    assert.equal(seen?.headers['user-agent'], 'clusterset-agent');
    assert.equal(seen?.headers.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(JSON.parse(sent), { a: 1 });
  });

  it('accepts content type parameters (application/json; charset=utf-8)', async () => {
    routes.set('/prefix/x', (_req, res) => { json(res, 200, { kind: 'X' }, 'application/json; charset=utf-8'); });
    assert.deepEqual(await client().request('GET', '/x'), { kind: 'X' });
  });

  it('rejects 200 text/html (a load balancer page) with UnexpectedResponseError: status, content type, snippet', async () => {
    const page = `<!DOCTYPE html>\n<html><head><title>Maintenance</title></head><body>${'We will be back soon. '.repeat(20)}</body></html>`;
    routes.set('/prefix/x', (_req, res) => { json(res, 200, page, 'text/html; charset=utf-8'); });
    const err = await client().request('GET', '/x').then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof UnexpectedResponseError);
    assert.equal(err.statusCode, 200);
    assert.equal(httpStatus(err), 200);
    assert.equal(err.contentType, 'text/html; charset=utf-8');
    assert.ok(err.snippet.startsWith('<!DOCTYPE html> <html>'), 'newlines replaced');
    assert.ok(err.snippet.length <= 121 && err.snippet.endsWith('…'));
    assert.match(err.message, /^leader GET \/x answered 200 with content type "text\/html; charset=utf-8" \(expected application\/json\): "<!DOCTYPE html>/);
    assert.equal(describeError(err), err.message, 'logs say what was wrong, not "HTTP 200 OK"');
  });

  it('refuses an answer larger than the cap, declared or streamed, as UnexpectedResponseError naming the size', async () => {
    const big = JSON.stringify({ kind: 'List', items: Array.from({ length: 2000 }, (_, i) => ({ name: `item-${String(i)}`, pad: 'x'.repeat(100) })) });
    routes.set('/prefix/declared', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) });
      res.end(big);
    });
    routes.set('/prefix/streamed', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(big.slice(0, 100_000));
      res.end(big.slice(100_000));
    });
    const small = client({ maxResponseBytes: 64 * 1024 });
    const declared = await small.request('GET', '/declared').then(() => undefined, (e: unknown) => e);
    assert.ok(declared instanceof UnexpectedResponseError, String(declared));
    assert.match(declared.message, new RegExp(`^leader GET /declared answered 200 .*answer of ${String(Buffer.byteLength(big))} bytes, larger than 65536 bytes, the cap derived from the agent's heap limit`));
    const streamed = await small.request('GET', '/streamed').then(() => undefined, (e: unknown) => e);
    assert.ok(streamed instanceof UnexpectedResponseError, String(streamed));
    assert.match(streamed.message, /^leader GET \/streamed answered 200 .*answer larger than 65536 bytes, the cap derived from the agent's heap limit.*"\{\\"kind\\":\\"List\\"/);
    // Under the cap, the same answer is fine.
    assert.equal((await client().request<{ items: unknown[] }>('GET', '/streamed')).items.length, 2000);
  });

  it('derives the cap from the heap limit: an eighth, between 8 and 256 MiB', () => {
    const MiB = 1024 * 1024;
    assert.equal(responseCapBytes(160 * MiB), 20 * MiB);
    assert.equal(responseCapBytes(16 * MiB), 8 * MiB);
    assert.equal(responseCapBytes(4096 * MiB), 256 * MiB);
  });

  it('rejects JSON that is not an object, and malformed JSON', async () => {
    routes.set('/prefix/array', (_req, res) => { json(res, 200, []); });
    routes.set('/prefix/broken', (_req, res) => { json(res, 200, '{"kind":'); });
    await assert.rejects(client().request('GET', '/array'), (e) => e instanceof UnexpectedResponseError && /expected a JSON object/.test(e.message));
    await assert.rejects(client().request('GET', '/broken'), (e) => e instanceof UnexpectedResponseError && e.snippet === '{"kind":');
  });

  it('rejects a JSON object that fails the expect check, naming what was expected', async () => {
    routes.set('/prefix/x', (_req, res) => { json(res, 200, { kind: 'Foo', apiVersion: 'v1' }); });
    const expect = (o: Record<string, unknown>) => (o.kind === 'Bar' ? undefined : `expected kind Bar, got kind ${JSON.stringify(o.kind)}`);
    await assert.rejects(client().request('GET', '/x', { expect }),
      (e) => e instanceof UnexpectedResponseError && e.statusCode === 200 && /expected kind Bar, got kind "Foo"/.test(e.message));
  });

  it('turns a 404 Status into an ApiError the errors helpers understand', async () => {
    routes.set('/prefix/x', (_req, res) => { json(res, 404, status(404, 'NotFound', 'things "x" not found', { name: 'x', kind: 'things' })); });
    const err = await client().request('GET', '/x').then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 404);
    assert.equal(err.statusCode, 404);
    assert.ok(isNotFound(err));
    assert.equal(apiStatus(err)?.details?.kind, 'things');
    assert.equal(err.message, '404 NotFound: things "x" not found');
  });

  it('turns a 404 that is not a Status (HTML) into UnexpectedResponseError with httpStatus 404', async () => {
    routes.set('/prefix/x', (_req, res) => { json(res, 404, '<html>Not Found</html>', 'text/html'); });
    const err = await client().request('GET', '/x').then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof UnexpectedResponseError);
    assert.equal(httpStatus(err), 404);
    assert.equal(apiStatus(err), undefined);
    assert.match(err.message, /expected a Kubernetes Status/);
  });

  it('reports a 401 with an empty body with httpStatus 401', async () => {
    routes.set('/prefix/x', (_req, res) => { res.writeHead(401); res.end(); });
    const err = await client().request('GET', '/x').then(() => undefined, (e: unknown) => e);
    assert.equal(httpStatus(err), 401);
    assert.ok(err instanceof UnexpectedResponseError);
  });

  it('fails TLS verification against a server the CA did not sign', async () => {
    routes.set('/prefix/x', (_req, res) => { json(res, 200, {}); });
    const err = await client({ caPem: otherCa }).request('GET', '/x').then(() => undefined, (e: unknown) => e);
    assert.ok(isTlsVerificationError(err), String(networkErrorCode(err)));
    assertNoToken(err);
  });

  it('reuses one connection for sequential requests (keep-alive)', async () => {
    routes.set('/prefix/x', (_req, res) => { json(res, 200, { ok: true }); });
    // One connection allowed: each request waits for the last one's (undici frees a connection
    // just after its body ends, so without a cap the next request may open a second one).
    const c = client({ maxSockets: 1 });
    const before = connections;
    for (let i = 0; i < 5; i += 1) await c.request('GET', '/x');
    assert.equal(connections - before, 1);
  });

  it('retries an idempotent request once when a kept-alive socket was closed under it, never a POST', async () => {
    // The second request on a connection finds it reset, like a server closing an idle socket as we send.
    routes.set('/prefix/x', (req, res) => {
      if (requestsOnSocket.get(req.socket) === 2) req.socket.destroy();
      else json(res, 200, { ok: true });
    });
    const c = client({ maxSockets: 1 });
    const before = connections;
    await c.request('GET', '/x');
    assert.deepEqual(await c.request('GET', '/x'), { ok: true });
    assert.equal(connections - before, 2, 'retried on a new connection');
    const post = client({ maxSockets: 1 });
    await post.request('POST', '/x', { body: {} });
    await assert.rejects(post.request('POST', '/x', { body: {} }), (e) => ['ECONNRESET', 'UND_ERR_SOCKET'].includes(networkErrorCode(e) ?? ''));
  });

  it('times out a hung request with a TimeoutError and closes its connection', async () => {
    const closed = Promise.withResolvers<undefined>();
    routes.set('/prefix/hang', (req) => { req.socket.on('close', () => { closed.resolve(undefined); }); });
    const started = performance.now();
    const err = await client({ timeoutMs: 200 }).request('GET', '/hang').then(() => undefined, (e: unknown) => e);
    assert.equal((err as Error).name, 'TimeoutError');
    assert.equal(networkErrorCode(err), 'ETIMEDOUT');
    assert.ok(performance.now() - started >= 190);
    await within(closed.promise);
    assertNoToken(err);
  });

  it('never puts the token into an error, even when a proxy echoes the request headers', async () => {
    const echo: Handler = (req, res) => { json(res, req.url?.includes('fail') === true ? 502 : 200, `<pre>Authorization: ${req.headers.authorization ?? ''}\n${TOKEN}</pre>`, 'text/html'); };
    routes.set('/prefix/echo', echo);
    routes.set('/prefix/echo-fail', echo);
    for (const p of ['/echo', '/echo-fail']) {
      const err = await client().request('GET', p).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof UnexpectedResponseError);
      assert.match(err.snippet, /REDACTED/);
      assertNoToken(err);
    }
    const refused = await client({ server: 'https://127.0.0.1:1' }).request('GET', '/x').then(() => undefined, (e: unknown) => e);
    assert.equal(networkErrorCode(refused), 'ECONNREFUSED');
    assertNoToken(refused);
  });
});

interface Recorded { events: [string, unknown][]; done: Promise<unknown>; controller: AbortController }

/** Opens a watch and records what it delivers; `done` resolves with what was passed to done(). */
async function watch(c: RestClient, p: string, query: Record<string, string> = {}, expectItem?: (o: Record<string, unknown>) => string | undefined): Promise<Recorded> {
  const events: [string, unknown][] = [];
  const done = Promise.withResolvers<unknown>();
  let calls = 0;
  const controller = await within(c.watch(p, query, (type, obj) => { events.push([type, obj]); }, (err) => {
    calls += 1;
    assert.equal(calls, 1, 'done is called once');
    done.resolve(err);
  }, expectItem));
  return { events, done: within(done.promise), controller };
}

function streaming(res: ServerResponse, type = 'application/json'): void {
  res.writeHead(200, { 'content-type': type, 'transfer-encoding': 'chunked' });
  res.flushHeaders();
}

const pod = (name: string) => ({ kind: 'Pod', apiVersion: 'v1', metadata: { name, resourceVersion: '2' } });

describe('RestClient.watch()', () => {
  it('delivers events (split across chunks, several per chunk) and ends cleanly with done(null)', async () => {
    let url = '';
    routes.set('/prefix/api/v1/pods', (req, res) => {
      url = req.url ?? '';
      streaming(res);
      const two = `${JSON.stringify({ type: 'ADDED', object: pod('a') })}\n${JSON.stringify({ type: 'MODIFIED', object: pod('a') })}\n`;
      const third = JSON.stringify({ type: 'DELETED', object: pod('a') });
      res.write(two);
      res.write(third.slice(0, 10));
      res.end(`${third.slice(10)}\n`);
    });
    const c = client();
    const before = connections;
    const w = await watch(c, '/api/v1/pods', { resourceVersion: '1' });
    assert.equal(await w.done, null);
    assert.deepEqual(w.events.map(([t]) => t), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.match(url, /watch=true/);
    assert.match(url, /resourceVersion=1/);
    for (let i = 0; i < 3; i += 1) assert.equal(await (await watch(c, '/api/v1/pods')).done, null);
    // Watches have no connection cap, and undici frees a connection just after its body ends,
    // so the next watch may open a second one; four watches on two connections is reuse.
    assert.ok(connections - before <= 2, `a cleanly ended watch leaves its connection usable for the next watch (${String(connections - before)} connections for 4 watches)`);
  });

  it('delivers ERROR events (a 410 Status) without the item check', async () => {
    routes.set('/prefix/w', (_req, res) => { streaming(res); res.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old') })}\n`); });
    const w = await watch(client(), '/w', {}, () => 'never a pod');
    assert.equal(await w.done, null);
    assert.equal(w.events[0]?.[0], 'ERROR');
  });

  it('aborts and reports UnexpectedResponseError for a line that is not a watch event', async () => {
    const closed = Promise.withResolvers<undefined>();
    routes.set('/prefix/w', (req, res) => {
      req.socket.on('close', () => { closed.resolve(undefined); });
      streaming(res);
      res.write(`${JSON.stringify({ type: 'ADDED', object: pod('a') })}\n<html>oops</html>\n`);
    });
    const w = await watch(client(), '/w');
    const err = await w.done;
    assert.ok(err instanceof UnexpectedResponseError);
    assert.equal(err.snippet, '<html>oops</html>');
    assert.equal(w.events.length, 1);
    await within(closed.promise);
  });

  it('reports an event whose object fails expectItem', async () => {
    routes.set('/prefix/w', (_req, res) => { streaming(res); res.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Foo' } })}\n`); });
    const w = await watch(client(), '/w', {}, (o) => (o.kind === 'Pod' ? undefined : 'expected kind Pod'));
    const err = await w.done;
    assert.ok(err instanceof UnexpectedResponseError && /expected kind Pod/.test(err.message));
    assert.equal(w.events.length, 0);
  });

  it('reports 200 text/html through done before watch() resolves', async () => {
    routes.set('/prefix/w', (_req, res) => { json(res, 200, '<!DOCTYPE html><p>maintenance</p>', 'text/html'); });
    let reported: unknown = 'not yet';
    await within(client().watch('/w', {}, () => undefined, (err) => { reported = err; }));
    assert.ok(reported instanceof UnexpectedResponseError);
    assert.equal(reported.contentType, 'text/html');
  });

  it('reports a non-200 answer with statusCode (and its Status) before watch() resolves', async () => {
    routes.set('/prefix/w', (_req, res) => { json(res, 410, status(410, 'Expired', 'too old resource version')); });
    let reported: unknown = 'not yet';
    await within(client().watch('/w', {}, () => undefined, (err) => { reported = err; }));
    assert.equal((reported as { statusCode?: number }).statusCode, 410);
    assert.ok(isGone(reported));
    routes.set('/prefix/w', (_req, res) => { json(res, 503, 'upstream unavailable', 'text/plain'); });
    await within(client().watch('/w', {}, () => undefined, (err) => { reported = err; }));
    assert.ok(reported instanceof UnexpectedResponseError && reported.statusCode === 503);
  });

  it('abort() ends the request and reports an AbortError once', async () => {
    const closed = Promise.withResolvers<undefined>();
    routes.set('/prefix/w', (req, res) => { req.socket.on('close', () => { closed.resolve(undefined); }); streaming(res); });
    const w = await watch(client(), '/w');
    w.controller.abort();
    assert.equal((await w.done as Error).name, 'AbortError');
    await within(closed.promise);
  });

  it('ends a silent watch with a TimeoutError (ListWatch reconnects on that name)', async () => {
    routes.set('/prefix/w', (_req, res) => { streaming(res); });
    const w = await watch(client({ watchIdleTimeoutMs: 150 }), '/w');
    assert.equal((await w.done as Error).name, 'TimeoutError');
  });

  it('drives client-node ListWatch: list, then watch events into its cache', async () => {
    routes.set('/prefix/api/v1/pods', (req, res) => {
      if (!(req.url ?? '').includes('watch=true')) { json(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [pod('a')] }); return; }
      streaming(res);
      res.write(`${JSON.stringify({ type: 'ADDED', object: pod('b') })}\n`);
    });
    const c = client();
    const lw = new ListWatch<KubernetesObject>('/api/v1/pods', c as unknown as Watch, () => c.request('GET', '/api/v1/pods'), false);
    const added = Promise.withResolvers<undefined>();
    lw.on('add', (o) => { if (o.metadata?.name === 'b') added.resolve(undefined); });
    await lw.start();
    await within(added.promise);
    assert.deepEqual(lw.list().map((o) => o.metadata?.name).sort(), ['a', 'b']);
    await lw.stop();
  });
});

describe('connections shared by the clients of one server', () => {
  it('clients of one server and CA share keep-alive connections, each sending its own token; another CA bundle gets its own', async () => {
    const tokens: string[] = [];
    routes.set('/prefix/x', (req, res) => { tokens.push(req.headers.authorization ?? ''); json(res, 200, { ok: true }); });
    const pool = new HttpsAgentPool();
    // One connection per server: both clients fit on it only if they share it.
    const a = client({ agentPool: pool, maxSockets: 1 });
    const b = client({ agentPool: pool, token: 'other-token', maxSockets: 1 });
    const before = connections;
    for (let i = 0; i < 3; i += 1) {
      await a.request('GET', '/x');
      await b.request('GET', '/x');
    }
    assert.equal(connections - before, 1, 'one connection for both clients');
    assert.deepEqual(tokens, Array.from({ length: 3 }, () => [`Bearer ${TOKEN}`, 'Bearer other-token']).flat());
    assert.equal(pool.size, 1);
    // The same trust written differently is another key: no connection verified against one
    // bundle is ever used by a client that asked for another.
    await client({ agentPool: pool, caPem: `${ca}\n`, maxSockets: 1 }).request('GET', '/x');
    assert.equal(connections - before, 2);
    assert.equal(pool.size, 2);
  });

  it("close() ends only that client's requests; the last client out closes the shared connections", async () => {
    const pool = new HttpsAgentPool();
    const a = client({ agentPool: pool });
    const b = client({ agentPool: pool });
    const socketClosed = Promise.withResolvers<undefined>();
    routes.set('/prefix/x', (req, res) => { req.socket.once('close', () => { socketClosed.resolve(undefined); }); json(res, 200, { ok: true }); });
    routes.set('/prefix/w', (_req, res) => { streaming(res); });
    const wa = await watch(a, '/w');
    const wb = await watch(b, '/w');
    await a.request('GET', '/x');
    b.close();
    assert.ok(await wb.done instanceof Error, "b's watch ended by its close()");
    await assert.rejects(b.request('GET', '/x'), /the client is closed/);
    assert.deepEqual(await a.request('GET', '/x'), { ok: true }, 'a still works on the shared connection');
    let aEnded = false;
    void wa.done.then(() => { aEnded = true; });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(aEnded, false, "a's watch is untouched");
    assert.equal(pool.size, 1);
    a.close();
    assert.equal(pool.size, 0);
    await within(socketClosed.promise);
    assert.ok(await wa.done instanceof Error);
  });

  it('watches hold sockets of their own: more watches than request slots never starve requests', async () => {
    routes.set('/prefix/w', (_req, res) => { streaming(res); });
    routes.set('/prefix/x', (_req, res) => { json(res, 200, { ok: true }); });
    const pool = new HttpsAgentPool();
    const watcher = client({ agentPool: pool, maxSockets: 2 });
    const watches = await Promise.all(Array.from({ length: 5 }, () => watch(watcher, '/w')));
    assert.deepEqual(await within(client({ agentPool: pool, maxSockets: 2 }).request('GET', '/x')), { ok: true });
    for (const w of watches) w.controller.abort();
    await Promise.all(watches.map((w) => w.done));
  });
});
