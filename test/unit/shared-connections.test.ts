import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { shareConnections } from '../../src/common/kube/shared-connections.js';

type CreateDispatcher = (cluster: unknown, agentOptions: Record<string, unknown>) => unknown;

function config(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, caData: Buffer.from('ca').toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const dispatcherOf = (kc: KubeConfig, ca: string) =>
  (kc as unknown as { createDispatcher: CreateDispatcher }).createDispatcher(kc.getCurrentCluster(), { ca: Buffer.from(ca) });

describe('shareConnections', () => {
  it('without it, client-node makes a new dispatcher (connection pool) for every request', () => {
    const kc = config('https://127.0.0.1:6443');
    assert.notEqual(dispatcherOf(kc, 'ca'), dispatcherOf(kc, 'ca'));
  });

  it('with it, requests with the same server and TLS material share one keep-alive agent', () => {
    const kc = config('https://127.0.0.1:6443');
    const stats = shareConnections(kc);
    assert.equal(dispatcherOf(kc, 'ca'), dispatcherOf(kc, 'ca'));
    assert.notEqual(dispatcherOf(kc, 'ca'), dispatcherOf(kc, 'other-ca'), 'other TLS material never shares a connection');
    assert.equal(shareConnections(kc), stats, 'idempotent');
    assert.equal(stats.opened, 0, 'nothing connected yet');
  });
});
