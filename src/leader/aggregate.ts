// Aggregation of members' ResourceExports into the ResourceImports every member reads, in
// Antrea's names and shapes (antrea-wire.md §3.5). Pure: the controller feeds it what its
// informers hold and applies the answer.
//
// One ResourceImport per "import key":
//   Service RE   <cluster>-<ns>-<name>-service    ⇒ RI <ns>-<name>-service   kind ServiceImport
//   Endpoints RE <cluster>-<ns>-<name>-endpoints  ⇒ RI <ns>-<name>-endpoints kind Endpoints
//   ClusterInfo RE <cluster>-clusterinfo          ⇒ RI of the same name      kind ClusterInfo
// Decisions are functions of the exports alone (never of the RI found, nor of event order),
// so a restarted leader computes exactly what it wrote before and rewrites nothing.
import {
  RESOURCE_EXPORT_FINALIZER,
  RESOURCE_EXPORT_KIND,
  RESOURCE_EXPORT_LEGACY_FINALIZER,
  RESOURCE_IMPORT_KIND,
  RE_LABEL_SOURCE_CLUSTER_ID,
  resourceImportName,
  type EndpointSubset,
  type KubeObject,
  type ResourceExport,
  type ResourceImportSpec,
  type ServiceImportPort,
} from '../api/types.js';

/** Kinds this leader aggregates. LabelIdentity and ACNP exports are left alone (see README). */
export const AGGREGATED_EXPORT_KINDS: readonly string[] = [RESOURCE_EXPORT_KIND.Service, RESOURCE_EXPORT_KIND.Endpoints, RESOURCE_EXPORT_KIND.ClusterInfo];

export const REASON_CONVERGE_FAILURE = 'ConvergeFailure';

/** The leader's verdict on one export, written to its status (Antrea: Succeeded / Failure). */
export type ExportVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly message: string };

export interface ImportPlan {
  /** The RI name this plan is for. */
  readonly name: string;
  /** Desired spec; undefined: no RI should exist. */
  readonly spec: ResourceImportSpec | undefined;
  /** Verdicts by RE name, for exports whose status the leader writes. */
  readonly verdicts: ReadonlyMap<string, ExportVerdict>;
}

/** The RI an export feeds, or undefined for kinds this leader does not aggregate. */
export function importKeyOf(re: ResourceExport): string | undefined {
  const kind = re.spec?.kind ?? '';
  if (kind === RESOURCE_EXPORT_KIND.ClusterInfo) return re.metadata?.name;
  if (kind !== RESOURCE_EXPORT_KIND.Service && kind !== RESOURCE_EXPORT_KIND.Endpoints) return undefined;
  const name = re.spec?.name ?? '';
  if (name === '') return undefined;
  return resourceImportName(re.spec?.namespace ?? '', name, kind);
}

/** Import keys whose plan depends on `re`: an Endpoints import also depends on the Service exports. */
export function dependentImportKeys(re: ResourceExport): string[] {
  const key = importKeyOf(re);
  if (key === undefined) return [];
  if (re.spec?.kind !== RESOURCE_EXPORT_KIND.Service) return [key];
  return [key, resourceImportName(re.spec.namespace ?? '', re.spec.name ?? '', RESOURCE_EXPORT_KIND.Endpoints)];
}

export function isDeleting(obj: KubeObject): boolean {
  // Typed as a Date, but JSON from the API server: a string, or absent (null in some clients).
  return (obj.metadata?.deletionTimestamp as unknown) != null;
}

/** Finalizers the leader releases once the import no longer needs the export. */
export function hasLeaderFinalizer(re: ResourceExport): boolean {
  const finalizers = re.metadata?.finalizers ?? [];
  return finalizers.includes(RESOURCE_EXPORT_FINALIZER) || finalizers.includes(RESOURCE_EXPORT_LEGACY_FINALIZER);
}

export function withoutLeaderFinalizers(finalizers: readonly string[]): string[] {
  return finalizers.filter((f) => f !== RESOURCE_EXPORT_FINALIZER && f !== RESOURCE_EXPORT_LEGACY_FINALIZER);
}

function clusterOf(re: ResourceExport): string {
  return re.metadata?.labels?.[RE_LABEL_SOURCE_CLUSTER_ID] ?? re.spec?.clusterID ?? '';
}

