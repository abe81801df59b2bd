// The leader API against a local HTTPS server playing the leader's API server: every answer
// must be what a Kubernetes API server sends for that call, or it is not believed.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import type { MemberClusterAnnounce } from '../../src/api/types.js';
import { createLeaderApi, type LeaderApi } from '../../src/commonarea/leader-api.js';
import { isNotFound } from '../../src/kube/errors.js';
import { ApiError, UnexpectedResponseError } from '../../src/kube/rest-client.js';
import { selfSignedLoopbackCert } from '../harness/pki.js';

const NS = 'antrea-multicluster';
const NAME = 'member-announce-from-east';
const GV = 'multicluster.crd.antrea.io/v1alpha1';
const MCAS = `/prefix/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${NS}/memberclusterannounces`;
const RIS = `/prefix/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${NS}/resourceimports`;

interface Seen { method: string; url: string; body: string }
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Handler>();
const seen: Seen[] = [];
let server: https.Server;
let ca: string;
let base: string;
let api: LeaderApi;

function send(res: ServerResponse, code: number, body: unknown, type = 'application/json'): void {
  res.writeHead(code, { 'content-type': type });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function mca(overrides: { kind?: string; apiVersion?: string; name?: string; namespace?: string } = {}): object {
  return {
    apiVersion: overrides.apiVersion ?? GV, kind: overrides.kind ?? 'MemberClusterAnnounce',
    metadata: { name: overrides.name ?? NAME, namespace: overrides.namespace ?? NS, uid: 'u1', resourceVersion: '7' }, clusterID: 'east',
  };
}

function ri(name: string, overrides: { kind?: string; namespace?: string } = {}): object {
  return { apiVersion: GV, kind: overrides.kind ?? 'ResourceImport', metadata: { name, namespace: overrides.namespace ?? NS, resourceVersion: '3' }, spec: {} };
}

function list(items: unknown, metadata: unknown = { resourceVersion: '9' }, kind = 'ResourceImportList'): object {
  return { apiVersion: GV, kind, metadata, items };
}

const body: MemberClusterAnnounce = { apiVersion: GV, kind: 'MemberClusterAnnounce', metadata: { name: NAME }, clusterID: 'east' };

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => assert.fail('expected a rejection'), (e: unknown) => e);
}

function within<T>(promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`not settled within ${String(ms)} ms`)); }, ms);
  })]).finally(() => { clearTimeout(timer); });
}

before(() => {
  const tls = selfSignedLoopbackCert();
  ca = tls.cert;
  server = https.createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      seen.push({ method: req.method ?? '', url, body: Buffer.concat(chunks).toString('utf8') });
      const route = routes.get(`${req.method ?? ''} ${url.split('?')[0] ?? ''}`);
      if (route) route(req, res);
      else send(res, 500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', message: 'no route', code: 500 });
    });
  });
  return new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => {
    base = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}/prefix`;
    api = createLeaderApi({ server: base, caPem: ca, token: 'tok', fingerprint: 'f' }, NS, 5000);
    resolve();
  }));
});

afterEach(() => {
  routes.clear();
  seen.length = 0;
});

after(async () => {
  api.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('LeaderApi announces', () => {
  it('get/create/replace accept a MemberClusterAnnounce of the requested name in the leader namespace', async () => {
    routes.set(`GET ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, mca()); });
    routes.set(`POST ${MCAS}`, (_q, res) => { send(res, 201, mca()); });
    routes.set(`PUT ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, mca()); });
    assert.equal((await api.getAnnounce(NAME)).clusterID, 'east');
    assert.equal((await api.createAnnounce(body)).metadata?.uid, 'u1');
    assert.equal((await api.replaceAnnounce(body)).metadata?.resourceVersion, '7');
    assert.deepEqual(seen.map((s) => s.method), ['GET', 'POST', 'PUT']);
    assert.deepEqual(JSON.parse(seen[1]?.body ?? ''), body);
  });

  it('rejects a 200 text/html answer to a heartbeat (a maintenance page is not a heartbeat)', async () => {
    routes.set(`PUT ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, '<!DOCTYPE html><title>Down for maintenance</title>', 'text/html'); });
    const err = await failure(api.replaceAnnounce(body));
    assert.ok(err instanceof UnexpectedResponseError && err.statusCode === 200 && err.contentType === 'text/html');
  });

  const wrong: [string, object, RegExp][] = [
    ['another kind', mca({ kind: 'Foo', apiVersion: 'v1' }), /expected kind MemberClusterAnnounce \(multicluster\.crd\.antrea\.io\/v1alpha1\), got kind "Foo" apiVersion "v1"/],
    ['another apiVersion', mca({ apiVersion: 'multicluster.crd.antrea.io/v1alpha2' }), /got kind "MemberClusterAnnounce" apiVersion "multicluster\.crd\.antrea\.io\/v1alpha2"/],
    ['another name', mca({ name: 'member-announce-from-west' }), /expected MemberClusterAnnounce "member-announce-from-east", got "member-announce-from-west"/],
    ['another namespace', mca({ namespace: 'elsewhere' }), /expected namespace "antrea-multicluster"/],
    ['no metadata', { apiVersion: GV, kind: 'MemberClusterAnnounce' }, /expected MemberClusterAnnounce metadata\.name/],
  ];
  for (const [what, answer, message] of wrong) {
    it(`rejects an announce answer with ${what}`, async () => {
      routes.set(`GET ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, answer); });
      routes.set(`PUT ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, answer); });
      for (const call of [api.getAnnounce(NAME), api.replaceAnnounce(body)]) {
        const err = await failure(call);
        assert.ok(err instanceof UnexpectedResponseError, String(err));
        assert.match(err.message, message);
      }
    });
  }

  it('passes a Kubernetes NotFound through as an ApiError', async () => {
    routes.set(`GET ${MCAS}/${NAME}`, (_q, res) => {
      send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', message: 'not found', code: 404, details: { name: NAME, kind: 'memberclusterannounces' } });
    });
    const err = await failure(api.getAnnounce(NAME));
    assert.ok(err instanceof ApiError && isNotFound(err));
  });

  it('deletes with a uid precondition, accepting a Success Status or the (finalizing) object', async () => {
    routes.set(`DELETE ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: NAME } }); });
    await api.deleteAnnounce(NAME, 'u1');
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'u1' } });
    routes.set(`DELETE ${MCAS}/${NAME}`, (_q, res) => { send(res, 202, mca()); });
    await api.deleteAnnounce(NAME);
    assert.equal(seen[1]?.body, '', 'no body without a uid');
  });

  it('rejects a delete answered with anything else', async () => {
    const answers: unknown[] = [
      { kind: 'Status', apiVersion: 'v1', status: 'Failure' },
      { kind: 'Foo', apiVersion: 'v1', metadata: { name: NAME } },
      mca({ name: 'other' }),
    ];
    for (const answer of answers) {
      routes.set(`DELETE ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, answer); });
      assert.ok(await failure(api.deleteAnnounce(NAME)) instanceof UnexpectedResponseError);
    }
    routes.set(`DELETE ${MCAS}/${NAME}`, (_q, res) => { send(res, 200, 'OK', 'text/plain'); });
    assert.ok(await failure(api.deleteAnnounce(NAME)) instanceof UnexpectedResponseError);
  });
});

