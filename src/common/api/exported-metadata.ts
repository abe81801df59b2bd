/**
 * KEP-1645 "Labels and annotations": a ServiceExport's `spec.exportedLabels` and
 * `spec.exportedAnnotations` belong on the ServiceImport of every member (never the Service's
 * own labels). Antrea's wire has no field for them, so they travel as annotations that Antrea's
 * leader and member ignore: on the member's Service ResourceExport (what it exports), and on
 * the leader's ServiceImport ResourceImport (the oldest export's, which every member applies).
 * Each map is one annotation, its JSON with sorted keys (equal maps, equal strings: nothing is
 * rewritten for nothing).
 *
 * One rule set, read by all three: the exporter before sending, the leader on every export it
 * reads, the member's firewall on every import. What passes here is what a member accepts, so
 * a leader of this project never sends what a member of it refuses. Pure.
 */
import { isDnsSubdomain } from './names.js';

/** On a Service ResourceExport (member → leader) and a ServiceImport ResourceImport (leader → members): the labels, as JSON. */
export const EXPORTED_LABELS_ANNOTATION = 'multicluster.clusterset-agent.io/exported-labels';
/** Same, the annotations. */
export const EXPORTED_ANNOTATIONS_ANNOTATION = 'multicluster.clusterset-agent.io/exported-annotations';
/**
 * On a member's ServiceImport: which of its labels and annotations came from the export
 * (`{"annotations":[...],"labels":[...]}`), so that a key removed from the export is removed
 * from the ServiceImport and a key a user added by hand never is.
 */
export const EXPORTED_KEYS_ANNOTATION = 'multicluster.clusterset-agent.io/exported-keys';

/** Entries of one map: an import's metadata is read by every member and its DNS server. */
export const MAX_EXPORTED_ENTRIES = 64;
/** The UTF-8 size of one map's keys and values together (Kubernetes allows 256 KiB of annotations in all). */
export const MAX_EXPORTED_BYTES = 16_384;

export type ExportedKind = 'labels' | 'annotations';

export interface ExportedMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

export const NO_EXPORTED_METADATA: ExportedMetadata = { labels: {}, annotations: {} };

const ANNOTATION_OF: Readonly<Record<ExportedKind, string>> = { labels: EXPORTED_LABELS_ANNOTATION, annotations: EXPORTED_ANNOTATIONS_ANNOTATION };
const FIELD_OF: Readonly<Record<ExportedKind, string>> = { labels: 'exportedLabels', annotations: 'exportedAnnotations' };

// apimachinery's IsQualifiedName (the name part) and IsValidLabelValue.
const QUALIFIED_NAME = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * Key prefixes (and their subdomains) an export may not set: Kubernetes' own (`kubernetes.io`,
 * `k8s.io`), the MCS API's (`x-k8s.io`), Antrea's and this project's (the agent's ownership
 * labels and provenance annotations live there). `app.kubernetes.io` is the exception, the
 * recommended labels users set themselves, but for `managed-by`, which names the agent.
 */
const RESERVED_DOMAINS = ['kubernetes.io', 'k8s.io', 'x-k8s.io', 'antrea.io', 'clusterset-agent.io'] as const;
const ALLOWED_RESERVED_PREFIX = 'app.kubernetes.io';
const RESERVED_KEYS: ReadonlySet<string> = new Set(['app.kubernetes.io/managed-by']);

function show(value: string): string {
  return value.length > 64 ? `${JSON.stringify(value.slice(0, 64))}... (${String(value.length)} characters)` : JSON.stringify(value);
}

/** Why `key` may not be exported, or undefined. */
export function exportedKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash === -1 ? '' : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (slash !== -1 && !isDnsSubdomain(prefix)) return `key ${show(key)}: its prefix is not a DNS-1123 subdomain`;
  if (!QUALIFIED_NAME.test(name)) return `key ${show(key)} is not a qualified name (at most 63 letters, digits, '-', '_' or '.', alphanumeric at both ends, after an optional DNS prefix and '/')`;
  if (RESERVED_KEYS.has(key)) return `key ${show(key)} is the agent's own`;
  if (prefix !== ALLOWED_RESERVED_PREFIX) {
    const domain = RESERVED_DOMAINS.find((d) => prefix === d || prefix.endsWith(`.${d}`));
    if (domain !== undefined) return `key ${show(key)} has a reserved prefix (${domain} and its subdomains${domain === 'kubernetes.io' ? `, but ${ALLOWED_RESERVED_PREFIX}` : ''})`;
  }
  return undefined;
}

/**
 * Why `map` may not be exported as `kind` (a phrase naming the ServiceExport field), or
 * undefined: not a map of strings, too many entries, too many bytes, a key that is not a
 * qualified name or is reserved, a label value that is not one.
 */
