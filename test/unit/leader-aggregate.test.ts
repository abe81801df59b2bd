import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceExport } from '../../src/common/api/antrea.js';
import { RESOURCE_EXPORT_FINALIZER, RESOURCE_EXPORT_LEGACY_FINALIZER } from '../../src/common/api/names.js';
import {
  dependentImportKeys, hasLeaderFinalizer, importKeyOf, planImport, withoutLeaderFinalizers,
} from '../../src/leader/decisions/aggregate.js';

const NS = 'antrea-multicluster';

function serviceRE(cluster: string, name: string, ports: { name?: string; port: number; protocol?: string; appProtocol?: string }[], created: string, extra: Partial<ResourceExport['metadata']> = {}): ResourceExport {
  return {
    metadata: { name: `${cluster}-team-a-${name}-service`, namespace: NS, creationTimestamp: created as unknown as Date, labels: { sourceClusterID: cluster, sourceKind: 'Service', sourceName: name, sourceNamespace: 'team-a' }, ...extra },
    spec: { clusterID: cluster, name, namespace: 'team-a', kind: 'Service', service: { serviceSpec: { ports: ports.map((p) => ({ ...p, targetPort: 8080 as never })) } } },
  };
}

function endpointsRE(cluster: string, name: string, ip: string, extra: Partial<ResourceExport['metadata']> = {}): ResourceExport {
  return {
    metadata: { name: `${cluster}-team-a-${name}-endpoints`, namespace: NS, labels: { sourceClusterID: cluster, sourceKind: 'Endpoints', sourceName: name, sourceNamespace: 'team-a' }, ...extra },
    spec: { clusterID: cluster, name, namespace: 'team-a', kind: 'Endpoints', endpoints: { subsets: [{ addresses: [{ ip }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] } },
  };
}

const deleting = { deletionTimestamp: '2026-12-02T10:00:00Z' as unknown as Date, finalizers: [RESOURCE_EXPORT_FINALIZER] };

describe('import keys', () => {
  it('derives Antrea\'s ResourceImport names', () => {
    assert.equal(importKeyOf(serviceRE('east', 'web', [{ port: 80 }], '2026-01-01T00:00:00Z')), 'team-a-web-service');
    assert.equal(importKeyOf(endpointsRE('east', 'web', '10.0.0.1')), 'team-a-web-endpoints');
    assert.equal(importKeyOf({ metadata: { name: 'east-clusterinfo' }, spec: { kind: 'ClusterInfo', clusterID: 'east' } }), 'east-clusterinfo');
    assert.equal(importKeyOf({ metadata: { name: 'east-0123456789abcdef' }, spec: { kind: 'LabelIdentity' } }), undefined, 'not aggregated here');
  });

  it('a Service export also feeds the Endpoints import of the same Service', () => {
    assert.deepEqual(dependentImportKeys(serviceRE('east', 'web', [{ port: 80 }], '2026-01-01T00:00:00Z')), ['team-a-web-service', 'team-a-web-endpoints']);
    assert.deepEqual(dependentImportKeys(endpointsRE('east', 'web', '10.0.0.1')), ['team-a-web-endpoints']);
  });
});

function withSpec(re: ResourceExport, extra: Record<string, unknown>): ResourceExport {
  const copy = structuredClone(re);
  Object.assign(copy.spec?.service?.serviceSpec ?? {}, extra);
  return copy;
}

function verdictOf(plan: ReturnType<typeof planImport>, name: string): string {
  const v = plan.verdicts.get(name);
  if (v === undefined) return 'none';
  return v.ok ? 'ok' : `${v.reason}: ${v.message}`;
}

describe('planImport: Service', () => {
  it('imports a lone exporter\'s ports (name, port, protocol) as a ClusterSetIP ServiceImport', () => {
    const plan = planImport('team-a-web-service', [serviceRE('east', 'web', [{ name: 'http', port: 80, protocol: 'TCP' }], '2026-01-01T00:00:00Z')]);
    assert.deepEqual(plan.spec, { name: 'web', namespace: 'team-a', kind: 'ServiceImport', serviceImport: { spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], type: 'ClusterSetIP' } } });
    assert.deepEqual([...plan.verdicts], [['east-team-a-web-service', { ok: true }]]);
  });

  it('imports a dual-stack export dual-stack: the oldest export\'s families, in its order; a single-stack exporter is no conflict', () => {
    const dual = withSpec(serviceRE('east', 'web', [{ name: 'tcp', port: 42 }], '2026-01-01T00:00:00Z'), { ipFamilies: ['IPv6', 'IPv4'] });
    const single = serviceRE('west', 'web', [{ name: 'tcp', port: 42 }], '2026-01-02T00:00:00Z');
    const plan = planImport('team-a-web-service', [dual, single]);
    assert.deepEqual(plan.spec?.serviceImport?.spec?.ipFamilies, ['IPv6', 'IPv4']);
    assert.ok([...plan.verdicts.values()].every((v) => v.ok));
    assert.equal(planImport('team-a-web-service', [single]).spec?.serviceImport?.spec?.ipFamilies, undefined);
  });

  it('carries headlessness, session affinity, internalTrafficPolicy and trafficDistribution over', () => {
    const re = withSpec(serviceRE('east', 'web', [{ name: 'tcp', port: 42 }], '2026-01-01T00:00:00Z'), {
      clusterIP: 'None', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
      internalTrafficPolicy: 'Local', trafficDistribution: 'PreferClose',
    });
    assert.deepEqual(planImport('team-a-web-service', [re]).spec?.serviceImport?.spec, {
      ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }], type: 'Headless', sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } }, internalTrafficPolicy: 'Local', trafficDistribution: 'PreferClose',
    });
  });

  it('the oldest export by creation time wins, not the alphabetically first; EACH conflicting export is told', () => {
    // "west" sorts after "east" but exported first: its port must win.
    const west = serviceRE('west', 'web', [{ name: 'http', port: 80 }], '2026-01-01T00:00:00Z');
    const east = serviceRE('east', 'web', [{ name: 'http', port: 81 }], '2026-01-02T00:00:00Z');
    for (const order of [[east, west], [west, east]]) {
      const plan = planImport('team-a-web-service', order);
      assert.deepEqual(plan.spec?.serviceImport?.spec?.ports, [{ name: 'http', port: 80, protocol: 'TCP' }]);
      for (const name of ['east-team-a-web-service', 'west-team-a-web-service']) {
        assert.match(verdictOf(plan, name), /^ConvergeFailure: conflict between the exports of 2 clusters, the oldest \(cluster west, west-team-a-web-service\) wins: ports differ \(cluster west: http:80\/TCP; cluster east: http:81\/TCP\)/);
      }
    }
  });

  it('imports the union of distinct ports, and still reports the difference as a conflict', () => {
    const east = serviceRE('east', 'web', [{ name: 'tcp', port: 42, protocol: 'TCP' }, { name: 'udp', port: 42, protocol: 'UDP' }], '2026-01-01T00:00:00Z');
    const west = serviceRE('west', 'web', [{ name: 'tcp', port: 42, protocol: 'TCP' }, { name: 'stcp', port: 142, protocol: 'SCTP' }], '2026-01-02T00:00:00Z');
    const plan = planImport('team-a-web-service', [west, east]);
    assert.deepEqual(plan.spec?.serviceImport?.spec?.ports, [
      { name: 'tcp', port: 42, protocol: 'TCP' }, { name: 'udp', port: 42, protocol: 'UDP' }, { name: 'stcp', port: 142, protocol: 'SCTP' },
    ]);
    assert.match(verdictOf(plan, 'east-team-a-web-service'), /ports differ/);
    assert.match(verdictOf(plan, 'west-team-a-web-service'), /ports differ/);
  });

  it('tells ports apart by protocol: 80/TCP and 80/UDP under one name conflict, the oldest kept', () => {
    const east = serviceRE('east', 'web', [{ name: 'dns', port: 53, protocol: 'UDP' }], '2026-01-01T00:00:00Z');
    const west = serviceRE('west', 'web', [{ name: 'dns', port: 53, protocol: 'TCP' }], '2026-01-02T00:00:00Z');
    const plan = planImport('team-a-web-service', [west, east]);
    assert.deepEqual(plan.spec?.serviceImport?.spec?.ports, [{ name: 'dns', port: 53, protocol: 'UDP' }]);
    assert.match(verdictOf(plan, 'west-team-a-web-service'), /ports differ \(cluster east: dns:53\/UDP; cluster west: dns:53\/TCP\)/);
  });

  it('the same ports in another order agree', () => {
    const east = serviceRE('east', 'web', [{ name: 'a', port: 80 }, { name: 'b', port: 443 }], '2026-01-01T00:00:00Z');
    const west = serviceRE('west', 'web', [{ name: 'b', port: 443 }, { name: 'a', port: 80 }], '2026-01-02T00:00:00Z');
    const plan = planImport('team-a-web-service', [east, west]);
    assert.equal(verdictOf(plan, 'west-team-a-web-service'), 'ok');
    assert.equal(verdictOf(plan, 'east-team-a-web-service'), 'ok');
  });

  it('conflicting headlessness: the oldest export\'s type is imported, both exports are told', () => {
    const west = serviceRE('west', 'web', [{ name: 'tcp', port: 42 }], '2026-01-01T00:00:00Z');
    const east = withSpec(serviceRE('east', 'web', [{ name: 'tcp', port: 42 }], '2026-01-02T00:00:00Z'), { clusterIP: 'None' });
    const plan = planImport('team-a-web-service', [east, west]);
    assert.equal(plan.spec?.serviceImport?.spec?.type, 'ClusterSetIP');
    for (const name of ['east-team-a-web-service', 'west-team-a-web-service']) {
      assert.match(verdictOf(plan, name), /headlessness \(type\) differs \(cluster west: "ClusterSetIP"; cluster east: "Headless"\); imported: "ClusterSetIP"/);
    }
  });

  it('when the winner is withdrawn the next exporter\'s ports are imported; with none left there is no import', () => {
    const east = serviceRE('east', 'web', [{ port: 80 }], '2026-01-01T00:00:00Z', deleting);
    const west = serviceRE('west', 'web', [{ port: 81 }], '2026-01-02T00:00:00Z');
    assert.deepEqual(planImport('team-a-web-service', [east, west]).spec?.serviceImport?.spec?.ports, [{ port: 81, protocol: 'TCP' }]);
    assert.equal(planImport('team-a-web-service', [east]).spec, undefined);
  });
});