describe('LeaderApi ResourceImports', () => {
  it('lists a valid ResourceImportList', async () => {
    routes.set(`GET ${RIS}`, (_q, res) => { send(res, 200, list([ri('a'), ri('b')])); });
    const result = await api.listResourceImports();
    assert.deepEqual(result.items.map((i) => i.metadata?.name), ['a', 'b']);
    assert.equal(result.metadata?.resourceVersion, '9');
    assert.equal(api.resourceImportsPath, RIS.slice('/prefix'.length));
  });

  const invalid: [string, unknown, string, RegExp][] = [
    ['HTML', '<html><body>maintenance</body></html>', 'text/html', /expected application\/json/],
    ['another list kind', list([], { resourceVersion: '1' }, 'PodList'), 'application/json', /expected kind ResourceImportList/],
    ['no resourceVersion', list([], {}), 'application/json', /metadata\.resourceVersion/],
    ['items not an array', list(null), 'application/json', /items to be an array/],
    ['an item of another kind', list([ri('a'), ri('b', { kind: 'Pod' })]), 'application/json', /items\[1\]: expected kind ResourceImport/],
    ['an item of another namespace', list([ri('a', { namespace: 'x' })]), 'application/json', /items\[0\]: expected namespace/],
  ];
  for (const [what, answer, type, message] of invalid) {
    it(`rejects a list answer with ${what} (it must never look like "no imports")`, async () => {
      routes.set(`GET ${RIS}`, (_q, res) => { send(res, 200, answer, type); });
      const err = await failure(api.listResourceImports());
      assert.ok(err instanceof UnexpectedResponseError);
      assert.match(err.message, message);
    });
  }

  it('watches ResourceImports and rejects an event object that is not one', async () => {
    let url = '';
    routes.set(`GET ${RIS}`, (req, res) => {
      url = req.url ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: ri('a') })}\n`);
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { apiVersion: GV, kind: 'ResourceImport', metadata: { resourceVersion: '10' } } })}\n`);
      res.write(`${JSON.stringify({ type: 'MODIFIED', object: ri('z', { kind: 'ConfigMap' }) })}\n`);
    });
    const events: string[] = [];
    const done = Promise.withResolvers<unknown>();
    await within(api.watch.watch(api.resourceImportsPath, { resourceVersion: '9' }, (type: string) => { events.push(type); }, (err: unknown) => { done.resolve(err); }));
    const err = await within(done.promise);
    assert.match(url, /resourceVersion=9/);
    assert.match(url, /watch=true/);
    assert.deepEqual(events, ['ADDED', 'BOOKMARK']);
    assert.ok(err instanceof UnexpectedResponseError);
    assert.match(err.message, /expected kind ResourceImport .*got kind "ConfigMap"/);
  });

  it('close() closes the kept-alive connection', async () => {
    const other = createLeaderApi({ server: base, caPem: ca, token: 'tok', fingerprint: 'f' }, NS, 5000);
    const closed = Promise.withResolvers<undefined>();
    routes.set(`GET ${MCAS}/${NAME}`, (req, res) => { req.socket.once('close', () => { closed.resolve(undefined); }); send(res, 200, mca()); });
    await other.getAnnounce(NAME);
    other.close();
    await within(closed.promise);
  });
});
