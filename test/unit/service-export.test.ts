import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1EndpointSlice, V1Service, V1ServiceSpec } from '@kubernetes/client-node';
import type { ServiceExport } from '../../src/common/api/mcs.js';
import type { ResourceExport } from '../../src/common/api/antrea.js';
import { RESOURCE_EXPORT_FINALIZER, RESOURCE_EXPORT_LEGACY_FINALIZER } from '../../src/common/api/names.js';
import {
  compareIPs,
  endpointSliceCacheEntry,
  exportConflict,
  exportNames,
  mergeForUpdate,
  sameExport,
  serviceCacheEntry,
  serviceExportPlan,
  type EndpointSliceLike,
  type ServiceExportInput,
  type ServiceLike,
} from '../../src/exporter/service-export.js';

const svcExport: ServiceExport = { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'nginx', namespace: 'default' } };

function service(spec: NonNullable<ServiceLike['spec']> = {}, annotations?: Record<string, string>): ServiceLike {
  return {
    metadata: { name: 'nginx', namespace: 'default', ...(annotations && { annotations }) },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: 'https', port: 443, protocol: 'TCP', targetPort: 'https', appProtocol: 'https' }],
      ...spec,
    },
  };
}

function slice(addresses: (string | [string, boolean | undefined])[], extra: Partial<EndpointSliceLike> = {}): EndpointSliceLike {
  return {
    metadata: { namespace: 'default', labels: { 'kubernetes.io/service-name': 'nginx' } },
    addressType: 'IPv4',
    endpoints: addresses.map((a) => {
      const [ip, ready] = typeof a === 'string' ? [a, true] : a;
      return { addresses: [ip], conditions: ready === undefined ? {} : { ready } };
    }),
    ports: [{ name: 'https', port: 8443, protocol: 'TCP', appProtocol: 'https' }, { name: 'http', port: 8080, protocol: 'TCP' }],
    ...extra,
  };
}

function input(overrides: Partial<ServiceExportInput> = {}): ServiceExportInput {
  return {
    localClusterID: 'east',
    leaderNamespace: 'antrea-multicluster',
    serviceExport: svcExport,
    service: service(),
    endpointSlices: [slice(['10.244.1.5'])],
    endpointIPType: 'ClusterIP',
    ...overrides,
  };
}

describe('exportNames', () => {
  it('names the two REs <localID>-<ns>-<name>-service|endpoints', () => {
    assert.deepEqual(exportNames('test-cluster-west', 'default', 'nginx'), {
      service: 'test-cluster-west-default-nginx-service',
      endpoints: 'test-cluster-west-default-nginx-endpoints',
    });
  });
});