describe('planImport: Endpoints', () => {
  const east = serviceRE('east', 'web', [{ port: 80 }], '2026-01-01T00:00:00Z');
  it('merges the subsets of every cluster that exports the Service, ordered by export name', () => {
    const west = serviceRE('west', 'web', [{ port: 80 }], '2026-01-02T00:00:00Z');
    const plan = planImport('team-a-web-endpoints', [endpointsRE('west', 'web', '10.0.0.2'), endpointsRE('east', 'web', '10.0.0.1'), west, east]);
    assert.deepEqual(plan.spec?.kind, 'Endpoints');
    assert.deepEqual(plan.spec?.endpoints?.subsets?.map((s) => s.addresses?.[0]?.ip), ['10.0.0.1', '10.0.0.2']);
  });

  it('keeps a conflicting exporter\'s endpoints: the conflict is resolved on the Service, every exporter serves', () => {
    const west = serviceRE('west', 'web', [{ port: 81 }], '2026-01-02T00:00:00Z');
    const plan = planImport('team-a-web-endpoints', [endpointsRE('east', 'web', '10.0.0.1'), endpointsRE('west', 'web', '10.0.0.2'), east, west]);
    assert.deepEqual(plan.spec?.endpoints?.subsets?.map((s) => s.addresses?.[0]?.ip), ['10.0.0.1', '10.0.0.2']);
    assert.equal(verdictOf(plan, 'west-team-a-web-endpoints'), 'ok');
  });

  it('waits for the Service export: endpoints without one are neither imported nor judged', () => {
    const plan = planImport('team-a-web-endpoints', [endpointsRE('east', 'web', '10.0.0.1')]);
    assert.equal(plan.spec, undefined);
    assert.equal(plan.verdicts.size, 0);
  });

  it('drops a withdrawn exporter\'s endpoints', () => {
    const plan = planImport('team-a-web-endpoints', [endpointsRE('east', 'web', '10.0.0.1', deleting), east]);
    assert.equal(plan.spec, undefined);
  });
});