export function exportedMapProblem(kind: ExportedKind, map: unknown): string | undefined {
  const field = FIELD_OF[kind];
  if (map === null || typeof map !== 'object' || Array.isArray(map)) return `${field} is not a map`;
  const entries = Object.entries(map as Record<string, unknown>);
  if (entries.length > MAX_EXPORTED_ENTRIES) return `${field} has ${String(entries.length)} entries, more than ${String(MAX_EXPORTED_ENTRIES)}`;
  let bytes = 0;
  for (const [key, value] of entries) {
    if (typeof value !== 'string') return `${field}[${show(key)}] is not a string`;
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
    const problem = exportedKeyProblem(key);
    if (problem !== undefined) return `${field}: ${problem}`;
    if (kind === 'labels' && !LABEL_VALUE.test(value)) return `${field}[${show(key)}]: value ${show(value)} is not a label value (at most 63 letters, digits, '-', '_' or '.', alphanumeric at both ends)`;
  }
  if (bytes > MAX_EXPORTED_BYTES) return `${field} is ${String(bytes)} bytes of keys and values, more than ${String(MAX_EXPORTED_BYTES)}`;
  return undefined;
}

/** A map's wire form: JSON with sorted keys. */
function encode(map: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** The annotations that carry `metadata` (none for an empty map). */
export function exportedMetadataAnnotations(metadata: ExportedMetadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kind of ['labels', 'annotations'] as const) {
    if (Object.keys(metadata[kind]).length > 0) out[ANNOTATION_OF[kind]] = encode(metadata[kind]);
  }
  return out;
}

/** The annotation keys {@link exportedMetadataAnnotations} may write: what an update removes when absent. */
export const EXPORTED_METADATA_ANNOTATIONS: readonly string[] = [EXPORTED_LABELS_ANNOTATION, EXPORTED_ANNOTATIONS_ANNOTATION];

/** The largest annotation value worth parsing: the JSON of a map at the bounds, escapes included. */
const MAX_ENCODED_CHARS = MAX_EXPORTED_BYTES * 6 + MAX_EXPORTED_ENTRIES * 8 + 16;

/**
 * The exported metadata an object's annotations carry (a peer's: validated here, every time),
 * or why it is refused. Absent annotations are empty maps.
 */
export function readExportedMetadata(annotations: Readonly<Record<string, string>> | undefined): ExportedMetadata | { readonly problem: string } {
  const out: Record<ExportedKind, Record<string, string>> = { labels: {}, annotations: {} };
  for (const kind of ['labels', 'annotations'] as const) {
    const text: unknown = annotations?.[ANNOTATION_OF[kind]];
    if (text === undefined) continue;
    const where = `annotation ${ANNOTATION_OF[kind]}`;
    if (typeof text !== 'string') return { problem: `${where} is not a string` };
    if (text.length > MAX_ENCODED_CHARS) return { problem: `${where} is ${String(text.length)} characters, more than any map within the bounds` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { problem: `${where} is not JSON` };
    }
    const problem = exportedMapProblem(kind, parsed);
    if (problem !== undefined) return { problem: `${where}: ${problem}` };
    out[kind] = { ...(parsed as Record<string, string>) };
  }
  return out;
}

export function isExportedMetadata(value: ExportedMetadata | { readonly problem: string }): value is ExportedMetadata {
  return !('problem' in value);
}

/** Whether two exports state the same labels and annotations (order of keys aside). */
export function sameExportedMetadata(a: ExportedMetadata, b: ExportedMetadata): boolean {
  return encode(a.labels) === encode(b.labels) && encode(a.annotations) === encode(b.annotations);
}

/** The keys a ServiceImport's {@link EXPORTED_KEYS_ANNOTATION} value names (a user may have edited it: anything else is none). */
export function parseExportedKeys(text: string | undefined): { labels: string[]; annotations: string[] } {
  const none = { labels: [], annotations: [] };
  if (text === undefined || text.length > MAX_ENCODED_CHARS) return none;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return none;
  }
  if (parsed === null || typeof parsed !== 'object') return none;
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string' && exportedKeyProblem(k) === undefined) : []);
  const record = parsed as Record<string, unknown>;
  return { labels: list(record['labels']), annotations: list(record['annotations']) };
}

/** The {@link EXPORTED_KEYS_ANNOTATION} value for `metadata`; undefined when it exports nothing. */
export function exportedKeysValue(metadata: ExportedMetadata): string | undefined {
  const labels = Object.keys(metadata.labels).sort();
  const annotations = Object.keys(metadata.annotations).sort();
  return labels.length + annotations.length === 0 ? undefined : JSON.stringify({ annotations, labels });
}
