import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceImport } from '../../src/common/api/antrea.js';
import { DEFAULT_CONFIG, type ImportPolicyConfig } from '../../src/common/config/config.js';
import {
  addressProblem, checkImport, cidrProblem, missingNamespaces, rejectionDetail, rejectionOf, tooManyObjects, type Rejection, type RejectionRule,
} from '../../src/importer/policy.js';
import { desiredForImport, type DesiredObject } from '../../src/importer/rules.js';
import {
  BENIGN_IMPORTS,
  HOSTILE_AGENT_NAMESPACE,
  HOSTILE_EXISTING_NAMESPACES,
  HOSTILE_IMPORTS,
  HOSTILE_LEADER_NAMESPACE,
  HOSTILE_OWNER,
  HOSTILE_POLICY,
  HOSTILE_USER_SERVICE,
  type HostileImport,
} from '../fixtures/hostile-imports.js';

const existing = new Set(HOSTILE_EXISTING_NAMESPACES);
const namespaceExists = (ns: string): boolean => existing.has(ns);

/** Objects a user created, by `<kind> <namespace>/<name>`: what the engine would find live and unowned. */
const userObjects = new Set([`Service ${HOSTILE_USER_SERVICE.metadata.namespace}/${HOSTILE_USER_SERVICE.metadata.name}`]);

type Outcome = HostileImport['expect'] | 'Apply';

/** The pipeline the engine runs, minus I/O: rules, firewall, then the ownership check on live objects. */
function outcome(ri: ResourceImport, policy: ImportPolicyConfig = HOSTILE_POLICY, ownedCount = 0): { outcome: Outcome; rejection?: Rejection } {
  const plan = desiredForImport(ri, HOSTILE_OWNER, { enableLabelIdentity: policy.enableLabelIdentity });
  if (plan.kind === 'skip') return { outcome: 'Skip' };
  const rejection = checkImport({ ri, objects: plan.objects, policy, namespaceExists, ownedCount });
  if (rejection) return { outcome: rejection.rule, rejection };
  if (plan.objects.some((o) => userObjects.has(`${o.kind} ${o.namespace ?? ''}/${o.name}`))) return { outcome: 'Conflict' };
  return { outcome: 'Apply' };
}

function check(ri: ResourceImport, policy: Partial<ImportPolicyConfig> = {}, ownedCount = 0): Rejection | undefined {
  const merged = { ...HOSTILE_POLICY, ...policy };
  const plan = desiredForImport(ri, HOSTILE_OWNER, { enableLabelIdentity: merged.enableLabelIdentity });
  if (plan.kind === 'skip') assert.fail(`skipped: ${plan.reason}`);
  const objects: readonly DesiredObject[] = plan.objects;
  return checkImport({ ri, objects, policy: merged, namespaceExists, ownedCount });
}

function ri(name: string, spec: NonNullable<ResourceImport['spec']>): ResourceImport {
  return { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImport', metadata: { name, namespace: HOSTILE_LEADER_NAMESPACE }, spec };
}

function svc(name: string, namespace: string, siSpec: Record<string, unknown>): ResourceImport {
  return ri(`${namespace}-${name}-service`, {
    name, namespace, kind: 'ServiceImport',
    serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...siSpec } as never },
  });
}

function sourced(ri: ResourceImport, sources: string): ResourceImport {
  return { ...ri, metadata: { ...ri.metadata, annotations: { 'multicluster.clusterset-agent.io/endpoint-sources': sources } } };
}

function eps(name: string, endpoints: unknown): ResourceImport {
  return ri(`team-a-${name}-endpoints`, { name, namespace: 'team-a', kind: 'Endpoints', endpoints: endpoints as never });
}

