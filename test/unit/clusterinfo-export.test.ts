import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Gateway } from '../../src/common/api/antrea.js';
import { clusterInfoExport, type ClusterInfoExportInput } from '../../src/exporter/clusterinfo-export.js';
import { sameExport } from '../../src/exporter/service-export.js';

function gateway(name: string, gatewayIP: string | undefined, extra: Partial<Gateway> = {}): Gateway {
  return {
    apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'Gateway',
    metadata: { name, namespace: 'clusterset-agent' },
    ...(gatewayIP !== undefined && { gatewayIP }), internalIP: '192.168.0.2', serviceCIDR: '10.96.0.0/12',
    ...extra,
  };
}

function input(overrides: Partial<ClusterInfoExportInput> = {}): ClusterInfoExportInput {
  return {
    localClusterID: 'east',
    leaderNamespace: 'antrea-multicluster',
    agentNamespace: 'clusterset-agent',
    gateways: [gateway('node-1', '172.18.0.2')],
    serviceCIDR: '10.96.0.0/16',
    podCIDRs: ['10.244.0.0/16'],
    ...overrides,
  };
}

describe('clusterInfoExport', () => {
  it('builds <localID>-clusterinfo with both labels, the finalizer and a camel-case clusterInfo', () => {
    assert.deepEqual(clusterInfoExport(input()), {
      apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
      kind: 'ResourceExport',
      metadata: {
        name: 'east-clusterinfo', namespace: 'antrea-multicluster',
        labels: { sourceClusterID: 'east', sourceKind: 'ClusterInfo' },
        finalizers: ['resourceexport.antrea.io/finalizer'],
      },
      spec: {
        clusterID: 'east', name: 'east', namespace: 'clusterset-agent', kind: 'ClusterInfo',
        clusterInfo: { clusterID: 'east', serviceCIDR: '10.96.0.0/16', gatewayInfos: [{ gatewayIP: '172.18.0.2' }], podCIDRs: ['10.244.0.0/16'] },
      },
    });
  });

  it('is undefined without a Gateway (or without a Gateway that has an IP)', () => {
    assert.equal(clusterInfoExport(input({ gateways: [] })), undefined);
    assert.equal(clusterInfoExport(input({ gateways: [gateway('node-1', undefined), gateway('node-2', '')] })), undefined);
  });

  it('omits empty fields like omitempty, and takes the Service CIDR from a Gateway when not given', () => {
    const re = clusterInfoExport(input({ serviceCIDR: undefined, podCIDRs: [] }));
    assert.deepEqual(re?.spec?.clusterInfo, { clusterID: 'east', serviceCIDR: '10.96.0.0/12', gatewayInfos: [{ gatewayIP: '172.18.0.2' }] });
    const bare = clusterInfoExport({ localClusterID: 'east', leaderNamespace: 'l', agentNamespace: 'a', gateways: [gateway('n', '172.18.0.2', { serviceCIDR: '' })] });
    assert.deepEqual(bare?.spec?.clusterInfo, { clusterID: 'east', gatewayInfos: [{ gatewayIP: '172.18.0.2' }] });
    assert.ok(!('wireGuard' in (bare?.spec?.clusterInfo ?? {})));
  });

  it('lists one gatewayInfo per distinct Gateway IP, sorted, whatever the input order', () => {
    const a = clusterInfoExport(input({ gateways: [gateway('b', '172.18.0.10'), gateway('a', '172.18.0.9'), gateway('c', '172.18.0.9')] }));
    const b = clusterInfoExport(input({ gateways: [gateway('c', '172.18.0.9'), gateway('a', '172.18.0.9'), gateway('b', '172.18.0.10')] }));
    assert.deepEqual(a?.spec?.clusterInfo?.gatewayInfos, [{ gatewayIP: '172.18.0.9' }, { gatewayIP: '172.18.0.10' }]);
    assert.deepEqual(a, b);
  });

  it('carries the WireGuard public key only when a Gateway has one', () => {
    const withKey = clusterInfoExport(input({
      gateways: [gateway('b', '172.18.0.3', { wireGuard: { publicKey: 'key-b' } }), gateway('a', '172.18.0.2', { wireGuard: { publicKey: '' } })],
    }));
    assert.deepEqual(withKey?.spec?.clusterInfo?.wireGuard, { publicKey: 'key-b' });
    const empty = clusterInfoExport(input({ gateways: [gateway('a', '172.18.0.2', { wireGuard: {} })] }));
    assert.equal(empty?.spec?.clusterInfo?.wireGuard, undefined);
  });

  it('does not share the podCIDRs array with its input, and compares equal to itself as live', () => {
    const podCIDRs = ['10.244.0.0/16'];
    const re = clusterInfoExport(input({ podCIDRs }));
    assert.ok(re);
    assert.notEqual(re.spec?.clusterInfo?.podCIDRs, podCIDRs);
    assert.ok(sameExport(re, { ...structuredClone(re), metadata: { ...re.metadata, uid: 'u', resourceVersion: '1' } }));
  });
});
