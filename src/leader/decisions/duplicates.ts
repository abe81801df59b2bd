// Two member clusters under one cluster ID, as the leader sees them. Pure.
//
// A member that finds our cluster ID's announce held by another cluster (its identity stamped in
// CLUSTER_UID_ANNOTATION, beating) writes nothing there, so the only word the leader gets is the
// Warning Event `DuplicateClusterID` it records about the holder's announce (the member Role may
// create Events): its annotations name the reporting cluster and the holder. A report holds while
// such an Event is younger than the clear window (members repeat it every 5 minutes while the
// duplicate lasts), the announce exists, and the reporter is not the one holding it now (a
// reporter that took over after the holder stopped resolved it). Events are written by members
// and prove nothing: they are reported (condition, Event, metric), never acted on. A member may
// only record one about its own cluster ID's announce (the chart's leader-event-admission
// policy), and the leader believes it only while its own view agrees: the announce is held by
// another identity than the reporter's, the one the reporter names. What members can make the
// leader hold is bounded: each Event is cached in the few fields read here, and only the newest
// `maxEvents` are read.
import type { CoreV1Event } from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE, type MemberClusterAnnounce } from '../../common/api/antrea.js';
import {
  CLUSTER_UID_ANNOTATION,
  DUPLICATE_CLUSTER_ID_REASON,
  HOLDER_CLUSTER_UID_ANNOTATION,
  MEMBER_ANNOUNCE_PREFIX,
} from '../../common/api/names.js';
import { parseTimestamp } from '../../common/kube/time.js';
import { compareNames } from '../../common/text/order.js';

/** The leader's watch of member Events: only this reason. */
export const DUPLICATE_EVENTS_SELECTOR = `reason=${DUPLICATE_CLUSTER_ID_REASON}`;
/** The condition type on the leader ClusterSet while a duplicate is reported (absent otherwise, as in Antrea's status). */
export const DUPLICATE_CONDITION_TYPE = DUPLICATE_CLUSTER_ID_REASON;
/** Two missed repeats (members repeat every 5 minutes) and a minute of slack. */
export const DUPLICATE_CLEAR_MS = 11 * 60_000;
/** Identities named in one message at most: Events are member-written, their number unbounded. */
const NAMED_MAX = 3;
/** DuplicateClusterID Events read at most (the newest) when no setting says otherwise. */
export const DEFAULT_MAX_DUPLICATE_EVENTS = 1000;
/** Longest annotation value kept from a member's Event (a cluster UID is 36 characters). */
const IDENTITY_MAX = 128;

const short = (value: string | undefined) => (value === undefined ? undefined : value.slice(0, IDENTITY_MAX));

/**
 * What the leader caches of a member's DuplicateClusterID Event: the fields read here, the two
 * identities (shortened), nothing else (no message, no managedFields).
 */
export function compactDuplicateEvent(event: CoreV1Event): CoreV1Event {
  const annotations = event.metadata.annotations ?? {};
  const kept: Record<string, string> = {};
  for (const key of [CLUSTER_UID_ANNOTATION, HOLDER_CLUSTER_UID_ANNOTATION]) {
    const value = short(annotations[key]);
    if (value !== undefined) kept[key] = value;
  }
  const { name, namespace, uid, resourceVersion, creationTimestamp } = event.metadata;
  return {
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp, ...(Object.keys(kept).length > 0 && { annotations: kept }) },
    involvedObject: { kind: event.involvedObject.kind, name: short(event.involvedObject.name), namespace: event.involvedObject.namespace },
    reason: event.reason,
    ...(event.lastTimestamp !== undefined && { lastTimestamp: event.lastTimestamp }),
    ...(event.eventTime !== undefined && { eventTime: event.eventTime }),
    ...(event.firstTimestamp !== undefined && { firstTimestamp: event.firstTimestamp }),
  } as CoreV1Event;
}

export interface DuplicateReport {
  readonly clusterID: string;
  /** The identity on the announce now (else the one the reporters name). */
  readonly holder: string;
  /** The other clusters that reported it, sorted. */
  readonly claimants: readonly string[];
  /** When the report clears unless repeated (ms since epoch). */
  readonly expiresAt: number;
}

