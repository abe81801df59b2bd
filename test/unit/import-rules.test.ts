import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceImport } from '../../src/common/api/antrea.js';
import {
  AGENT_SELECTOR,
  clusterSetSelector,
  CLUSTERSET_LABEL,
  isOwnedBy,
  isOwnedByAgent,
  LEADER_LABEL,
  LEADER_NAMESPACE_ANNOTATION,
  MANAGED_BY_LABEL,
  ownerLabels,
  ownerSelector,
  RESOURCE_IMPORT_ANNOTATION,
  toLabelValue,
  type ImportOwner,
} from '../../src/importer/ownership.js';
import {
  desiredForImport,
  IMPORT_HASH_ANNOTATION,
  mergeForUpdate,
  semanticallyEqual,
  withServiceImportIPs,
  serviceAddresses,
  type DesiredObject,
  type ImportPlan,
} from '../../src/importer/rules.js';

const owner: ImportOwner = {
  clusterSetID: 'set-1',
  leaderClusterID: 'leader-1',
  leaderNamespace: 'antrea-multicluster',
  agentNamespace: 'clusterset-agent',
  localClusterID: 'east',
};
const OFF = { enableLabelIdentity: false };
const ON = { enableLabelIdentity: true };
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

function ri(name: string, spec: NonNullable<ResourceImport['spec']>): ResourceImport {
  return { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImport', metadata: { name, namespace: 'antrea-multicluster' }, spec };
}

const serviceRI = ri('default-nginx-service', {
  name: 'nginx',
  namespace: 'default',
  kind: 'ServiceImport',
  serviceImport: {
    spec: {
      type: 'ClusterSetIP',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', appProtocol: 'http' }, { name: 'dns', port: 53, protocol: 'UDP' }],
      ipFamilies: ['IPv4'],
      internalTrafficPolicy: 'Cluster',
      sessionAffinity: 'None',
    },
  },
});

const endpointsRI = ri('default-nginx-endpoints', {
  name: 'nginx',
  namespace: 'default',
  kind: 'Endpoints',
  endpoints: {
    subsets: [{
      addresses: [{ ip: '10.0.0.2', nodeName: 'n1' }, { ip: '10.0.0.1' }],
      notReadyAddresses: [{ ip: '10.0.0.9' }],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    }],
  },
});

const clusterInfoRI = ri('west-clusterinfo', {
  name: 'west',
  namespace: 'antrea-multicluster',
  kind: 'ClusterInfo',
  clusterinfo: { clusterID: 'west', serviceCIDR: '10.96.0.0/12', gatewayInfos: [{ gatewayIP: '172.18.0.3' }], podCIDRs: ['10.244.0.0/16'] },
});

const acnpRI = ri('strict-antreaclusternetworkpolicy', {
  name: 'strict',
  namespace: '',
  kind: 'AntreaClusterNetworkPolicy',
  clusternetworkpolicy: { priority: 1, tier: 'securityops', appliedTo: [{ podSelector: {} }], ingress: [{ action: 'Drop', from: [{ namespaceSelector: {} }] }] },
});

const labelIdentityRI = ri('a1b2c3d4e5f60708', { name: 'a1b2c3d4e5f60708', kind: 'LabelIdentity', labelIdentity: { label: 'ns:x=y&pod:app=db', id: 12 } });

function apply(plan: ImportPlan): DesiredObject[] {
  if (plan.kind === 'skip') assert.fail(`skipped: ${plan.reason}`);
  return plan.objects;
}

/** The Endpoints of an Endpoints import (its EndpointSlices follow it). */
function endpointsOf(objects: readonly DesiredObject[]): DesiredObject {
  return only(objects.filter((o) => o.kind === 'Endpoints'));
}

function only<T>(items: readonly T[]): T {
  assert.equal(items.length, 1);
  const [item] = items;
  assert.ok(item !== undefined);
  return item;
}

function meta(obj: DesiredObject): { labels: Record<string, string>; annotations: Record<string, string> } {
  return obj.body['metadata'] as { labels: Record<string, string>; annotations: Record<string, string> };
}

describe('ownership', () => {
  it('labels imported objects with the agent, the ClusterSet and the leader', () => {
    assert.deepEqual(ownerLabels(owner), { [MANAGED_BY_LABEL]: 'clusterset-agent', [CLUSTERSET_LABEL]: 'set-1', [LEADER_LABEL]: 'leader-1' });
    // The leader label is provenance (which leader wrote it): one leader of a ClusterSet takes over another's imports.
    assert.equal(ownerSelector(owner), 'app.kubernetes.io/managed-by=clusterset-agent,multicluster.clusterset-agent.io/clusterset=set-1');
    assert.equal(clusterSetSelector('set-1'), 'app.kubernetes.io/managed-by=clusterset-agent,multicluster.clusterset-agent.io/clusterset=set-1');
    assert.equal(AGENT_SELECTOR, 'app.kubernetes.io/managed-by=clusterset-agent');
  });

  it('turns IDs that are not label values into a stable, readable, hashed label value', () => {
    const long = `${'cluster-set.'.repeat(10)}example.com`;
    const other = `${'cluster-set.'.repeat(10)}example.org`;
    const value = toLabelValue(long);
    assert.ok(value.length <= 63 && LABEL_VALUE.test(value), value);
    assert.ok(value.startsWith('cluster-set.cluster-set.'), value);
    assert.equal(toLabelValue(long), value, 'stable across calls');
    assert.notEqual(toLabelValue(other), value);
    assert.equal(toLabelValue('a'.repeat(63)), 'a'.repeat(63), 'a valid 63-character ID is kept as is');
    assert.match(toLabelValue('a'.repeat(64)), /^a{52}-[0-9a-f]{10}$/);
    const labels = ownerLabels({ ...owner, clusterSetID: long, leaderClusterID: '-.-' });
    for (const v of Object.values(labels)) assert.ok(v.length <= 63 && LABEL_VALUE.test(v), v);
  });

  it('recognises its own objects, typed or plain JSON, and nobody else’s', () => {
    const labels = ownerLabels(owner);
    assert.equal(isOwnedBy({ metadata: { labels } }, owner), true);
    const plainJson: Record<string, unknown> = JSON.parse(JSON.stringify({ metadata: { labels: { ...labels, extra: 'x' } } })) as Record<string, unknown>;
    assert.equal(isOwnedBy(plainJson, owner), true);
    assert.equal(isOwnedBy({ metadata: { labels } }, { ...owner, clusterSetID: 'set-2' }), false);
    assert.equal(isOwnedBy({ metadata: { labels } }, { ...owner, leaderClusterID: 'leader-2' }), true, 'another leader of the same ClusterSet takes it over');
    assert.equal(isOwnedBy({ metadata: { labels } }, { ...owner, leaderNamespace: 'elsewhere' }), true, 'leader namespace is provenance only');
    assert.equal(isOwnedBy({ metadata: {} }, owner), false);
    assert.equal(isOwnedBy({}, owner), false);
    assert.equal(isOwnedBy({ metadata: 'nonsense' }, owner), false);
    assert.equal(isOwnedByAgent({ metadata: { labels: { [MANAGED_BY_LABEL]: 'clusterset-agent' } } }), true);
    assert.equal(isOwnedByAgent({ metadata: { labels: { [MANAGED_BY_LABEL]: 'helm' } } }), false);
    assert.equal(isOwnedByAgent({ metadata: { annotations: { 'multicluster.antrea.io/imported-service': 'true' } } }), false);
  });
});

describe('desiredForImport()', () => {
  it('turns a ServiceImport RI into a selector-less ClusterIP Service antrea-mc-<name> and an MCS ServiceImport', () => {
    const [service, serviceImport, ...rest] = apply(desiredForImport(serviceRI, owner, OFF));
    assert.equal(rest.length, 0);
    assert.ok(service && serviceImport);
    const hash = meta(service).annotations[IMPORT_HASH_ANNOTATION];
    // Pinned: objects written by an earlier version must not all look changed after an upgrade.
    assert.equal(hash, '87a3fd74aedc057d');
    assert.deepEqual(service, {
      apiVersion: 'v1', kind: 'Service', plural: 'services', group: '', version: 'v1', namespaced: true, namespace: 'default',
      name: 'antrea-mc-nginx', sourceKind: 'ServiceImport',
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'antrea-mc-nginx',
          namespace: 'default',
          labels: ownerLabels(owner),
          annotations: {
            [RESOURCE_IMPORT_ANNOTATION]: 'default-nginx-service',
            [LEADER_NAMESPACE_ANNOTATION]: 'antrea-multicluster',
            'multicluster.antrea.io/imported-service': 'true',
            [IMPORT_HASH_ANNOTATION]: hash,
          },
        },
        spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] },
      },
    });
    assert.equal(serviceImport.apiVersion, 'multicluster.x-k8s.io/v1beta1');
    assert.equal(serviceImport.version, 'v1beta1');
    assert.equal(serviceImport.plural, 'serviceimports');
    assert.equal(serviceImport.name, 'nginx');
    assert.equal(serviceImport.namespace, 'default');
    assert.equal(meta(serviceImport).annotations['multicluster.antrea.io/imported-service'], undefined);
    assert.equal(meta(serviceImport).annotations[RESOURCE_IMPORT_ANNOTATION], 'default-nginx-service');
    // Only member-CRD fields, and no ips until the engine knows the Service's ClusterIP.
    assert.deepEqual(serviceImport.body['spec'], {
      type: 'ClusterSetIP',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', appProtocol: 'http' }, { name: 'dns', port: 53, protocol: 'UDP' }],
    });
  });

  it('turns a Headless ServiceImport RI into a headless Service and a Headless ServiceImport (KEP-1645)', () => {
    const plan = desiredForImport(ri('a-b-service', { name: 'b', namespace: 'a', kind: 'ServiceImport', serviceImport: { spec: { type: 'Headless', ports: [{ name: 'tcp', port: 42 }] } } }), owner, OFF);
    const [service, serviceImport] = apply(plan);
    assert.deepEqual(service?.body['spec'], { type: 'ClusterIP', clusterIP: 'None', ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }] });
    assert.deepEqual(serviceImport?.body['spec'], { type: 'Headless', ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }] });
  });

  it('defaults a missing port protocol to TCP and leaves an unnamed port unnamed', () => {
    const plan = desiredForImport(ri('a-b-service', { name: 'b', namespace: 'a', kind: 'ServiceImport', serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ port: 8080 }] } } }), owner, OFF);
    const [service] = apply(plan);
    assert.deepEqual((service?.body['spec'] as { ports: unknown }).ports, [{ port: 8080, protocol: 'TCP' }]);
  });

  it('turns an Endpoints RI into Endpoints antrea-mc-<name> with the subsets', () => {
    const endpoints = endpointsOf(apply(desiredForImport(endpointsRI, owner, OFF)));
    assert.equal(endpoints.kind, 'Endpoints');
    assert.equal(endpoints.name, 'antrea-mc-nginx');
    assert.equal(endpoints.namespace, 'default');
    assert.equal(meta(endpoints).annotations['multicluster.antrea.io/imported-service'], 'true');
    assert.deepEqual(endpoints.body['subsets'], endpointsRI.spec?.endpoints?.subsets);
    assert.equal(endpoints.body['spec'], undefined);
  });

  it('turns a ClusterInfo RI into a ClusterInfoImport named after the RI in the agent namespace', () => {
    const cii = only(apply(desiredForImport(clusterInfoRI, owner, OFF)));
    assert.equal(cii.kind, 'ClusterInfoImport');
    assert.equal(cii.name, 'west-clusterinfo');
    assert.equal(cii.namespace, 'clusterset-agent');
    assert.deepEqual(cii.body['spec'], clusterInfoRI.spec?.clusterinfo);
  });

  it('skips ClusterInfo about the local cluster and ClusterInfo without payload', () => {
    const self = ri('east-clusterinfo', { name: 'east', kind: 'ClusterInfo', clusterinfo: { clusterID: 'east' } });
    assert.equal(desiredForImport(self, owner, OFF).kind, 'skip');
    assert.equal(desiredForImport(ri('x-clusterinfo', { name: 'x', kind: 'ClusterInfo' }), owner, OFF).kind, 'skip');
  });

  it('turns an ACNP RI into a cluster-scoped, annotated ClusterNetworkPolicy antrea-mc-<name>', () => {
    const acnp = only(apply(desiredForImport(acnpRI, owner, OFF)));
    assert.equal(acnp.apiVersion, 'crd.antrea.io/v1beta1');
    assert.equal(acnp.kind, 'ClusterNetworkPolicy');
    assert.equal(acnp.plural, 'clusternetworkpolicies');
    assert.equal(acnp.namespaced, false);
    assert.equal('namespace' in acnp, false);
    assert.equal('namespace' in (acnp.body['metadata'] as object), false);
    assert.equal(acnp.name, 'antrea-mc-strict');
    assert.equal(meta(acnp).annotations['multicluster.antrea.io/imported-acnp'], 'true');
    assert.deepEqual(acnp.body['spec'], acnpRI.spec?.clusternetworkpolicy);
    assert.equal(desiredForImport(ri('p-antreaclusternetworkpolicy', { name: 'p', kind: 'AntreaClusterNetworkPolicy' }), owner, OFF).kind, 'skip');
  });

  it('imports a LabelIdentity only when enabled, named after the RI', () => {
    const off = desiredForImport(labelIdentityRI, owner, OFF);
    assert.equal(off.kind, 'skip');
    const li = only(apply(desiredForImport(labelIdentityRI, owner, ON)));
    assert.equal(li.kind, 'LabelIdentity');
    assert.equal(li.namespaced, false);
    assert.equal(li.name, 'a1b2c3d4e5f60708');
    assert.deepEqual(li.body['spec'], { label: 'ns:x=y&pod:app=db', id: 12 });
  });

  it('honours spec.clusterID targeting (Antrea does not)', () => {
    const at = (clusterID: string[]) => desiredForImport({ ...serviceRI, spec: { ...serviceRI.spec, clusterID } }, owner, OFF).kind;
    assert.equal(at([]), 'apply');
    assert.equal(at(['west', 'east']), 'apply');
    assert.equal(at(['west']), 'skip');
    const plan = desiredForImport({ ...serviceRI, spec: { ...serviceRI.spec, clusterID: ['west'] } }, owner, OFF);
    assert.match(plan.kind === 'skip' ? plan.reason : '', /west, not at east/);
  });

  it('skips ExternalEntity and RIs without spec; hands unknown kinds to checkImport as an empty apply', () => {
    assert.equal(desiredForImport(ri('x', { name: 'x', kind: 'ExternalEntity' }), owner, OFF).kind, 'skip');
    assert.equal(desiredForImport({ metadata: { name: 'x' } }, owner, OFF).kind, 'skip');
    assert.deepEqual(desiredForImport(ri('x', { name: 'x', kind: 'Secret', raw: { data: 'eA==' } }), owner, OFF), { kind: 'apply', objects: [] });
  });

  it('is deterministic, shares nothing with the RI, and re-hashes when the payload changes', () => {
    for (const input of [serviceRI, endpointsRI, clusterInfoRI, acnpRI, labelIdentityRI]) {
      assert.deepEqual(desiredForImport(input, owner, ON), desiredForImport(structuredClone(input), owner, ON));
    }
    const copy = structuredClone(acnpRI);
    const acnp = only(apply(desiredForImport(copy, owner, OFF)));
    (copy.spec?.clusternetworkpolicy as { priority: number }).priority = 99;
    assert.equal((acnp.body['spec'] as { priority: number }).priority, 1);

    const changed = structuredClone(serviceRI);
    const port = changed.spec?.serviceImport?.spec?.ports[0];
    assert.ok(port);
    port.port = 8080;
    const [before] = apply(desiredForImport(serviceRI, owner, OFF));
    const [after] = apply(desiredForImport(changed, owner, OFF));
    assert.ok(before && after);
    assert.notEqual(meta(before).annotations[IMPORT_HASH_ANNOTATION], meta(after).annotations[IMPORT_HASH_ANNOTATION]);
  });
});

