// KEP-1645 exported labels and annotations on a member's ServiceImport: the leader's import
// carries the oldest export's (common/api/exported-metadata.ts, checked by the firewall,
// policy.ts); here they become the ServiceImport's metadata, under the agent's own labels and
// annotations (which always win), with a record of which keys came from the export, so that a
// key the export drops is removed and a key a user added by hand is never touched. Pure.
import {
  EXPORTED_KEYS_ANNOTATION, exportedKeysValue, isExportedMetadata, NO_EXPORTED_METADATA, parseExportedKeys, readExportedMetadata, type ExportedMetadata,
} from '../common/api/exported-metadata.js';
import type { ResourceImport } from '../common/api/antrea.js';
import { isRecord } from '../common/kube/json.js';

/** What the import says the ServiceImport carries; none when malformed (the firewall refuses such an import before anything is written). */
export function importedMetadata(ri: ResourceImport): ExportedMetadata {
  const read = readExportedMetadata(ri.metadata?.annotations);
  return isExportedMetadata(read) ? read : NO_EXPORTED_METADATA;
}

/** The exported annotations plus the record of the exported keys: what the ServiceImport's annotations get from the export. */
export function exportedAnnotationsWithKeys(metadata: ExportedMetadata): Record<string, string> {
  const keys = exportedKeysValue(metadata);
  return { ...metadata.annotations, ...(keys !== undefined && { [EXPORTED_KEYS_ANNOTATION]: keys }) };
}

function metadataOf(object: Record<string, unknown>): { labels: Record<string, unknown>; annotations: Record<string, unknown> } {
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  return { labels: isRecord(metadata['labels']) ? metadata['labels'] : {}, annotations: isRecord(metadata['annotations']) ? metadata['annotations'] : {} };
}

/**
 * What `live` still carries from an earlier export that `desired` no longer sets: the keys its
 * record names (gone from the desired labels or annotations), and the record itself when the
 * export has no keys any more.
 */
export function staleExportedKeys(desired: Record<string, unknown>, live: Record<string, unknown>): { labels: string[]; annotations: string[] } {
  const want = metadataOf(desired);
  const have = metadataOf(live);
  const record = have.annotations[EXPORTED_KEYS_ANNOTATION];
  const named = parseExportedKeys(typeof record === 'string' ? record : undefined);
  const labels = named.labels.filter((k) => want.labels[k] === undefined && have.labels[k] !== undefined);
  const annotations = named.annotations.filter((k) => want.annotations[k] === undefined && have.annotations[k] !== undefined);
  if (record !== undefined && want.annotations[EXPORTED_KEYS_ANNOTATION] === undefined) annotations.push(EXPORTED_KEYS_ANNOTATION);
  return { labels, annotations };
}

export function hasStaleExportedKeys(desired: Record<string, unknown>, live: Record<string, unknown>): boolean {
  const stale = staleExportedKeys(desired, live);
  return stale.labels.length + stale.annotations.length > 0;
}

/** `out` (the body to PUT, built over `live`) without the keys {@link staleExportedKeys} names. */
export function dropStaleExportedKeys(out: Record<string, unknown>, desired: Record<string, unknown>, live: Record<string, unknown>): void {
  const stale = staleExportedKeys(desired, live);
  const metadata = isRecord(out['metadata']) ? out['metadata'] : {};
  const { labels, annotations } = metadataOf(out);
  metadata['labels'] = Object.fromEntries(Object.entries(labels).filter(([key]) => !stale.labels.includes(key)));
  metadata['annotations'] = Object.fromEntries(Object.entries(annotations).filter(([key]) => !stale.annotations.includes(key)));
  out['metadata'] = metadata;
}
