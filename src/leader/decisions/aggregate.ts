// Aggregation of members' ResourceExports into the ResourceImports every member reads, in
// Antrea's names and shapes (antrea-wire.md §3.5). Pure: the controller feeds it what its
// informers hold and applies the answer.
//
// One ResourceImport per "import key":
//   Service RE   <cluster>-<ns>-<name>-service    ⇒ RI <ns>-<name>-service   kind ServiceImport
//   Endpoints RE <cluster>-<ns>-<name>-endpoints  ⇒ RI <ns>-<name>-endpoints kind Endpoints
//   ClusterInfo RE <cluster>-clusterinfo          ⇒ RI of the same name      kind ClusterInfo
// Decisions are functions of the exports and of which Service holds an import already (the
// import's spec.namespace/spec.name, stored), never of event order, so a restarted leader
// computes exactly what it wrote before and rewrites nothing.
import type { EndpointSubset, KubeObject } from '../../common/api/meta.js';
import type { ServiceImportPort, ServiceImportType, SessionAffinityConfig } from '../../common/api/mcs.js';
import { RESOURCE_EXPORT_KIND, RESOURCE_IMPORT_KIND, type ResourceExport, type ResourceImport, type ResourceImportSpec } from '../../common/api/antrea.js';
import {
  ENDPOINT_SOURCES_ANNOTATION,
  RESOURCE_EXPORT_FINALIZER,
  RESOURCE_EXPORT_LEGACY_FINALIZER,
  RE_LABEL_SOURCE_CLUSTER_ID,
  resourceImportName,
} from '../../common/api/names.js';
import {
  exportedMetadataAnnotations, isExportedMetadata, NO_EXPORTED_METADATA, readExportedMetadata, sameExportedMetadata, type ExportedMetadata,
} from '../../common/api/exported-metadata.js';
import { parseTimestamp } from '../../common/kube/time.js';
import { boundList, boundText } from '../../common/text/bounded.js';

export const REASON_CONVERGE_FAILURE = 'ConvergeFailure';
/** An export whose exported labels or annotations (exported-metadata.ts) break the rules: refused, the others imported. */
export const REASON_INVALID_EXPORTED_METADATA = 'InvalidExportedMetadata';
/** Two Services whose `<namespace>-<name>` is the same string: the second is refused (Antrea: resourceImportMatchesExport). */
export const REASON_IMPORT_NAME_CONFLICT = 'ImportNameConflict';
/**
 * A verdict message's ceiling in bytes: it is written to the export's status, into an Event, a
 * log line, and copied by the member into its ServiceExport condition; however many ports or
 * clusters differ, it stays readable and writable.
 */
export const MAX_VERDICT_MESSAGE_BYTES = 1024;
/** Items of one list (ports, clusters) named in a verdict before "… and N more". */
const MAX_LISTED = 8;

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
  /** Annotations the RI carries besides its spec (ENDPOINT_SOURCES_ANNOTATION on Endpoints imports). */
  readonly annotations?: Readonly<Record<string, string>>;
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

/**
 * Oldest first: the KEP's conflict resolution ("the oldest export wins") by creation time,
 * never by name; the name only breaks a tie (timestamps have whole seconds), so a restarted
 * leader decides the same.
 */