describe('serviceExportPlan: the Valid condition', () => {
  const refused: [string, Partial<ServiceExportInput>, string, string][] = [
    ['no Service', { service: undefined }, 'ServiceNotFound', 'Service does not exist'],
    ['an ExternalName Service', { service: service({ type: 'ExternalName', clusterIP: '', clusterIPs: [] }) }, 'ServiceTypeNotSupported', 'Service of ExternalName type is not supported'],
    ['an imported Service', { service: service({}, { 'multicluster.antrea.io/imported-service': 'true' }) }, 'ImportedService', 'The Service is imported, not allowed to export'],
    ['an imported Service (any annotation value, like Antrea)', { service: service({}, { 'multicluster.antrea.io/imported-service': '' }) }, 'ImportedService', 'The Service is imported, not allowed to export'],
    ['no EndpointSlices', { endpointSlices: [] }, 'ServiceWithoutEndpoints', 'Service has no Endpoints'],
    ['only not-ready endpoints', { endpointSlices: [slice([['10.244.1.5', false]])] }, 'ServiceWithoutEndpoints', 'Service has no Endpoints'],
    ['only IPv6 slices', { endpointSlices: [slice(['fd00::5'], { addressType: 'IPv6' })] }, 'ServiceWithoutEndpoints', 'Service has no Endpoints'],
    ['ready endpoints of another Service only', {
      endpointSlices: [slice(['10.244.1.5'], { metadata: { namespace: 'default', labels: { 'kubernetes.io/service-name': 'other' } } })],
    }, 'ServiceWithoutEndpoints', 'Service has no Endpoints'],
    ['an IPv6-only Service (ClusterIP mode)', { service: service({ clusterIP: 'fd00:96::10', clusterIPs: ['fd00:96::10'] }) }, 'ServiceNoClusterIP', 'Service does not have a valid ClusterIP'],
    ['a Service without clusterIP (ClusterIP mode)', { service: service({ clusterIP: '', clusterIPs: [] }) }, 'ServiceNoClusterIP', 'Service does not have a valid ClusterIP'],
  ];
  for (const [what, overrides, reason, message] of refused) {
    it(`is False/${reason} for ${what}, with no exports`, () => {
      const plan = serviceExportPlan(input(overrides));
      assert.deepEqual(plan, { valid: { status: 'False', reason, message }, exports: [] });
    });
  }

  it('checks in Antrea\'s order: ExternalName before imported, endpoints before ClusterIP', () => {
    const externalImported = service({ type: 'ExternalName' }, { 'multicluster.antrea.io/imported-service': 'true' });
    assert.equal(serviceExportPlan(input({ service: externalImported })).valid.reason, 'ServiceTypeNotSupported');
    const headless = service({ clusterIP: 'None', clusterIPs: ['None'] });
    assert.equal(serviceExportPlan(input({ service: headless, endpointSlices: [] })).valid.reason, 'ServiceWithoutEndpoints');
  });

  for (const endpointIPType of ['PodIP', 'ClusterIP'] as const) {
    it(`exports a headless Service with its ready Pod IPs and clusterIP None (${endpointIPType} mode; KEP-1645, unlike Antrea)`, () => {
      const plan = serviceExportPlan(input({ service: service({ clusterIP: 'None', clusterIPs: ['None'] }), endpointIPType, endpointSlices: [slice(['10.244.1.5'])] }));
      assert.equal(plan.valid.reason, 'Succeed');
      assert.equal(plan.exports[0]?.spec?.service?.serviceSpec?.['clusterIP'], 'None');
      assert.deepEqual(plan.exports[1]?.spec?.endpoints?.subsets?.flatMap((s) => s.addresses?.map((a) => a.ip)), ['10.244.1.5']);
    });
  }

  it('carries session affinity, internalTrafficPolicy and trafficDistribution in the Service export', () => {
    const svc = service({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } }, internalTrafficPolicy: 'Local', trafficDistribution: 'PreferClose' });
    const spec = serviceExportPlan(input({ service: svc })).exports[0]?.spec?.service?.serviceSpec;
    assert.deepEqual({ ...spec, ports: undefined }, {
      ports: undefined, sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } }, internalTrafficPolicy: 'Local', trafficDistribution: 'PreferClose',
    });
  });

  it('states the families of a dual-stack Service only (a single-stack export is what it was before)', () => {
    const dual = serviceExportPlan(input({ service: service({ ipFamilies: ['IPv6', 'IPv4'] }) })).exports[0]?.spec?.service?.serviceSpec;
    assert.deepEqual(dual?.['ipFamilies'], ['IPv6', 'IPv4']);
    const single = serviceExportPlan(input({ service: service({ ipFamilies: ['IPv4'] }) })).exports[0]?.spec?.service?.serviceSpec;
    assert.equal(single !== undefined && 'ipFamilies' in single, false);
  });

  it('counts an endpoint without a ready condition as ready (Kubernetes: nil means true)', () => {
    assert.equal(serviceExportPlan(input({ endpointSlices: [slice([['10.244.1.5', undefined]])] })).valid.status, 'True');
  });

  it('refuses a ServiceExport without namespace or name', () => {
    assert.throws(() => serviceExportPlan(input({ serviceExport: { metadata: { name: 'x' } } })), TypeError);
  });
});

