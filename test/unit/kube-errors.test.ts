// Error shapes are taken from the real client: requests go through client-node 2.0.1 to a
// loopback HTTP server. TLS failures need a certificate, so they use objects shaped like what
// undici produced against a self-signed server (TypeError 'fetch failed' whose cause carries
// the OpenSSL code).
import assert from 'node:assert/strict';
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApiException, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import {
  apiStatus,
  describeError,
  httpStatus,
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  isTlsVerificationError,
  networkErrorCode,
} from '../../src/common/kube/errors.js';

const TOKEN = 'sa-token-must-not-leak';

function status(code: number, reason: string, message: string, details?: object): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code });
}

const routes: Record<string, { code: number; body: string; type?: string }> = {
  '/api/v1/namespaces/ns/pods/missing': { code: 404, body: status(404, 'NotFound', 'pods "missing" not found', { name: 'missing', kind: 'pods' }) },
  '/api/v1/namespaces/ns/pods/stale': {
    code: 409,
    body: status(409, 'Conflict', 'Operation cannot be fulfilled on pods "stale": the object has been modified', { name: 'stale', kind: 'pods' }),
  },
  '/api/v1/namespaces/ns/pods/taken': { code: 409, body: status(409, 'AlreadyExists', 'pods "taken" already exists', { name: 'taken', kind: 'pods' }) },
  '/api/v1/namespaces/ns/pods/unauthorized': { code: 401, body: status(401, 'Unauthorized', 'Unauthorized') },
  '/api/v1/namespaces/ns/pods/proxy': { code: 502, body: '<html>bad gateway</html>', type: 'text/html' },
  '/api/v1/namespaces/ns/pods/bare404': { code: 404, body: '404 page not found', type: 'text/plain' },
};

let server: http.Server;
let core: CoreV1Api;
let kc: KubeConfig;
let closedPort: number;
const seenAuthorization: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    seenAuthorization.push(req.headers.authorization ?? '');
    const path = (req.url ?? '').split('?')[0] ?? '';
    if ((req.url ?? '').includes('watch=true')) {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(status(410, 'Expired', 'too old resource version'));
      return;
    }
    const route = routes[path] ?? { code: 500, body: '{}' };
    // A response header with a credential-looking value: ApiException.message embeds response headers.
    res.writeHead(route.code, { 'content-type': route.type ?? 'application/json', 'x-debug-echo': `Bearer ${TOKEN}` });
    res.end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  kc = kubeConfig(`http://127.0.0.1:${port}`);
  core = kc.makeApiClient(CoreV1Api);

  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function kubeConfig(server: string): KubeConfig {
  const config = new KubeConfig();
  // Distinct user names: client-node caches credentials by user name.
  config.loadFromClusterAndUser({ name: server, server, skipTLSVerify: true }, { name: `user-${server}`, token: TOKEN });
  return config;
}

async function readPodError(name: string, api = core): Promise<unknown> {
  try {
    await api.readNamespacedPod({ name, namespace: 'ns' });
  } catch (err) {
    return err;
  }
  assert.fail(`reading pod ${name} did not fail`);
}

describe('kube errors against client-node 2.0.1', () => {
  it('404 NotFound: status, parsed Status from a string body, isNotFound', async () => {
    const err = await readPodError('missing');
    assert.ok(err instanceof ApiException);
    assert.equal(typeof err.body, 'string', 'client-node 2.0.1 keeps the raw response text');
    assert.equal(httpStatus(err), 404);
    assert.deepEqual(apiStatus(err), {
      reason: 'NotFound',
      message: 'pods "missing" not found',
      code: 404,
      details: { kind: 'pods', name: 'missing' },
    });
    assert.equal(isNotFound(err), true);
    assert.equal(isConflict(err), false);
    assert.equal(isGone(err), false);
    assert.equal(networkErrorCode(err), undefined);
    assert.equal(describeError(err), 'HTTP 404 NotFound: pods "missing" not found');
  });

  it('409 Conflict and 409 AlreadyExists are told apart by reason', async () => {
    const stale = await readPodError('stale');
    const taken = await readPodError('taken');
    assert.equal(httpStatus(stale), 409);
    assert.equal(httpStatus(taken), 409);
    assert.equal(isConflict(stale), true);
    assert.equal(isAlreadyExists(stale), false);
    assert.equal(isConflict(taken), false);
    assert.equal(isAlreadyExists(taken), true);
  });

  it('401 has no body in 2.0.1 but still has a status', async () => {
    const err = await readPodError('unauthorized');
    assert.ok(err instanceof ApiException);
    assert.equal(err.body, undefined);
    assert.equal(httpStatus(err), 401);
    assert.equal(apiStatus(err), undefined);
    assert.equal(describeError(err), 'HTTP 401 Unauthorized');
  });

  it('a non-JSON body (proxy error page) yields no Status', async () => {
    const err = await readPodError('proxy');
    assert.equal(httpStatus(err), 502);
    assert.equal(apiStatus(err), undefined);
    assert.equal(describeError(err), 'HTTP 502 Bad Gateway');
  });

  it('a bare 404 without a Status counts as NotFound (client-go semantics)', async () => {
    const err = await readPodError('bare404');
    assert.equal(isNotFound(err), true);
    assert.equal(apiStatus(err), undefined);
  });

  it('describeError never includes the headers, body dump or token from ApiException.message', async () => {
    const err = await readPodError('stale');
    assert.ok(err instanceof Error);
    assert.match(err.message, /Headers:/, 'precondition: the raw message embeds response headers');
    assert.ok(err.message.includes(TOKEN), 'precondition: the echoed header reaches ApiException.message');
    const line = describeError(err);
    assert.ok(!line.includes(TOKEN));
    assert.ok(!line.includes('Headers'));
    assert.ok(!line.includes('\n'));
    assert.ok(seenAuthorization.includes(`Bearer ${TOKEN}`), 'precondition: the token was really sent');
  });

  it('a watch answered with HTTP 410 reports statusCode 410 to done', async () => {
    const done = Promise.withResolvers<unknown>();
    await new Watch(kc).watch('/api/v1/pods', {}, () => undefined, (err: unknown) => {
      done.resolve(err);
    });
    const err = await done.promise;
    assert.equal(httpStatus(err), 410);
    assert.equal(isGone(err), true);
    assert.equal(describeError(err), 'HTTP 410 Gone');
  });

  it('a watch ERROR event Status (410 Expired) is recognised', () => {
    const event = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', message: 'too old resource version: 1 (5)', code: 410 };
    assert.equal(isGone(event), true);
    assert.equal(apiStatus(event)?.reason, 'Expired');
  });

  it('connection refused: undici TypeError with the Node error as cause', async () => {
    const err = await readPodError('x', kubeConfig(`http://127.0.0.1:${closedPort}`).makeApiClient(CoreV1Api));
    assert.ok(err instanceof TypeError);
    assert.equal(err.message, 'fetch failed');
    assert.equal(httpStatus(err), undefined);
    assert.equal(networkErrorCode(err), 'ECONNREFUSED');
    assert.equal(isTlsVerificationError(err), false);
    assert.equal(describeError(err), `fetch failed: connect ECONNREFUSED 127.0.0.1:${closedPort}`);
  });

  it('connection refused on a watch goes to done with the same shape', async () => {
    const done = Promise.withResolvers<unknown>();
    await new Watch(kubeConfig(`http://127.0.0.1:${closedPort}`)).watch('/api/v1/pods', {}, () => undefined, (err: unknown) => {
      done.resolve(err);
    });
    assert.equal(networkErrorCode(await done.promise), 'ECONNREFUSED');
  });
});

