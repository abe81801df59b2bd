// Which MCS API version the agent speaks: v1beta1 where the member serves it, v1alpha1 where
// only that is served (Antrea's member CRDs, clusters set up before mcs-api v0.5).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mcsResources, servedMcsVersion } from '../../src/common/api/mcs.js';
import { discoverMcsVersion } from '../../src/common/kube/mcs-version.js';
import { apiError } from './fakes/fake-leader.js';

const group = (versions: string[]) => ({
  kind: 'APIGroup', apiVersion: 'v1', name: 'multicluster.x-k8s.io',
  versions: versions.map((version) => ({ groupVersion: `multicluster.x-k8s.io/${version}`, version })),
});

describe('the MCS API version of a member', () => {
  it('prefers v1beta1, else v1alpha1, whatever the order discovery lists them in', () => {
    assert.equal(servedMcsVersion(['v1alpha1', 'v1beta1']), 'v1beta1');
    assert.equal(servedMcsVersion(['v1beta1']), 'v1beta1');
    assert.equal(servedMcsVersion(['v1alpha1']), 'v1alpha1');
    assert.equal(servedMcsVersion([]), 'v1alpha1', 'no CRDs yet: the version every MCS CRD so far serves');
    assert.equal(servedMcsVersion(['v1']), 'v1alpha1');
  });

  it('addresses both kinds in the chosen version', () => {
    assert.deepEqual([mcsResources('v1alpha1').serviceImport.apiVersion, mcsResources('v1alpha1').serviceExport.apiVersion],
      ['multicluster.x-k8s.io/v1alpha1', 'multicluster.x-k8s.io/v1alpha1']);
    assert.deepEqual([mcsResources('v1beta1').serviceImport.version, mcsResources('v1beta1').serviceExport.version], ['v1beta1', 'v1beta1']);
  });

  it('asks the group\'s discovery document; a group not served is no error', async () => {
    const paths: string[] = [];
    const answer = (body: unknown) => ({ request: <T>(_m: string, path: string): Promise<T> => { paths.push(path); return Promise.resolve(body as T); } });
    assert.deepEqual(await discoverMcsVersion(answer(group(['v1beta1', 'v1alpha1']))), { version: 'v1beta1', served: ['v1beta1', 'v1alpha1'] });
    assert.deepEqual(await discoverMcsVersion(answer(group(['v1alpha1']))), { version: 'v1alpha1', served: ['v1alpha1'] });
    assert.deepEqual(paths, ['/apis/multicluster.x-k8s.io', '/apis/multicluster.x-k8s.io']);
    const notFound = { request: () => Promise.reject(apiError(404, 'NotFound', 'the server could not find the requested resource')) };
    assert.deepEqual(await discoverMcsVersion(notFound), { version: 'v1alpha1', served: [] });
    const forbidden = { request: () => Promise.reject(apiError(403, 'Forbidden', 'no')) };
    await assert.rejects(discoverMcsVersion(forbidden), /no/);
  });
});
