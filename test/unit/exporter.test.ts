// The Exporter against the in-memory FakeLeader and in-memory member caches: what it creates,
// replaces and deletes on the leader (only differences), trust (pause/resume with a full sync
// and a stale sweep), leave, the ServiceExport status (Valid, Conflict) and its Events, and
// the ClusterInfo export of the Gateway. The leader's verdicts come through the watch of our
// exports, as in production; the harness's idle() lets that watch catch up.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { MetaCondition } from '../../src/common/api/meta.js';
import type { ServiceExport, ServiceExportStatus } from '../../src/common/api/mcs.js';
import type { Gateway, ResourceExport } from '../../src/common/api/antrea.js';
import type { ExportPolicyConfig } from '../../src/common/config/config.js';
import type { EventTarget } from '../../src/common/events/recorder.js';
import { clusterInfoExport } from '../../src/exporter/clusterinfo-export.js';
import type { ExportSources } from '../../src/exporter/desired-exports.js';
import { Exporter, type ExporterOptions } from '../../src/exporter/exporter.js';
import { olderVersion } from '../../src/exporter/known-exports.js';
import { verdictOn } from '../../src/exporter/leader-verdict.js';
import { exportNames, serviceExportPlan, type EndpointSliceLike, type ServiceLike } from '../../src/exporter/service-export.js';
import { apiError, FakeLeader } from './fakes/fake-leader.js';

const LOCAL = 'east';
const AGENT_NS = 'agent-ns';
const NAMES = exportNames(LOCAL, 'web', 'nginx');
const DEADLINE_MS = 5_000;

const POLICY: ExportPolicyConfig = {
  enabled: true, allowedNamespaces: [], deniedNamespaces: [], alwaysDeniedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', AGENT_NS],
  endpointIPType: 'ClusterIP', podCIDRs: [], resyncSeconds: 600,
};

// ---------------------------------------------------------------------------------------
// Member caches, a status sink that writes back into them, and an Event log
// ---------------------------------------------------------------------------------------

const id = (ns: string, name: string) => `${ns}/${name}`;

class MemorySources implements ExportSources {
  readonly serviceExportsByID = new Map<string, ServiceExport>();
  readonly servicesByID = new Map<string, ServiceLike>();
  readonly slicesByID = new Map<string, EndpointSliceLike[]>();
  readonly gatewayList: Gateway[] = [];
  readonly syncedKinds = new Set<'service' | 'clusterinfo'>(['service', 'clusterinfo']);
  /** Like informer events: set to the exporter(s) to notify. */
  onServiceChanged: (ns: string, name: string) => void = () => undefined;
  onGatewayChanged: () => void = () => undefined;
  #rv = 100;

  synced(kind: 'service' | 'clusterinfo'): boolean {
    return this.syncedKinds.has(kind);
  }
  serviceExport(ns: string, name: string): ServiceExport | undefined {
    return this.serviceExportsByID.get(id(ns, name));
  }
  serviceExports(): readonly ServiceExport[] {
    return [...this.serviceExportsByID.values()];
  }
  service(ns: string, name: string): ServiceLike | undefined {
    return this.servicesByID.get(id(ns, name));
  }
  endpointSlices(ns: string, name: string): readonly EndpointSliceLike[] {
    return this.slicesByID.get(id(ns, name)) ?? [];
  }
  gateways(): readonly Gateway[] {
    return this.gatewayList;
  }

