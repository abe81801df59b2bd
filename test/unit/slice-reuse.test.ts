import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reuseSliceNames, type ExistingSlice } from '../../src/importer/slice-reuse.js';
import type { DesiredObject } from '../../src/importer/rules.js';

function slice(name: string, family: 'IPv4' | 'IPv6', cluster?: string, service = 'antrea-mc-web'): DesiredObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', plural: 'endpointslices', group: 'discovery.k8s.io', version: 'v1', namespaced: true, namespace: 'team-a', name,
    body: { metadata: { name, namespace: 'team-a', labels: { 'kubernetes.io/service-name': service, ...(cluster !== undefined && { 'multicluster.kubernetes.io/source-cluster': cluster }) } }, addressType: family, endpoints: [] },
    sourceKind: 'Endpoints',
  };
}
const existing = (d: DesiredObject): ExistingSlice => ({ name: d.name, namespace: d.namespace, object: d.body });
const names = (objects: readonly DesiredObject[]) => objects.map((o) => `${o.name}=${String((o.body['metadata'] as { name?: string }).name)}`);

describe('reuseSliceNames: a new set of slices written into the import\'s existing ones', () => {
  it('Antrea\'s leader\'s slice (no cluster in its name) takes our leader\'s slice of the same family: an update, no delete', () => {
    const out = reuseSliceNames([slice('antrea-mc-web.east.ipv4', 'IPv4', 'east')], [existing(slice('antrea-mc-web.ipv4', 'IPv4'))]);
    assert.deepEqual(names(out), ['antrea-mc-web.ipv4=antrea-mc-web.ipv4']);
    assert.equal((out[0]?.body['metadata'] as { labels: Record<string, string> }).labels['multicluster.kubernetes.io/source-cluster'], 'east', 'the content is the new slice\'s');
  });

  it('names that exist already stay; only the new ones take what is free, same family, same source cluster first, then the lowest name', () => {
    const out = reuseSliceNames(
      [slice('antrea-mc-web.east.ipv4', 'IPv4', 'east'), slice('antrea-mc-web.west.ipv4', 'IPv4', 'west'), slice('antrea-mc-web.west.ipv6', 'IPv6', 'west')],
      [existing(slice('antrea-mc-web.east.ipv4', 'IPv4', 'east')), existing(slice('antrea-mc-web.ipv4-2', 'IPv4')), existing(slice('antrea-mc-web.ipv4', 'IPv4')), existing(slice('antrea-mc-web.old.ipv6', 'IPv6', 'west'))],
    );
    assert.deepEqual(names(out), ['antrea-mc-web.east.ipv4=antrea-mc-web.east.ipv4', 'antrea-mc-web.ipv4=antrea-mc-web.ipv4', 'antrea-mc-web.old.ipv6=antrea-mc-web.old.ipv6']);
  });

  it('another cluster\'s slice is not taken (its name would name the wrong cluster); it goes, the new one is created', () => {
    const out = reuseSliceNames([slice('antrea-mc-web.west.ipv4', 'IPv4', 'west')], [existing(slice('antrea-mc-web.east.ipv4', 'IPv4', 'east'))]);
    assert.deepEqual(names(out), ['antrea-mc-web.west.ipv4=antrea-mc-web.west.ipv4']);
  });

  it('the same input twice gives the same names (a restart writes nothing)', () => {
    const desired = [slice('antrea-mc-web.east.ipv4', 'IPv4', 'east')];
    const first = reuseSliceNames(desired, [existing(slice('antrea-mc-web.ipv4', 'IPv4'))]);
    const again = reuseSliceNames(desired, first.map(existing));
    assert.deepEqual(names(again), names(first));
  });

  it('no slice of another family, another Service, or an older naming scheme is taken; other kinds pass through', () => {
    const service = { ...slice('antrea-mc-web', 'IPv4'), kind: 'Service', plural: 'services', group: '' };
    const out = reuseSliceNames([service, slice('antrea-mc-web.east.ipv4', 'IPv4', 'east')], [
      existing(slice('antrea-mc-web.ipv6', 'IPv6')),
      existing(slice('antrea-mc-webx.ipv4', 'IPv4', undefined, 'antrea-mc-webx')),
      existing(slice('antrea-mc-web-east-ipv4', 'IPv4', 'east')),
    ]);
    assert.deepEqual(names(out), ['antrea-mc-web=antrea-mc-web', 'antrea-mc-web.east.ipv4=antrea-mc-web.east.ipv4']);
  });
});