describe('serviceExportPlan: the ResourceExports', () => {
  it('ClusterIP mode: the Service RE with the ports as stored and the Endpoints RE with the ClusterIP', () => {
    const plan = serviceExportPlan(input());
    assert.deepEqual(plan.valid, { status: 'True', reason: 'Succeed', message: 'The Service is exported successfully' });
    const labels = { sourceName: 'nginx', sourceNamespace: 'default', sourceClusterID: 'east' };
    assert.deepEqual(plan.exports, [
      {
        apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
        kind: 'ResourceExport',
        metadata: {
          name: 'east-default-nginx-service', namespace: 'antrea-multicluster',
          labels: { ...labels, sourceKind: 'Service' }, finalizers: ['resourceexport.antrea.io/finalizer'],
        },
        spec: {
          clusterID: 'east', name: 'nginx', namespace: 'default', kind: 'Service',
          service: { serviceSpec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: 'https', port: 443, protocol: 'TCP', targetPort: 'https', appProtocol: 'https' }] } },
        },
      },
      {
        apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
        kind: 'ResourceExport',
        metadata: {
          name: 'east-default-nginx-endpoints', namespace: 'antrea-multicluster',
          labels: { ...labels, sourceKind: 'Endpoints' }, finalizers: ['resourceexport.antrea.io/finalizer'],
        },
        spec: {
          clusterID: 'east', name: 'nginx', namespace: 'default', kind: 'Endpoints',
          endpoints: { subsets: [{ addresses: [{ ip: '10.96.0.10' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'https', port: 443, protocol: 'TCP' }] }] },
        },
      },
    ]);
  });

  it('ClusterIP mode: both ClusterIPs of a dual-stack Service, IPv4 first; clusterIP used when clusterIPs is absent', () => {
    const dual = serviceExportPlan(input({ service: service({ clusterIPs: ['fd00:96::10', '10.96.0.10'] }) }));
    assert.deepEqual(dual.exports[1]?.spec?.endpoints?.subsets?.[0]?.addresses, [{ ip: '10.96.0.10' }, { ip: 'fd00:96::10' }]);
    const old: ServiceLike = { metadata: { name: 'nginx', namespace: 'default' }, spec: { clusterIP: '10.96.0.11', ports: [{ port: 53, protocol: 'UDP' }] } };
    assert.deepEqual(serviceExportPlan(input({ service: old })).exports[1]?.spec?.endpoints?.subsets, [{ addresses: [{ ip: '10.96.0.11' }], ports: [{ port: 53, protocol: 'UDP' }] }]);
  });

  it('PodIP mode: ready IPv4 Pod IPs, sorted and deduplicated, one subset per port set, appProtocol kept', () => {
    const slices: EndpointSliceLike[] = [
      slice(['10.244.2.9', ['10.244.2.8', false], '10.244.10.1']),
      slice(['10.244.1.5', '10.244.2.9']),
      slice(['fd00::1'], { addressType: 'IPv6' }),
      slice(['10.244.3.3'], { ports: [{ port: 9000, protocol: 'TCP' }] }),
      slice(['10.244.4.4'], { metadata: { namespace: 'other' } }),
    ];
    const plan = serviceExportPlan(input({ endpointIPType: 'PodIP', endpointSlices: slices }));
    assert.deepEqual(plan.exports[1]?.spec?.endpoints, {
      subsets: [
        {
          addresses: [{ ip: '10.244.1.5' }, { ip: '10.244.2.9' }, { ip: '10.244.10.1' }],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'https', port: 8443, protocol: 'TCP', appProtocol: 'https' }],
        },
        { addresses: [{ ip: '10.244.3.3' }], ports: [{ port: 9000, protocol: 'TCP' }] },
      ],
    });
    // The Service RE is the same in both modes.
    assert.deepEqual(plan.exports[0], serviceExportPlan(input()).exports[0]);
  });

  it('is deterministic: the same source in another order yields an identical spec', () => {
    const a = [slice(['10.244.1.5', '10.244.1.6']), slice(['10.244.3.3'], { ports: [{ port: 9000 }] })];
    const b = [slice(['10.244.3.3'], { ports: [{ port: 9000 }] }), slice(['10.244.1.6', '10.244.1.5'], { ports: [...(a[0]?.ports ?? [])].reverse() })];
    const planA = serviceExportPlan(input({ endpointIPType: 'PodIP', endpointSlices: a }));
    const planB = serviceExportPlan(input({ endpointIPType: 'PodIP', endpointSlices: b }));
    assert.deepEqual(planA, planB);
    assert.equal(JSON.stringify(planA), JSON.stringify(planB));
  });

  it('does not share objects with its input', () => {
    const svc = service();
    const plan = serviceExportPlan(input({ service: svc }));
    const ports = plan.exports[0]?.spec?.service?.serviceSpec?.ports;
    assert.ok(ports?.[0]);
    ports[0].port = 1;
    assert.equal(svc.spec?.ports?.[0]?.port, 80);
  });

  it('accepts client-node Services and EndpointSlices', () => {
    const svc: V1Service = { metadata: { name: 'nginx', namespace: 'default' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } };
    const es: V1EndpointSlice = { addressType: 'IPv4', endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }], metadata: { namespace: 'default' } };
    assert.equal(serviceExportPlan(input({ service: svc, endpointSlices: [es] })).valid.reason, 'Succeed');
  });
});