export function byAge(a: ResourceExport, b: ResourceExport): number {
  const ta = parseTimestamp(a.metadata?.creationTimestamp) ?? 0;
  const tb = parseTimestamp(b.metadata?.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return compareNames(a.metadata?.name ?? '', b.metadata?.name ?? '');
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byName(a: ResourceExport, b: ResourceExport): number {
  return compareNames(a.metadata?.name ?? '', b.metadata?.name ?? '');
}

/** Antrea's SvcPortsConverter (name, port, protocol of each Service port, in order), plus appProtocol when set. */
export function servicePorts(re: ResourceExport): ServiceImportPort[] {
  return (re.spec?.service?.serviceSpec?.ports ?? []).map((p) => ({
    ...(p.name ? { name: p.name } : {}),
    port: p.port,
    protocol: p.protocol ?? 'TCP',
    ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
  }));
}

function describePort(p: ServiceImportPort): string {
  return `${p.name ? `${p.name}:` : ''}${String(p.port)}/${p.protocol ?? 'TCP'}${p.appProtocol ? `(${p.appProtocol})` : ''}`;
}

function describePorts(ports: readonly ServiceImportPort[]): string {
  return boundList(ports.map(describePort), MAX_LISTED, 'ports') || '(none)';
}

function portKey(ports: readonly ServiceImportPort[]): string {
  return JSON.stringify(ports.map(describePort).sort());
}

/**
 * The union of the exporters' distinct ports (KEP-1645 "Service Port"), oldest export first.
 * A port is identified by its name; a same-named port with another number, protocol or
 * appProtocol, or another name on a number/protocol already taken, conflicts and the oldest
 * export's port is kept.
 */
export function mergePorts(oldestFirst: readonly ResourceExport[]): ServiceImportPort[] {
  const merged: ServiceImportPort[] = [];
  // Keyed, not scanned: a member may export tens of thousands of ports.
  const names = new Set<string>();
  const numbers = new Set<string>();
  for (const re of oldestFirst) {
    for (const port of servicePorts(re)) {
      const name = port.name ?? '';
      const number = `${String(port.port)}/${port.protocol ?? 'TCP'}`;
      if (names.has(name) || numbers.has(number)) continue;
      names.add(name);
      numbers.add(number);
      merged.push(port);
    }
  }
  return merged;
}

/** The Service properties an import carries besides its ports, as one exporter states them. */
interface ServiceTraits {
  readonly type: ServiceImportType;
  readonly sessionAffinity?: string;
  readonly sessionAffinityConfig?: SessionAffinityConfig;
  readonly internalTrafficPolicy?: string;
  readonly trafficDistribution?: string;
}

/** A headless Service (clusterIP None) imports as Headless; anything else as ClusterSetIP. */
export function serviceTraits(re: ResourceExport): ServiceTraits {
  const spec = re.spec?.service?.serviceSpec ?? {};
  const traits: { -readonly [K in keyof ServiceTraits]: ServiceTraits[K] } = { type: spec['clusterIP'] === 'None' ? 'Headless' : 'ClusterSetIP' };
  for (const key of ['sessionAffinity', 'internalTrafficPolicy', 'trafficDistribution'] as const) {
    const value = spec[key];
    if (typeof value === 'string' && value !== '') traits[key] = value;
  }
  const affinity = spec['sessionAffinityConfig'];
  if (affinity !== null && typeof affinity === 'object') traits.sessionAffinityConfig = structuredClone(affinity);
  return traits;
}

/**
 * The families a dual-stack export states (members send them only for two), in its order:
 * the import is dual-stack, and each member imports what it serves of it. Not compared
 * between exporters: a single-stack and a dual-stack cluster serve the same backends.
 */
export function exportedIPFamilies(re: ResourceExport): { ipFamilies?: string[] } {
  const families = re.spec?.service?.serviceSpec?.['ipFamilies'];
  if (!Array.isArray(families)) return {};
  const valid = [...new Set(families.filter((f): f is string => f === 'IPv4' || f === 'IPv6'))];
  return valid.length > 0 ? { ipFamilies: valid } : {};
}

/** Kubernetes' default for a ClientIP session affinity without a config (core/v1 defaults). */
const DEFAULT_CLIENT_IP_TIMEOUT_SECONDS = 10_800;

/**
 * The traits as Kubernetes would default them: a member that does not send a field (Antrea's
 * member sends ports only) states the default, not a difference. `sessionAffinity` None,
 * `internalTrafficPolicy` Cluster, a ClientIP affinity's timeout 10800 s, no config without
 * ClientIP; `trafficDistribution` has no default. Only for comparing: the import carries the
 * oldest export's fields as it sent them.
 */
export function comparableTraits(traits: ServiceTraits): ServiceTraits {
  const sessionAffinity = traits.sessionAffinity ?? 'None';
  const config = sessionAffinity === 'ClientIP'
    ? { clientIP: { timeoutSeconds: traits.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_CLIENT_IP_TIMEOUT_SECONDS } }
    : undefined;
  return {
    type: traits.type,
    sessionAffinity,
    ...(config !== undefined && { sessionAffinityConfig: config }),
    internalTrafficPolicy: traits.internalTrafficPolicy ?? 'Cluster',
    ...(traits.trafficDistribution !== undefined && { trafficDistribution: traits.trafficDistribution }),
  };
}

const TRAIT_NAMES: Readonly<Record<keyof ServiceTraits, string>> = {
  type: 'headlessness (type)',
  sessionAffinity: 'sessionAffinity',
  sessionAffinityConfig: 'sessionAffinityConfig',
  internalTrafficPolicy: 'internalTrafficPolicy',
  trafficDistribution: 'trafficDistribution',
};

interface ServiceDecision {
  /** The oldest live export: its traits are imported. */
  readonly winner: ResourceExport | undefined;
  readonly ports: ServiceImportPort[];
  /** The exported labels and annotations imported: the oldest export's that passes the rules. */
  readonly exported: ExportedMetadata;
  readonly verdicts: Map<string, ExportVerdict>;
}

/** Bytes of one export's labels or annotations shown in a conflict message. */
const SHOWN_METADATA_BYTES = 160;

function describeMetadata(map: Readonly<Record<string, string>>): string {
  return boundText(JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => compareNames(a, b)))), SHOWN_METADATA_BYTES);
}

