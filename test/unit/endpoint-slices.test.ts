import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointSlicesFor, parseEndpointSources } from '../../src/importer/endpoint-slices.js';
import { desiredForImport } from '../../src/importer/rules.js';
import type { ImportOwner } from '../../src/importer/ownership.js';

const owner: ImportOwner = { clusterSetID: 'cs', leaderClusterID: 'leader', localClusterID: 'west', leaderNamespace: 'antrea-multicluster', agentNamespace: 'clusterset-agent' };
const port = { name: 'tcp', port: 42, protocol: 'TCP' };

describe('parseEndpointSources()', () => {
  it('reads the leader\'s per-cluster runs and refuses anything inexact', () => {
    assert.equal(parseEndpointSources(undefined, 3), undefined);
    assert.deepEqual(parseEndpointSources('east=1,west=2', 3), [{ cluster: 'east', subsets: 1 }, { cluster: 'west', subsets: 2 }]);
    assert.deepEqual(parseEndpointSources('', 0), []);
    assert.match(JSON.stringify(parseEndpointSources('east=1', 2)), /add up to 1 subsets, the payload has 2/);
    assert.match(JSON.stringify(parseEndpointSources('east=1,east=1', 2)), /listed twice/);
    assert.match(JSON.stringify(parseEndpointSources('=1', 1)), /does not name a cluster ID/);
    assert.match(JSON.stringify(parseEndpointSources('east=-1', 1)), /not a positive integer/);
  });
});

describe('endpointSlicesFor()', () => {
  it('makes one slice per source cluster and address family, with the MCS labels, managed by this project', () => {
    const subsets = [
      { addresses: [{ ip: '10.96.0.10' }, { ip: 'fd00::10' }], ports: [port] },
      { addresses: [{ ip: '10.97.0.20' }], notReadyAddresses: [{ ip: '10.97.0.21' }], ports: [port] },
    ];
    const slices = endpointSlicesFor('hello', subsets, [{ cluster: 'east', subsets: 1 }, { cluster: 'west', subsets: 1 }]);
    assert.deepEqual(slices.map((s) => s.name), ['antrea-mc-hello-east-ipv4', 'antrea-mc-hello-east-ipv6', 'antrea-mc-hello-west-ipv4']);
    const west = slices[2];
    assert.deepEqual(west?.labels, {
      'kubernetes.io/service-name': 'antrea-mc-hello',
      'multicluster.kubernetes.io/service-name': 'hello',
      'multicluster.kubernetes.io/source-cluster': 'west',
      'endpointslice.kubernetes.io/managed-by': 'clusterset-agent.multicluster.clusterset-agent.io',
    });
    assert.deepEqual(west?.content, {
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['10.97.0.20'], conditions: { ready: true, serving: true, terminating: false } },
        { addresses: ['10.97.0.21'], conditions: { ready: false, serving: false, terminating: false } },
      ],
      ports: [port],
    });
    assert.notEqual(west?.labels['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
  });

  it('without sources (an Antrea leader) makes one slice per family, without a source-cluster label', () => {
    const slices = endpointSlicesFor('hello', [{ addresses: [{ ip: '10.96.0.10' }], ports: [port] }], undefined);
    assert.deepEqual(slices.map((s) => [s.name, s.labels['multicluster.kubernetes.io/source-cluster']]), [['antrea-mc-hello-ipv4', undefined]]);
  });

  it('drops nodeName and targetRef (they name objects of another cluster), keeps hostname', () => {
    const [slice] = endpointSlicesFor('db', [{ addresses: [{ ip: '10.0.0.1', hostname: 'db-0', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'db-0' } }], ports: [port] }], [{ cluster: 'east', subsets: 1 }]);
    assert.deepEqual(slice?.content['endpoints'], [{ addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'db-0' }]);
  });

  it('names a cluster whose ID is no DNS label by a hash, the label keeps the ID', () => {
    const [slice] = endpointSlicesFor('db', [{ addresses: [{ ip: '10.0.0.1' }] }], [{ cluster: 'East_1', subsets: 1 }]);
    assert.match(slice?.name ?? '', /^antrea-mc-db-c[0-9a-f]{10}-ipv4$/);
    assert.equal(slice?.labels['multicluster.kubernetes.io/source-cluster'], 'East_1');
  });
});

describe('desiredForImport(): Endpoints', () => {
  it('keeps Antrea\'s Endpoints, marked skip-mirror, and adds the EndpointSlices', () => {
    const plan = desiredForImport({
      metadata: { name: 'team-a-hello-endpoints', namespace: 'antrea-multicluster', annotations: { 'multicluster.clusterset-agent.io/endpoint-sources': 'east=1' } },
      spec: { name: 'hello', namespace: 'team-a', kind: 'Endpoints', endpoints: { subsets: [{ addresses: [{ ip: '10.96.0.10' }], ports: [port] }] } },
    }, owner, { enableLabelIdentity: false });
    assert.equal(plan.kind, 'apply');
    const objects = plan.kind === 'apply' ? plan.objects : [];
    assert.deepEqual(objects.map((o) => `${o.kind} ${o.namespace ?? ''}/${o.name}`), ['Endpoints team-a/antrea-mc-hello', 'EndpointSlice team-a/antrea-mc-hello-east-ipv4']);
    const labels = (o: (typeof objects)[number] | undefined) => (o?.body['metadata'] as { labels: Record<string, string> }).labels;
    assert.equal(labels(objects[0])['endpointslice.kubernetes.io/skip-mirror'], 'true');
    assert.equal(labels(objects[1])['multicluster.kubernetes.io/source-cluster'], 'east');
    assert.ok(Object.keys(labels(objects[1])).length > 4, 'ownership labels too');
  });
});
