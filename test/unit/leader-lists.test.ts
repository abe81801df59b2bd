// The leader's start lists its custom collections (announces, exports, imports, ClusterSets)
// through the plain-JSON client (issue 31: restart -> ready): the same pages, without fetch's
// gzip, streams and resource timing. A loopback HTTP listener records the requests (nothing is
// judged but their shape); the real API server's side is test/integration/leader-mode.test.ts.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/common/log/logger.js';
import { LeaderController } from '../../src/leader/controller.js';

const NS = 'antrea-multicluster';
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.searchParams.get('watch') === 'true') {
    // A watch that stays open and quiet until the test stops the leader.
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    return;
  }
  seen.push({ path: `${url.pathname}${url.search}`, headers: req.headers });
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '7' }, items: [] }));
});
await new Promise<void>((resolve) => { server.listen(0, '127.0.0.1', resolve); });
after(() => { server.closeAllConnections(); server.close(); });

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'not-a-secret' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

void describe('the leader\'s lists at start', () => {
  void it('custom collections: pages of 500 through the plain-JSON client, no compression asked for', async () => {
    const controller = new LeaderController({ kubeConfig: kubeConfig(), namespace: NS, memberTimeoutMs: 30_000, staleMemberMs: 86_400_000, logger: createLogger({ level: 'error', stream: new PassThrough() }) });
    try {
      await controller.start();
    } finally {
      await controller.stop();
    }
    const custom = seen.filter((r) => r.path.startsWith('/apis/multicluster.crd.antrea.io/'));
    assert.deepEqual(custom.map((r) => r.path.replace(/\?.*/, '').split('/').pop()).sort(), ['clustersets', 'memberclusterannounces', 'resourceexports', 'resourceimports']);
    for (const r of custom) {
      assert.match(r.path, new RegExp(`^/apis/multicluster\\.crd\\.antrea\\.io/v1alpha\\d/namespaces/${NS}/\\w+\\?limit=500$`));
      assert.equal(r.headers['accept'], 'application/json');
      assert.equal(r.headers['user-agent'], 'clusterset-agent');
      assert.equal(r.headers['authorization'], 'Bearer not-a-secret');
      // fetch asks for gzip and the API server then compresses every page: CPU on both sides of a restart.
      assert.equal(r.headers['accept-encoding'], undefined, `${r.path}: ${String(r.headers['accept-encoding'])}`);
    }
  });
});
