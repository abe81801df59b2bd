import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceImport } from '../../src/common/api/antrea.js';
import { groupOfImport, groupOfObject, siblingProblem, slotsFor, type SiblingLookup, type Verdict } from '../../src/importer/groups.js';
import type { ImportOwner } from '../../src/importer/ownership.js';
import { rejectionOf, type Rejection } from '../../src/importer/policy.js';
import { desiredForImport } from '../../src/importer/rules.js';

const LEADER_NS = 'leader-ns';
const OWNER: ImportOwner = { clusterSetID: 'cs', leaderClusterID: 'leader', leaderNamespace: LEADER_NS, agentNamespace: 'agent-ns', localClusterID: 'east' };

function ri(name: string, spec: NonNullable<ResourceImport['spec']>): ResourceImport {
  return { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImport', metadata: { name, namespace: LEADER_NS }, spec };
}

const svcRI = (name = 'team-a-web-service', extra: Partial<NonNullable<ResourceImport['spec']>> = {}): ResourceImport => ri(name, {
  name: 'web', namespace: 'team-a', kind: 'ServiceImport',
  serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
  ...extra,
});
const epsRI = ri('team-a-web-endpoints', { name: 'web', namespace: 'team-a', kind: 'Endpoints', endpoints: { subsets: [] } });

/** A lookup over a fixed cache of RIs and verdicts. */
function lookup(ris: ResourceImport[], verdicts: Record<string, Verdict> = {}, rejections: Record<string, Rejection> = {}, members: string[] = []): SiblingLookup {
  const cache = new Map(ris.map((r) => [r.metadata?.name ?? '', r]));
  return {
    owner: OWNER,
    enableLabelIdentity: false,
    members,
    get: (name) => cache.get(name),
    verdict: (name) => verdicts[name],
    rejection: (name) => rejections[name],
  };
}

describe('admission groups', () => {
  it('groupOfObject() - the Service, ServiceImport and Endpoints of one exported Service share a group', () => {
    const svc = groupOfObject({ group: '', version: 'v1', plural: 'services', namespaced: true, namespace: 'team-a', name: 'antrea-mc-web' }, 'x');
    const si = groupOfObject({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespaced: true, namespace: 'team-a', name: 'web' }, 'y');
    const eps = groupOfObject({ group: '', version: 'v1', plural: 'endpoints', namespaced: true, namespace: 'team-a', name: 'antrea-mc-web' }, 'z');
    assert.equal(svc, si);
    assert.equal(eps, si);
    const slice = groupOfObject({ group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', namespaced: true, namespace: 'team-a', name: 'antrea-mc-web-east-ipv4' }, 'team-a-web-endpoints');
    assert.equal(slice, si, 'an EndpointSlice belongs to the Service of its Endpoints import');
    // Not ours by name, or another kind: the RI's own group.
    assert.equal(groupOfObject({ group: '', version: 'v1', plural: 'services', namespaced: true, namespace: 'team-a', name: 'web' }, 'x'), 'ri:x');
    assert.equal(groupOfObject({ group: 'crd.antrea.io', version: 'v1beta1', plural: 'clusternetworkpolicies', namespaced: false, name: 'p' }, 'acnp'), 'ri:acnp');
  });

  it('groupOfImport() - a service RI admits the whole service, any other RI its own objects', () => {
    const si = groupOfImport(svcRI(), desiredForImport(svcRI(), OWNER, { enableLabelIdentity: false }));
    assert.equal(si.size, 4, 'Service, ServiceImport, Endpoints, one EndpointSlice');
    assert.equal(groupOfImport(epsRI, { kind: 'apply', objects: [] }).key, si.key);
    const info = ri('west-clusterinfo', { name: 'west', namespace: 'kube-system', kind: 'ClusterInfo', clusterinfo: { clusterID: 'west' } });
    const plan = desiredForImport(info, OWNER, { enableLabelIdentity: false });
    assert.equal(plan.kind, 'apply');
    assert.deepEqual(groupOfImport(info, plan), { key: 'ri:west-clusterinfo', size: 1, what: 'the ClusterInfo import' });
    assert.equal(groupOfImport(info, { kind: 'skip', reason: 'no' }).size, 0);
  });

  it('slotsFor() - part of a service holds all its slots; any other group what exists', () => {
    const group = groupOfImport(svcRI(), { kind: 'apply', objects: [] }).key;
    assert.equal(slotsFor(group, 1), 4);
    assert.equal(slotsFor(group, 6), 6, 'more slices than reserved: what exists');
    assert.equal(slotsFor('ri:x', 2), 2);
  });
});

describe('siblingProblem()', () => {
  it('holds Endpoints back quietly while their ServiceImport RI is not published', () => {
    const held = siblingProblem(epsRI, lookup([epsRI]));
    assert.ok(held && held !== 'wait');
    assert.equal(held.quiet, true);
    assert.equal(held.rejection.rule, 'ServiceNotImported');
    assert.match(held.rejection.message, /leader-ns\/team-a-web-service has not been imported yet/);
  });

  it('waits while the sibling is in the cache but not judged yet', () => {
    assert.equal(siblingProblem(epsRI, lookup([epsRI, svcRI()])), 'wait');
  });

  it('lets Endpoints land once the sibling is applied', () => {
    assert.equal(siblingProblem(epsRI, lookup([epsRI, svcRI()], { 'team-a-web-service': 'applied' })), undefined);
  });

  it('says why when the sibling was refused, conflicts or is not imported here', () => {
    const si = svcRI();
    const refusal = rejectionOf(si, 'NamespaceNotFound', 'namespace team-a does not exist');
    const refused = siblingProblem(epsRI, lookup([epsRI, si], { [si.metadata?.name ?? '']: 'rejected' }, { [si.metadata?.name ?? '']: refusal }));
    assert.ok(refused && refused !== 'wait');
    assert.equal(refused.quiet, false);
    assert.match(refused.rejection.message, /was refused \(NamespaceNotFound: namespace team-a does not exist\)/);

    const conflict = siblingProblem(epsRI, lookup([epsRI, si], { 'team-a-web-service': 'conflict' }));
    assert.ok(conflict && conflict !== 'wait');
    assert.match(conflict.rejection.message, /conflicts with an existing object/);

    const west = svcRI('team-a-web-service', { clusterID: ['west'] });
    const skipped = siblingProblem(epsRI, lookup([epsRI, west], { 'team-a-web-service': 'skipped' }));
    assert.ok(skipped && skipped !== 'wait');
    assert.match(skipped.rejection.message, /is not imported here \(targeted at cluster\(s\) west, not at east\)/);
  });

  it('finds a sibling by group membership too, preferring one already judged', () => {
    const odd = svcRI('odd-name');
    const other = svcRI('other-name');
    const wrongKind = ri('imposter', { name: 'web', namespace: 'team-a', kind: 'Endpoints', endpoints: {} });
    assert.equal(siblingProblem(epsRI, lookup([epsRI, odd, wrongKind], { 'odd-name': 'applied' }, {}, ['imposter', 'odd-name'])), undefined);
    const held = siblingProblem(epsRI, lookup([epsRI, odd, other], { 'other-name': 'conflict' }, {}, ['odd-name', 'other-name']));
    assert.ok(held && held !== 'wait');
    assert.match(held.rejection.message, /leader-ns\/other-name was not imported/);
  });
});