/** Oldest first, then by name: "the first exporter wins" (MCS), the same answer after a restart. */
function byAge(a: ResourceExport, b: ResourceExport): number {
  const ta = timeOf(a.metadata?.creationTimestamp);
  const tb = timeOf(b.metadata?.creationTimestamp);
  if (ta !== tb) return ta - tb;
  return (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

function timeOf(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string') {
    const t = Date.parse(value);
    return Number.isNaN(t) ? 0 : t;
  }
  return 0;
}

function byName(a: ResourceExport, b: ResourceExport): number {
  return (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

/** Antrea's SvcPortsConverter: name, port, protocol of each Service port, in order. */
export function servicePorts(re: ResourceExport): ServiceImportPort[] {
  return (re.spec?.service?.serviceSpec?.ports ?? []).map((p) => ({
    ...(p.name ? { name: p.name } : {}),
    port: p.port,
    protocol: p.protocol ?? 'TCP',
  }));
}

function portKey(ports: readonly ServiceImportPort[]): string {
  return JSON.stringify(ports.map((p) => [p.name ?? '', p.port, p.protocol ?? 'TCP']).sort());
}

function describePorts(ports: readonly ServiceImportPort[]): string {
  return ports.map((p) => `${p.name ? `${p.name}:` : ''}${p.port}/${p.protocol ?? 'TCP'}`).join(', ') || '(none)';
}

interface ServiceDecision {
  readonly winner: ResourceExport | undefined;
  readonly verdicts: Map<string, ExportVerdict>;
}

/** Which Service exports agree with the first exporter's ports. */
function decideService(exports: readonly ResourceExport[]): ServiceDecision {
  const live = exports.filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.Service && !isDeleting(re)).sort(byAge);
  const verdicts = new Map<string, ExportVerdict>();
  const winner = live[0];
  if (winner === undefined) return { winner, verdicts };
  const expected = servicePorts(winner);
  for (const re of live) {
    const ports = servicePorts(re);
    if (portKey(ports) === portKey(expected)) verdicts.set(re.metadata?.name ?? '', { ok: true });
    else {
      verdicts.set(re.metadata?.name ?? '', {
        ok: false,
        reason: REASON_CONVERGE_FAILURE,
        message: `ports ${describePorts(ports)} of cluster ${clusterOf(re)} conflict with ${describePorts(expected)} exported first by cluster ` +
          `${clusterOf(winner)} (${winner.metadata?.name ?? ''}); the first exporter's ports are imported: align the Service's ports in cluster ${clusterOf(re)}`,
      });
    }
  }
  return { winner, verdicts };
}

/**
 * The plan for one import key. `exports` are all ResourceExports of the leader namespace that
 * feed this key (deleting ones included); for an Endpoints key, the Service exports of the
 * same Service too.
 */
export function planImport(key: string, exports: readonly ResourceExport[]): ImportPlan {
  const mine = exports.filter((re) => importKeyOf(re) === key);
  const kind = mine[0]?.spec?.kind;
  if (kind === RESOURCE_EXPORT_KIND.ClusterInfo) return planClusterInfo(key, mine);
  if (kind === RESOURCE_EXPORT_KIND.Service) {
    const decision = decideService(mine);
    const winner = decision.winner;
    const spec: ResourceImportSpec | undefined = winner === undefined ? undefined : {
      name: winner.spec?.name ?? '',
      namespace: winner.spec?.namespace ?? '',
      kind: RESOURCE_IMPORT_KIND.ServiceImport,
      serviceImport: { spec: { ports: servicePorts(winner), type: 'ClusterSetIP' } },
    };
    return { name: key, spec, verdicts: decision.verdicts };
  }
  if (kind === RESOURCE_EXPORT_KIND.Endpoints) return planEndpoints(key, mine, exports);
  return { name: key, spec: undefined, verdicts: new Map() };
}

function planClusterInfo(key: string, exports: readonly ResourceExport[]): ImportPlan {
  const re = exports.find((e) => !isDeleting(e));
  const spec: ResourceImportSpec | undefined = re === undefined ? undefined : {
    kind: RESOURCE_IMPORT_KIND.ClusterInfo,
    name: re.metadata?.name ?? key,
    namespace: re.metadata?.namespace ?? '',
    ...(re.spec?.clusterInfo === undefined ? {} : { clusterinfo: re.spec.clusterInfo }),
  };
  // Antrea writes no status on ClusterInfo exports.
  return { name: key, spec, verdicts: new Map() };
}

function planEndpoints(key: string, endpointExports: readonly ResourceExport[], all: readonly ResourceExport[]): ImportPlan {
  const first = endpointExports[0];
  const namespace = first?.spec?.namespace ?? '';
  const name = first?.spec?.name ?? '';
  const serviceKey = resourceImportName(namespace, name, RESOURCE_EXPORT_KIND.Service);
  const service = decideService(all.filter((re) => importKeyOf(re) === serviceKey));
  const serviceExportOf = new Map<string, ResourceExport>();
  for (const re of all) {
    if (importKeyOf(re) === serviceKey && !isDeleting(re)) serviceExportOf.set(clusterOf(re), re);
  }
  const verdicts = new Map<string, ExportVerdict>();
  const subsets: EndpointSubset[] = [];
  for (const re of endpointExports.filter((e) => !isDeleting(e)).sort(byName)) {
    const sibling = serviceExportOf.get(clusterOf(re));
    // Only endpoints of a cluster whose Service export was accepted: a half-exported or
    // conflicting Service must not receive traffic meant for the agreed ports.
    if (sibling === undefined) continue;
    const siblingVerdict = service.verdicts.get(sibling.metadata?.name ?? '');
    if (siblingVerdict?.ok !== true) {
      verdicts.set(re.metadata?.name ?? '', {
        ok: false,
        reason: REASON_CONVERGE_FAILURE,
        message: `the Service export ${sibling.metadata?.name ?? ''} of cluster ${clusterOf(re)} was not accepted, so its endpoints are not imported`,
      });
      continue;
    }
    subsets.push(...(re.spec?.endpoints?.subsets ?? []));
    verdicts.set(re.metadata?.name ?? '', { ok: true });
  }
  const included = [...verdicts.values()].some((v) => v.ok);
  const spec: ResourceImportSpec | undefined = included ? {
    name,
    namespace,
    kind: RESOURCE_IMPORT_KIND.Endpoints,
    endpoints: { subsets },
  } : undefined;
  return { name: key, spec, verdicts };
}