describe('hostile-leader fixture', () => {
  it('is large, covers every rule the brief names, and every RI is complete and uniquely named', () => {
    assert.ok(HOSTILE_IMPORTS.length >= 15);
    const expected = new Set(HOSTILE_IMPORTS.map((h) => h.expect));
    const required: HostileImport['expect'][] = ['NamespaceDenied', 'NamespaceNotAllowed', 'NamespaceNotFound', 'AddressRejected', 'ObjectTooLarge', 'UnknownKind',
      'KindNotAllowed', 'InvalidName', 'InvalidPayload', 'Skip', 'Conflict'];
    for (const rule of required) assert.ok(expected.has(rule), `no fixture expects ${rule}`);
    const names = new Set<string>();
    for (const { ri: r, title } of [...HOSTILE_IMPORTS, ...BENIGN_IMPORTS.map((b) => ({ ri: b, title: b.metadata?.name ?? '' }))]) {
      const name = r.metadata?.name ?? '';
      assert.match(name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, title);
      assert.ok(name.length <= 253, title);
      assert.ok(!names.has(name), `duplicate RI name ${name}`);
      names.add(name);
      assert.equal(r.metadata?.namespace, 'antrea-multicluster', title);
      assert.equal(r.apiVersion, 'multicluster.crd.antrea.io/v1alpha1', title);
      assert.equal(r.kind, 'ResourceImport', title);
      assert.equal(typeof r.spec?.name, 'string', title);
      assert.ok(r.spec?.kind, title);
      const si = r.spec.serviceImport?.spec;
      if (si) assert.ok(Array.isArray(si.ports) && ['ClusterSetIP', 'Headless'].includes(si.type) && (si.ips ?? []).length <= 1, title);
    }
    const oversize = HOSTILE_IMPORTS.find((h) => h.expect === 'ObjectTooLarge');
    const bytes = Buffer.byteLength(JSON.stringify(oversize?.ri));
    assert.ok(bytes > HOSTILE_POLICY.maxObjectBytes && bytes < 1_000_000, `${bytes} bytes: above the limit, storable in etcd`);
  });

  for (const entry of HOSTILE_IMPORTS) {
    it(`${entry.title} → ${entry.expect}`, () => {
      const result = outcome(entry.ri);
      assert.equal(result.outcome, entry.expect, result.rejection?.message);
      if (result.rejection) {
        const { message } = result.rejection;
        assert.ok(message.startsWith(`ResourceImport antrea-multicluster/${entry.ri.metadata?.name ?? ''} rejected (${entry.expect}): `), message);
        assert.ok(message.length < 500, `message of ${message.length} characters`);
      }
    });
  }

  it('names the offending value in the message', () => {
    const byTitle = (title: string) => outcome(HOSTILE_IMPORTS.find((h) => h.title === title)?.ri ?? {}).rejection?.message ?? '';
    assert.match(byTitle('Service into kube-system'), /"kube-system"/);
    assert.match(byTitle('Endpoints with 169.254.169.254'), /addresses\[1\]\.ip "169\.254\.169\.254" is the cloud metadata endpoint/);
    assert.match(byTitle('Endpoints with ::ffff:127.0.0.1'), /"::ffff:127\.0\.0\.1" is IPv4-mapped, and a loopback address/);
    assert.match(byTitle('ServiceImport with port 0'), /ports\[0\]\.port 0 is outside 1-65535/);
    assert.match(byTitle('Name with a path (../x)'), /Service name "antrea-mc-\.\.\/x" is not a DNS-1123 label/);
    assert.match(byTitle('Endpoints payload above maxObjectBytes'), /Endpoints "antrea-mc-big" would be \d+ bytes, above imports\.maxObjectBytes \(262144\)/);
    assert.match(byTitle('Unknown kind (a Secret, as raw data)'), /spec\.kind "Secret"/);
    assert.match(byTitle('ClusterInfo claiming pod CIDR 0.0.0.0/0'), /podCIDRs\[0\] "0\.0\.0\.0\/0" is a default route/);
  });

  it('lets well-formed imports through under the same policy', () => {
    for (const benign of BENIGN_IMPORTS) assert.equal(outcome(benign).outcome, 'Apply', outcome(benign).rejection?.message);
  });
});

