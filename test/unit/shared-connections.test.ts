// Connection reuse for the agents' requests (typed-api.ts over the JSON client), through
// client-node's public API only (no patched methods): against a real local HTTPS server with a
// throwaway certificate.
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { ClientBudget } from '../../src/common/kube/client-budget.js';
import { createJsonClient } from '../../src/common/kube/json-client.js';
import { authenticationOf, shareConnections } from '../../src/common/kube/shared-connections.js';
import { coreApi } from '../../src/common/kube/typed-api.js';
import { selfSignedLoopbackCert } from '../harness/pki.js';

let server: https.Server;
let caPem: string;
let connections = 0;
const seen: { url: string; authorization: string; userAgent: string }[] = [];

before(async () => {
  const tls = selfSignedLoopbackCert();
  caPem = tls.cert;
  server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization ?? '', userAgent: req.headers['user-agent'] ?? '' });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'a' } }));
  });
  server.on('secureConnection', () => { connections += 1; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
after(() => { server.closeAllConnections(); server.close(); });

function config(ca: string, server = `https://127.0.0.1:${String((serverAddress()).port)}`): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, caData: Buffer.from(ca).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'u', token: 't0ken' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}
const serverAddress = () => server.address() as AddressInfo;

async function dispatcherOf(kc: KubeConfig): Promise<unknown> {
  const context = new RequestContext('https://127.0.0.1/api', HttpMethod.GET);
  await authenticationOf(kc).applySecurityAuthentication(context);
  return context.getDispatcher();
}

describe('shareConnections', () => {
  it('without it, client-node makes a new dispatcher (connection pool) for every request', async () => {
    const kc = config(caPem);
    assert.equal(authenticationOf(kc), kc, 'client-node\'s own authentication');
    assert.notEqual(await dispatcherOf(kc), await dispatcherOf(kc));
  });

  it('with it, requests with the same server and TLS material share one keep-alive agent', async () => {
    const kc = config(caPem);
    const stats = shareConnections(kc);
    assert.equal(await dispatcherOf(kc), await dispatcherOf(kc));
    assert.notEqual(await dispatcherOf(kc), await dispatcherOf(config('other-ca')), 'other TLS material never shares a connection');
    assert.equal(shareConnections(kc), stats, 'idempotent');
    assert.equal(stats.opened, 0, 'nothing connected yet');
  });

  it('typed calls send the token over a few kept-alive, verified connections, counted', async () => {
    const requests = 10;
    // Without sharing, client-node opens one connection per request.
    const plain = config(caPem);
    let before = connections;
    for (let i = 0; i < requests; i += 1) await plain.makeApiClient(CoreV1Api).readNamespace({ name: 'a' });
    assert.equal(connections - before, requests);

    const kc = config(caPem);
    const stats = shareConnections(kc);
    const core = coreApi(createJsonClient(kc, { who: 'member' }));
    before = connections;
    seen.length = 0;
    for (let i = 0; i < requests; i += 1) assert.equal((await core.readNamespace({ name: 'a' })).metadata?.name, 'a');
    // An answer may resolve just before its connection is free again, so the next request may
    // open a second: a pool, not one connection per request.
    assert.ok(connections - before <= 2, `${String(requests)} requests, ${String(connections - before)} TLS connections`);
    assert.equal(stats.opened, connections - before, 'every connection counted');
    assert.deepEqual(seen.map((s) => [s.url, s.authorization, s.userAgent]), Array.from({ length: requests }, () => ['/api/v1/namespaces/a', 'Bearer t0ken', 'clusterset-agent']));
  });

  it('still verifies the server certificate against the kubeconfig CA', async () => {
    const other = selfSignedLoopbackCert();
    const kc = config(other.cert);
    shareConnections(kc);
    await assert.rejects(coreApi(createJsonClient(kc, { who: 'member' })).readNamespace({ name: 'a' }), (err: unknown) => /certificate|self.signed|verify/i.test(String((err as { cause?: unknown }).cause ?? err)));
  });

  it('takes a token of the client budget for every request', async () => {
    const kc = config(caPem);
    const budget = new ClientBudget({ qps: 1000, burst: 1000 });
    shareConnections(kc, budget);
    const reserved = budget.reserve.bind(budget);
    let taken = 0;
    budget.reserve = () => { taken += 1; return reserved(); };
    await coreApi(createJsonClient(kc, { who: 'member' })).readNamespace({ name: 'a' });
    assert.equal(taken, 1);
  });
});