describe('the content hash', () => {
  it('is pinned for every kind, whatever the payload\'s key order (objects written by an earlier version must not all look changed)', () => {
    const hashes = (input: ResourceImport) => apply(desiredForImport(input, owner, ON)).map((o) => `${o.kind}/${o.name} ${meta(o).annotations[IMPORT_HASH_ANNOTATION] ?? ''}`);
    const all = [serviceRI, endpointsRI, clusterInfoRI, acnpRI, labelIdentityRI].flatMap(hashes);
    assert.deepEqual(all, PINNED_HASHES);
    // Keys in reverse order, an undefined member added: the same hashes.
    const reversed = <T>(value: T): T => {
      if (Array.isArray(value)) return (value as unknown[]).map(reversed) as T;
      if (typeof value !== 'object' || value === null) return value;
      const entries: [string, unknown][] = Object.entries(value).reverse().map(([k, v]: [string, unknown]) => [k, reversed(v)]);
      return Object.fromEntries([...entries, ['unset', undefined]]) as T;
    };
    assert.deepEqual([serviceRI, endpointsRI, clusterInfoRI, acnpRI, labelIdentityRI].map(reversed).flatMap(hashes), PINNED_HASHES);
  });
});

/** Computed by the version before the hash's stringify was rewritten (sorted keys joined, then sha256). */
const PINNED_HASHES: readonly string[] = [
  'Service/antrea-mc-nginx 87a3fd74aedc057d', 'ServiceImport/nginx 4160ef385af64af8', 'EndpointSlice/antrea-mc-nginx.ipv4 b4e84b087490296a',
  'Endpoints/antrea-mc-nginx 93e057cc091ed0a9', 'ClusterInfoImport/west-clusterinfo 36820fdf06c0bf17', 'ClusterNetworkPolicy/antrea-mc-strict d6b230712ccb327b',
  'LabelIdentity/a1b2c3d4e5f60708 18a6c93cf83152be',
];

