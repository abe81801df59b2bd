import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Applier } from '../../src/importer/applier.js';
import { ImportCapacity } from '../../src/importer/capacity.js';
import { serviceGroupRefs } from '../../src/importer/groups.js';
import type { LocalStore, ObjectRef, PlainObject } from '../../src/importer/local-store.js';
import { OwnedIndex } from '../../src/importer/owned-index.js';
import { ownerLabels, type ImportOwner } from '../../src/importer/ownership.js';
import { nameOnly, namesList, WatchedNames, type NameCache, type TakenNames } from '../../src/importer/taken-names.js';

const OWNER: ImportOwner = { clusterSetID: 'cs', leaderClusterID: 'leader', leaderNamespace: 'leader-ns', agentNamespace: 'agent-ns', localClusterID: 'east' };

class FakeCache implements NameCache {
  hasSynced = true;
  lastError: unknown = undefined;
  readonly names = new Set<string>();
  get(name: string, namespace?: string): unknown {
    return this.names.has(`${namespace ?? ''}/${name}`) ? {} : undefined;
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

const endpointsRef: ObjectRef = { group: '', version: 'v1', plural: 'endpoints', namespaced: true, namespace: 'team-a', name: 'antrea-mc-web' };

describe('namesList', () => {
  it('takes an empty PartialObjectMetadataList (items: null) as an empty list, and refuses an answer without items', () => {
    const empty = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '5' }, items: null };
    assert.deepEqual(namesList(empty, 'endpoints'), { ...empty, items: [] });
    const one = { kind: 'PartialObjectMetadataList', metadata: {}, items: [{ metadata: { name: 'a' } }] };
    assert.equal(namesList(one, 'endpoints'), one);
    assert.throws(() => namesList({ kind: 'Status' }, 'endpoints'), /listing endpoints: the answer has no items array/);
  });
});

describe('WatchedNames', () => {
  const setUp = () => {
    const endpoints = new FakeCache();
    const serviceImports = new FakeCache();
    const names = new WatchedNames(new Map([['/endpoints', endpoints], ['multicluster.x-k8s.io/serviceimports', serviceImports]]));
    return { endpoints, serviceImports, names };
  };

  it('says whether a synced, connected watch has seen the name', () => {
    const { endpoints, names } = setUp();
    assert.equal(names.holds(endpointsRef), false);
    endpoints.names.add('team-a/antrea-mc-web');
    assert.equal(names.holds(endpointsRef), true);
    assert.equal(names.holds({ ...endpointsRef, namespace: 'team-b' }), false, 'by namespace');
  });

  it('does not know before the first list, during an outage, or for a kind it does not watch', () => {
    const { endpoints, names } = setUp();
    endpoints.hasSynced = false;
    assert.equal(names.holds(endpointsRef), undefined);
    endpoints.hasSynced = true;
    endpoints.lastError = new Error('watch closed');
    assert.equal(names.holds(endpointsRef), undefined);
    assert.equal(names.holds({ ...endpointsRef, plural: 'services' }), undefined);
  });

  it('keeps only the name of a cached object', () => {
    assert.deepEqual(nameOnly({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'a', namespace: 'n', resourceVersion: '7', labels: { x: 'y' } }, subsets: [] } as never),
      { metadata: { name: 'a', namespace: 'n', resourceVersion: '7' } });
  });
});

describe('Applier.claim with watched names', () => {
  const setUp = (taken: TakenNames | undefined, live: Map<string, PlainObject>) => {
    const gets: string[] = [];
    const store: LocalStore = {
      get: (ref) => {
        gets.push(`${ref.plural}/${ref.name}`);
        const found = live.get(`${ref.plural}/${ref.name}`);
        return found ? Promise.resolve(found) : Promise.reject(Object.assign(new Error('not found'), { code: 404, statusCode: 404 }));
      },
      create: () => Promise.reject(new Error('unused')),
      replace: () => Promise.reject(new Error('unused')),
      delete: () => Promise.reject(new Error('unused')),
      list: () => Promise.resolve([]),
    };
    const conflicts: string[] = [];
    const applier = new Applier({
      store, owner: OWNER, owned: new OwnedIndex(new ImportCapacity(100)), ...(taken !== undefined && { taken }),
      released: () => undefined, conflict: (_ri, ref) => { conflicts.push(`${ref.plural}/${ref.name}`); }, deleteHeld: () => undefined, outcome: () => undefined,
    });
    return { applier, gets, conflicts };
  };
  const refs = serviceGroupRefs('team-a', 'web');

  it('reads no object when the watches say every name is free', async () => {
    const { applier, gets } = setUp({ holds: () => false }, new Map());
    assert.equal(await applier.claim('team-a-web-service', refs, () => undefined, true), 'free');
    assert.deepEqual(gets, []);
  });

  it('reads a taken name to learn whose it is: a user\'s object refuses, one of ours does not', async () => {
    const user = { metadata: { name: 'antrea-mc-web', namespace: 'team-a' } };
    const taken: TakenNames = { holds: (ref) => ref.plural === 'endpoints' };
    const refused = setUp(taken, new Map([['endpoints/antrea-mc-web', user]]));
    assert.equal(await refused.applier.claim('team-a-web-service', refs, () => undefined, true), 'conflict');
    assert.deepEqual(refused.gets, ['endpoints/antrea-mc-web']);
    assert.deepEqual(refused.conflicts, ['endpoints/antrea-mc-web']);
    const ours = setUp(taken, new Map([['endpoints/antrea-mc-web', { metadata: { ...user.metadata, labels: ownerLabels(OWNER) } }]]));
    assert.equal(await ours.applier.claim('team-a-web-service', refs, () => undefined, true), 'free');
    assert.deepEqual(ours.conflicts, []);
  });

  it('reads every name the watches cannot vouch for, as without them', async () => {
    const { applier, gets } = setUp({ holds: () => undefined }, new Map());
    assert.equal(await applier.claim('team-a-web-service', refs, () => undefined, true), 'free');
    assert.deepEqual(gets.sort(), ['endpoints/antrea-mc-web', 'serviceimports/web']);
  });
});