/** `cluster <id>: <what>` for each export, at most MAX_LISTED of them. */
function perCluster(live: readonly ResourceExport[], what: (re: ResourceExport, i: number) => string): string {
  return boundList(live.map((re, i) => `cluster ${clusterOf(re)}: ${what(re, i)}`), MAX_LISTED, 'clusters', '; ');
}

/**
 * KEP-1645 conflict resolution: the import takes the oldest export's properties and the union
 * of distinct ports; when the exporters disagree on anything, EVERY live export is in conflict
 * (each member's ServiceExport gets Conflict=True), each verdict naming what differs. Antrea's
 * leader instead imports the first exporter's ports and fails the later one only (README,
 * "Differences from Antrea"). `exports` are the live Service exports of the Service holding the import.
 */
function decideService(live: readonly ResourceExport[]): ServiceDecision {
  const verdicts = new Map<string, ExportVerdict>();
  const winner = live[0];
  if (winner === undefined) return { winner, ports: [], exported: NO_EXPORTED_METADATA, verdicts };
  const ports = mergePorts(live);
  const differences: string[] = [];
  if (new Set(live.map((re) => portKey(servicePorts(re)))).size > 1) {
    differences.push(`ports differ (${perCluster(live, (re) => describePorts(servicePorts(re)))}); ` +
      `imported: ${describePorts(ports)}, the union of distinct ports, a clash resolved to the oldest export`);
  }
  const traits = live.map((re) => comparableTraits(serviceTraits(re)));
  for (const key of Object.keys(TRAIT_NAMES) as (keyof ServiceTraits)[]) {
    const values = traits.map((t) => JSON.stringify(t[key] ?? null));
    if (new Set(values).size > 1) {
      differences.push(`${TRAIT_NAMES[key]} differs (${perCluster(live, (_, i) => values[i] ?? '')}); imported: ${values[0] ?? ''}`);
    }
  }
  // KEP-1645 labels and annotations: a peer's annotation, read and judged here every time. An
  // export whose metadata breaks the rules is refused on its own and left out of the comparison.
  const read = live.map((re) => readExportedMetadata(re.metadata?.annotations));
  const judged = live.flatMap((re, i) => {
    const metadata = read[i];
    return metadata !== undefined && isExportedMetadata(metadata) ? [{ re, metadata }] : [];
  });
  const exported = judged[0]?.metadata ?? NO_EXPORTED_METADATA;
  for (const kind of ['labels', 'annotations'] as const) {
    if (judged.some((j) => !sameExportedMetadata({ ...NO_EXPORTED_METADATA, [kind]: j.metadata[kind] }, { ...NO_EXPORTED_METADATA, [kind]: exported[kind] }))) {
      differences.push(`exported ${kind} differ (${boundList(judged.map((j) => `cluster ${clusterOf(j.re)}: ${describeMetadata(j.metadata[kind])}`), MAX_LISTED, 'clusters', '; ')}); ` +
        `imported: ${describeMetadata(exported[kind])}`);
    }
  }
  for (const [i, re] of live.entries()) {
    const metadata = read[i];
    if (metadata !== undefined && !isExportedMetadata(metadata)) {
      verdicts.set(re.metadata?.name ?? '', {
        ok: false,
        reason: REASON_INVALID_EXPORTED_METADATA,
        message: boundText(`the exported labels and annotations of cluster ${clusterOf(re)} are refused (${metadata.problem}); ` +
          'the Service is imported without them. Fix the ServiceExport\'s spec.exportedLabels/exportedAnnotations', MAX_VERDICT_MESSAGE_BYTES),
      });
    } else if (differences.length === 0) verdicts.set(re.metadata?.name ?? '', { ok: true });
    else {
      verdicts.set(re.metadata?.name ?? '', {
        ok: false,
        reason: REASON_CONVERGE_FAILURE,
        message: boundText(`conflict between the exports of ${String(live.length)} clusters, the oldest (cluster ${clusterOf(winner)}, ${winner.metadata?.name ?? ''}) wins: ` +
          `${differences.join('; ')}. Align the Service in every exporting cluster to clear it`, MAX_VERDICT_MESSAGE_BYTES),
      });
    }
  }
  return { winner, ports, exported, verdicts };
}