describe('checkImport() namespaces', () => {
  const good = svc('web', 'team-a', {});

  it('denies configured namespaces even when they are allowed', () => {
    assert.equal(check(good, { deniedNamespaces: ['team-a'] })?.rule, 'NamespaceDenied');
    assert.match(check(good, { deniedNamespaces: ['team-a'] })?.message ?? '', /imports\.deniedNamespaces/);
  });

  it('accepts any existing, non-denied namespace when allowedNamespaces is empty', () => {
    assert.equal(check(svc('web', 'team-b', {}), { allowedNamespaces: [] }), undefined);
    assert.equal(check(svc('web', 'kube-system', {}), { allowedNamespaces: [] })?.rule, 'NamespaceDenied');
    assert.equal(check(svc('web', 'ghost', {}), { allowedNamespaces: [] })?.rule, 'NamespaceNotFound');
  });

  it('puts ClusterInfoImports in the agent namespace without tripping the agent-namespace denial', () => {
    const info = ri('member-c-clusterinfo', { name: 'member-c', namespace: 'kube-system', kind: 'ClusterInfo', clusterinfo: { clusterID: 'member-c' } });
    assert.equal(check(info), undefined);
    assert.ok(HOSTILE_POLICY.alwaysDeniedNamespaces.includes(HOSTILE_AGENT_NAMESPACE));
  });

  it('reports a bad name before a denied namespace, so one RI always gets the same rule', () => {
    assert.equal(check(svc('Bad', 'kube-system', {}))?.rule, 'InvalidName');
  });
});

describe('checkImport() kinds, size and count', () => {
  it('rejects LabelIdentity when enabled but not in allowedKinds, and accepts it when allowed', () => {
    const li = ri('0123456789abcdef', { name: '0123456789abcdef', kind: 'LabelIdentity', labelIdentity: { label: 'ns:a=b&pod:', id: 4 } });
    assert.equal(check(li, { enableLabelIdentity: true })?.rule, 'KindNotAllowed');
    assert.equal(check(li, { enableLabelIdentity: true, allowedKinds: ['LabelIdentity'] }), undefined);
    const bad = ri('0123456789abcdee', { name: '0123456789abcdee', kind: 'LabelIdentity', labelIdentity: { label: 'x', id: -1 } });
    assert.equal(check(bad, { enableLabelIdentity: true, allowedKinds: ['LabelIdentity'] })?.rule, 'InvalidPayload');
  });

  it('checks an allowed ACNP’s priority and its name length', () => {
    const policy = { allowedKinds: ['AntreaClusterNetworkPolicy'] } as const;
    const acnp = (name: string, payload: unknown) => ri(`${name}-antreaclusternetworkpolicy`, { name, namespace: '', kind: 'AntreaClusterNetworkPolicy', clusternetworkpolicy: payload as never });
    assert.equal(check(acnp('ok', { priority: 5 }), policy), undefined);
    assert.equal(check(acnp('p', { priority: 'high' }), policy)?.rule, 'InvalidPayload');
    assert.equal(check(acnp('a'.repeat(250), { priority: 5 }), policy)?.rule, 'InvalidName');
  });

  it('rejects a body above maxObjectBytes', () => {
    assert.equal(check(svc('web', 'team-a', {}), { maxObjectBytes: 200 })?.rule, 'ObjectTooLarge');
  });

  it('counts new objects against maxObjectsPerLeader', () => {
    const web = svc('web', 'team-a', {});
    assert.equal(check(web, { maxObjectsPerLeader: 10 }, 8), undefined);
    const rejection = check(web, { maxObjectsPerLeader: 10 }, 9);
    assert.equal(rejection?.rule, 'TooManyObjects');
    assert.match(rejection.message, /2 more object\(s\) on top of the 9 .* \(10\)/);
  });

  it('leaves the count to the importer when ownedCount is not given', () => {
    const web = svc('web', 'team-a', {});
    const plan = desiredForImport(web, HOSTILE_OWNER, { enableLabelIdentity: false });
    assert.equal(plan.kind, 'apply');
    if (plan.kind !== 'apply') return;
    assert.equal(checkImport({ ri: web, objects: plan.objects, policy: { ...HOSTILE_POLICY, maxObjectsPerLeader: 1 }, namespaceExists }), undefined);
  });

  it('words a cap refusal without the moving count, so one refused import stays one distinct rejection', () => {
    const web = svc('web', 'team-a', {});
    const what = 'the exported Service team-a/web (Service, ServiceImport and Endpoints)';
    const refusal = tooManyObjects(web, what, 3, { maxObjectsPerLeader: 300 });
    assert.equal(refusal.rule, 'TooManyObjects');
    assert.equal(refusal.message, `ResourceImport antrea-multicluster/team-a-web-service rejected (TooManyObjects): ${what} needs 3 object(s), which do not fit within imports.maxObjectsPerLeader (300) next to what this leader already has`);
    assert.deepEqual(tooManyObjects(web, what, 3, { maxObjectsPerLeader: 300 }), refusal);
    assert.equal(rejectionDetail(refusal), `${what} needs 3 object(s), which do not fit within imports.maxObjectsPerLeader (300) next to what this leader already has`);
  });

  it('builds ServiceNotImported rejections in the common form, and names missing namespaces', () => {
    const held = rejectionOf(eps('web', {}), 'ServiceNotImported', 'Endpoints for team-a/web are held back: x');
    assert.equal(held.message, 'ResourceImport antrea-multicluster/team-a-web-endpoints rejected (ServiceNotImported): Endpoints for team-a/web are held back: x');
    assert.equal(rejectionDetail(held), 'Endpoints for team-a/web are held back: x');
    const plan = desiredForImport(svc('web', 'ghost', {}), HOSTILE_OWNER, { enableLabelIdentity: false });
    assert.deepEqual(plan.kind === 'apply' ? missingNamespaces(plan.objects, namespaceExists) : undefined, ['ghost']);
    const info = desiredForImport(ri('member-c-clusterinfo', { name: 'member-c', namespace: 'ghost', kind: 'ClusterInfo', clusterinfo: { clusterID: 'member-c' } }), HOSTILE_OWNER, { enableLabelIdentity: false });
    assert.deepEqual(info.kind === 'apply' ? missingNamespaces(info.objects, () => false) : undefined, [], 'ClusterInfoImports go to the agent namespace, not the leader-chosen one');
  });
});