describe('kube errors: shapes built by hand', () => {
  const tls = (code: string, message: string, extra: object = {}): TypeError =>
    new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }, extra) });

  it('isTlsVerificationError() - recognises certificate verification codes under the fetch wrapper', () => {
    for (const code of [
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'CERT_HAS_EXPIRED',
    ]) {
      const err = tls(code, 'tls failure');
      assert.equal(isTlsVerificationError(err), true, code);
      assert.equal(networkErrorCode(err), code);
    }
    assert.equal(isTlsVerificationError(tls('ECONNRESET', 'socket hang up')), false);
    assert.equal(isTlsVerificationError(new Error('plain')), false);
  });

  it('describeError() - names the TLS code and leaves out the peer certificate', () => {
    const err = tls('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames: IP: 10.0.0.1 is not in the cert's list: ", {
      cert: { subject: { CN: 'kubernetes' }, raw: Buffer.from('certificate-bytes') },
    });
    const line = describeError(err);
    assert.match(line, /^fetch failed: Hostname\/IP does not match .* \(ERR_TLS_CERT_ALTNAME_INVALID\)$/);
    assert.ok(!line.includes('certificate-bytes'));
  });

  it('follows .cause through errors wrapped with context', () => {
    const inner = new ApiException(409, 'Unknown API Status Code!', status(409, 'Conflict', 'object was modified'), {});
    const wrapped = new Error('updating MemberClusterAnnounce', { cause: inner });
    assert.equal(httpStatus(wrapped), 409);
    assert.equal(isConflict(wrapped), true);
    assert.equal(describeError(wrapped), 'updating MemberClusterAnnounce: HTTP 409 Conflict: object was modified');
    const network = new Error('renewing lease', { cause: tls('ECONNRESET', 'read ECONNRESET') });
    assert.equal(networkErrorCode(network), 'ECONNRESET');
  });

  it('apiStatus() - accepts a Status object body (client-node log/metrics helpers)', () => {
    const err = new ApiException(500, 'boom', { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd down', details: { group: 'apps' } }, {});
    assert.deepEqual(apiStatus(err), { reason: 'InternalError', message: 'etcd down', code: 500, details: { group: 'apps' } });
  });

  it('networkErrorCode() - reads the first error of an AggregateError (happy eyeballs)', () => {
    const agg = new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:6443'), { code: 'ECONNREFUSED' })], 'all failed');
    assert.equal(networkErrorCode(new TypeError('fetch failed', { cause: agg })), 'ECONNREFUSED');
  });

  it('httpStatus() - ignores the numeric code of a DOMException', () => {
    const abort = new DOMException('This operation was aborted', 'AbortError');
    assert.equal(httpStatus(abort), undefined);
    assert.equal(describeError(abort), 'AbortError: This operation was aborted');
  });

  it('describeError() - masks bearer tokens, JWTs and URL credentials a library copied into a message', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl';
    const err = new Error(`request failed: {"Authorization":"Bearer ${TOKEN}"} token ${jwt} https://admin:hunter2@10.0.0.1:6443/api?token=abc`);
    const line = describeError(err);
    for (const secret of [TOKEN, jwt, 'hunter2', 'token=abc']) {
      assert.ok(!line.includes(secret), `${secret} leaked into: ${line}`);
    }
    assert.match(line, /\[REDACTED\]/);
  });

  it('describeError() - one line, bounded length, and something for non-errors', () => {
    const line = describeError(new Error(`first\nsecond ${'x'.repeat(5000)}`));
    assert.ok(!line.includes('\n'));
    assert.ok(line.length <= 1000);
    assert.equal(describeError('just a string'), 'just a string');
    assert.equal(describeError({ code: 'EPIPE' }), 'EPIPE');
    assert.equal(describeError({}), 'unknown error');
  });
});