describe('withServiceImportIPs()', () => {
  it('sets one VIP per family in the Service\'s order without touching the input, and removes ips for an empty list', () => {
    const [, serviceImport] = apply(desiredForImport(serviceRI, owner, OFF));
    assert.ok(serviceImport);
    const body = withServiceImportIPs(serviceImport.body, ['fd00::10', '10.96.0.10'], ['IPv6', 'IPv4']);
    assert.deepEqual(body['spec'], { ...(serviceImport.body['spec'] as object), ips: ['fd00::10', '10.96.0.10'], ipFamilies: ['IPv6', 'IPv4'] });
    assert.equal((serviceImport.body['spec'] as { ips?: unknown }).ips, undefined);
    assert.equal('ips' in (withServiceImportIPs(body, [])['spec'] as object), false);
    assert.equal('ipFamilies' in (withServiceImportIPs(body, [])['spec'] as object), false);
    // A headless import has families and no VIP.
    assert.deepEqual(withServiceImportIPs(serviceImport.body, [], ['IPv4'])['spec'], { ...(serviceImport.body['spec'] as object), ipFamilies: ['IPv4'] });
  });

  it('keeps one VIP and no families where the member\'s CRD is Antrea\'s v1alpha1 (one ips, no ipFamilies)', () => {
    const [, serviceImport] = apply(desiredForImport(serviceRI, owner, OFF));
    assert.ok(serviceImport);
    const body = withServiceImportIPs(serviceImport.body, ['10.96.0.10', 'fd00::10'], ['IPv4', 'IPv6'], true);
    assert.deepEqual(body['spec'], { ...(serviceImport.body['spec'] as object), ips: ['10.96.0.10'] });
  });
});

