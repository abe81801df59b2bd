// The Corefile edit of `join --configure-dns`: kubeadm's and k3s's shapes patched, a second run
// writes nothing, the revert gives back the original byte for byte, and every shape it does not
// know (or that someone else configured) is refused with what to add by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  corefileServesClusterset, MANUAL_INSTRUCTIONS, PATCH_MARKER, planCorefilePatch, planCorefileRevert, type CorefilePlan,
} from '../../src/cli/dns/corefile.js';
import { coreDNSImageVersion, coreDNSVersionVerdict } from '../../src/cli/dns/coredns-version.js';
import { K3S_COREFILE, KUBEADM_COREFILE } from '../fixtures/corefiles.js';

function written(plan: CorefilePlan): string {
  assert.equal(plan.action, 'write', JSON.stringify(plan));
  return (plan as { corefile: string }).corefile;
}

function refused(plan: CorefilePlan, why: RegExp): void {
  assert.equal(plan.action, 'refuse', JSON.stringify(plan));
  const r = plan as { why: string; manual: string };
  assert.match(r.why, why);
  assert.equal(r.manual, MANUAL_INSTRUCTIONS);
  assert.match(r.manual, /multicluster clusterset\.local/);
}

describe('Corefile patch for clusterset.local', () => {
  it('kubeadm shape: the zone after cluster.local and the multicluster line at the end of the block, nothing else changed', () => {
    const out = written(planCorefilePatch(KUBEADM_COREFILE));
    assert.equal(out, KUBEADM_COREFILE
      .replace('kubernetes cluster.local in-addr.arpa ip6.arpa {', 'kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {')
      .replace('       ttl 30\n', `       ttl 30\n       multicluster clusterset.local ${PATCH_MARKER}\n`));
    assert.deepEqual(corefileServesClusterset(out), { served: true, why: 'the kubernetes plugin has clusterset.local and "multicluster clusterset.local"' });
    assert.equal(corefileServesClusterset(KUBEADM_COREFILE).served, false);
  });

  it('k3s shape (hosts block, top-level import): patched the same way', () => {
    const out = written(planCorefilePatch(K3S_COREFILE));
    assert.match(out, /^ {4}kubernetes cluster\.local clusterset\.local in-addr\.arpa ip6\.arpa \{\n {6}pods insecure\n {6}fallthrough in-addr\.arpa ip6\.arpa\n {6}multicluster clusterset\.local # added by/m);
    assert.ok(out.includes('hosts /etc/coredns/NodeHosts {\n      ttl 60'), 'the hosts block is untouched');
    assert.ok(out.endsWith('import /etc/coredns/custom/*.server\n'));
  });

  it('idempotent: the patched Corefile plans nothing', () => {
    const once = written(planCorefilePatch(KUBEADM_COREFILE));
    assert.equal(planCorefilePatch(once).action, 'none');
  });

  it('configured by hand (no marker): nothing to write, and the revert leaves it alone', () => {
    const byHand = KUBEADM_COREFILE
      .replace('cluster.local in-addr.arpa', 'cluster.local clusterset.local in-addr.arpa')
      .replace('       ttl 30\n', '       ttl 30\n       multicluster clusterset.local\n');
    assert.equal(planCorefilePatch(byHand).action, 'none');
    assert.equal(planCorefileRevert(byHand).action, 'none');
    assert.equal(corefileServesClusterset(byHand).served, true);
  });

  it('revert gives back the original byte for byte, and a second revert writes nothing', () => {
    for (const original of [KUBEADM_COREFILE, K3S_COREFILE]) {
      const reverted = written(planCorefileRevert(written(planCorefilePatch(original))));
      assert.equal(reverted, original);
      assert.equal(planCorefileRevert(reverted).action, 'none');
    }
  });

  it('comments: a commented-out kubernetes line is not a block; a comment on the kubernetes line is kept', () => {
    const commented = KUBEADM_COREFILE.replace('    ready\n', '    ready\n    # kubernetes example.local {\n');
    const out = written(planCorefilePatch(commented));
    assert.ok(out.includes('    # kubernetes example.local {\n'));
    assert.match(out, /kubernetes cluster\.local clusterset\.local in-addr/);

    const trailing = KUBEADM_COREFILE.replace('ip6.arpa {\n       pods', 'ip6.arpa { # the cluster zone\n       pods');
    const patched = written(planCorefilePatch(trailing));
    assert.ok(patched.includes('kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa { # the cluster zone\n'));
    assert.equal(written(planCorefileRevert(patched)), trailing);
  });

  it('multiple server blocks: the one for "." with the kubernetes plugin is edited, the others untouched', () => {
    const corefile = `example.org:53 {
    forward . 10.0.0.10
}
${KUBEADM_COREFILE}consul.local:53 {
    errors
    cache 30
    forward . 10.150.0.1
}
`;
    const out = written(planCorefilePatch(corefile));
    assert.ok(out.startsWith('example.org:53 {\n    forward . 10.0.0.10\n}\n.:53 {'));
    assert.ok(out.endsWith('consul.local:53 {\n    errors\n    cache 30\n    forward . 10.150.0.1\n}\n'));
    assert.equal(written(planCorefileRevert(out)), corefile);
  });

  it('refuses, naming what it found, every shape it does not know', () => {
    refused(planCorefilePatch(`cluster.local:53 {
    kubernetes cluster.local {
        pods insecure
    }
}
.:53 {
    forward . /etc/resolv.conf
}
`), /server block "cluster\.local:53", which does not receive queries for clusterset\.local/);
    refused(planCorefilePatch('.:53 {\n    kubernetes cluster.local\n    forward . /etc/resolv.conf\n}\n'), /without an options block/);
    refused(planCorefilePatch('.:53 {\n    forward . /etc/resolv.conf\n}\n'), /no kubernetes plugin block/);
    refused(planCorefilePatch(`${KUBEADM_COREFILE}.:5353 {\n    kubernetes cluster.local {\n    }\n}\n`), /2 kubernetes plugin blocks were found \(lines 7, 25\)/);
    refused(planCorefilePatch(KUBEADM_COREFILE.replace('       ttl 30\n', '       ttl 30\n       multicluster clusterset.example\n')), /already has "multicluster clusterset\.example"/);
    refused(planCorefilePatch(KUBEADM_COREFILE.replace('cluster.local in-addr', 'cluster.local clusterset.local in-addr')), /already lists clusterset\.local without multicluster/);
    refused(planCorefilePatch(KUBEADM_COREFILE.replace('    loadbalance\n}\n', '    loadbalance\n')), /opened and never closed/);
    refused(planCorefilePatch(KUBEADM_COREFILE.replace('       ttl 30\n', '       ttl 30\n       namespaces {\n       }\n')), /nests a block/);
    refused(planCorefilePatch('.:53 {\n    kubernetes {\n        pods insecure\n    }\n}\n'), /lists no zones/);
    refused(planCorefilePatch(''), /no kubernetes plugin block/);
  });

  it('status: a Corefile that lists the zone without multicluster does not serve it', () => {
    assert.deepEqual(corefileServesClusterset(KUBEADM_COREFILE.replace('cluster.local in-addr', 'cluster.local clusterset.local in-addr')),
      { served: false, why: 'the kubernetes plugin has no "multicluster clusterset.local"' });
    assert.match(corefileServesClusterset(KUBEADM_COREFILE).why, /zones \(cluster\.local in-addr\.arpa ip6\.arpa\) do not include clusterset\.local/);
  });
});

describe('CoreDNS version from the image tag', () => {
  it('reads registry, port and digest forms', () => {
    assert.deepEqual(coreDNSImageVersion('registry.k8s.io/coredns/coredns:v1.12.2'), [1, 12, 2]);
    assert.deepEqual(coreDNSImageVersion('localhost:5000/coredns:1.15.0'), [1, 15, 0]);
    assert.deepEqual(coreDNSImageVersion('rancher/mirrored-coredns-coredns:1.12.3-build1@sha256:abc'), [1, 12, 3]);
    assert.equal(coreDNSImageVersion('localhost:5000/coredns'), undefined);
    assert.equal(coreDNSImageVersion('coredns/coredns:latest'), undefined);
  });

  it('1.12.2 is the first that can; older is reported with the version; no tag is unknown', () => {
    assert.deepEqual(coreDNSVersionVerdict('registry.k8s.io/coredns/coredns:v1.12.2'), { ok: true, version: '1.12.2' });
    assert.equal(coreDNSVersionVerdict('registry.k8s.io/coredns/coredns:v2.0.0').ok, true);
    const old = coreDNSVersionVerdict('registry.k8s.io/coredns/coredns:v1.12.1');
    assert.equal(old.ok, false);
    assert.match((old as { why: string }).why, /CoreDNS 1\.12\.1 .* older than 1\.12\.2/);
    assert.equal(coreDNSVersionVerdict('registry.k8s.io/coredns/coredns:v1.11.9').ok, false);
    assert.equal(coreDNSVersionVerdict('coredns/coredns:latest').ok, undefined);
    assert.equal(coreDNSVersionVerdict(undefined).ok, undefined);
  });
});
