// The leader's books: which objects it wrote, found again by their label after a restart, and
// the pure decisions of what to write next. A key is never forgotten while its object may still
// exist: the decision is taken from the object found (its label), not from a key set in memory,
// so an import created just before its last export was withdrawn is deleted as soon as the
// import informer shows it, and a restarted leader finds it the same way.
import type { KubeObject } from '../../common/api/meta.js';
import type { MemberClusterAnnounce, ResourceExport, ResourceImport, ResourceImportSpec } from '../../common/api/antrea.js';
import { EXPORTED_METADATA_ANNOTATIONS } from '../../common/api/exported-metadata.js';
import { sameCanonical } from '../../common/kube/canonical.js';
import { parseTimestamp } from '../../common/kube/time.js';
import { isDeleting } from './aggregate.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_LEADER = 'clusterset-agent-leader';
/** The labels every object this leader creates carries (Antrea's members ignore labels on imports). */
export const LEADER_LABELS: Readonly<Record<string, string>> = { [MANAGED_BY_LABEL]: MANAGED_BY_LEADER };
export const LEADER_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_LEADER}`;

export function isLeaderOwned(obj: KubeObject | undefined): boolean {
  return obj?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_LEADER;
}

export type ImportWrite =
  | { readonly op: 'none' }
  | { readonly op: 'create'; readonly spec: ResourceImportSpec }
  | { readonly op: 'update'; readonly spec: ResourceImportSpec }
  | { readonly op: 'delete' }
  /** The stored import is being deleted: it is re-created once it is gone. */
  | { readonly op: 'wait' };

/**
 * What to do to the stored import `existing` (undefined: none in the cache) so that it holds
 * `spec` (undefined: no export feeds it). Only a leader-labelled import is ever deleted: one
 * made by hand is left alone. An import that is fed is taken over (and labelled) whoever made it.
 */
export function decideImportWrite(
  existing: ResourceImport | undefined, spec: ResourceImportSpec | undefined, annotations: Readonly<Record<string, string>> = {},
): ImportWrite {
  if (spec === undefined) {
    return existing !== undefined && isLeaderOwned(existing) && !isDeleting(existing) ? { op: 'delete' } : { op: 'none' };
  }
  if (existing === undefined) return { op: 'create', spec };
  if (isDeleting(existing)) return { op: 'wait' };
  const stored = existing.metadata?.annotations ?? {};
  // The exported labels' and annotations' annotations are the leader's alone: one no longer
  // exported must go too (KEP-1645: a key removed from the export leaves every ServiceImport).
  const sameAnnotations = Object.entries(annotations).every(([k, v]) => stored[k] === v) &&
    EXPORTED_METADATA_ANNOTATIONS.every((k) => annotations[k] !== undefined || stored[k] === undefined);
  if (isLeaderOwned(existing) && sameCanonical(existing.spec, spec) && sameAnnotations) return { op: 'none' };
  return { op: 'update', spec };
}

/**
 * The import with `spec`, the leader's labels and `annotations` (e.g. which cluster each run of
 * endpoints came from), keeping the stored copy's other metadata (its resourceVersion makes a
 * replace a compare-and-swap).
 */
export function importBody(
  apiVersion: string, kind: string, name: string, namespace: string, spec: ResourceImportSpec, stored?: ResourceImport,
  annotations: Readonly<Record<string, string>> = {},
): ResourceImport {
  const kept = Object.entries(stored?.metadata?.annotations ?? {}).filter(([key]) => !EXPORTED_METADATA_ANNOTATIONS.includes(key));
  const merged = { ...Object.fromEntries(kept), ...annotations };
  return {
    ...(stored ?? {}),
    apiVersion, kind,
    metadata: {
      ...(stored?.metadata ?? { name, namespace }),
      labels: { ...(stored?.metadata?.labels ?? {}), ...LEADER_LABELS },
      ...((Object.keys(merged).length > 0 || stored?.metadata?.annotations !== undefined) && { annotations: merged }),
    },
    spec,
  };
}

/** Leader-labelled imports that no export feeds and that are not already going: what a sweep deletes. */
export function orphanImports(imports: readonly ResourceImport[], isFed: (name: string) => boolean): string[] {
  return imports.filter((ri) => isLeaderOwned(ri) && !isDeleting(ri) && !isFed(ri.metadata?.name ?? '')).map((ri) => ri.metadata?.name ?? '').sort();
}

/** When `obj` was created (ms since epoch); 0, long ago, when unknown. */
function creationOf(obj: KubeObject): number {
  return parseTimestamp(obj.metadata?.creationTimestamp) ?? 0;
}

/**
 * Exports whose member has no announce (its finalizer was stripped, or the leader crashed in the
 * middle of its garbage collection): what a sweep deletes. An export younger than `graceMs` is
 * spared, so a member that is (re-)creating its announce right now keeps what it just wrote.
 */
export function orphanExports(exports: readonly ResourceExport[], announces: readonly MemberClusterAnnounce[], nowMs: number, graceMs: number): string[] {
  const members = new Set(announces.map((a) => a.clusterID ?? ''));
  return exports
    .filter((re) => {
      const clusterID = re.spec?.clusterID ?? '';
      return clusterID !== '' && !members.has(clusterID) && !isDeleting(re) && nowMs - creationOf(re) >= graceMs;
    })
    .map((re) => re.metadata?.name ?? '')
    .sort();
}

/** Runs `task` over `items` with at most `limit` in flight; every item is tried, the first error is thrown at the end. */
export async function forEachBounded<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      try {
        await task(item);
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (errors.length > 0) throw errors[0];
}