/** The Service an export is about, `<namespace>/<name>`: an import's identity (Antrea: spec.namespace, spec.name). */
function serviceOf(obj: { spec?: { namespace?: string; name?: string } | undefined }): string {
  return `${obj.spec?.namespace ?? ''}/${obj.spec?.name ?? ''}`;
}

/** Existing imports by name, as the leader's cache has them. */
export type ImportLookup = (name: string) => ResourceImport | undefined;

export interface ImportHolder {
  /** `<namespace>/<name>` of the Service the import belongs to. */
  readonly service: string;
  /** Its live Service exports, oldest first. */
  readonly exports: readonly ResourceExport[];
}

/**
 * Which Service holds the import `serviceKey` when Services of different names map to it
 * (`my-app/web` and `my/app-web` both give `my-app-web-service`): the one the stored import
 * already names, while it still has a live export (so nothing moves under a running import,
 * and a restart changes nothing); else the Service of the oldest live export (creation time,
 * then name). Undefined when no Service export is live.
 */
export function importHolder(serviceKey: string, exports: readonly ResourceExport[], existing: ImportLookup = () => undefined): ImportHolder | undefined {
  const live = exports
    .filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.Service && !isDeleting(re) && importKeyOf(re) === serviceKey)
    .sort(byAge);
  const stored = existing(serviceKey);
  const storedService = stored?.spec === undefined ? undefined : serviceOf(stored);
  const first = live[0];
  if (first === undefined) return undefined;
  const service = storedService !== undefined && live.some((re) => serviceOf(re) === storedService) ? storedService : serviceOf(first);
  return { service, exports: live.filter((re) => serviceOf(re) === service) };
}

/** The verdict on an export of a Service that maps to an import another Service holds. */
function nameConflict(re: ResourceExport, key: string, holder: ImportHolder): ExportVerdict {
  const holders = boundList([...new Set(holder.exports.map(clusterOf))], MAX_LISTED, 'clusters');
  return {
    ok: false,
    reason: REASON_IMPORT_NAME_CONFLICT,
    message: boundText(`Service ${serviceOf(re)} maps to ResourceImport ${key} (<namespace>-<name>-<kind>), which Service ${holder.service} ` +
      `(exported by cluster ${holders}) holds: this export is not imported. Rename one of the two Services or move it to another namespace`, MAX_VERDICT_MESSAGE_BYTES),
  };
}

/**
 * The plan for one import key. `exports` are all ResourceExports of the leader namespace that
 * feed this key (deleting ones included); for an Endpoints key, the Service exports of the
 * same Service too. `existing` finds a stored import, for which Service holds a contested name.
 */
