// Owns the member-side caches exports are computed from (ServiceExports, Services and
// EndpointSlices of every namespace, Gateways of the agent namespace) and makes one Exporter
// per ClusterSet for its RemoteCommonArea, which drives it. Cache events queue the affected
// export in every Exporter; each Exporter decides what to write to its leader.
//
// With exports disabled no cache is started (the chart grants nothing for them) and the
// sources are empty but synced: each Exporter then withdraws whatever this member still has
// on its leader, and publishes nothing.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { isIPv4 } from 'node:net';
import type { KubeList } from '../common/api/meta.js';
import { mcsResources, type McsResources, type ServiceExport, type ServiceExportStatus } from '../common/api/mcs.js';
import { GATEWAY, type Gateway, type GatewayList } from '../common/api/antrea.js';
import type { LeaderTarget } from '../clusterset/spec.js';
import type { ExportPolicyConfig } from '../common/config/config.js';
import type { EventRecorder } from '../common/events/recorder.js';
import { describeError, httpStatus } from '../common/kube/errors.js';
import { createJsonClient } from '../common/kube/json-client.js';
import { InformerStoppedError, ResilientInformer } from '../common/kube/informer.js';
import { sharedStrings } from '../common/kube/string-pool.js';
import type { ExportSources } from './desired-exports.js';
import { Exporter, type ExporterLogger } from './exporter.js';
import type { ExportOutcome } from './resource-export-writer.js';
import { ExportStatusWriter, type ServiceExportStatusWriter } from './status-writer.js';
import { endpointSliceCacheEntry, SERVICE_NAME_LABEL, serviceCacheEntry, type CachedEndpointSlice, type CachedService } from './service-export.js';
import { kubeApis, type CustomApi, type NetworkingApi } from '../common/kube/typed-api.js';
import { paged } from '../common/kube/paginate.js';

export interface ExportManagerLogger extends ExporterLogger {
  child(fields: Record<string, unknown>): ExportManagerLogger;
}

export interface ExportManagerOptions {
  readonly kubeConfig: KubeConfig;
  readonly agentNamespace: string;
  readonly policy: ExportPolicyConfig;
  readonly events: EventRecorder;
  readonly logger: ExportManagerLogger;
  readonly onOutcome?: (clusterSet: string, kind: string, outcome: ExportOutcome) => void;
  /** ServiceExports in the version the member serves (common/kube/mcs-version.ts). @default v1beta1 */
  readonly mcs?: McsResources;
}

interface Caches {
  readonly serviceExports: ResilientInformer<ServiceExport>;
  readonly services: ResilientInformer<CachedService>;
  readonly endpointSlices: ResilientInformer<CachedEndpointSlice>;
  readonly gateways: ResilientInformer<Gateway>;
}

/** The first IPv4 CIDR (Antrea Multi-cluster is IPv4), else the first. */
function pickCIDR(cidrs: readonly string[]): string | undefined {
  return cidrs.find((cidr) => isIPv4(cidr.split('/')[0] ?? '')) ?? cidrs[0];
}

export class ExportManager {
  /** Per ClusterSet, its exporters by leader cluster ID: each leader gets every export. */
  private readonly exporters = new Map<string, Map<string, Exporter>>();
  /** Each ClusterSet's leaders, in spec order (set by the ClusterSet controller). */
  private readonly leaders = new Map<string, readonly string[]>();
  /** The key each exporter reports its ServiceExport judgements under (named in Conflict messages). */
  private readonly statusKeys = new Map<Exporter, string>();
  private readonly caches: Caches | undefined;
  private readonly objects: CustomApi;
  /** Reads the cluster's ServiceCIDR once (discoverServiceCIDR), through the manager's one client. */
  private readonly networking: NetworkingApi;
  private readonly log: ExportManagerLogger;
  private readonly sources: ExportSources;
  /** The one writer of ServiceExport status, aggregating every ClusterSet's judgement. */
  private readonly status: ExportStatusWriter;
  /** The cluster's Service CIDR, from its `kubernetes` ServiceCIDR object, when readable. */
  private serviceCIDR: string | undefined;
  private stopped = false;

