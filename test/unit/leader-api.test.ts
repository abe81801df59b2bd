// The leader API against a local HTTPS server playing the leader's API server: every answer
// must be what a Kubernetes API server sends for that call, or it is not believed.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import type { MemberClusterAnnounce, ResourceExport } from '../../src/common/api/antrea.js';
import { createLeaderApi, type LeaderApi } from '../../src/commonarea/leader-api.js';
import { isNotFound } from '../../src/common/kube/errors.js';
import { ApiError, UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { selfSignedLoopbackCert } from '../harness/pki.js';
import { waitFor } from '../harness/wait.js';

const NS = 'antrea-multicluster';
const NAME = 'member-announce-from-east';
const GV = 'multicluster.crd.antrea.io/v1alpha1';
const MCAS = `/prefix/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${NS}/memberclusterannounces`;
const RIS = `/prefix/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${NS}/resourceimports`;
const RES = `/prefix/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${NS}/resourceexports`;
const RE_NAME = 'east-default-nginx-service';

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

  it("close() keeps a connection other clients of the server share, and the last one out closes it", async () => {
    // The same trust written differently: a pool of their own, apart from the suite's `api`.
    const own = `${ca}\n`;
    const first = createLeaderApi({ server: base, caPem: own, token: 'tok', fingerprint: 'f' }, NS, 5000);
    const second = createLeaderApi({ server: base, caPem: own, token: 'tok2', fingerprint: 'g' }, NS, 5000);
    const sockets = new Set<Socket>();
    let closed = 0;
    routes.set(`GET ${MCAS}/${NAME}`, (req, res) => {
      if (!sockets.has(req.socket)) req.socket.once('close', () => { closed += 1; });
      sockets.add(req.socket);
      send(res, 200, mca());
    });
    await first.getAnnounce(NAME);
    await second.getAnnounce(NAME);
    first.close();
    await assert.rejects(first.getAnnounce(NAME), /the client is closed/);
    await second.getAnnounce(NAME);
    assert.equal(closed, 0, 'the shared connections outlive the first close()');
    second.close();
    await waitFor('the shared connections to close', () => closed === sockets.size, { timeoutMs: 5000, intervalMs: 10 });
  });
});

function re(name = RE_NAME, overrides: { kind?: string; namespace?: string; deletionTimestamp?: string } = {}): object {
  return {
    apiVersion: GV, kind: overrides.kind ?? 'ResourceExport',
    metadata: {
      name, namespace: overrides.namespace ?? NS, uid: 'u2', resourceVersion: '11', finalizers: ['resourceexport.antrea.io/finalizer'],
      ...(overrides.deletionTimestamp !== undefined && { deletionTimestamp: overrides.deletionTimestamp }),
    },
    spec: { clusterID: 'east', name: 'nginx', namespace: 'default', kind: 'Service' },
  };
}

const reBody: ResourceExport = {
  apiVersion: GV, kind: 'ResourceExport',
  metadata: { name: RE_NAME, namespace: NS, labels: { sourceClusterID: 'east', sourceKind: 'Service' }, finalizers: ['resourceexport.antrea.io/finalizer'] },
  spec: { clusterID: 'east', name: 'nginx', namespace: 'default', kind: 'Service', service: { serviceSpec: { ports: [{ port: 80, protocol: 'TCP' }] } } },
};