describe('checkImport() payloads', () => {
  const bad: [string, ResourceImport][] = [
    ['no serviceImport', ri('team-a-x-service', { name: 'x', namespace: 'team-a', kind: 'ServiceImport' })],
    ['port as a string', svc('x', 'team-a', { ports: [{ port: '80' }] })],
    ['port 65536', svc('x', 'team-a', { ports: [{ port: 65536 }] })],
    ['fractional port', svc('x', 'team-a', { ports: [{ port: 80.5 }] })],
    ['protocol ICMP', svc('x', 'team-a', { ports: [{ port: 80, protocol: 'ICMP' }] })],
    ['duplicate port names', svc('x', 'team-a', { ports: [{ name: 'a', port: 80 }, { name: 'a', port: 81 }] })],
    ['duplicate port/protocol', svc('x', 'team-a', { ports: [{ name: 'a', port: 80 }, { name: 'b', port: 80 }] })],
    ['invalid port name', svc('x', 'team-a', { ports: [{ name: 'HTTP_1', port: 80 }] })],
    ['unknown type', svc('x', 'team-a', { type: 'LoadBalancer' })],
    ['two ips', svc('x', 'team-a', { ips: ['10.0.0.1', '10.0.0.2'] })],
    ['bad sessionAffinity', svc('x', 'team-a', { sessionAffinity: 'Sticky' })],
    ['timeout 0', svc('x', 'team-a', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } } })],
    ['subsets not a list', eps('x', { subsets: 'all' })],
    ['address without ip', eps('x', { subsets: [{ addresses: [{ hostname: 'a' }] }] })],
    ['bad hostname', eps('x', { subsets: [{ addresses: [{ ip: '10.0.0.1', hostname: 'A_B' }] }] })],
    ['endpoint port 0', eps('x', { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 0 }] }] })],
    ['internalTrafficPolicy Everywhere', svc('x', 'team-a', { internalTrafficPolicy: 'Everywhere' })],
    ['trafficDistribution not a word', svc('x', 'team-a', { trafficDistribution: 'Prefer Close; rm -rf' })],
    ['endpoint sources not adding up', sourced(eps('x', { subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] }), 'east=2')],
    ['endpoint sources naming a cluster no label can hold', sourced(eps('x', { subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] }), 'east west=1')],
    ['endpoint sources with a zero count', sourced(eps('x', { subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] }), 'east=1,west=0')],
  ];
  for (const [title, input] of bad) {
    it(`rejects ${title} as InvalidPayload`, () => {
      const rejection = check(input);
      assert.equal(rejection?.rule, 'InvalidPayload', rejection?.message);
    });
  }

  it('accepts `endpoints: {}`, Go’s encoding of an empty subset list, and a port without protocol', () => {
    assert.equal(check(eps('x', {})), undefined);
    assert.equal(check(eps('x', { subsets: [] })), undefined);
    assert.equal(check(svc('x', 'team-a', { ports: [{ port: 80 }] })), undefined);
    assert.equal(check(svc('x', 'team-a', { type: 'Headless', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } })), undefined);
    assert.equal(check(svc('x', 'team-a', { internalTrafficPolicy: 'Local', trafficDistribution: 'PreferClose' })), undefined);
    assert.equal(check(sourced(eps('x', { subsets: [{ addresses: [{ ip: '10.0.0.1' }] }, { addresses: [{ ip: '10.0.0.2' }] }] }), 'east=1,west=1')), undefined);
  });

  it('applies the address rules to what becomes EndpointSlices exactly as to Endpoints', () => {
    // One payload, two kinds of objects: a rejected address refuses the whole import, slices included.
    const hostile = sourced(eps('x', { subsets: [{ addresses: [{ ip: '10.0.0.1' }] }, { addresses: [{ ip: '169.254.169.254' }] }] }), 'east=1,west=1');
    const plan = desiredForImport(hostile, HOSTILE_OWNER, { enableLabelIdentity: false });
    assert.ok(plan.kind === 'apply' && plan.objects.some((o) => o.kind === 'EndpointSlice'));
    assert.equal(check(hostile)?.rule, 'AddressRejected');
  });

  it('checks ClusterInfo service CIDRs, dual-stack ones included, and accepts an absent gateway IP', () => {
    const info = (clusterinfo: Record<string, unknown>) => ri('member-c-clusterinfo', { name: 'member-c', kind: 'ClusterInfo', clusterinfo: { clusterID: 'member-c', ...clusterinfo } });
    assert.equal(check(info({ serviceCIDR: '10.96.0.0/12,fd00:10:96::/112', gatewayInfos: [{}] })), undefined);
    assert.equal(check(info({ serviceCIDR: '10.96.0.0/12,::/0' }))?.rule, 'AddressRejected');
    assert.equal(check(info({ podCIDRs: ['10.244.0.0/33'] }))?.rule, 'AddressRejected');
  });
});