describe('cache entries: what the export caches keep of every Service and EndpointSlice', () => {
  /** As the apiserver sends them: everything the plan does not read as well. */
  const fullService = (svc: ServiceLike): V1Service => ({
    apiVersion: 'v1', kind: 'Service',
    metadata: {
      ...svc.metadata, uid: 'u-1', resourceVersion: '42', creationTimestamp: new Date(0), labels: { app: 'nginx' },
      annotations: { ...svc.metadata?.annotations, 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
      managedFields: [{ manager: 'kubectl', operation: 'Update' }],
    },
    spec: Object.assign(JSON.parse(JSON.stringify(svc.spec ?? {})) as V1ServiceSpec,
      { selector: { app: 'nginx' }, sessionAffinity: 'None', ipFamilies: ['IPv4'], internalTrafficPolicy: 'Cluster' }),
    status: { loadBalancer: {} },
  });
  const fullSlice = (es: EndpointSliceLike): V1EndpointSlice => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: es.addressType ?? 'IPv4',
    metadata: { ...es.metadata, name: 'nginx-abc', uid: 'u-2', resourceVersion: '43', labels: { ...es.metadata?.labels, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } },
    endpoints: (es.endpoints ?? []).map((e) => ({
      addresses: [...(e.addresses ?? [])], conditions: { ...e.conditions, serving: true, terminating: false },
      nodeName: 'node-1', zone: 'z1', targetRef: { kind: 'Pod', name: 'nginx-1', namespace: 'default', uid: 'p-1' },
    })),
    ports: (es.ports ?? []).map((p) => ({ ...p })),
  });

  it('caches a slice without endpoints or ports, which the API server sends as null', () => {
    const empty = { metadata: { name: 'web-abc', namespace: 'team-a', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4', endpoints: null, ports: null };
    const cached = endpointSliceCacheEntry(empty);
    assert.deepEqual(cached, { metadata: { name: 'web-abc', namespace: 'team-a', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4' });
  });

  it('keeps identity and the fields the plan reads, nothing else', () => {
    const svc = serviceCacheEntry(fullService(service({}, { 'multicluster.antrea.io/imported-service': 'true' })));
    assert.deepEqual(svc, {
      metadata: { name: 'nginx', namespace: 'default', uid: 'u-1', resourceVersion: '42', annotations: { 'multicluster.antrea.io/imported-service': 'true' } },
      spec: { ...service().spec, sessionAffinity: 'None', internalTrafficPolicy: 'Cluster', ipFamilies: ['IPv4'] },
    });
    const es = endpointSliceCacheEntry(fullSlice(slice(['10.244.1.5', ['10.244.1.6', false], ['10.244.1.7', undefined]])));
    assert.deepEqual(es, {
      metadata: { namespace: 'default', name: 'nginx-abc', uid: 'u-2', resourceVersion: '43', labels: { 'kubernetes.io/service-name': 'nginx' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }, { addresses: ['10.244.1.6'], conditions: { ready: false } }, { addresses: ['10.244.1.7'] }],
      ports: slice([]).ports,
    });
  });

  const withoutSpec = (key: 'clusterIPs' | 'ports'): ServiceLike => {
    const svc = service();
    const { [key]: left, ...spec } = svc.spec ?? {};
    assert.ok(left);
    return { ...svc, spec };
  };

  it('plans exactly what the whole objects plan, for every case the plan tells apart', () => {
    const services: (ServiceLike | undefined)[] = [
      undefined, service(), service({ type: 'ExternalName', clusterIP: '', clusterIPs: [] }),
      service({}, { 'multicluster.antrea.io/imported-service': '' }), service({ clusterIP: 'None', clusterIPs: ['None'] }),
      service({ clusterIP: 'fd00:96::10', clusterIPs: ['fd00:96::10'] }), service({ clusterIP: 'fd00:96::10', clusterIPs: ['fd00:96::10', '10.96.0.10'] }),
      withoutSpec('clusterIPs'), withoutSpec('ports'),
    ];
    const sliceSets: EndpointSliceLike[][] = [
      [], [slice(['10.244.1.5', '10.244.1.4'])], [slice([['10.244.1.5', false], ['10.244.1.6', undefined]])], [slice(['fd00::5'], { addressType: 'IPv6' })],
      [slice(['10.244.1.5'], { metadata: { namespace: 'default', labels: { 'kubernetes.io/service-name': 'other' } } })],
      [slice(['10.244.1.5']), slice(['10.244.1.9'], { ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] })],
    ];
    let compared = 0;
    for (const svc of services) {
      for (const slices of sliceSets) {
        for (const endpointIPType of ['ClusterIP', 'PodIP'] as const) {
          const whole = input({ service: svc && fullService(svc), endpointSlices: slices.map(fullSlice), endpointIPType });
          const cached = input({ service: svc && serviceCacheEntry(fullService(svc)), endpointSlices: slices.map((es) => endpointSliceCacheEntry(fullSlice(es))), endpointIPType });
          assert.deepEqual(serviceExportPlan(cached), serviceExportPlan(whole), `${JSON.stringify(svc)} / ${JSON.stringify(slices)} / ${endpointIPType}`);
          compared += 1;
        }
      }
    }
    assert.equal(compared, 108);
  });
});

describe('compareIPs', () => {
  it('orders IPv4 numerically, before other strings', () => {
    assert.deepEqual(['10.0.0.10', 'fd00::1', '10.0.0.9', '9.255.255.255'].sort(compareIPs), ['9.255.255.255', '10.0.0.9', '10.0.0.10', 'fd00::1']);
  });
});

describe('sameExport / mergeForUpdate / exportConflict', () => {
  const desired = serviceExportPlan(input()).exports[1];
  assert.ok(desired);
  const live: ResourceExport = {
    ...structuredClone(desired),
    metadata: {
      ...structuredClone(desired.metadata),
      uid: 'u-1', resourceVersion: '42', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z' as unknown as Date,
      labels: { ...desired.metadata?.labels, 'leader.example/extra': 'x' },
      annotations: { note: 'kept' },
      managedFields: [{ manager: 'antrea-mc-controller', operation: 'Update' }],
    },
    status: { conditions: [{ type: 'Succeeded', status: 'True' }] },
  };

  it('ignores metadata the apiserver or leader adds, foreign labels and status', () => {
    assert.ok(sameExport(desired, live));
  });

  it('treats omitempty-equivalent specs as the same', () => {
    const withEmpties = structuredClone(live);
    assert.ok(withEmpties.spec);
    withEmpties.spec.raw = {};
    withEmpties.spec.labelIdentity = { normalizedLabel: '' };
    assert.ok(sameExport(desired, withEmpties));
  });

  it('sees a spec change, a changed owned label and a missing finalizer', () => {
    const moved = structuredClone(live);
    moved.spec = { ...moved.spec, endpoints: { subsets: [{ addresses: [{ ip: '10.96.0.99' }] }] } };
    assert.ok(!sameExport(desired, moved));
    const relabelled = structuredClone(live);
    relabelled.metadata = { ...relabelled.metadata, labels: { ...relabelled.metadata?.labels, sourceKind: 'Service' } };
    assert.ok(!sameExport(desired, relabelled));
    const unlabelled = structuredClone(live);
    delete unlabelled.metadata?.labels?.sourceClusterID;
    assert.ok(!sameExport(desired, unlabelled));
    const noFinalizer = structuredClone(live);
    delete noFinalizer.metadata?.finalizers;
    assert.ok(!sameExport(desired, noFinalizer));
    const legacy = structuredClone(live);
    assert.ok(legacy.metadata);
    legacy.metadata.finalizers = [RESOURCE_EXPORT_LEGACY_FINALIZER];
    assert.ok(sameExport(desired, legacy), 'the legacy finalizer is honoured by leaders');
  });

  it('merges: live metadata kept (managedFields dropped), our labels over it, our finalizer ensured, desired spec, no status', () => {
    const stale = structuredClone(live);
    assert.ok(stale.metadata);
    stale.metadata.finalizers = ['other.example/finalizer'];
    stale.metadata.labels = { sourceKind: 'Wrong', 'leader.example/extra': 'x' };
    stale.spec = { ...stale.spec, endpoints: { subsets: [] } };
    const merged = mergeForUpdate(desired, stale);
    assert.deepEqual(merged, {
      apiVersion: 'multicluster.crd.antrea.io/v1alpha1',
      kind: 'ResourceExport',
      metadata: {
        name: 'east-default-nginx-endpoints', namespace: 'antrea-multicluster',
        uid: 'u-1', resourceVersion: '42', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { sourceKind: 'Endpoints', 'leader.example/extra': 'x', sourceName: 'nginx', sourceNamespace: 'default', sourceClusterID: 'east' },
        annotations: { note: 'kept' },
        finalizers: ['other.example/finalizer', RESOURCE_EXPORT_FINALIZER],
      },
      spec: desired.spec,
    });
    assert.ok(sameExport(desired, merged));
    assert.notEqual(merged.spec, desired.spec, 'a copy');
  });

  it('merges without duplicating a finalizer already there (new or legacy)', () => {
    assert.deepEqual(mergeForUpdate(desired, live).metadata?.finalizers, [RESOURCE_EXPORT_FINALIZER]);
    const legacy = structuredClone(live);
    assert.ok(legacy.metadata);
    legacy.metadata.finalizers = [RESOURCE_EXPORT_LEGACY_FINALIZER];
    assert.deepEqual(mergeForUpdate(desired, legacy).metadata?.finalizers, [RESOURCE_EXPORT_LEGACY_FINALIZER]);
  });

  it('reports a live RE of the same name that exports something else', () => {
    assert.equal(exportConflict(desired, live), undefined);
    // Cluster east, Service a/b-c and Service a-b/c share the RE name east-a-b-c-endpoints.
    const other = structuredClone(live);
    other.spec = { ...other.spec, namespace: 'a-b', name: 'c' };
    const mine = structuredClone(desired);
    mine.spec = { ...mine.spec, namespace: 'a', name: 'b-c' };
    assert.equal(
      exportConflict(mine, other),
      'ResourceExport antrea-multicluster/east-default-nginx-endpoints already exports Endpoints a-b/c of cluster "east", not Endpoints a/b-c of cluster "east"',
    );
    const otherCluster = structuredClone(live);
    otherCluster.spec = { ...otherCluster.spec, clusterID: 'east-a' };
    assert.match(exportConflict(desired, otherCluster) ?? '', /of cluster "east-a", not Endpoints default\/nginx of cluster "east"/);
  });
});

describe('hostnames: the per-endpoint names of a headless Service travel (issue 28: <hostname>.<cluster>.<svc>.clusterset.local)', () => {
  const headless = (endpoints: { ip: string; hostname?: string; ready?: boolean }[]) => input({
    service: service({ clusterIP: 'None', clusterIPs: ['None'] }),
    endpointIPType: 'PodIP',
    endpointSlices: [endpointSliceCacheEntry({
      metadata: { name: 'db-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'nginx' } },
      addressType: 'IPv4',
      endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true }, ...(e.hostname !== undefined && { hostname: e.hostname }) })),
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    })],
  });
  const addresses = (plan: ReturnType<typeof serviceExportPlan>) => plan.exports.find((re) => re.spec?.kind === 'Endpoints')?.spec?.endpoints?.subsets?.flatMap((s) => s.addresses ?? []);

  it('each address keeps its endpoint hostname through the cache entry, sorted by IP; ready ones only', () => {
    const plan = serviceExportPlan(headless([{ ip: '10.1.1.2', hostname: 'db-1' }, { ip: '10.1.1.1', hostname: 'db-0' }, { ip: '10.1.1.3' }, { ip: '10.1.1.9', hostname: 'db-9', ready: false }]));
    assert.deepEqual(addresses(plan), [{ ip: '10.1.1.1', hostname: 'db-0' }, { ip: '10.1.1.2', hostname: 'db-1' }, { ip: '10.1.1.3' }]);
  });

  it('one IP in two slices with two hostnames: the same one whatever the order (the smaller)', () => {
    const a = serviceExportPlan(headless([{ ip: '10.1.1.1', hostname: 'db-b' }, { ip: '10.1.1.1', hostname: 'db-a' }]));
    const b = serviceExportPlan(headless([{ ip: '10.1.1.1', hostname: 'db-a' }, { ip: '10.1.1.1', hostname: 'db-b' }]));
    assert.deepEqual(addresses(a), [{ ip: '10.1.1.1', hostname: 'db-a' }]);
    assert.deepEqual(addresses(b), addresses(a));
  });
});