describe('planImport: ClusterInfo', () => {
  it('copies clusterInfo into the lower-case clusterinfo of a same-named import, naming the export', () => {
    const info = { clusterID: 'east', serviceCIDR: '10.96.0.0/12', gatewayInfos: [{ gatewayIP: '172.18.0.10' }] };
    const plan = planImport('east-clusterinfo', [{ metadata: { name: 'east-clusterinfo', namespace: NS }, spec: { kind: 'ClusterInfo', clusterID: 'east', name: 'east', namespace: 'kube-system', clusterInfo: info } }]);
    assert.deepEqual(plan.spec, { kind: 'ClusterInfo', name: 'east-clusterinfo', namespace: NS, clusterinfo: info });
    assert.equal(plan.verdicts.size, 0, 'Antrea writes no status on ClusterInfo exports');
  });
});

describe('finalizers', () => {
  it('knows the current and the legacy finalizer, and removes only those', () => {
    assert.ok(hasLeaderFinalizer({ metadata: { finalizers: [RESOURCE_EXPORT_LEGACY_FINALIZER] } }));
    assert.ok(!hasLeaderFinalizer({ metadata: { finalizers: ['other'] } }));
    assert.deepEqual(withoutLeaderFinalizers([RESOURCE_EXPORT_FINALIZER, 'other', RESOURCE_EXPORT_LEGACY_FINALIZER]), ['other']);
  });
});