  constructor(private readonly options: ExportManagerOptions) {
    const kc = options.kubeConfig;
    const serviceExportKind = (options.mcs ?? mcsResources('v1beta1')).serviceExport;
    this.log = options.logger.child({ component: 'exporter' });
    const watch = createJsonClient(kc, { who: 'member' });
    const { core, custom, discovery, networking } = kubeApis(watch);
    this.objects = custom;
    this.networking = networking;
    if (options.policy.enabled) {
      const ns = options.agentNamespace;
      this.caches = {
        serviceExports: new ResilientInformer<ServiceExport>({
          name: 'serviceexports',
          path: `/apis/${serviceExportKind.group}/${serviceExportKind.version}/${serviceExportKind.plural}`,
          list: paged(async (page) => (await this.objects.listClusterCustomObject({
            group: serviceExportKind.group, version: serviceExportKind.version, plural: serviceExportKind.plural, ...page,
          })) as KubeList<ServiceExport>),
          watch,
          logger: this.log,
        }),
        // Every Service and EndpointSlice of the member, so only what exports read is kept.
        services: new ResilientInformer<CachedService>({
          name: 'services', path: '/api/v1/services', list: paged((page) => core.listServiceForAllNamespaces(page)), watch, logger: this.log,
          transform: (service) => sharedStrings.internValues(serviceCacheEntry(service)),
        }),
        endpointSlices: new ResilientInformer<CachedEndpointSlice>({
          name: 'endpointslices', path: '/apis/discovery.k8s.io/v1/endpointslices', list: paged((page) => discovery.listEndpointSliceForAllNamespaces(page)), watch, logger: this.log,
          transform: (slice) => sharedStrings.internValues(endpointSliceCacheEntry(slice)),
        }),
        gateways: new ResilientInformer<Gateway>({
          name: 'gateways',
          path: `/apis/${GATEWAY.group}/${GATEWAY.version}/namespaces/${ns}/${GATEWAY.plural}`,
          list: paged(async (page) => (await this.objects.listNamespacedCustomObject({
            group: GATEWAY.group, version: GATEWAY.version, namespace: ns, plural: GATEWAY.plural, ...page,
          })) as GatewayList),
          watch,
          logger: this.log,
        }),
      };
    }
    this.sources = this.makeSources();
    const write: ServiceExportStatusWriter = async (serviceExport: ServiceExport, status: ServiceExportStatus) => {
      const namespace = serviceExport.metadata?.namespace ?? '';
      const name = serviceExport.metadata?.name ?? '';
      const body: ServiceExport = { ...serviceExport, apiVersion: serviceExportKind.apiVersion, kind: serviceExportKind.kind, status };
      return this.objects.replaceNamespacedCustomObjectStatus({
        group: serviceExportKind.group, version: serviceExportKind.version, namespace, plural: serviceExportKind.plural, name, body,
      });
    };
    this.status = new ExportStatusWriter({
      serviceExport: (namespace, name) => this.sources.serviceExport(namespace, name), write, events: options.events, logger: this.log,
    });
  }

  private makeSources(): ExportSources {
    const caches = this.caches;
    if (!caches) {
      return {
        synced: () => true,
        serviceExport: () => undefined,
        serviceExports: () => [],
        service: () => undefined,
        endpointSlices: () => [],
        gateways: () => [],
      };
    }
    return {
      synced: (kind) => (kind === 'clusterinfo'
        ? caches.gateways.hasSynced
        : caches.serviceExports.hasSynced && caches.services.hasSynced && caches.endpointSlices.hasSynced),
      serviceExport: (namespace, name) => caches.serviceExports.get(name, namespace),
      serviceExports: () => caches.serviceExports.list(),
      service: (namespace, name) => caches.services.get(name, namespace),
      endpointSlices: (namespace, name) => caches.endpointSlices.list(namespace).filter((s) => s.metadata?.labels?.[SERVICE_NAME_LABEL] === name),
      gateways: () => caches.gateways.list(this.options.agentNamespace),
    };
  }

  /**
   * Starts the caches without waiting for them: the ServiceExport and Gateway CRDs may not be
   * installed (their informers retry and log), and nothing is exported before a cache synced.
   */
  start(): Promise<void> {
    const caches = this.caches;
    if (!caches) {
      this.log.info('exports are disabled: nothing is published, and what this member published is withdrawn');
      return Promise.resolve();
    }
    const serviceChanged = (namespace: string | undefined, name: string | undefined) => {
      if (!namespace || !name) return;
      for (const exporter of this.all()) exporter.serviceChanged(namespace, name);
    };
    const byName = (obj: KubernetesObject) => { serviceChanged(obj.metadata?.namespace, obj.metadata?.name); };
    const bySlice = (slice: CachedEndpointSlice) => { serviceChanged(slice.metadata?.namespace, slice.metadata?.labels?.[SERVICE_NAME_LABEL]); };
    const gatewayChanged = () => { for (const exporter of this.all()) exporter.clusterInfoChanged(); };
    for (const event of ['add', 'update', 'delete'] as const) {
      caches.serviceExports.on(event, byName);
      caches.services.on(event, byName);
      caches.endpointSlices.on(event, bySlice);
      caches.gateways.on(event, gatewayChanged);
    }
    for (const informer of Object.values(caches) as ResilientInformer<KubernetesObject>[]) {
      informer.start().then(() => {
        if (this.stopped) return;
        this.log.info('export cache synced', { cache: informer.name, count: informer.list().length });
        for (const exporter of this.all()) exporter.enqueueAll();
      }, (err: unknown) => {
        if (!(err instanceof InformerStoppedError)) this.log.warn('export cache did not start', { cache: informer.name, error: describeError(err) });
      });
    }
    if (this.options.policy.serviceCIDR === undefined) void this.discoverServiceCIDR();
    return Promise.resolve();
  }

