// The harness's ResourceExport builder (test/harness/resource-export.ts) against the wire
// format written out by hand (antrea-wire.md 2.10): the leader tests and benches that use it
// write what a member writes, names, labels, finalizer and payload included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clusterInfoExportOf, endpointsExport, labelIdentityExport, serviceExport, serviceExports, storedExport,
} from '../harness/resource-export.js';

const NS = 'antrea-multicluster';
const API = { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceExport' };
const FINALIZERS = ['resourceexport.antrea.io/finalizer'];
const labels = (clusterID: string, namespace: string, name: string, kind: string) => ({ sourceName: name, sourceNamespace: namespace, sourceClusterID: clusterID, sourceKind: kind });

describe('harness ResourceExport builder: the member\'s wire format', () => {
  it('a Service export: derived name, the four source labels, the finalizer, the ports as stored (targetPort included)', () => {
    assert.deepEqual(serviceExport('east', 'default', 'web'), {
      ...API,
      metadata: { name: 'east-default-web-service', namespace: NS, labels: labels('east', 'default', 'web', 'Service'), finalizers: FINALIZERS },
      spec: { clusterID: 'east', name: 'web', namespace: 'default', kind: 'Service', service: { serviceSpec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } } },
    });
  });

  it('an Endpoints export in ClusterIP mode: the ClusterIP, the ports without targetPort; in another leader namespace when asked', () => {
    assert.deepEqual(endpointsExport('m0001', 'bench', 's1', { clusterIP: '10.0.3.7', leaderNamespace: 'bench-floor' }), {
      ...API,
      metadata: { name: 'm0001-bench-s1-endpoints', namespace: 'bench-floor', labels: labels('m0001', 'bench', 's1', 'Endpoints'), finalizers: FINALIZERS },
      spec: { clusterID: 'm0001', name: 's1', namespace: 'bench', kind: 'Endpoints', endpoints: { subsets: [{ addresses: [{ ip: '10.0.3.7' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] } },
    });
  });

  it('an Endpoints export in PodIP mode: the ready Pod IPs in numeric order', () => {
    const { endpoints } = serviceExports('east', 'default', 'big', { podIPs: ['10.1.0.10', '10.1.0.9'] });
    assert.deepEqual(endpoints.spec?.endpoints, { subsets: [{ addresses: [{ ip: '10.1.0.9' }, { ip: '10.1.0.10' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] });
  });

  it('a ClusterInfo export; without a gateway IP, no gatewayInfos', () => {
    assert.deepEqual(clusterInfoExportOf('east', { serviceCIDR: '10.96.0.0/12', podCIDRs: ['10.244.0.0/16'], gatewayIP: '172.18.0.2' }), {
      ...API,
      metadata: { name: 'east-clusterinfo', namespace: NS, labels: { sourceClusterID: 'east', sourceKind: 'ClusterInfo' }, finalizers: FINALIZERS },
      spec: { clusterID: 'east', name: 'east', namespace: 'kube-system', kind: 'ClusterInfo',
        clusterInfo: { clusterID: 'east', serviceCIDR: '10.96.0.0/12', podCIDRs: ['10.244.0.0/16'], gatewayInfos: [{ gatewayIP: '172.18.0.2' }] } },
    });
    assert.deepEqual(clusterInfoExportOf('east', { podCIDRs: ['10.244.0.0/16'] }).spec?.clusterInfo, { clusterID: 'east', podCIDRs: ['10.244.0.0/16'] });
  });

  it('a LabelIdentity export: named after sha1(label), no finalizer; a given name kept', () => {
    assert.deepEqual(labelIdentityExport('east', 'ns:x=y&pod:'), {
      ...API,
      metadata: { name: 'east-453acce98ab01c9d', namespace: NS, labels: { sourceKind: 'LabelIdentity', sourceClusterID: 'east' } },
      spec: { clusterID: 'east', kind: 'LabelIdentity', labelIdentity: { normalizedLabel: 'ns:x=y&pod:' } },
    });
    assert.equal(labelIdentityExport('flood', 'ns:x=1&pod:', 'flood-0000000000000001').metadata?.name, 'flood-0000000000000001');
  });

  it('stored: creation and deletion times added, nothing else changed', () => {
    const re = serviceExport('east', 'ns', 'web');
    assert.deepEqual(storedExport(re, '2026-12-02T10:00:00.000Z', '2026-12-02T10:00:01.000Z'), {
      ...re, metadata: { ...re.metadata, creationTimestamp: '2026-12-02T10:00:00.000Z', deletionTimestamp: '2026-12-02T10:00:01.000Z' },
    });
  });

  it('a Service the member would not export (no ready Pod IP) is a test written wrong: it throws', () => {
    assert.throws(() => serviceExport('east', 'ns', 'web', { podIPs: [] }), /the member would not export ns\/web: Service has no Endpoints/);
  });
});
