// KnownExports: what a watch event changes in what the exporter knows of its REs on the leader.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceExport } from '../../src/common/api/antrea.js';
import { KnownExports } from '../../src/exporter/known-exports.js';

const re = (name: string, rv: string, clusterID = 'east', extra: Partial<ResourceExport['metadata']> = {}): ResourceExport => ({
  metadata: { name, resourceVersion: rv, labels: { sourceClusterID: clusterID, sourceKind: 'Service', sourceNamespace: 'web', sourceName: 'nginx' }, ...extra },
  spec: { clusterID, kind: 'Service', namespace: 'web', name: 'nginx' },
});

describe('KnownExports.observe', () => {
  it('ignores another cluster\'s RE, our own write coming back, and a version older than the one held', () => {
    const known = new KnownExports('east');
    known.set('east-web-nginx-service', 'svc/web/nginx', re('east-web-nginx-service', '10'), true);
    assert.equal(known.observe(re('west-web-nginx-service', '11', 'west'), false), undefined);
    assert.equal(known.observe(re('east-web-nginx-service', '10'), false), undefined);
    assert.equal(known.observe(re('east-web-nginx-service', '9'), false), undefined);
    assert.equal(known.get('east-web-nginx-service')?.live.metadata?.resourceVersion, '10');
  });

  it('takes a newer version, keeping the version of our own write', () => {
    const known = new KnownExports('east');
    known.set('east-web-nginx-service', 'svc/web/nginx', re('east-web-nginx-service', '10'), true);
    assert.deepEqual(known.observe(re('east-web-nginx-service', '12'), false), { key: 'svc/web/nginx', dropped: false });
    assert.equal(known.get('east-web-nginx-service')?.live.metadata?.resourceVersion, '12');
    assert.equal(known.get('east-web-nginx-service')?.writtenVersion, '10');
  });

  it('drops a deleted or terminating RE, and reports an unknown one of ours for the reconcile', () => {
    const known = new KnownExports('east');
    known.set('east-web-nginx-service', 'svc/web/nginx', re('east-web-nginx-service', '10'));
    assert.deepEqual(known.observe(re('east-web-nginx-service', '13'), true), { key: 'svc/web/nginx', dropped: true });
    assert.equal(known.has('svc/web/nginx'), false);
    assert.deepEqual(known.observe(re('east-web-other-service', '14', 'east', { deletionTimestamp: new Date() }), false), { key: 'svc/web/nginx', dropped: false });
    assert.deepEqual(known.observe(re('east-web-nginx-service', '15'), false), { key: 'svc/web/nginx', dropped: false });
    assert.equal(known.get('east-web-nginx-service'), undefined, 'an unknown RE is left to the reconcile, not adopted here');
  });
});