/** A Service export of `<namespace>/<name>`, whatever its import key. */
function serviceOfRE(cluster: string, namespace: string, name: string, created: string, ports = [{ name: 'http', port: 80 }]): ResourceExport {
  return {
    metadata: { name: `${cluster}-${namespace}-${name}-service`, namespace: NS, creationTimestamp: created as unknown as Date, labels: { sourceClusterID: cluster, sourceKind: 'Service', sourceName: name, sourceNamespace: namespace } },
    spec: { clusterID: cluster, name, namespace, kind: 'Service', service: { serviceSpec: { ports: ports.map((p) => ({ ...p, protocol: 'TCP', targetPort: 8080 as never })) } } },
  };
}

function endpointsOfRE(cluster: string, namespace: string, name: string, ip: string): ResourceExport {
  return {
    metadata: { name: `${cluster}-${namespace}-${name}-endpoints`, namespace: NS, labels: { sourceClusterID: cluster, sourceKind: 'Endpoints', sourceName: name, sourceNamespace: namespace } },
    spec: { clusterID: cluster, name, namespace, kind: 'Endpoints', endpoints: { subsets: [{ addresses: [{ ip }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] } },
  };
}

describe('planImport: two Services, one import name (my-app/web and my/app-web)', () => {
  const KEY = 'my-app-web-service';
  const first = serviceOfRE('east', 'my-app', 'web', '2026-01-01T00:00:00Z');
  const second = serviceOfRE('west', 'my', 'app-web', '2026-01-02T00:00:00Z');

  it('the oldest export\'s Service holds the import, the other is refused with ImportNameConflict naming the holder', () => {
    for (const order of [[first, second], [second, first]]) {
      const plan = planImport(KEY, order);
      assert.deepEqual(plan.spec, { name: 'web', namespace: 'my-app', kind: 'ServiceImport', serviceImport: { spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], type: 'ClusterSetIP' } } });
      assert.equal(verdictOf(plan, 'east-my-app-web-service'), 'ok');
      assert.match(verdictOf(plan, 'west-my-app-web-service'), /^ImportNameConflict: Service my\/app-web maps to ResourceImport my-app-web-service .*which Service my-app\/web \(exported by cluster east\) holds: this export is not imported/);
    }
  });

  it('different ports do not turn the holder\'s export into a conflict', () => {
    const other = serviceOfRE('west', 'my', 'app-web', '2026-01-02T00:00:00Z', [{ name: 'grpc', port: 9000 }]);
    const plan = planImport(KEY, [first, other]);
    assert.equal(verdictOf(plan, 'east-my-app-web-service'), 'ok');
    assert.deepEqual(plan.spec?.serviceImport?.spec?.ports, [{ name: 'http', port: 80, protocol: 'TCP' }]);
  });

  it('the Service the stored import names keeps it, even when the other export is older (so a restart changes nothing)', () => {
    const stored = { metadata: { name: KEY }, spec: { name: 'app-web', namespace: 'my', kind: 'ServiceImport' } };
    const plan = planImport(KEY, [first, second], (name) => (name === KEY ? stored : undefined));
    assert.equal(plan.spec?.namespace, 'my');
    assert.equal(verdictOf(plan, 'west-my-app-web-service'), 'ok');
    assert.match(verdictOf(plan, 'east-my-app-web-service'), /^ImportNameConflict: Service my-app\/web .* which Service my\/app-web \(exported by cluster west\) holds/);
  });

  it('once the holder\'s exports are gone, the other Service takes the import over', () => {
    const stored = { metadata: { name: KEY }, spec: { name: 'web', namespace: 'my-app', kind: 'ServiceImport' } };
    const withdrawn = { ...first, metadata: { ...first.metadata, ...deleting } };
    const plan = planImport(KEY, [withdrawn, second], () => stored);
    assert.equal(plan.spec?.namespace, 'my');
    assert.equal(verdictOf(plan, 'west-my-app-web-service'), 'ok');
  });

  it('the Endpoints import carries only the holder\'s endpoints; the other\'s are refused, never merged', () => {
    const all = [first, second, endpointsOfRE('east', 'my-app', 'web', '10.0.0.1'), endpointsOfRE('west', 'my', 'app-web', '10.9.9.9')];
    const plan = planImport('my-app-web-endpoints', all);
    assert.equal(plan.spec?.namespace, 'my-app');
    assert.equal(plan.spec?.name, 'web');
    assert.deepEqual(plan.spec?.endpoints?.subsets?.flatMap((s) => s.addresses?.map((a) => a.ip)), ['10.0.0.1']);
    assert.equal(verdictOf(plan, 'east-my-app-web-endpoints'), 'ok');
    assert.match(verdictOf(plan, 'west-my-app-web-endpoints'), /^ImportNameConflict: Service my\/app-web maps to ResourceImport my-app-web-endpoints/);
  });
});