  putServiceExport(ns: string, name: string, status?: ServiceExportStatus): void {
    this.#rv += 1;
    const se: ServiceExport = {
      apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport',
      metadata: { name, namespace: ns, uid: `se-${ns}-${name}`, generation: 1, resourceVersion: String(this.#rv) },
      ...(status ? { status } : {}),
    };
    this.serviceExportsByID.set(id(ns, name), se);
    this.onServiceChanged(ns, name);
  }
  deleteServiceExport(ns: string, name: string): void {
    this.serviceExportsByID.delete(id(ns, name));
    this.onServiceChanged(ns, name);
  }
  putService(ns: string, name: string, ports = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], clusterIP = '10.96.0.10'): void {
    this.servicesByID.set(id(ns, name), { metadata: { name, namespace: ns }, spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports } });
    this.onServiceChanged(ns, name);
  }
  deleteService(ns: string, name: string): void {
    this.servicesByID.delete(id(ns, name));
    this.onServiceChanged(ns, name);
  }
  putEndpoints(ns: string, name: string, ips: string[]): void {
    this.slicesByID.set(id(ns, name), [{
      metadata: { namespace: ns, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    }]);
    this.onServiceChanged(ns, name);
  }
  /** A Service with a ServiceExport and one ready endpoint. */
  exportService(ns: string, name: string): void {
    this.putService(ns, name);
    this.putEndpoints(ns, name, ['10.244.1.5']);
    this.putServiceExport(ns, name);
  }
  putGateway(name: string, gatewayIP: string): void {
    this.gatewayList.push({ apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'Gateway', metadata: { name, namespace: AGENT_NS }, gatewayIP, internalIP: '172.18.0.2', serviceCIDR: '10.96.0.0/12' });
    this.onGatewayChanged();
  }
  deleteGateways(): void {
    this.gatewayList.length = 0;
    this.onGatewayChanged();
  }
  /** What the status subresource write does: stores the status with a new resourceVersion. */
  writeStatus(se: ServiceExport, status: ServiceExportStatus): void {
    const key = id(se.metadata?.namespace ?? '', se.metadata?.name ?? '');
    const current = this.serviceExportsByID.get(key);
    if (!current) throw apiError(404, 'NotFound', 'serviceexports not found');
    if (current.metadata?.resourceVersion !== se.metadata?.resourceVersion) throw apiError(409, 'Conflict', 'the object has been modified');
    this.#rv += 1;
    this.serviceExportsByID.set(key, { ...structuredClone(current), metadata: { ...current.metadata, resourceVersion: String(this.#rv) }, status: structuredClone(status) });
    this.onServiceChanged(se.metadata?.namespace ?? '', se.metadata?.name ?? '');
  }
  conditions(ns: string, name: string): MetaCondition[] {
    return this.serviceExport(ns, name)?.status?.conditions ?? [];
  }
  condition(ns: string, name: string, type: string): MetaCondition | undefined {
    return this.conditions(ns, name).find((c) => c.type === type);
  }
}

interface RecordedEvent {
  readonly target: EventTarget;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined };

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

const running: Exporter[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
});

function withDeadline<T>(promise: Promise<T>, what: string, ms = DEADLINE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => { reject(new Error(`deadline: ${what} after ${String(ms)} ms`)); }, ms);
  });
  return Promise.race([promise, deadline]).finally(() => { clearTimeout(timer); });
}

interface Setup {
  readonly leader: FakeLeader;
  readonly sources: MemorySources;
  readonly events: RecordedEvent[];
  readonly statusWrites: { key: string; status: ServiceExportStatus }[];
  readonly exporter: Exporter;
  /**
   * Waits (with a deadline) until the watch of our exports has delivered every event the leader
   * holds for it and no export work is queued or running.
   */
  idle(): Promise<void>;
  /** Waits (with a deadline) until no export work is queued or running; the watch lags as it is. */
  exporterIdle(): Promise<void>;
  /** Leader writes (create/update/delete) since the last call. */
  writes(): string[];
  /** Resolves once a status write satisfies `test`. */
  statusWritten(test: (status: ServiceExportStatus) => boolean): Promise<void>;
}

function setup(overrides: Partial<ExporterOptions> & { leader?: FakeLeader; sources?: MemorySources } = {}): Setup {
  const leader = overrides.leader ?? new FakeLeader();
  const sources = overrides.sources ?? new MemorySources();
  const events: RecordedEvent[] = [];
  const statusWrites: { key: string; status: ServiceExportStatus }[] = [];
  const waiters: { test: (status: ServiceExportStatus) => boolean; resolve: () => void }[] = [];
  const exporter = new Exporter({
    localClusterID: LOCAL,
    leaderNamespace: leader.namespace,
    agentNamespace: AGENT_NS,
    policy: POLICY,
    sources,
    writeStatus: (se, status) => {
      sources.writeStatus(se, status);
      statusWrites.push({ key: id(se.metadata?.namespace ?? '', se.metadata?.name ?? ''), status });
      for (const w of [...waiters]) {
        if (w.test(status)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      return Promise.resolve();
    },
    events: { record: (target, type, reason, message) => { events.push({ target, type, reason, message }); } },
    logger: silent,
    ...overrides,
  });
  running.push(exporter);
  sources.onServiceChanged = (ns, name) => { exporter.serviceChanged(ns, name); };
  sources.onGatewayChanged = () => { exporter.clusterInfoChanged(); };
  let seen = leader.calls.length;
  return {
    leader, sources, events, statusWrites, exporter,
    idle: () => withDeadline((async () => {
      do await exporter.onIdle(); while (leader.deliver());
    })(), 'exporter idle, watch caught up'),
    exporterIdle: () => withDeadline(exporter.onIdle(), 'exporter idle'),
    writes: () => {
      const calls = leader.calls.slice(seen).filter((c) => /^(create|update|delete) re /.test(c));
      seen = leader.calls.length;
      return calls;
    },
    statusWritten: (test) => withDeadline(new Promise<void>((resolve) => { waiters.push({ test, resolve }); }), 'status write'),
  };
}

/** A started exporter with web/nginx exported and settled. */
async function exported(overrides: Parameters<typeof setup>[0] = {}): Promise<Setup> {
  const s = setup(overrides);
  s.sources.exportService('web', 'nginx');
  s.exporter.resume(s.leader);
  await s.idle();
  return s;
}

function stored(leader: FakeLeader, name: string): ResourceExport | undefined {
  return leader.resourceExports.get(name);
}

/** An RE of our cluster ID for a Service that does not exist here (a leftover). */
function leftover(leader: FakeLeader, ns: string, name: string): void {
  const plan = serviceExportPlan({
    localClusterID: LOCAL, leaderNamespace: leader.namespace,
    serviceExport: { metadata: { namespace: ns, name } },
    service: { metadata: { name, namespace: ns }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.99', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    endpointSlices: [{ addressType: 'IPv4', endpoints: [{ addresses: ['10.244.9.9'] }] }],
    endpointIPType: 'ClusterIP',
  });
  for (const re of plan.exports) void leader.createResourceExport(re);
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

describe('Exporter: Service and Endpoints exports', () => {
  it('creates exactly the two planned REs, and Valid=True', async () => {
    const s = setup();
    s.sources.exportService('web', 'nginx');
    s.exporter.resume(s.leader);
    await s.idle();
    assert.deepEqual(s.writes().sort(), [`create re ${NAMES.endpoints}`, `create re ${NAMES.service}`]);
    const plan = serviceExportPlan({
      localClusterID: LOCAL, leaderNamespace: s.leader.namespace, serviceExport: s.sources.serviceExport('web', 'nginx') ?? {},
      service: s.sources.service('web', 'nginx'), endpointSlices: s.sources.endpointSlices('web', 'nginx'), endpointIPType: 'ClusterIP',
    });
    assert.equal(plan.exports.length, 2);
    for (const want of plan.exports) {
      const got = stored(s.leader, want.metadata?.name ?? '');
      assert.ok(got, `${want.metadata?.name ?? ''} exists`);
      assert.deepEqual(got.spec, want.spec);
      assert.deepEqual(got.metadata?.labels, want.metadata?.labels);
      assert.deepEqual(got.metadata?.finalizers, ['resourceexport.antrea.io/finalizer']);
    }
    assert.equal(s.leader.resourceExports.size, 2);
    const valid = s.sources.condition('web', 'nginx', 'Valid');
    assert.equal(valid?.status, 'True');
    assert.equal(valid?.reason, 'Succeed');
    assert.equal(valid?.observedGeneration, 1);
    assert.equal(s.statusWrites.length, 1);
    assert.equal(s.events.length, 0);
  });

  it('a port change replaces the Service RE only (PodIP: the Endpoints RE lists the Pods\' ports)', async () => {
    const s = await exported({ policy: { ...POLICY, endpointIPType: 'PodIP' } });
    s.writes();
    s.sources.putService('web', 'nginx', [{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 8080 }]);
    await s.idle();
    assert.deepEqual(s.writes(), [`update re ${NAMES.service}`]);
    assert.equal(stored(s.leader, NAMES.service)?.spec?.service?.serviceSpec?.ports?.[0]?.port, 8080);
    // Kept by the replace: the finalizer and the uid (no delete and re-create).
    assert.deepEqual(stored(s.leader, NAMES.service)?.metadata?.finalizers, ['resourceexport.antrea.io/finalizer']);
  });

  it('an endpoint change replaces the Endpoints RE only (PodIP)', async () => {
    const s = await exported({ policy: { ...POLICY, endpointIPType: 'PodIP' } });
    s.writes();
    s.sources.putEndpoints('web', 'nginx', ['10.244.1.5', '10.244.2.7']);
    await s.idle();
    assert.deepEqual(s.writes(), [`update re ${NAMES.endpoints}`]);
    const addresses = stored(s.leader, NAMES.endpoints)?.spec?.endpoints?.subsets?.[0]?.addresses?.map((a) => a.ip);
    assert.deepEqual(addresses, ['10.244.1.5', '10.244.2.7']);
  });

  it('writes nothing when nothing changed, also after a restart', async () => {
    const s = await exported();
    s.writes();
    const statusWrites = s.statusWrites.length;
    s.sources.putService('web', 'nginx');
    s.sources.putEndpoints('web', 'nginx', ['10.244.1.5']);
    s.exporter.enqueueAll();
    await s.idle();
    assert.deepEqual(s.writes(), []);
    assert.equal(s.statusWrites.length, statusWrites);
    // A new process: its index comes from the labelled list; nothing is rewritten.
    await s.exporter.stop();
    const again = setup({ leader: s.leader, sources: s.sources });
    again.writes();
    again.exporter.resume(s.leader);
    await again.idle();
    assert.deepEqual(again.writes(), []);
    assert.equal(again.statusWrites.length, 0);
    assert.ok(s.leader.calls.includes(`list re sourceClusterID=${LOCAL}`));
  });

  it('deletes both REs when the Service is deleted (Valid=False ServiceNotFound)', async () => {
    const s = await exported();
    s.writes();
    s.sources.deleteService('web', 'nginx');
    await s.idle();
    assert.deepEqual(s.writes().sort(), [`delete re ${NAMES.endpoints}`, `delete re ${NAMES.service}`]);
    assert.equal(s.leader.resourceExports.size, 0);
    assert.equal(s.sources.condition('web', 'nginx', 'Valid')?.reason, 'ServiceNotFound');
    // With the uid precondition of what we created.
    assert.ok(s.leader.exportDeletes.every((d) => d.uid !== undefined));
  });

  it('deletes both REs when the ServiceExport is deleted', async () => {
    const s = await exported();
    s.writes();
    s.sources.deleteServiceExport('web', 'nginx');
    await s.idle();
    assert.deepEqual(s.writes().sort(), [`delete re ${NAMES.endpoints}`, `delete re ${NAMES.service}`]);
    assert.equal(s.leader.resourceExports.size, 0);
  });

  it('retries a replace that conflicted with a newer copy on the leader', async () => {
    const s = await exported({ backoff: { baseMs: 1, maxMs: 10 }, policy: { ...POLICY, endpointIPType: 'PodIP' } });
    // The leader's controller wrote the RE meanwhile (a label here): our copy is stale.
    s.leader.touchExportAsLeader(NAMES.service, (re) => ({ ...re, metadata: { ...re.metadata, labels: { ...re.metadata?.labels, extra: 'x' } } }));
    const replaced = Promise.withResolvers<undefined>();
    const original = s.leader.replaceResourceExport.bind(s.leader);
    s.leader.replaceResourceExport = async (body) => {
      const result = await original(body);
      replaced.resolve(undefined);
      return result;
    };
    s.writes();
    s.sources.putService('web', 'nginx', [{ name: 'http', port: 81, protocol: 'TCP', targetPort: 8080 }]);
    await withDeadline(replaced.promise, 'replace retried');
    await s.idle();
    assert.deepEqual(s.writes(), [`update re ${NAMES.service}`, `update re ${NAMES.service}`]);
    assert.equal(stored(s.leader, NAMES.service)?.spec?.service?.serviceSpec?.ports?.[0]?.port, 81);
    assert.equal(stored(s.leader, NAMES.service)?.metadata?.labels?.['extra'], 'x');
  });
});

describe('Exporter: trust', () => {
  it('writes nothing while paused, and catches up on resume', async () => {
    const s = await exported();
    s.writes();
    s.exporter.pause('Unauthorized: token rejected');
    s.sources.putService('web', 'nginx', [{ name: 'http', port: 9090, protocol: 'TCP', targetPort: 8080 }]);
    s.sources.exportService('web', 'other');
    s.sources.deleteServiceExport('web', 'nginx');
    await s.idle();
    assert.deepEqual(s.writes(), []);
    s.exporter.resume(s.leader);
    await s.idle();
    const other = exportNames(LOCAL, 'web', 'other');
    assert.deepEqual(s.writes().sort(), [`create re ${other.endpoints}`, `create re ${other.service}`, `delete re ${NAMES.endpoints}`, `delete re ${NAMES.service}`].sort());
  });

  it('a reconcile in flight when paused writes nothing more', async () => {
    const s = await exported();
    s.writes();
    // The first delete is on the wire when trust is lost: the second must not be sent.
    const original = s.leader.deleteResourceExport.bind(s.leader);
    s.leader.deleteResourceExport = (name, uid) => {
      s.exporter.pause('leader lost');
      return original(name, uid);
    };
    s.sources.deleteServiceExport('web', 'nginx');
    await s.idle();
    assert.equal(s.writes().length, 1);
    assert.equal(s.leader.resourceExports.size, 1);
  });

  it('resume deletes stale REs of this cluster, leaves unchanged and foreign ones alone', async () => {
    const s = await exported();
    s.exporter.pause('leader lost');
    leftover(s.leader, 'web', 'gone');
    const foreign: ResourceExport = {
      ...structuredClone(stored(s.leader, NAMES.service) ?? {}),
      metadata: { name: 'west-web-nginx-service', labels: { sourceClusterID: 'west', sourceKind: 'Service', sourceName: 'nginx', sourceNamespace: 'web' } },
    };
    await s.leader.createResourceExport(foreign);
    const versions = [NAMES.service, NAMES.endpoints].map((n) => stored(s.leader, n)?.metadata?.resourceVersion);
    s.writes();
    s.exporter.resume(s.leader);
    await s.idle();
    const gone = exportNames(LOCAL, 'web', 'gone');
    assert.deepEqual(s.writes().sort(), [`delete re ${gone.endpoints}`, `delete re ${gone.service}`]);
    assert.deepEqual([NAMES.service, NAMES.endpoints].map((n) => stored(s.leader, n)?.metadata?.resourceVersion), versions);
    assert.ok(stored(s.leader, 'west-web-nginx-service'));
  });

  it('deletes nothing before the member caches have synced', async () => {
    const leader = new FakeLeader();
    leftover(leader, 'web', 'gone');
    const sources = new MemorySources();
    sources.syncedKinds.clear();
    const s = setup({ leader, sources });
    s.writes();
    s.exporter.resume(leader);
    await s.idle();
    assert.deepEqual(s.writes(), []);
    sources.syncedKinds.add('service');
    sources.syncedKinds.add('clusterinfo');
    s.exporter.enqueueAll();
    await s.idle();
    assert.equal(s.writes().length, 2);
  });

  it('leave deletes every RE of this member on the leader, and only those', async () => {
    const s = await exported();
    s.sources.putGateway('gw', '172.18.0.2');
    await s.idle();
    await s.leader.createResourceExport({ metadata: { name: 'west-clusterinfo', labels: { sourceClusterID: 'west', sourceKind: 'ClusterInfo' } }, spec: { kind: 'ClusterInfo', clusterID: 'west' } });
    assert.equal(s.leader.resourceExports.size, 4);
    s.writes();
    await s.exporter.leave();
    assert.deepEqual(s.writes().sort(), [`delete re ${LOCAL}-clusterinfo`, `delete re ${NAMES.endpoints}`, `delete re ${NAMES.service}`]);
    assert.deepEqual([...s.leader.resourceExports.keys()], ['west-clusterinfo']);
  });

  it('leave through the area\'s client deletes the member\'s REs even when it never resumed (a restart during deletion)', async () => {
    const s = await exported();
    await s.exporter.stop();
    assert.ok([...s.leader.resourceExports.keys()].some((n) => n.startsWith(`${LOCAL}-`)));
    const restarted = setup();
    await withDeadline(restarted.exporter.leave(s.leader), 'leave');
    assert.deepEqual([...s.leader.resourceExports.keys()].filter((n) => n.startsWith(`${LOCAL}-`)), []);
    const neverReached = setup();
    await withDeadline(neverReached.exporter.leave(), 'leave without any client');
  });

  it('leave tolerates REs already gone', async () => {
    const s = await exported();
    const original = s.leader.deleteResourceExport.bind(s.leader);
    s.leader.deleteResourceExport = async (name, uid) => {
      s.leader.resourceExports.delete(name);
      return original(name, uid);
    };
    await withDeadline(s.exporter.leave(), 'leave');
    assert.equal(s.leader.resourceExports.size, 0);
  });
});

describe('Exporter: ServiceExport status', () => {
  it('a refused namespace: Valid=False NamespaceNotAllowed, one Warning Event, no RE', async () => {
    const s = setup({ policy: { ...POLICY, allowedNamespaces: ['web'] } });
    s.sources.exportService('shop', 'cart');
    s.exporter.resume(s.leader);
    await s.idle();
    assert.equal(s.leader.resourceExports.size, 0);
    const valid = s.sources.condition('shop', 'cart', 'Valid');
    assert.equal(valid?.status, 'False');
    assert.equal(valid?.reason, 'NamespaceNotAllowed');
    assert.equal(s.events.length, 1);
    assert.equal(s.events[0]?.type, 'Warning');
    assert.equal(s.events[0]?.reason, 'NamespaceNotAllowed');
    assert.deepEqual(s.events[0]?.target, { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', name: 'cart', namespace: 'shop', uid: 'se-shop-cart' });
    // Level-based: more events of the source change nothing.
    s.sources.putEndpoints('shop', 'cart', ['10.244.3.3']);
    s.exporter.enqueueAll();
    await s.idle();
    assert.equal(s.events.length, 1);
    assert.equal(s.statusWrites.length, 1);
  });

  it('mirrors a leader Failure as Conflict=True with one Event, and clears it when the leader accepts', async () => {
    const s = setup();
    s.sources.exportService('web', 'nginx');
    const conflict = s.statusWritten((st) => st.conditions?.some((c) => c.type === 'Conflict' && c.status === 'True') ?? false);
    s.exporter.resume(s.leader);
    await s.idle();
    // The leader judges asynchronously, after our create (antrea: Failure/False on a port
    // mismatch); the watch of our exports brings its verdict.
    s.leader.touchExportAsLeader(NAMES.service, (re) => ({
      ...re, status: { conditions: [{ type: 'Failure', status: 'False', reason: 'ImportFailed', message: 'ports of Service web/nginx conflict with cluster west' }] },
    }));
    await s.idle();
    await conflict;
    const c = s.sources.condition('web', 'nginx', 'Conflict');
    assert.equal(c?.reason, 'ImportFailed');
    assert.match(c?.message ?? '', /conflict with cluster west/);
    assert.equal(s.sources.condition('web', 'nginx', 'Valid')?.status, 'True');
    assert.deepEqual(s.events.map((e) => [e.type, e.reason]), [['Warning', 'ExportConflict']]);
    // The leader accepts it later: seen at the next full sync.
    s.leader.touchExportAsLeader(NAMES.service, (re) => ({ ...re, status: { conditions: [{ type: 'Succeeded', status: 'True' }] } }));
    s.exporter.pause('leader lost');
    s.exporter.resume(s.leader);
    await s.idle();
    assert.equal(s.sources.condition('web', 'nginx', 'Conflict')?.status, 'False');
    assert.equal(s.events.length, 1);
  });

  it('a name taken by another cluster\'s export is a Conflict, and is not overwritten', async () => {
    const leader = new FakeLeader();
    // An RE of our name that exports something else (another member's, on a leader without the ≥2.7 webhook).
    await leader.createResourceExport({
      metadata: { name: NAMES.service, labels: { sourceClusterID: 'east-web', sourceKind: 'Service', sourceName: 'service', sourceNamespace: 'nginx' } },
      spec: { clusterID: 'east-web', kind: 'Service', namespace: 'nginx', name: 'service', service: { serviceSpec: {} } },
    });
    const before = structuredClone(leader.resourceExports.get(NAMES.service));
    const s = setup({ leader });
    s.sources.exportService('web', 'nginx');
    s.exporter.resume(leader);
    await s.idle();
    assert.deepEqual(leader.resourceExports.get(NAMES.service), before);
    assert.equal(s.sources.condition('web', 'nginx', 'Conflict')?.reason, 'NameConflict');
    assert.equal(s.events.filter((e) => e.reason === 'ExportConflict').length, 1);
  });
});

describe('Exporter: ClusterInfo', () => {
  it('exports the Gateway as ClusterInfo, and deletes it with the Gateway', async () => {
    const s = setup({ policy: { ...POLICY, podCIDRs: ['10.244.0.0/16'] } });
    s.exporter.resume(s.leader);
    await s.idle();
    assert.deepEqual(s.writes(), []);
    s.sources.putGateway('gw', '172.18.0.2');
    await s.idle();
    const name = `${LOCAL}-clusterinfo`;
    assert.deepEqual(s.writes(), [`create re ${name}`]);
    const want = clusterInfoExport({ localClusterID: LOCAL, leaderNamespace: s.leader.namespace, agentNamespace: AGENT_NS, gateways: s.sources.gateways(), podCIDRs: ['10.244.0.0/16'] });
    assert.deepEqual(stored(s.leader, name)?.spec, want?.spec);
    assert.equal(stored(s.leader, name)?.spec?.clusterInfo?.serviceCIDR, '10.96.0.0/12');
    s.sources.onGatewayChanged();
    await s.idle();
    assert.deepEqual(s.writes(), []);
    s.sources.deleteGateways();
    await s.idle();
    assert.deepEqual(s.writes(), [`delete re ${name}`]);
    assert.equal(s.leader.resourceExports.size, 0);
  });

  it('with exports disabled, withdraws what this member published and publishes nothing', async () => {
    const leader = new FakeLeader();
    leftover(leader, 'web', 'nginx');
    const s = setup({ leader, policy: { ...POLICY, enabled: false } });
    s.sources.putGateway('gw', '172.18.0.2');
    s.writes();
    s.exporter.resume(leader);
    await s.idle();
    assert.deepEqual(s.writes().sort(), [`delete re ${NAMES.endpoints}`, `delete re ${NAMES.service}`]);
    assert.equal(leader.resourceExports.size, 0);
  });
});

// ---------------------------------------------------------------------------------------
// Verdicts tied to what the leader judged (issue 21, item 5)
// ---------------------------------------------------------------------------------------

/** Polls `test` until it holds, failing after the deadline: for state reached behind a retry timer. */
async function until(what: string, test: () => boolean): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`deadline: ${what} after ${String(DEADLINE_MS)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const failure = (message: string) => (re: ResourceExport): ResourceExport => ({
  ...re, status: { conditions: [{ type: 'Failure', status: 'False', reason: 'ImportFailed', message }] },
});
const servicePort = (leader: FakeLeader) => stored(leader, NAMES.service)?.spec?.service?.serviceSpec?.ports?.[0]?.port;

describe('Exporter: verdicts tied to the version the leader judged', () => {
  it('a verdict on an older version, delivered by the watch after our writes, is neither shown nor written over', async () => {
    const s = setup({ backoff: { baseMs: 5, maxMs: 20 } });
    const { leader } = s;
    s.sources.exportService('web', 'nginx');
    s.exporter.resume(leader);
    await withDeadline(leader.watchOpen(), 'the watch of our exports is open');
    await s.idle();
    assert.equal(servicePort(leader), 80);

    // The leader refuses spec v1 (port 80); the watch has not brought that yet.
    leader.touchExportAsLeader(NAMES.service, failure('ports of Service web/nginx conflict with cluster west'));
    // The user changes the port (v2): our replace over the version we hold is refused (409),
    // the retry re-reads the leader's copy and replaces it. Then back to port 80: spec v1 again,
    // a new version the leader has not judged.
    s.sources.putService('web', 'nginx', [{ name: 'http', port: 81, protocol: 'TCP', targetPort: 8080 }]);
    await until('the port-81 spec is on the leader', () => servicePort(leader) === 81);
    await s.exporterIdle();
    s.sources.putService('web', 'nginx');
    await until('the port-80 spec is on the leader again', () => servicePort(leader) === 80);
    await s.exporterIdle();
    s.writes();
    const statusWrites = s.statusWrites.length;
    assert.equal(s.sources.condition('web', 'nginx', 'Conflict'), undefined);

    // Now the lagging watch brings it all, one event at a time as a stream does: the refusal of
    // the earlier version, then our two replaces.
    let delivered = 0;
    while (leader.deliverOne()) {
      delivered += 1;
      await s.exporterIdle();
    }
    assert.ok(delivered >= 3, `${String(delivered)} events`);
    assert.equal(s.sources.condition('web', 'nginx', 'Conflict'), undefined, 'a refusal of an earlier version is not shown');
    assert.equal(s.statusWrites.length, statusWrites, 'no ServiceExport status write');
    assert.deepEqual(s.writes(), [], 'no PUT over an older version');
    assert.equal(s.events.length, 0);

    // The leader's verdict on the version that is there now is shown, once.
    const conflict = s.statusWritten((st) => st.conditions?.some((c) => c.type === 'Conflict' && c.status === 'True') ?? false);
    leader.touchExportAsLeader(NAMES.service, failure('ports of Service web/nginx conflict with cluster north'));
    leader.deliver();
    await conflict;
    await s.idle();
    assert.match(s.sources.condition('web', 'nginx', 'Conflict')?.message ?? '', /cluster north/);
    assert.equal(s.statusWrites.length, statusWrites + 1);
    assert.deepEqual(s.events.map((e) => e.reason), ['ExportConflict']);
  });

  it('verdictOn: a status counts only on a version with the spec we export now that is not our own write', () => {
    const plan = serviceExportPlan({
      localClusterID: LOCAL, leaderNamespace: 'leader-ns', serviceExport: { metadata: { namespace: 'web', name: 'nginx' } },
      service: { metadata: { name: 'nginx', namespace: 'web' }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
      endpointSlices: [{ addressType: 'IPv4', endpoints: [{ addresses: ['10.244.1.5'] }] }], endpointIPType: 'ClusterIP',
    });
    const desired = plan.exports.filter((re) => re.metadata?.name === NAMES.service);
    const [want] = desired;
    assert.ok(want);
    const at = (rv: string, re: ResourceExport, status?: ResourceExport['status']): ResourceExport =>
      ({ ...structuredClone(re), metadata: { ...re.metadata, resourceVersion: rv }, ...(status ? { status } : {}) });
    const refused = { conditions: [{ type: 'Failure', status: 'False' as const, reason: 'ImportFailed', message: 'no' }] };
    const accepted = { conditions: [{ type: 'Succeeded', status: 'True' as const }] };
    const olderSpec: ResourceExport = { ...want, spec: { ...want.spec, service: { serviceSpec: { ports: [{ name: 'http', port: 81, protocol: 'TCP' }] } } } };

    assert.deepEqual(verdictOn(desired, [{ live: at('5', want) }], 'leader-ns'), { kind: 'unknown' }, 'not judged yet');
    assert.deepEqual(verdictOn(desired, [{ live: at('5', want, refused), writtenVersion: '5' }], 'leader-ns'), { kind: 'unknown' }, 'our write keeps the previous spec\'s status');
    assert.equal(verdictOn(desired, [{ live: at('6', want, refused), writtenVersion: '5' }], 'leader-ns').kind, 'failed', 'judged after our write');
    assert.deepEqual(verdictOn(desired, [{ live: at('6', want, accepted), writtenVersion: '5' }], 'leader-ns'), { kind: 'ok' });
    assert.deepEqual(verdictOn(desired, [{ live: at('7', olderSpec, refused) }], 'leader-ns'), { kind: 'unknown' }, 'a status about another spec');
    assert.deepEqual(verdictOn(desired, [{ live: at('7', olderSpec, accepted), writtenVersion: '5' }], 'leader-ns'), { kind: 'unknown' });
  });

  it('olderVersion compares etcd revisions, and calls nothing else older', () => {
    assert.equal(olderVersion('9', '10'), true);
    assert.equal(olderVersion('10', '9'), false);
    assert.equal(olderVersion('10', '10'), false);
    assert.equal(olderVersion('123456789012345678901', '123456789012345678902'), true);
    assert.equal(olderVersion('a9', '10'), false);
    assert.equal(olderVersion(undefined, '10'), false);
    assert.equal(olderVersion('9', ''), false);
  });
});
