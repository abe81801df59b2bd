// What this member should have on the leader for each export, decided from the member's caches
// and the export policy: the ClusterInfo RE of the Gateways, or a ServiceExport's Service and
// Endpoints REs with the `Valid` condition its status should carry. Pure over the caches
// (synchronous reads); the writer (resource-export-writer.ts) brings the leader there.
import { SERVICE_EXPORT_CONDITION_VALID, type ServiceExport } from '../common/api/mcs.js';
import type { Gateway, ResourceExport } from '../common/api/antrea.js';
import type { ExportPolicyConfig } from '../common/config/config.js';
import { clusterInfoExport } from './clusterinfo-export.js';
import { isTerminating } from './export-keys.js';
import { exportAllowed } from './export-policy.js';
import { serviceExportPlan, type CachedEndpointSlice, type CachedService } from './service-export.js';
import type { WantedCondition } from './status-writer.js';

/** What the exporter reads: the member's caches. All lookups are synchronous. */
export interface ExportSources {
  /**
   * Whether the caches an export kind reads from have synced. Nothing of that kind is
   * reconciled before: an empty cache would withdraw every export.
   */
  synced(kind: 'service' | 'clusterinfo'): boolean;
  serviceExport(namespace: string, name: string): ServiceExport | undefined;
  serviceExports(): readonly ServiceExport[];
  service(namespace: string, name: string): CachedService | undefined;
  /** EndpointSlices labelled `kubernetes.io/service-name=<name>` in `namespace`. */
  endpointSlices(namespace: string, name: string): readonly CachedEndpointSlice[];
  /** Gateways of the agent namespace. */
  gateways(): readonly Gateway[];
}

/** Who exports, to which leader namespace, under which policy, from which caches. */
export interface ExportContext {
  readonly localClusterID: string;
  readonly leaderNamespace: string;
  /** The agent's namespace: where Gateways live, `spec.namespace` of the ClusterInfo RE. */
  readonly agentNamespace: string;
  readonly policy: ExportPolicyConfig;
  readonly sources: ExportSources;
  /** The cluster's Service CIDR (its ServiceCIDR objects), used when neither `policy.serviceCIDR` nor a Gateway gives one. */
  readonly serviceCIDR?: (() => string | undefined) | undefined;
}

/** The ClusterInfo RE this member should have on the leader: none with exports disabled or without a Gateway. */
export function desiredClusterInfo(ctx: ExportContext): ResourceExport[] {
  const { policy } = ctx;
  const gateways = ctx.sources.gateways();
  // Configured, else the Gateway's (what Antrea publishes), else the cluster's ServiceCIDR.
  const gatewayHasCIDR = gateways.some((gw) => gw.serviceCIDR !== undefined && gw.serviceCIDR !== '');
  const desired = policy.enabled
    ? clusterInfoExport({
      localClusterID: ctx.localClusterID,
      leaderNamespace: ctx.leaderNamespace,
      agentNamespace: ctx.agentNamespace,
      gateways,
      serviceCIDR: policy.serviceCIDR ?? (gatewayHasCIDR ? undefined : ctx.serviceCIDR?.()),
      podCIDRs: policy.podCIDRs,
    })
    : undefined;
  return desired ? [desired] : [];
}

/** One ServiceExport's part: its REs on the leader, and its `Valid` condition. */
export interface DesiredService {
  /** The ServiceExport, unless gone or being deleted (its REs are then withdrawn, its status left alone). */
  readonly serviceExport: ServiceExport | undefined;
  /** Empty when nothing is to be exported: what the leader holds is withdrawn. */
  readonly desired: ResourceExport[];
  readonly valid: WantedCondition | undefined;
  /** The export policy refuses the namespace. */
  readonly refused: boolean;
  /**
   * The newest resourceVersion among the inputs `desired` was built from (the Service and its
   * EndpointSlices): which state of the member a verdict on these REs is about.
   */
  readonly source?: string | undefined;
}

/**
 * The newest of `versions` (kube-apiserver's resourceVersions are one etcd counter for every
 * object, so the largest is the latest input); undefined when none is a plain number.
 */
export function newestVersion(versions: readonly (string | undefined)[]): string | undefined {
  let newest: bigint | undefined;
  for (const v of versions) {
    if (v === undefined || !/^[0-9]{1,30}$/.test(v)) continue;
    const n = BigInt(v);
    if (newest === undefined || n > newest) newest = n;
  }
  return newest === undefined ? undefined : newest.toString();
}

/** What the ServiceExport `namespace/name` should have on the leader, and what its `Valid` condition says. */
export function desiredService(ctx: ExportContext, namespace: string, name: string): DesiredService {
  const { sources, policy } = ctx;
  const found = sources.serviceExport(namespace, name);
  const serviceExport = found && !isTerminating(found) ? found : undefined;
  if (!serviceExport) return { serviceExport, desired: [], valid: undefined, refused: false };
  const refusal = exportAllowed(namespace, { ...policy, agentNamespace: ctx.agentNamespace });
  if (refusal) {
    return { serviceExport, desired: [], valid: { type: SERVICE_EXPORT_CONDITION_VALID, status: 'False', reason: refusal.reason, message: refusal.message }, refused: true };
  }
  const service = sources.service(namespace, name);
  const endpointSlices = sources.endpointSlices(namespace, name);
  const plan = serviceExportPlan({
    localClusterID: ctx.localClusterID,
    leaderNamespace: ctx.leaderNamespace,
    serviceExport,
    service,
    endpointSlices,
    endpointIPType: policy.endpointIPType,
  });
  const source = newestVersion([service?.metadata?.resourceVersion, ...endpointSlices.map((s) => s.metadata?.resourceVersion)]);
  return { serviceExport, desired: plan.exports, valid: { type: SERVICE_EXPORT_CONDITION_VALID, ...plan.valid }, refused: false, source };
}