describe('planImport: fields a member does not send are the Kubernetes defaults (Antrea\'s member sends ports only)', () => {
  it('absent sessionAffinity / internalTrafficPolicy / sessionAffinityConfig equal None / Cluster / none: no conflict', () => {
    const antrea = serviceRE('gamma', 'web', [{ name: 'http', port: 80, protocol: 'TCP' }], '2026-01-01T00:00:00Z');
    const ours = withSpec(serviceRE('east', 'web', [{ name: 'http', port: 80, protocol: 'TCP' }], '2026-01-02T00:00:00Z'), { sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' });
    for (const order of [[antrea, ours], [ours, antrea]]) {
      const plan = planImport('team-a-web-service', order);
      assert.equal(verdictOf(plan, 'gamma-team-a-web-service'), 'ok');
      assert.equal(verdictOf(plan, 'east-team-a-web-service'), 'ok');
    }
    // The import keeps the oldest export's fields as sent: nothing rewritten for an all-Antrea fleet.
    assert.deepEqual(planImport('team-a-web-service', [antrea, ours]).spec?.serviceImport?.spec, { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], type: 'ClusterSetIP' });
  });

  it('a ClientIP affinity without a config means 10800 s; another timeout, or affinity against an absent one, still differs', () => {
    const bare = withSpec(serviceRE('east', 'web', [{ port: 80 }], '2026-01-01T00:00:00Z'), { sessionAffinity: 'ClientIP' });
    const explicit = withSpec(serviceRE('west', 'web', [{ port: 80 }], '2026-01-02T00:00:00Z'), { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } });
    assert.equal(verdictOf(planImport('team-a-web-service', [bare, explicit]), 'west-team-a-web-service'), 'ok');
    const short = withSpec(explicit, { sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } });
    assert.match(verdictOf(planImport('team-a-web-service', [bare, short]), 'west-team-a-web-service'), /sessionAffinityConfig differs/);
    const antrea = serviceRE('gamma', 'web', [{ port: 80 }], '2026-01-03T00:00:00Z');
    assert.match(verdictOf(planImport('team-a-web-service', [bare, antrea]), 'gamma-team-a-web-service'), /sessionAffinity differs \(cluster east: "ClientIP"; cluster gamma: "None"\)/);
  });

  it('a stated internalTrafficPolicy Local or a trafficDistribution is a difference from an absent one', () => {
    const antrea = serviceRE('gamma', 'web', [{ port: 80 }], '2026-01-01T00:00:00Z');
    const local = withSpec(serviceRE('east', 'web', [{ port: 80 }], '2026-01-02T00:00:00Z'), { internalTrafficPolicy: 'Local', trafficDistribution: 'PreferClose' });
    const verdict = verdictOf(planImport('team-a-web-service', [antrea, local]), 'east-team-a-web-service');
    assert.match(verdict, /internalTrafficPolicy differs \(cluster gamma: "Cluster"; cluster east: "Local"\)/);
    assert.match(verdict, /trafficDistribution differs \(cluster gamma: null; cluster east: "PreferClose"\)/);
  });
});