/** When the member last said it: lastTimestamp, eventTime, firstTimestamp, creation. */
export function reportedAt(event: CoreV1Event): number | undefined {
  return (
    parseTimestamp(event.lastTimestamp) ?? parseTimestamp(event.eventTime) ?? parseTimestamp(event.firstTimestamp) ?? parseTimestamp(event.metadata.creationTimestamp)
  );
}

export function duplicateReports(events: readonly CoreV1Event[], announces: readonly MemberClusterAnnounce[], nowMs: number, clearAfterMs = DUPLICATE_CLEAR_MS, maxEvents = DEFAULT_MAX_DUPLICATE_EVENTS): DuplicateReport[] {
  const byName = new Map(announces.map((a) => [a.metadata?.name ?? '', a]));
  const found = new Map<string, { holder: string; claimants: Set<string>; expiresAt: number }>();
  // Only live reports, and of those only the newest maxEvents: a member cannot make this scan long.
  let live = events.flatMap((event) => {
    const at = reportedAt(event);
    return at === undefined || nowMs - at >= clearAfterMs ? [] : [{ event, at }];
  });
  if (live.length > maxEvents) live = live.sort((a, b) => b.at - a.at).slice(0, maxEvents);
  for (const { event, at } of live) {
    const target = event.involvedObject;
    if (event.reason !== DUPLICATE_CLUSTER_ID_REASON || target.kind !== MEMBER_CLUSTER_ANNOUNCE.kind || !target.name?.startsWith(MEMBER_ANNOUNCE_PREFIX)) continue;
    const announce = byName.get(target.name);
    if (announce === undefined) continue;
    const reporter = event.metadata.annotations?.[CLUSTER_UID_ANNOTATION] ?? '';
    const current = announce.metadata?.annotations?.[CLUSTER_UID_ANNOTATION];
    if (reporter !== '' && reporter === current) continue;
    // The leader's own view must agree with the reporter's: the holder it names holds the announce now.
    const namedHolder = event.metadata.annotations?.[HOLDER_CLUSTER_UID_ANNOTATION];
    if (namedHolder !== undefined && current !== undefined && namedHolder !== current) continue;
    const clusterID = target.name.slice(MEMBER_ANNOUNCE_PREFIX.length);
    const holder = current ?? event.metadata.annotations?.[HOLDER_CLUSTER_UID_ANNOTATION] ?? '';
    const entry = found.get(clusterID) ?? { holder, claimants: new Set<string>(), expiresAt: 0 };
    entry.claimants.add(reporter === '' ? '(identity unknown)' : reporter);
    entry.expiresAt = Math.max(entry.expiresAt, at + clearAfterMs);
    found.set(clusterID, entry);
  }
  return [...found].sort(([a], [b]) => compareNames(a, b)).map(([clusterID, e]) => ({
    clusterID, holder: e.holder, claimants: [...e.claimants].sort(), expiresAt: e.expiresAt,
  }));
}

function named(ids: readonly string[]): string {
  const shown = ids.slice(0, NAMED_MAX).join(', ');
  return ids.length > NAMED_MAX ? `${shown} and ${String(ids.length - NAMED_MAX)} more` : shown;
}

/** One report in words: the cluster ID, both identities, and what to do. Stable while the report lasts (no times). */
export function reportMessage(report: DuplicateReport): string {
  return `cluster ID ${report.clusterID} is used by ${String(report.claimants.length + 1)} member clusters: ${report.holder || '(identity unknown)'} holds its announce; ` +
    `${named(report.claimants)} reported ${DUPLICATE_CLUSTER_ID_REASON} and write${report.claimants.length === 1 ? 's' : ''} nothing to the leader. ` +
    'Give each member cluster its own cluster ID';
}

/** The leader ClusterSet's DuplicateClusterID condition value, undefined when nothing is reported. */
export function duplicateCondition(reports: readonly DuplicateReport[]): { type: string; status: 'True'; reason: string; message: string } | undefined {
  if (reports.length === 0) return undefined;
  return {
    type: DUPLICATE_CONDITION_TYPE, status: 'True', reason: DUPLICATE_CLUSTER_ID_REASON,
    message: reports.slice(0, NAMED_MAX).map(reportMessage).join('; ') + (reports.length > NAMED_MAX ? `; and ${String(reports.length - NAMED_MAX)} more cluster IDs` : ''),
  };
}
