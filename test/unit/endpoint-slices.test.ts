import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointSlicesFor, MAX_ENDPOINTS_PER_SLICE, parseEndpointSources, serviceImportOwnerReference, withOwnerReference } from '../../src/importer/endpoint-slices.js';
import { isDnsSubdomain } from '../../src/common/api/names.js';
import { desiredForImport, mergeForUpdate, semanticallyEqual, type DesiredObject } from '../../src/importer/rules.js';
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
    assert.deepEqual(slices.map((s) => s.name), ['antrea-mc-hello.east.ipv4', 'antrea-mc-hello.east.ipv6', 'antrea-mc-hello.west.ipv4']);
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
    assert.deepEqual(slices.map((s) => [s.name, s.labels['multicluster.kubernetes.io/source-cluster']]), [['antrea-mc-hello.ipv4', undefined]]);
  });

  it('drops nodeName and targetRef (they name objects of another cluster), keeps hostname', () => {
    const [slice] = endpointSlicesFor('db', [{ addresses: [{ ip: '10.0.0.1', hostname: 'db-0', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'db-0' } }], ports: [port] }], [{ cluster: 'east', subsets: 1 }]);
    assert.deepEqual(slice?.content['endpoints'], [{ addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'db-0' }]);
  });

  it('names a cluster whose ID is no DNS label by a hash, the label keeps the ID', () => {
    const [slice] = endpointSlicesFor('db', [{ addresses: [{ ip: '10.0.0.1' }] }], [{ cluster: 'East_1', subsets: 1 }]);
    assert.match(slice?.name ?? '', /^antrea-mc-db\.c[0-9a-f]{10}\.ipv4$/);
    assert.equal(slice?.labels['multicluster.kubernetes.io/source-cluster'], 'East_1');
  });
});

describe('endpointSlicesFor(): names', () => {
  it('gives two Services whose dash-joined names collided (web of prod-east, web-prod of east) distinct slice names', () => {
    const subsets = [{ addresses: [{ ip: '10.0.0.1' }], ports: [port] }];
    const web = endpointSlicesFor('web', subsets, [{ cluster: 'prod-east', subsets: 1 }]).map((s) => s.name);
    const webProd = endpointSlicesFor('web-prod', subsets, [{ cluster: 'east', subsets: 1 }]).map((s) => s.name);
    assert.deepEqual(web, ['antrea-mc-web.prod-east.ipv4']);
    assert.deepEqual(webProd, ['antrea-mc-web-prod.east.ipv4']);
    // The first '.'-part names the Service: a Service name and a cluster ID cannot contain '.'.
    for (const name of [...web, ...webProd]) assert.equal(name.split('.')[0]?.length, name.indexOf('.'));
  });

  it('stays a DNS subdomain within 253 characters for the longest Service name and cluster ID, and is the same for the same input', () => {
    const longName = `s${'x'.repeat(51)}z`; // antrea-mc-<name> is then a 63-character DNS label
    const longCluster = `c${'y'.repeat(61)}z`;
    const many = Array.from({ length: 2 * MAX_ENDPOINTS_PER_SLICE + 1 }, (_, i) => ({ ip: `10.1.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}` }));
    const subsets = [{ addresses: many, ports: [port] }, { addresses: [{ ip: 'fd00::1' }], ports: [{ ...port, port: 43 }] }];
    const slices = endpointSlicesFor(longName, subsets, [{ cluster: longCluster, subsets: 2 }]);
    for (const slice of slices) {
      assert.ok(isDnsSubdomain(slice.name), slice.name);
      assert.ok(slice.name.length <= 253);
    }
    assert.deepEqual(endpointSlicesFor(longName, subsets, [{ cluster: longCluster, subsets: 2 }]), slices, 'deterministic');
  });

  it('never gives two slices of one import the same name, even when a foreign cluster ID hashes to another cluster\'s ID', () => {
    const hashed = endpointSlicesFor('db', [{ addresses: [{ ip: '10.0.0.1' }] }], [{ cluster: 'East_1', subsets: 1 }])[0]?.name.split('.')[1] ?? '';
    const slices = endpointSlicesFor('db', [{ addresses: [{ ip: '10.0.0.1' }] }, { addresses: [{ ip: '10.0.0.2' }] }], [{ cluster: 'East_1', subsets: 1 }, { cluster: hashed, subsets: 1 }]);
    assert.equal(new Set(slices.map((s) => s.name)).size, 2, JSON.stringify(slices.map((s) => s.name)));
  });
});