describe('serviceAddresses()', () => {
  it('reads clusterIPs and ipFamilies of the live Service, in its order; clusterIP when clusterIPs is absent; no VIP for headless', () => {
    assert.deepEqual(serviceAddresses({ clusterIP: 'fd00::1', clusterIPs: ['fd00::1', '10.96.0.1'], ipFamilies: ['IPv6', 'IPv4'] }), { ips: ['fd00::1', '10.96.0.1'], ipFamilies: ['IPv6', 'IPv4'] });
    assert.deepEqual(serviceAddresses({ clusterIP: '10.96.0.1' }), { ips: ['10.96.0.1'], ipFamilies: [] });
    assert.deepEqual(serviceAddresses({ clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv4', 'IPv6'] }), { ips: [], ipFamilies: ['IPv4', 'IPv6'] });
    assert.deepEqual(serviceAddresses(undefined), { ips: [], ipFamilies: [] });
  });
});

describe('dual-stack imports', () => {
  it('a dual-stack export makes a PreferDualStack local Service; a single-stack one leaves the policy to the cluster', () => {
    const dual = { ...serviceRI, spec: { ...serviceRI.spec, serviceImport: { spec: { ...serviceRI.spec?.serviceImport?.spec, type: 'ClusterSetIP' as const, ports: [{ port: 80 }], ipFamilies: ['IPv4', 'IPv6'] } } } };
    const [service, serviceImport] = apply(desiredForImport(dual, owner, OFF));
    assert.equal((service?.body['spec'] as { ipFamilyPolicy?: string }).ipFamilyPolicy, 'PreferDualStack');
    // The ServiceImport's families come from the local Service (what this member serves), not from the leader.
    assert.equal((serviceImport?.body['spec'] as { ipFamilies?: unknown }).ipFamilies, undefined);
    const [single] = apply(desiredForImport(serviceRI, owner, OFF));
    assert.equal((single?.body['spec'] as { ipFamilyPolicy?: string }).ipFamilyPolicy, undefined);
    assert.ok(service);
    // A live SingleStack Service is updated to PreferDualStack.
    const live = { ...structuredClone(service.body), spec: { ...(service.body['spec'] as object), ipFamilyPolicy: 'SingleStack', clusterIP: '10.96.0.9' } };
    assert.equal(semanticallyEqual(service, live), false);
    assert.equal((mergeForUpdate(service, live)['spec'] as { ipFamilyPolicy?: string; clusterIP?: string }).ipFamilyPolicy, 'PreferDualStack');
  });
});

/** What the API server returns for a created object: defaults, server fields, foreign metadata. */
function liveService(desired: DesiredObject): Record<string, unknown> {
  const body = structuredClone(desired.body);
  const metadata = body['metadata'] as Record<string, unknown>;
  metadata['resourceVersion'] = '123';
  metadata['uid'] = 'u-1';
  metadata['labels'] = { ...(metadata['labels'] as object), 'team': 'payments' };
  metadata['annotations'] = { ...(metadata['annotations'] as object), 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
  const spec = body['spec'] as { ports: { port: number; protocol?: string }[] };
  body['spec'] = {
    ...spec,
    ports: spec.ports.map((p) => ({ ...p, targetPort: p.port })),
    clusterIP: '10.96.3.4',
    clusterIPs: ['10.96.3.4'],
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
  };
  body['status'] = { loadBalancer: {} };
  return body;
}

describe('semanticallyEqual()', () => {
  const [service, serviceImport] = apply(desiredForImport(serviceRI, owner, OFF));
  const endpoints = endpointsOf(apply(desiredForImport(endpointsRI, owner, OFF)));
  const acnp = only(apply(desiredForImport(acnpRI, owner, OFF)));
  const cii = only(apply(desiredForImport(clusterInfoRI, owner, OFF)));
  const li = only(apply(desiredForImport(labelIdentityRI, owner, ON)));
  assert.ok(service && serviceImport);

  it('ignores what the API server adds to a Service, and foreign labels and annotations', () => {
    assert.equal(semanticallyEqual(service, liveService(service)), true);
  });

  it('sees changed ports, an added selector, another type and a lost label or annotation on a Service', () => {
    const live = liveService(service);
    const spec = live['spec'] as Record<string, unknown>;
    const variants: Record<string, unknown>[] = [
      { ...live, spec: { ...spec, ports: [{ name: 'http', port: 81, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] } },
      { ...live, spec: { ...spec, selector: { app: 'mine' } } },
      { ...live, spec: { ...spec, type: 'NodePort' } },
      { ...live, metadata: { ...(live['metadata'] as object), labels: { team: 'payments' } } },
      { ...live, metadata: { ...(live['metadata'] as object), annotations: { ...meta(service).annotations, [IMPORT_HASH_ANNOTATION]: 'stale' } } },
    ];
    for (const variant of variants) assert.equal(semanticallyEqual(service, variant), false, JSON.stringify(variant['spec']));
  });

  it('treats Endpoints repacked by the API server as equal, and a changed address or readiness as not', () => {
    const live = structuredClone(endpoints.body);
    // RepackSubsets: one subset per port set, addresses sorted, protocol defaulted.
    live['subsets'] = [{
      addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', nodeName: 'n1' }],
      notReadyAddresses: [{ ip: '10.0.0.9' }],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    }];
    assert.equal(semanticallyEqual(endpoints, live), true);
    const split = { ...live, subsets: [
      { addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'http', port: 80 }] },
      { addresses: [{ ip: '10.0.0.2', nodeName: 'n1' }], notReadyAddresses: [{ ip: '10.0.0.9' }], ports: [{ name: 'http', port: 80 }] },
    ] };
    assert.equal(semanticallyEqual(endpoints, split), true);
    const missing = { ...live, subsets: [{ addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [{ ip: '10.0.0.9' }], ports: [{ name: 'http', port: 80 }] }] };
    assert.equal(semanticallyEqual(endpoints, missing), false);
    const readiness = { ...live, subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', nodeName: 'n1' }, { ip: '10.0.0.9' }], ports: [{ name: 'http', port: 80 }] }] };
    assert.equal(semanticallyEqual(endpoints, readiness), false);
  });

  it('compares a ServiceImport spec without ips until the engine sets them', () => {
    const live = withServiceImportIPs(structuredClone(serviceImport.body), ['10.96.3.4']);
    assert.equal(semanticallyEqual(serviceImport, live), true);
    const withIPs = { ...serviceImport, body: withServiceImportIPs(serviceImport.body, ['10.96.3.4']) };
    assert.equal(semanticallyEqual(withIPs, live), true);
    assert.equal(semanticallyEqual({ ...serviceImport, body: withServiceImportIPs(serviceImport.body, ['10.96.9.9']) }, live), false);
    assert.equal(semanticallyEqual(withIPs, serviceImport.body), false);
  });

  it('accepts what Antrea’s ACNP webhook adds but not a user edit of our fields', () => {
    const live = structuredClone(acnp.body);
    const spec = live['spec'] as { ingress: Record<string, unknown>[]; tier: string };
    spec.ingress = spec.ingress.map((r) => ({ ...r, name: 'ingress-drop-rule-0' }));
    assert.equal(semanticallyEqual(acnp, live), true);
    spec.tier = 'application';
    assert.equal(semanticallyEqual(acnp, live), false);
  });

  it('compares ClusterInfoImport and LabelIdentity specs exactly', () => {
    assert.equal(semanticallyEqual(cii, structuredClone(cii.body)), true);
    const changed = structuredClone(cii.body);
    (changed['spec'] as { podCIDRs: string[] }).podCIDRs = ['10.245.0.0/16'];
    assert.equal(semanticallyEqual(cii, changed), false);
    const id = structuredClone(li.body);
    (id['spec'] as { id: number }).id = 13;
    assert.equal(semanticallyEqual(li, id), false);
  });
});

describe('mergeForUpdate()', () => {
  const [service, serviceImport] = apply(desiredForImport(serviceRI, owner, OFF));
  assert.ok(service && serviceImport);

  it('keeps live metadata and server fields, lays our labels and annotations over it, replaces ports', () => {
    const live = liveService(service);
    const spec = live['spec'] as Record<string, unknown>;
    live['spec'] = { ...spec, selector: { app: 'mine' }, ports: [{ port: 1, targetPort: 1 }] };
    (live['metadata'] as Record<string, unknown>)['labels'] = { team: 'payments', [CLUSTERSET_LABEL]: 'old' };
    const merged = mergeForUpdate(service, live);
    const m = merged['metadata'] as { resourceVersion: string; uid: string; labels: Record<string, string>; annotations: Record<string, string> };
    assert.equal(m.resourceVersion, '123');
    assert.equal(m.uid, 'u-1');
    assert.equal(m.labels['team'], 'payments');
    assert.equal(m.labels[CLUSTERSET_LABEL], 'set-1');
    assert.equal(m.annotations['kubectl.kubernetes.io/last-applied-configuration'], '{}');
    const s = merged['spec'] as Record<string, unknown>;
    assert.equal(s['clusterIP'], '10.96.3.4');
    assert.equal(s['selector'], undefined);
    assert.deepEqual(s['ports'], (service.body['spec'] as { ports: unknown }).ports);
    assert.deepEqual(merged['status'], { loadBalancer: {} });
    assert.equal(semanticallyEqual(service, merged), true);
    assert.deepEqual((live['spec'] as { ports: unknown }).ports, [{ port: 1, targetPort: 1 }], 'live is not mutated');
  });

  it('keeps the live ServiceImport VIP while the desired object has none', () => {
    const live = withServiceImportIPs(structuredClone(serviceImport.body), ['10.96.3.4']);
    (live['spec'] as Record<string, unknown>)['type'] = 'Headless';
    const merged = mergeForUpdate(serviceImport, live);
    assert.deepEqual(merged['spec'], { ...(serviceImport.body['spec'] as object), ips: ['10.96.3.4'] });
    assert.equal(semanticallyEqual(serviceImport, merged), true);
  });

  it('produces an object semanticallyEqual to the desired one for every kind', () => {
    const desired = [
      ...apply(desiredForImport(endpointsRI, owner, OFF)),
      ...apply(desiredForImport(clusterInfoRI, owner, OFF)),
      ...apply(desiredForImport(acnpRI, owner, OFF)),
      ...apply(desiredForImport(labelIdentityRI, owner, ON)),
    ];
    for (const d of desired) {
      const live = { apiVersion: d.apiVersion, kind: d.kind, metadata: { name: d.name, resourceVersion: '7' }, spec: { stale: true }, subsets: [{ addresses: [{ ip: '1.1.1.1' }] }] };
      assert.equal(semanticallyEqual(d, live), false, d.kind);
      const merged = mergeForUpdate(d, live);
      assert.equal(semanticallyEqual(d, merged), true, d.kind);
      assert.equal((merged['metadata'] as { resourceVersion: string }).resourceVersion, '7');
    }
  });
});
