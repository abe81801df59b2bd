// Which leader's ResourceImport a member applies when a ClusterSet lists several leaders. Pure.
//
// Every leader aggregates the same exports into ResourceImports of the same names (a name is
// derived from namespace, name and kind: antrea-wire.md 3.5), so the same import may be held
// by several leaders at once. The member keeps one set of objects per import: the first
// leader in spec.leaders that holds it while connected is its source; the others write
// nothing for it. A leader that disconnects, is removed or withdraws an import only hands it
// over when another connected leader holds it; it is removed only when no connected leader
// holds it, and a leader whose ResourceImports are not listed yet (its view unknown) keeps
// anything from being removed until it has said.
import { isDeepStrictEqual } from 'node:util';
import type { ResourceImport } from '../common/api/antrea.js';

/** One leader's view of one import. */
export interface SourceView {
  readonly leaderClusterID: string;
  /**
   * `connected`: trusted and its ResourceImports listed, so `ri` is what it holds;
   * `syncing`: trusted, still listing (what it holds is not known yet);
   * `absent`: paused, stopped or gone (what it held does not count).
   */
  readonly state: 'connected' | 'syncing' | 'absent';
  readonly ri: ResourceImport | undefined;
}

export type SourceDecision =
  /** This leader is the source: apply its import (or, when it holds none, there is nothing to apply). */
  | { readonly kind: 'apply' }
  /** Another connected leader is the source: write nothing, hand what this leader imported over. */
  | { readonly kind: 'yield'; readonly to: string }
  /** No connected leader holds it: remove what this leader imported for it. */
  | { readonly kind: 'withdraw' }
  /** No connected leader holds it, but a leader still listing might: remove nothing yet. */
  | { readonly kind: 'wait'; readonly for: string };

/** The source of an import: the first connected leader, in spec.leaders order, that holds it. */
export function sourceOf(views: readonly SourceView[]): string | undefined {
  return views.find((v) => v.state === 'connected' && v.ri !== undefined)?.leaderClusterID;
}

/** What leader `self` does with an import, given every leader's view (in spec.leaders order, `self` included). */
export function decideSource(self: string, views: readonly SourceView[]): SourceDecision {
  const source = sourceOf(views);
  if (source === self) return { kind: 'apply' };
  if (source !== undefined) return { kind: 'yield', to: source };
  const syncing = views.find((v) => v.state === 'syncing' && v.leaderClusterID !== self);
  if (syncing !== undefined) return { kind: 'wait', for: syncing.leaderClusterID };
  return { kind: 'withdraw' };
}

/**
 * Whether a leader other than `self` holds the import, or may (still listing): what `self`
 * imported for it must then not be deleted when `self` goes (retention over, leave).
 */
export function heldElsewhere(self: string, views: readonly SourceView[]): boolean {
  return views.some((v) => v.leaderClusterID !== self && (v.state === 'syncing' || (v.state === 'connected' && v.ri !== undefined)));
}

/**
 * The connected leaders whose import differs from the source's: what decides the member's
 * objects (the spec, and the annotations our leader sends beside it, e.g. endpoint sources).
 */
export function differingSources(views: readonly SourceView[]): string[] {
  const source = views.find((v) => v.state === 'connected' && v.ri !== undefined);
  if (source?.ri === undefined) return [];
  const content = (ri: ResourceImport) => ({ spec: ri.spec, annotations: ri.metadata?.annotations ?? {} });
  const wanted = content(source.ri);
  return views
    .filter((v) => v !== source && v.state === 'connected' && v.ri !== undefined && !isDeepStrictEqual(content(v.ri), wanted))
    .map((v) => v.leaderClusterID);
}
