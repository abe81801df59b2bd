// Dual-stack ClusterSetIP (issue 27, KEP-1645 ipFamilies): a Service exported dual-stack from a
// dual-stack member is imported with one `ips` entry per family, in the order of `ipFamilies`,
// from the local Service's clusterIPs: both families in a dual-stack member, the one it serves
// in a single-stack member. A headless import carries its families too. Stock CoreDNS (the MCS
// `multicluster` plugin) run against each member answers the clusterset name with those VIPs:
// A and AAAA in the dual-stack member, A only in the single-stack one.
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { SERVICE_IMPORT, type ServiceImport } from '../../src/common/api/mcs.js';
import { useAgentClusterSet, type AgentMember } from '../harness/agents.js';
import { startControlPlane } from '../harness/control-plane.js';
import { lookup, startCoreDNS, type CoreDNS } from '../harness/coredns.js';
import { maybe } from '../harness/imports.js';
import { exportService } from '../harness/service-export.js';
import { waitFor } from '../harness/wait.js';

const NS = 'team-a';
const converge = { timeoutMs: 30_000, intervalMs: 200 };
const familyOf = (ip: string) => (isIP(ip) === 6 ? 'IPv6' : 'IPv4');

type Member = AgentMember;

describe('dual-stack ClusterSetIP: a dual-stack export into a dual-stack and a single-stack member', () => {
  const { members } = useAgentClusterSet(NS, async () => {
    const [leader, east, west] = await Promise.all([startControlPlane('ds-leader'), startControlPlane('ds-east', { dualStack: true }), startControlPlane('ds-west')]);
    return { leader, members: [['east', east], ['west', west]] };
  });

  const serviceImport = (m: Member, name: string) => maybe(async () => (await m.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespace: NS, name,
  })) as ServiceImport);
  const exportDualStack = async (m: Member, name: string, headless: boolean) => {
    const { service } = await exportService(m.cp.adminConfig(), NS, name, {
      spec: { ipFamilyPolicy: 'PreferDualStack', ...(headless && { clusterIP: 'None' }), ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }] },
      endpoints: { addresses: ['10.244.1.5'], ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }] },
    });
    assert.equal(service.spec?.ipFamilies?.length, 2, 'the exporting member is dual-stack');
  };

  it('imports one VIP per family, in the order of ipFamilies: both in the dual-stack member, IPv4 in the single-stack one', async () => {
    const [east, west] = members as [Member, Member];
    await exportDualStack(east, 'hello', false);
    const wants = { east: 2, west: 1 };
    for (const m of [east, west]) {
      const si = await waitFor(`ServiceImport in ${m.id}`, async () => {
        const s = await serviceImport(m, 'hello');
        return s?.spec?.ips?.length === wants[m.id as 'east' | 'west'] && s.spec.ipFamilies?.length === s.spec.ips.length ? s : undefined;
      }, converge);
      const derived = await m.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: NS, name: 'antrea-mc-hello' });
      assert.deepEqual(si.spec?.ips, derived.spec?.clusterIPs);
      assert.deepEqual(si.spec?.ipFamilies, derived.spec?.ipFamilies);
      assert.deepEqual(si.spec?.ips?.map(familyOf), si.spec?.ipFamilies, `${m.id}: ips[i] is of family ipFamilies[i]`);
      assert.equal(derived.spec?.ipFamilyPolicy, 'PreferDualStack');
    }
    assert.deepEqual((await serviceImport(west, 'hello'))?.spec?.ipFamilies, ['IPv4']);
    // One MCS EndpointSlice per family the exporter has (ClusterIP mode: its two ClusterIPs).
    const slices = await waitFor('an IPv4 and an IPv6 MCS EndpointSlice in east', async () => {
      const s = (await east.cp.adminConfig().makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: NS, labelSelector: 'multicluster.kubernetes.io/service-name=hello' })).items;
      return s.length === 2 ? s : undefined;
    }, converge);
    assert.deepEqual(slices.map((s) => s.addressType).sort(), ['IPv4', 'IPv6']);
  });

  it('clusterset.local: the real CoreDNS answers A and AAAA in the dual-stack member, A only in the single-stack one', async () => {
    const name = `hello.${NS}.svc.clusterset.local`;
    for (const m of members) {
      const si = await serviceImport(m, 'hello');
      const want = (family: 'IPv4' | 'IPv6') => (si?.spec?.ips ?? []).filter((ip) => familyOf(ip) === family);
      const coredns: CoreDNS = await startCoreDNS(m.cp);
      try {
        const a = await lookup(() => coredns.resolver().resolve4(name));
        const aaaa = await lookup(() => coredns.resolver().resolve6(name));
        assert.deepEqual(a, want('IPv4'), `${m.id}: A ${name}`);
        if (m.id === 'east') {
          assert.equal(want('IPv6').length, 1, 'the dual-stack member imports an IPv6 VIP');
          assert.deepEqual(aaaa, want('IPv6'), `east: AAAA ${name}`);
        } else {
          // The name exists with no IPv6 address: NOERROR without answers (ENODATA), not NXDOMAIN.
          assert.deepEqual(aaaa, { error: 'ENODATA' }, `west: AAAA ${name}`);
        }
      } finally {
        await coredns.stop();
      }
    }
  });

  it('a headless dual-stack import carries the families of its local headless Service and no VIP', async () => {
    const [east, west] = members as [Member, Member];
    await exportDualStack(east, 'db', true);
    for (const m of [east, west]) {
      const si = await waitFor(`headless ServiceImport in ${m.id}`, async () => {
        const s = await serviceImport(m, 'db');
        if ((s?.spec?.ipFamilies?.length ?? 0) > 0) return s;
        throw new Error(`ServiceImport ${m.id}/db: ${JSON.stringify(s?.spec)}`);
      }, converge);
      assert.equal(si.spec?.type, 'Headless');
      assert.equal(si.spec?.ips, undefined);
      // Kubernetes gives a selector-less headless PreferDualStack Service both families even on
      // a single-stack member (nothing is allocated): the import states what the Service has.
      const derived = await m.cp.adminConfig().makeApiClient(CoreV1Api).readNamespacedService({ namespace: NS, name: 'antrea-mc-db' });
      assert.deepEqual(si.spec?.ipFamilies, derived.spec?.ipFamilies);
    }
  });
});
