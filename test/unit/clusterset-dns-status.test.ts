// status's "clusterset.local served": yes only when the Corefile, the CoreDNS version and its
// access to ServiceImports all say so; no names every reason; unknown names what could not be read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planCorefilePatch } from '../../src/cli/dns/corefile.js';
import { clustersetDNSView, renderClustersetDNS, type ClustersetDNSInput } from '../../src/cli/report/dns.js';
import { KUBEADM_COREFILE } from '../fixtures/corefiles.js';

const patched = (planCorefilePatch(KUBEADM_COREFILE) as { corefile: string }).corefile;
const served: ClustersetDNSInput = {
  corefile: { value: patched },
  image: { value: 'registry.k8s.io/coredns/coredns:v1.12.2' },
  serviceImportAccess: { value: true },
};

describe('status: clusterset.local served', () => {
  it('yes: patched Corefile, CoreDNS 1.12.2, ServiceImports readable', () => {
    const view = clustersetDNSView(served);
    assert.equal(view.served, 'yes');
    assert.match(renderClustersetDNS(view), /^clusterset\.local served: yes \(/);
  });

  it('no: each missing piece is named, all of them at once', () => {
    assert.deepEqual(clustersetDNSView({ ...served, corefile: { value: KUBEADM_COREFILE } }), {
      served: 'no', why: 'Corefile: the kubernetes plugin\'s zones (cluster.local in-addr.arpa ip6.arpa) do not include clusterset.local',
    });
    const all = clustersetDNSView({ corefile: { value: KUBEADM_COREFILE }, image: { value: 'registry.k8s.io/coredns/coredns:v1.11.3' }, serviceImportAccess: { value: false } });
    assert.equal(all.served, 'no');
    assert.match(all.why, /^Corefile: .*; CoreDNS 1\.11\.3 .* older than 1\.12\.2.*; CoreDNS's ServiceAccount may not list ServiceImports/);
  });

  it('unknown: what could not be read, unless something already says no', () => {
    assert.deepEqual(clustersetDNSView({ ...served, image: { value: 'coredns/coredns:latest' } }).served, 'unknown');
    const forbidden = clustersetDNSView({ ...served, corefile: { problem: 'not allowed to read ConfigMap kube-system/coredns' } });
    assert.deepEqual(forbidden, { served: 'unknown', why: 'not allowed to read ConfigMap kube-system/coredns' });
    assert.equal(clustersetDNSView({ ...served, corefile: { problem: 'x' }, serviceImportAccess: { value: false } }).served, 'no');
  });
});
