// The importer's JSON client against a real local HTTPS server (throwaway self-signed
// certificate), authenticated from a KubeConfig whose token lives in a file: answers are
// validated, errors carry the Status, the token never leaks, and authentication (which reads
// files) is redone only after AUTH_REUSE_MS or a 401.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { isAlreadyExists } from '../../src/common/kube/errors.js';
import { AUTH_REUSE_MS, createJsonClient, Deadlines } from '../../src/common/kube/json-client.js';
import { ApiError, UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { shareConnections } from '../../src/common/kube/shared-connections.js';
import { selfSignedLoopbackCert } from '../harness/pki.js';

let server: https.Server;
let kc: KubeConfig;
let tokenFile: string;
const seen: { method: string; url: string; authorization: string; accept: string; contentType: string; body: string }[] = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;

before(async () => {
  const tls = selfSignedLoopbackCert();
  server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization ?? '', accept: req.headers.accept ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString() });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(path.join(tmpdir(), 'json-client-'));
  tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, 'first-token-0123456789');
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`, caData: Buffer.from(tls.cert).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'u', authProvider: { name: 'tokenFile', config: { tokenFile } } }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  shareConnections(kc);
});
after(() => { server.closeAllConnections(); server.close(); });

const reply = (code: number, body: unknown, type = 'application/json') => { answer = (_req, res) => { res.writeHead(code, { 'content-type': type }); res.end(typeof body === 'string' ? body : JSON.stringify(body)); }; };

describe('createJsonClient', () => {
  it("asks for PartialObjectMetadata when made for metadata (lists and watches), whole objects otherwise", async () => {
    reply(200, { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'a', namespace: 'ns' } }] }, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1');
    const list = await createJsonClient(kc, { who: 'member', answers: 'metadata' }).request('GET', '/api/v1/endpoints');
    assert.deepEqual(list['items'], [{ metadata: { name: 'a', namespace: 'ns' } }]);
    assert.equal(seen.at(-1)?.accept, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1');
    reply(200, { kind: 'EndpointsList', items: [] });
    await createJsonClient(kc, { who: 'member' }).request('GET', '/api/v1/endpoints');
    assert.equal(seen.at(-1)?.accept, 'application/json');
  });

  it('sends JSON with the kubeconfig token and returns the answer as plain JSON', async () => {
    reply(201, { kind: 'Service', metadata: { name: 'a', creationTimestamp: '2026-01-01T00:00:00Z' } });
    const body = await createJsonClient(kc, { who: 'member' }).request('POST', '/api/v1/namespaces/ns/services', { body: { kind: 'Service' }, query: { fieldManager: 'x' } });
    assert.deepEqual(body, { kind: 'Service', metadata: { name: 'a', creationTimestamp: '2026-01-01T00:00:00Z' } }, 'timestamps stay strings: no model classes');
    const last = seen.at(-1);
    assert.deepEqual([last?.method, last?.url, last?.authorization, last?.body], ['POST', '/api/v1/namespaces/ns/services?fieldManager=x', 'Bearer first-token-0123456789', '{"kind":"Service"}']);
  });

  it('throws the Status of an error answer as an ApiError the error helpers read', async () => {
    reply(409, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'AlreadyExists', code: 409, message: 'services "a" already exists' });
    const err = await createJsonClient(kc, { who: 'member' }).request('POST', '/api/v1/namespaces/ns/services', { body: {} }).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 409);
    assert.equal(isAlreadyExists(err), true);
  });

  it("names its creator in the errors that say where: a leader's request never reads as a member's", async () => {
    reply(502, 'bad gateway', 'text/plain');
    const err = await createJsonClient(kc, { who: 'leader' }).request('GET', '/apis/x/v1/things').catch((e: unknown) => e);
    assert.ok(err instanceof UnexpectedResponseError);
    assert.match(err.message, /^leader GET \/apis\/x\/v1\/things answered 502/);
    answer = () => undefined; // never answers
    const slow = await createJsonClient(kc, { who: 'join (leader)', timeoutMs: 50 }).request('GET', '/apis/x/v1/things').catch((e: unknown) => e);
    assert.match(String(slow), /join \(leader\) GET \/apis\/x\/v1\/things did not complete within 50 ms/);
  });

  it("fails a 2xx answer its caller's expectation refuses, with the status and a snippet", async () => {
    reply(201, { kind: 'Status', status: 'Success' });
    const err = await createJsonClient(kc, { who: 'member' }).request('POST', '/api/v1/namespaces/ns/secrets', {
      body: {}, expect: (answer) => (answer['kind'] === 'Secret' ? undefined : `expected kind Secret, got ${JSON.stringify(answer['kind'])}`),
    }).catch((e: unknown) => e);
    assert.ok(err instanceof UnexpectedResponseError);
    assert.equal(err.statusCode, 201);
    assert.match(err.message, /^member POST \/api\/v1\/namespaces\/ns\/secrets answered 201 .*expected kind Secret, got "Status"/);
    reply(201, { kind: 'Secret' });
    assert.deepEqual(await createJsonClient(kc, { who: 'member' }).request('POST', '/api/v1/namespaces/ns/secrets', { body: {}, expect: () => undefined }), { kind: 'Secret' });
  });

  it('refuses a kubeconfig without a current cluster at once, which no retry would mend', () => {
    assert.throws(() => createJsonClient(new KubeConfig(), { who: 'leader' }), /^Error: leader: the kubeconfig has no current cluster/);
  });

  it('sends a PATCH as a JSON patch, and ends a request when its signal aborts', async () => {
    reply(200, { kind: 'Event', metadata: { name: 'e' } });
    await createJsonClient(kc, { who: 'member' }).request('PATCH', '/api/v1/namespaces/ns/events/e', { body: [{ op: 'replace', path: '/count', value: 2 }] });
    assert.deepEqual([seen.at(-1)?.method, seen.at(-1)?.body, seen.at(-1)?.contentType], ['PATCH', '[{"op":"replace","path":"/count","value":2}]', 'application/json-patch+json']);
    answer = () => undefined; // never answers
    const controller = new AbortController();
    const pending = createJsonClient(kc, { who: 'member' }).request('GET', '/api/v1/namespaces/ns/events/slow', { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error('stopping'));
    const err = await pending;
    assert.ok(err instanceof Error);
    assert.match(String(err), /stopping/);
  });

  it('refuses answers no API server would send, without leaking the token', async () => {
    reply(200, '<html>maintenance first-token-0123456789</html>', 'text/html');
    const html = await createJsonClient(kc, { who: 'member' }).request('GET', '/api/v1/namespaces/ns/services/a').catch((e: unknown) => e);
    assert.ok(html instanceof UnexpectedResponseError);
    assert.match(html.message, /expected application\/json/);
    assert.ok(!inspect(html, { depth: 5 }).includes('first-token-0123456789'), 'the token is redacted from the snippet');
    reply(200, '[1,2]');
    assert.ok(await createJsonClient(kc, { who: 'member' }).request('GET', '/x').catch((e: unknown) => e) instanceof UnexpectedResponseError);
    reply(502, 'bad gateway', 'text/plain');
    const gateway = await createJsonClient(kc, { who: 'member' }).request('GET', '/x').catch((e: unknown) => e);
    assert.ok(gateway instanceof UnexpectedResponseError && gateway.statusCode === 502);
  });

  it('authenticates again only after AUTH_REUSE_MS, or at once after a 401', async () => {
    // client-node re-reads CA and certificate files on every authentication; count them.
    let authentications = 0;
    const original = kc.applyToHTTPSOptions.bind(kc);
    kc.applyToHTTPSOptions = (opts) => { authentications += 1; return original(opts); };
    try {
      let t = 0;
      const client = createJsonClient(kc, { who: 'member', timeoutMs: 5000, now: () => t });
      reply(200, { kind: 'Service' });
      await Promise.all([client.request('GET', '/a'), client.request('GET', '/b')]);
      await client.request('GET', '/c');
      assert.equal(authentications, 1, 'concurrent and later requests within the period share one');
      t += AUTH_REUSE_MS;
      await client.request('GET', '/d');
      assert.equal(authentications, 2, 'again after the period');
      reply(401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 });
      await assert.rejects(client.request('GET', '/e'), (e: unknown) => e instanceof ApiError && e.code === 401);
      reply(200, { kind: 'Service' });
      await client.request('GET', '/f');
      assert.equal(authentications, 3, 'a 401 drops it at once');
    } finally {
      kc.applyToHTTPSOptions = original;
    }
  });

  it('puts each path under the server URL\'s path prefix and encodes the query as URLSearchParams does', async () => {
    // Paths and queries are strings handed to the dispatcher, no URL object parsed per request.
    const prefixed = new KubeConfig();
    const cluster = kc.getCurrentCluster();
    prefixed.loadFromOptions({
      clusters: [{ name: 'c', server: `${cluster?.server ?? ''}/some/prefix/`, caData: cluster?.caData ?? '', skipTLSVerify: false }],
      users: [{ name: 'u', authProvider: { name: 'tokenFile', config: { tokenFile } } }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    shareConnections(prefixed);
    reply(200, { kind: 'EndpointsList', items: [] });
    await createJsonClient(prefixed, { who: 'member' }).request('GET', '/api/v1/namespaces/n%20s/endpoints', { query: { labelSelector: 'a=b,c in (x y)', limit: 5, continue: undefined, watch: false } });
    assert.equal(seen.at(-1)?.url, '/some/prefix/api/v1/namespaces/n%20s/endpoints?labelSelector=a%3Db%2Cc+in+%28x+y%29&limit=5&watch=false');
    await createJsonClient(prefixed, { who: 'member' }).request('DELETE', '/api/v1/namespaces/ns/endpoints/a', { query: {} });
    assert.equal(seen.at(-1)?.url, '/some/prefix/api/v1/namespaces/ns/endpoints/a', 'no "?" without a value');
  });

  it('aborts a request that has no whole answer within its timeout, with a TimeoutError', async () => {
    answer = () => undefined; // never answers
    const started = performance.now();
    const err = await createJsonClient(kc, { who: 'member', timeoutMs: 300 }).request('GET', '/api/v1/namespaces/ns/services/slow').catch((e: unknown) => e);
    assert.equal((err as Error | undefined)?.name, 'TimeoutError', String(err));
    assert.match((err as Error).message, /member GET \/api\/v1\/namespaces\/ns\/services\/slow did not complete within 300 ms/);
    assert.ok(performance.now() - started < 5_000);
  });
});

describe('Deadlines', () => {
  it('aborts what is past its deadline at a sweep, leaves the rest, and stops its timer when nothing is in flight', () => {
    let t = 0;
    const deadlines = new Deadlines(1_000, () => t);
    const slow = deadlines.start(100, 'slow');
    const fast = deadlines.start(50, 'fast');
    const answered = deadlines.start(50, 'answered');
    deadlines.done(answered);
    t = 99;
    deadlines.sweep();
    assert.deepEqual([slow.signal.aborted, fast.signal.aborted, answered.signal.aborted], [false, true, false]);
    assert.equal((fast.signal.reason as DOMException).name, 'TimeoutError');
    assert.equal((fast.signal.reason as DOMException).message, 'fast did not complete within 50 ms');
    t = 100;
    deadlines.sweep();
    assert.equal(slow.signal.aborted, true);
    assert.equal(deadlines.size, 0);
  });
});