describe('planImport: verdict messages are bounded', () => {
  it('30,000 differing ports across 20 clusters: at most 1 KiB, a few of each list named and how many more', () => {
    const many = Array.from({ length: 30_000 }, (_, i) => ({ name: `p${String(i)}`, port: (i % 60_000) + 1 }));
    const exports = Array.from({ length: 20 }, (_, c) => serviceRE(`c${String(c).padStart(2, '0')}`, 'web', c === 0 ? many : [{ name: 'http', port: 80 }], `2026-01-01T00:00:${String(c).padStart(2, '0')}Z`));
    const plan = planImport('team-a-web-service', exports);
    for (const re of exports) {
      const v = plan.verdicts.get(re.metadata?.name ?? '');
      assert.ok(v !== undefined && !v.ok);
      assert.ok(Buffer.byteLength(v.message, 'utf8') <= 1024, `${String(Buffer.byteLength(v.message, 'utf8'))} bytes`);
      assert.ok(!v.message.includes('\uFFFD'));
      assert.match(v.message, /… and 29992 more ports/);
      assert.match(v.message, /… and 12 more clusters/);
    }
  });

  it('every trait differing among long cluster IDs: cut to 1 KiB at a character boundary, ending with how much was left out', () => {
    const exports = Array.from({ length: 12 }, (_, c) => withSpec(
      serviceRE(`${'x'.repeat(60)}${String(c).padStart(3, '0')}`, 'web', [{ name: `p${String(c)}`, port: 80 + c }], `2026-01-01T00:00:${String(c).padStart(2, '0')}Z`),
      { clusterIP: c % 2 === 0 ? 'None' : '10.0.0.1', sessionAffinity: c % 2 === 0 ? 'ClientIP' : 'None', internalTrafficPolicy: c % 2 === 0 ? 'Local' : 'Cluster', trafficDistribution: `Zone${String(c)}` },
    ));
    const plan = planImport('team-a-web-service', exports);
    for (const re of exports) {
      const v = plan.verdicts.get(re.metadata?.name ?? '');
      assert.ok(v !== undefined && !v.ok);
      assert.ok(Buffer.byteLength(v.message, 'utf8') <= 1024, `${String(Buffer.byteLength(v.message, 'utf8'))} bytes`);
      assert.match(v.message, /^conflict between the exports of 12 clusters/);
      assert.match(v.message, /… and \d+ more characters$/);
    }
  });
});