describe('LeaderApi ResourceExports', () => {
  it('lists with a label selector and validates the ResourceExportList', async () => {
    routes.set(`GET ${RES}`, (_q, res) => { send(res, 200, list([re('a'), re('b')], { resourceVersion: '12' }, 'ResourceExportList')); });
    const result = await api.listResourceExports('sourceClusterID=east,sourceKind in (Service,Endpoints)');
    assert.deepEqual(result.items.map((i) => i.metadata?.name), ['a', 'b']);
    const query = new URL(seen[0]?.url ?? '', 'https://x').searchParams;
    assert.equal(query.get('labelSelector'), 'sourceClusterID=east,sourceKind in (Service,Endpoints)');
    await api.listResourceExports('');
    assert.equal(seen[1]?.url, `${RES}?limit=500`, 'no labelSelector parameter for an empty selector; pages of 500');
  });

  const invalid: [string, unknown, RegExp][] = [
    ['a ResourceImportList', list([], { resourceVersion: '1' }), /expected kind ResourceExportList/],
    ['an item of another kind', list([re('a'), re('b', { kind: 'ResourceImport' })], { resourceVersion: '1' }, 'ResourceExportList'), /items\[1\]: expected kind ResourceExport /],
    ['an item of another namespace', list([re('a', { namespace: 'x' })], { resourceVersion: '1' }, 'ResourceExportList'), /items\[0\]: expected namespace/],
    ['no resourceVersion', list([], {}, 'ResourceExportList'), /ResourceExportList metadata\.resourceVersion/],
  ];
  for (const [what, answer, message] of invalid) {
    it(`rejects a list answer with ${what} (it must never look like "no exports")`, async () => {
      routes.set(`GET ${RES}`, (_q, res) => { send(res, 200, answer); });
      const err = await failure(api.listResourceExports('sourceClusterID=east'));
      assert.ok(err instanceof UnexpectedResponseError);
      assert.match(err.message, message);
    });
  }

  it('get/create/replace accept a ResourceExport of the requested name in the leader namespace', async () => {
    routes.set(`GET ${RES}/${RE_NAME}`, (_q, res) => { send(res, 200, re()); });
    routes.set(`POST ${RES}`, (_q, res) => { send(res, 201, re()); });
    routes.set(`PUT ${RES}/${RE_NAME}`, (_q, res) => { send(res, 200, re()); });
    assert.equal((await api.getResourceExport(RE_NAME)).spec?.clusterID, 'east');
    assert.equal((await api.createResourceExport(reBody)).metadata?.uid, 'u2');
    assert.equal((await api.replaceResourceExport({ ...reBody, metadata: { ...reBody.metadata, resourceVersion: '10' } })).metadata?.resourceVersion, '11');
    assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [`GET ${RES}/${RE_NAME}`, `POST ${RES}`, `PUT ${RES}/${RE_NAME}`]);
    assert.deepEqual(JSON.parse(seen[1]?.body ?? ''), reBody);
    assert.equal((JSON.parse(seen[2]?.body ?? '') as ResourceExport).metadata?.resourceVersion, '10');
  });

  it('rejects answers of another name, kind or namespace, and HTML', async () => {
    const answers: [unknown, string, RegExp][] = [
      [re('east-default-other-service'), 'application/json', /expected ResourceExport "east-default-nginx-service", got "east-default-other-service"/],
      [re(RE_NAME, { kind: 'ResourceImport' }), 'application/json', /expected kind ResourceExport \(multicluster\.crd\.antrea\.io\/v1alpha1\), got kind "ResourceImport"/],
      [re(RE_NAME, { namespace: 'elsewhere' }), 'application/json', /expected namespace "antrea-multicluster"/],
      ['<html>maintenance</html>', 'text/html', /expected application\/json/],
    ];
    for (const [answer, type, message] of answers) {
      routes.set(`GET ${RES}/${RE_NAME}`, (_q, res) => { send(res, 200, answer, type); });
      routes.set(`POST ${RES}`, (_q, res) => { send(res, 201, answer, type); });
      routes.set(`PUT ${RES}/${RE_NAME}`, (_q, res) => { send(res, 200, answer, type); });
      for (const call of [api.getResourceExport(RE_NAME), api.createResourceExport(reBody), api.replaceResourceExport(reBody)]) {
        const err = await failure(call);
        assert.ok(err instanceof UnexpectedResponseError, String(err));
        assert.match(err.message, message);
      }
    }
  });

  it('refuses to send a ResourceExport without a name', async () => {
    await assert.rejects(api.createResourceExport({ ...reBody, metadata: {} }), /a ResourceExport needs metadata\.name/);
    await assert.rejects(api.replaceResourceExport({ ...reBody, metadata: { name: '' } }), TypeError);
    assert.equal(seen.length, 0);
  });

  it('passes Kubernetes errors (NotFound, AlreadyExists, Conflict) through as ApiErrors', async () => {
    const status = (code: number, reason: string): object => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message: reason, code });
    routes.set(`GET ${RES}/${RE_NAME}`, (_q, res) => { send(res, 404, status(404, 'NotFound')); });
    routes.set(`POST ${RES}`, (_q, res) => { send(res, 409, status(409, 'AlreadyExists')); });
    routes.set(`PUT ${RES}/${RE_NAME}`, (_q, res) => { send(res, 409, status(409, 'Conflict')); });
    const notFound = await failure(api.getResourceExport(RE_NAME));
    assert.ok(notFound instanceof ApiError && isNotFound(notFound));
    for (const [call, reason] of [[api.createResourceExport(reBody), 'AlreadyExists'], [api.replaceResourceExport(reBody), 'Conflict']] as const) {
      const err = await failure(call);
      assert.ok(err instanceof ApiError && err.statusCode === 409, String(err));
      assert.match(err.message, new RegExp(reason));
    }
  });

  it('deletes with a uid precondition, accepting a Success Status or the object its finalizer keeps', async () => {
    routes.set(`DELETE ${RES}/${RE_NAME}`, (_q, res) => { send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: RE_NAME } }); });
    await api.deleteResourceExport(RE_NAME, 'u2');
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'u2' } });
    routes.set(`DELETE ${RES}/${RE_NAME}`, (_q, res) => { send(res, 202, re(RE_NAME, { deletionTimestamp: '2026-01-01T00:00:00Z' })); });
    await api.deleteResourceExport(RE_NAME);
    assert.equal(seen[1]?.body, '', 'no body without a uid');
  });

  it('rejects a delete answered with anything else', async () => {
    for (const answer of [{ kind: 'Status', apiVersion: 'v1', status: 'Failure' }, re('other'), mca({ name: RE_NAME })]) {
      routes.set(`DELETE ${RES}/${RE_NAME}`, (_q, res) => { send(res, 200, answer); });
      assert.ok(await failure(api.deleteResourceExport(RE_NAME)) instanceof UnexpectedResponseError);
    }
  });
});
