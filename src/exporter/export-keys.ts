// The exporter's queue keys, one per export: `clusterinfo` for the ClusterInfo export of the
// Gateways, `svc/<ns>/<name>` for a ServiceExport (its Service and Endpoints REs); which key a
// ResourceExport found on the leader belongs to; and the small readings of an RE every part of
// the exporter shares. Pure.
import { RESOURCE_EXPORT_KIND, type ResourceExport } from '../common/api/antrea.js';
import { RE_LABEL_SOURCE_KIND, RE_LABEL_SOURCE_NAME, RE_LABEL_SOURCE_NAMESPACE } from '../common/api/names.js';

/** Queue key of the ClusterInfo export. */
export const CLUSTER_INFO_KEY = 'clusterinfo';

/** Queue key of a ServiceExport (and its Service): `svc/<ns>/<name>`. */
export function serviceKey(namespace: string, name: string): string {
  return `svc/${namespace}/${name}`;
}

export function parseServiceKey(key: string): { namespace: string; name: string } | undefined {
  const parts = key.split('/');
  if (parts.length !== 3 || parts[0] !== 'svc' || !parts[1] || !parts[2]) return undefined;
  return { namespace: parts[1], name: parts[2] };
}

/** The key of the export a listed RE belongs to; undefined for kinds this exporter does not manage. */
export function keyOfExport(re: ResourceExport): string | undefined {
  const labels = re.metadata?.labels ?? {};
  const kind = labels[RE_LABEL_SOURCE_KIND] ?? re.spec?.kind;
  if (kind === RESOURCE_EXPORT_KIND.ClusterInfo) return CLUSTER_INFO_KEY;
  if (kind !== RESOURCE_EXPORT_KIND.Service && kind !== RESOURCE_EXPORT_KIND.Endpoints) return undefined;
  const namespace = labels[RE_LABEL_SOURCE_NAMESPACE] ?? re.spec?.namespace ?? '';
  const name = labels[RE_LABEL_SOURCE_NAME] ?? re.spec?.name ?? '';
  return namespace === '' || name === '' ? undefined : serviceKey(namespace, name);
}

export function isTerminating(obj: { metadata?: { deletionTimestamp?: unknown } }): boolean {
  return obj.metadata?.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
}

export function nameOf(re: ResourceExport): string {
  return re.metadata?.name ?? '';
}