describe('addressProblem()', () => {
  const accepted = ['10.0.0.1', '192.168.1.1', '100.64.0.1', '172.18.0.2', '2001:db8::1', 'fd00::1', '::ffff:10.0.0.1', '240.0.0.1'];
  const rejected: [string, RegExp][] = [
    ['127.0.0.1', /loopback/], ['127.255.255.254', /loopback/], ['::1', /loopback/], ['0:0:0:0:0:0:0:1', /loopback/],
    ['169.254.169.254', /metadata/], ['169.254.1.1', /link-local/], ['fe80::1', /link-local/], ['febf::1', /link-local/],
    ['fd00:ec2::254', /metadata/],
    ['224.0.0.1', /multicast/], ['239.255.255.250', /multicast/], ['ff02::1', /multicast/],
    ['0.0.0.0', /unspecified/], ['::', /unspecified/], ['0.1.2.3', /this network/], ['255.255.255.255', /broadcast/],
    ['::ffff:127.0.0.1', /IPv4-mapped, and a loopback/], ['::ffff:7f00:1', /IPv4-mapped, and a loopback/],
    ['::FFFF:169.254.169.254', /IPv4-mapped, and the cloud metadata/], ['0:0:0:0:0:ffff:e000:1', /IPv4-mapped, and a multicast/],
    ['::127.0.0.1', /IPv4-compatible/],
    ['fe80::1%eth0', /zone/], ['010.0.0.1', /not a valid IP/], ['1.2.3', /not a valid IP/], ['', /not a valid IP/], ['example.com', /not a valid IP/],
  ];
  it('accepts ordinary unicast addresses', () => {
    for (const ip of accepted) assert.equal(addressProblem(ip), undefined, ip);
  });
  for (const [ip, why] of rejected) {
    it(`rejects ${JSON.stringify(ip)}`, () => {
      assert.match(addressProblem(ip) ?? '', why);
    });
  }
  it('rejects non-strings', () => {
    assert.equal(addressProblem(2130706433), 'is not a string');
  });
});