export function planImport(key: string, exports: readonly ResourceExport[], existing?: ImportLookup): ImportPlan {
  const mine = exports.filter((re) => importKeyOf(re) === key);
  const kind = mine[0]?.spec?.kind;
  if (kind === RESOURCE_EXPORT_KIND.ClusterInfo) return planClusterInfo(key, mine);
  if (kind === RESOURCE_EXPORT_KIND.Service) {
    const holder = importHolder(key, mine, existing);
    const decision = decideService(holder?.exports ?? []);
    for (const re of mine) {
      if (holder !== undefined && !isDeleting(re) && serviceOf(re) !== holder.service) decision.verdicts.set(re.metadata?.name ?? '', nameConflict(re, key, holder));
    }
    const winner = decision.winner;
    const spec: ResourceImportSpec | undefined = winner === undefined ? undefined : {
      name: winner.spec?.name ?? '',
      namespace: winner.spec?.namespace ?? '',
      kind: RESOURCE_IMPORT_KIND.ServiceImport,
      serviceImport: { spec: { ports: decision.ports, ...serviceTraits(winner), ...exportedIPFamilies(winner) } },
    };
    // The exported labels and annotations travel beside the spec, as annotations Antrea's member ignores.
    return { name: key, spec, verdicts: decision.verdicts, ...(spec !== undefined && { annotations: exportedMetadataAnnotations(decision.exported) }) };
  }
  if (kind === RESOURCE_EXPORT_KIND.Endpoints) return planEndpoints(key, mine, exports, existing);
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

function planEndpoints(key: string, endpointExports: readonly ResourceExport[], all: readonly ResourceExport[], existing?: ImportLookup): ImportPlan {
  const first = endpointExports[0];
  const serviceKey = resourceImportName(first?.spec?.namespace ?? '', first?.spec?.name ?? '', RESOURCE_EXPORT_KIND.Service);
  // The Service holding the Service import holds its Endpoints import too: one rule for both.
  const holder = importHolder(serviceKey, all, existing);
  const serviceExportOf = new Map<string, ResourceExport>();
  for (const re of holder?.exports ?? []) serviceExportOf.set(clusterOf(re), re);
  const verdicts = new Map<string, ExportVerdict>();
  const subsets: EndpointSubset[] = [];
  const sources: string[] = [];
  for (const re of endpointExports.filter((e) => !isDeleting(e)).sort(byName)) {
    if (holder !== undefined && serviceOf(re) !== holder.service) {
      verdicts.set(re.metadata?.name ?? '', nameConflict(re, key, holder));
      continue;
    }
    // Only endpoints of a cluster that exports the Service itself: without it the endpoints
    // have no ports to serve. A conflicting export still contributes (KEP: the conflict is
    // resolved on the Service's properties, every exporter keeps serving).
    if (!serviceExportOf.has(clusterOf(re))) continue;
    const own = re.spec?.endpoints?.subsets ?? [];
    subsets.push(...own);
    if (own.length > 0) sources.push(`${clusterOf(re)}=${String(own.length)}`);
    verdicts.set(re.metadata?.name ?? '', { ok: true });
  }
  const included = [...verdicts.values()].some((v) => v.ok);
  const [namespace = '', name = ''] = holder === undefined ? [] : holder.service.split('/');
  const spec: ResourceImportSpec | undefined = included ? {
    name,
    namespace,
    kind: RESOURCE_IMPORT_KIND.Endpoints,
    endpoints: { subsets },
  } : undefined;
  // Which cluster each run of subsets came from, for the members' EndpointSlices (source-cluster label).
  return { name: key, spec, verdicts, ...(spec !== undefined && { annotations: { [ENDPOINT_SOURCES_ANNOTATION]: sources.join(',') } }) };
}

/**
 * The leader's verdicts as the exports carry them: `Succeeded` accepted, `Failure` (Antrea's
 * shape: status False) refused, neither pending. Exports being withdrawn are not counted.
 */
export function countVerdicts(exports: readonly ResourceExport[]): { accepted: number; refused: number; pending: number } {
  const counts = { accepted: 0, refused: 0, pending: 0 };
  for (const re of exports) {
    if (isDeleting(re)) continue;
    const condition = re.status?.conditions?.[0];
    if (condition?.type === 'Failure') counts.refused++;
    else if (condition?.type === 'Succeeded' && condition.status === 'True') counts.accepted++;
    else counts.pending++;
  }
  return counts;
}