  /** Whether the caches exports need have synced (Gateways are optional: their CRD may be missing). */
  get synced(): boolean {
    return this.sources.synced('service');
  }

  private all(): Exporter[] {
    return [...this.exporters.values()].flatMap((byLeader) => [...byLeader.values()]);
  }

  setLeaders(clusterSet: string, leaderClusterIDs: readonly string[]): void {
    this.leaders.set(clusterSet, leaderClusterIDs);
  }

  /** The exporter of a ClusterSet leader's area; the area drives it (resume, pause, stop, leave). */
  create(clusterSet: string, target: LeaderTarget): Exporter {
    const byLeader = this.exporters.get(clusterSet) ?? new Map<string, Exporter>();
    this.exporters.set(clusterSet, byLeader);
    const previous = byLeader.get(target.leaderClusterID);
    if (previous) void previous.stop();
    // With one leader the judgement is the ClusterSet's, as before; with several, each
    // leader's verdict counts on its own (Conflict if any refuses) and is named so.
    const several = (this.leaders.get(clusterSet)?.length ?? 1) > 1 || [...byLeader.keys()].some((l) => l !== target.leaderClusterID);
    const statusKey = several ? `${clusterSet} (leader ${target.leaderClusterID})` : clusterSet;
    const exporter = new Exporter({
      localClusterID: target.localClusterID,
      leaderNamespace: target.leaderNamespace,
      agentNamespace: this.options.agentNamespace,
      policy: this.options.policy,
      sources: this.sources,
      status: { writer: this.status, clusterSet: statusKey },
      events: this.options.events,
      logger: this.log.child({ clusterSet, leader: target.leaderClusterID }),
      serviceCIDR: () => this.serviceCIDR,
      onOutcome: (kind, outcome) => this.options.onOutcome?.(clusterSet, kind, outcome),
      resyncMs: this.options.policy.resyncSeconds * 1000,
    });
    byLeader.set(target.leaderClusterID, exporter);
    this.statusKeys.set(exporter, statusKey);
    return exporter;
  }

  /** Forgets a ClusterSet leader's exporter once its area is gone (the area stopped it). */
  release(clusterSet: string, leaderClusterID: string): void {
    const byLeader = this.exporters.get(clusterSet);
    const exporter = byLeader?.get(leaderClusterID);
    byLeader?.delete(leaderClusterID);
    if (byLeader?.size === 0) {
      this.exporters.delete(clusterSet);
      this.leaders.delete(clusterSet);
    }
    if (exporter) {
      this.status.forget(this.statusKeys.get(exporter) ?? clusterSet);
      this.statusKeys.delete(exporter);
    }
  }

  /** ServiceExport status writes sent since the start. */
  get statusWrites(): number {
    return this.status.writes;
  }

  /** A ClusterSet leader's exporter (by default its first leader's). */
  exporterFor(clusterSet: string, leaderClusterID?: string): Exporter | undefined {
    const byLeader = this.exporters.get(clusterSet);
    return leaderClusterID !== undefined ? byLeader?.get(leaderClusterID) : byLeader?.values().next().value;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = this.all();
    this.exporters.clear();
    await Promise.all(all.map((e) => e.stop().catch((err: unknown) => {
      this.log.warn('exporter did not stop cleanly', { error: describeError(err) });
    })));
    await this.status.stop();
    if (this.caches) {
      await Promise.all(Object.values(this.caches).map(async (informer: ResilientInformer<KubernetesObject>) => {
        try {
          await informer.stop();
        } catch (err) {
          if (!(err instanceof InformerStoppedError)) this.log.warn('export cache did not stop cleanly', { cache: informer.name, error: describeError(err) });
        }
      }));
    }
  }

  /**
   * Best effort, once: the `kubernetes` ServiceCIDR object (Kubernetes ≥ 1.33) names the
   * cluster's Service CIDR, used in ClusterInfo when neither the config nor a Gateway gives one.
   */
  private async discoverServiceCIDR(): Promise<void> {
    try {
      const found = await this.networking.readServiceCIDR({ name: 'kubernetes' });
      const cidr = pickCIDR(found.spec?.cidrs ?? []);
      if (cidr === undefined || this.stopped) return;
      this.serviceCIDR = cidr;
      this.log.info('found the cluster Service CIDR', { serviceCIDR: cidr });
      for (const exporter of this.all()) exporter.clusterInfoChanged();
    } catch (err) {
      const status = httpStatus(err);
      // Not served (older cluster) or not granted: the Gateway's serviceCIDR is used.
      if (status === 404 || status === 403) this.log.debug('the cluster ServiceCIDR is not readable; ClusterInfo uses the Gateway\'s serviceCIDR', { status });
      else this.log.warn('reading the cluster ServiceCIDR failed; ClusterInfo uses the Gateway\'s serviceCIDR', { error: describeError(err) });
    }
  }
}