describe('cidrProblem()', () => {
  it('accepts ordinary pod and service CIDRs', () => {
    for (const cidr of ['10.244.0.0/16', '10.96.0.0/12', '192.168.0.0/24', 'fd00:10:244::/56', '2001:db8::/64']) assert.equal(cidrProblem(cidr), undefined, cidr);
  });
  it('rejects CIDRs overlapping a rejected range, and malformed ones', () => {
    const rejected: [string, RegExp][] = [
      ['0.0.0.0/0', /default route/], ['0.0.0.0/1', /overlaps 0\.0\.0\.0\/32/], ['128.0.0.0/1', /overlaps 169\.254\.169\.254\/32/], ['127.0.0.0/8', /loopback/],
      ['127.1.0.0/16', /loopback/], ['169.254.0.0/24', /link-local|metadata/], ['224.0.0.0/8', /multicast/],
      ['::/0', /default route/], ['::/1', /overlaps ::\/128/], ['fe80::/64', /link-local/], ['::ffff:0:0/96', /overlaps/], ['::ffff:10.0.0.0/104', /IPv4-mapped/],
      ['10.0.0.0/33', /not a valid CIDR/], ['10.0.0.0', /not a valid CIDR/], ['abc/8', /not a valid CIDR/], ['fd00::/129', /not a valid CIDR/],
    ];
    for (const [cidr, why] of rejected) assert.match(cidrProblem(cidr) ?? '', why, cidr);
  });
});

describe('checkImport() rule order', () => {
  it('returns exactly one rule per RI whatever else is wrong', () => {
    const rules = new Set<RejectionRule | undefined>();
    const everythingWrong = svc('Bad', 'kube-system', { ports: [{ port: 0 }], ips: ['127.0.0.1'] });
    for (let i = 0; i < 3; i++) rules.add(check(everythingWrong, {}, 1_000_000)?.rule);
    assert.deepEqual([...rules], ['InvalidName']);
    assert.equal(check(svc('ok', 'kube-system', { ports: [{ port: 0 }] }))?.rule, 'NamespaceDenied');
    assert.equal(check(svc('ok', 'team-a', { ports: [{ port: 0 }], ips: ['127.0.0.1'] }))?.rule, 'InvalidPayload');
    assert.equal(check(svc('ok', 'team-a', { ips: ['127.0.0.1'] }), {}, 1_000_000)?.rule, 'AddressRejected');
  });

  it('the fixture policy is the default import policy plus allowedNamespaces', () => {
    assert.deepEqual({ ...HOSTILE_POLICY, allowedNamespaces: [] }, { ...DEFAULT_CONFIG.imports });
  });
});