describe('endpointSlicesFor(): size', () => {
  it(`puts at most ${String(MAX_ENDPOINTS_PER_SLICE)} endpoints in a slice, every endpoint exactly once, under stable names`, () => {
    const ip = (c: number, i: number) => `10.${String(c)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`;
    // Three clusters of 400 endpoints: 1,200 in all, more than kube-apiserver takes in one slice (1,000).
    const subsets = [0, 1, 2].map((c) => ({ addresses: Array.from({ length: 400 }, (_, i) => ({ ip: ip(c, i) })), ports: [port] }));
    const slices = endpointSlicesFor('big', subsets, [{ cluster: 'a', subsets: 1 }, { cluster: 'b', subsets: 1 }, { cluster: 'c', subsets: 1 }]);
    assert.equal(slices.length, 12);
    const counts = slices.map((s) => (s.content['endpoints'] as unknown[]).length);
    assert.ok(counts.every((n) => n <= MAX_ENDPOINTS_PER_SLICE), JSON.stringify(counts));
    const addresses = slices.flatMap((s) => (s.content['endpoints'] as { addresses: string[] }[]).map((e) => e.addresses[0]));
    assert.equal(addresses.length, 1200);
    assert.equal(new Set(addresses).size, 1200);
    assert.deepEqual(slices.filter((s) => s.labels['multicluster.kubernetes.io/source-cluster'] === 'b').map((s) => s.name),
      ['antrea-mc-big.b.ipv4', 'antrea-mc-big.b.ipv4-2', 'antrea-mc-big.b.ipv4-3', 'antrea-mc-big.b.ipv4-4']);
  });
});

describe('the ServiceImport owner reference', () => {
  const slice = (): DesiredObject => {
    const plan = desiredForImport({
      metadata: { name: 'team-a-hello-endpoints', namespace: 'antrea-multicluster', annotations: { 'multicluster.clusterset-agent.io/endpoint-sources': 'east=1' } },
      spec: { name: 'hello', namespace: 'team-a', kind: 'Endpoints', endpoints: { subsets: [{ addresses: [{ ip: '10.96.0.10' }], ports: [port] }] } },
    }, owner, { enableLabelIdentity: false });
    const found = plan.kind === 'apply' ? plan.objects.find((o) => o.kind === 'EndpointSlice') : undefined;
    assert.ok(found);
    return found;
  };

  it('is KEP-1645\'s: the ServiceImport by name and uid, not the controller, not blocking its deletion', () => {
    assert.deepEqual(serviceImportOwnerReference('hello', 'u-1'), { apiVersion: 'multicluster.x-k8s.io/v1beta1', kind: 'ServiceImport', name: 'hello', uid: 'u-1', controller: false });
    // Where the member serves only v1alpha1 the garbage collector must resolve the owner in it.
    assert.equal(serviceImportOwnerReference('hello', 'u-1', 'multicluster.x-k8s.io/v1alpha1')['apiVersion'], 'multicluster.x-k8s.io/v1alpha1');
  });

  it('makes a slice owned by an older ServiceImport (another uid) differ, and the update replaces the reference, keeping other owners', () => {
    const desired = slice();
    const body = withOwnerReference(desired.body, 'hello', 'u-new');
    const wanted = { ...desired, body };
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'c-1' };
    const live = withOwnerReference(desired.body, 'hello', 'u-old');
    (live['metadata'] as { ownerReferences: unknown[] }).ownerReferences.unshift(other);
    assert.equal(semanticallyEqual(wanted, live), false);
    const merged = mergeForUpdate(wanted, live);
    assert.deepEqual((merged['metadata'] as { ownerReferences: unknown[] }).ownerReferences, [other, serviceImportOwnerReference('hello', 'u-new')]);
    assert.equal(semanticallyEqual(wanted, merged), true);
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
    assert.deepEqual(objects.map((o) => `${o.kind} ${o.namespace ?? ''}/${o.name}`), ['EndpointSlice team-a/antrea-mc-hello.east.ipv4', 'Endpoints team-a/antrea-mc-hello']);
    const labels = (o: (typeof objects)[number] | undefined) => (o?.body['metadata'] as { labels: Record<string, string> }).labels;
    assert.equal(labels(objects[1])['endpointslice.kubernetes.io/skip-mirror'], 'true');
    assert.equal(labels(objects[0])['multicluster.kubernetes.io/source-cluster'], 'east');
    assert.ok(Object.keys(labels(objects[0])).length > 4, 'ownership labels too');
  });
});
