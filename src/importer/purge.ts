// Deleting everything this agent imported for a ClusterSet: on leave, and when a leader has
// been lost for longer than the retention. Apart from the importer's reconcile loop because it
// is one sweep over what the agent owns, not a decision about one ResourceImport.
import { SERVICE_IMPORT } from '../common/api/mcs.js';
import type { ResourceDescriptor } from '../common/api/meta.js';
import type { ImportPolicyConfig } from '../common/config/config.js';
import { isNotFound } from '../common/kube/errors.js';
import type { LocalStore } from './local-store.js';
import { LEADER_LABEL, RESOURCE_IMPORT_ANNOTATION, toLabelValue, type ImportOwner } from './ownership.js';
import type { ImportSources } from './import-board.js';
import { endpointsHazard, keyOf, listOwned } from './targets.js';

/** The log lines a purge writes. */
export interface PurgeLogger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface PurgeOptions {
  /** Asked before each delete; false stops the purge early. @default always go on */
  readonly proceed?: () => boolean;
  /** Spares an object another leader of the ClusterSet still holds (its import name, the leader that wrote it). @default none */
  readonly keep?: (riName: string, writer: string | undefined) => boolean;
  /** The ServiceImport version the member serves. @default v1beta1 */
  readonly serviceImport?: ResourceDescriptor | undefined;
}

/** Deletes every object this agent owns for the ClusterSet (leave, or a leader lost for too long). */
export async function purgeOwned(store: LocalStore, owner: ImportOwner, logger: PurgeLogger, policy: ImportPolicyConfig, options: PurgeOptions = {}): Promise<number> {
  const { proceed = () => true, keep = () => false, serviceImport = SERVICE_IMPORT } = options;
  let deleted = 0;
  const found = await listOwned(store, owner, policy, serviceImport);
  const ownedEndpoints = new Set(found.filter(({ ref }) => ref.group === '' && ref.plural === 'endpoints').map(({ ref }) => keyOf(ref)));
  for (const { ref, object } of found) {
    if (!proceed()) break;
    // Another leader of the ClusterSet holds this import: it stays, that leader keeps it.
    if (keep(object.metadata?.annotations?.[RESOURCE_IMPORT_ANNOTATION] ?? '', object.metadata?.labels?.[LEADER_LABEL])) continue;
    const hazard = await endpointsHazard(store, owner, ref, ownedEndpoints);
    if (hazard) {
      logger.warn('imported Service kept: deleting it would delete Endpoints that are not ours', {
        service: `${ref.namespace ?? ''}/${ref.name}`, endpoints: `${hazard.ref.namespace ?? ''}/${hazard.ref.name}`, why: hazard.why,
      });
      continue;
    }
    try {
      await store.delete(ref);
      deleted += 1;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  if (deleted > 0) logger.info('removed imported objects', { count: deleted });
  return deleted;
}

/**
 * With several leaders, what one leader's leave or lost-leader purge keeps: an import another
 * leader holds (or may: still listing), and an object another leader of the ClusterSet wrote
 * (its own retention decides when it goes, if that leader is lost too). Pure.
 */
export function keptForOtherLeaders(sources: ImportSources | undefined, riName: string, writer: string | undefined): boolean {
  if (sources?.several() !== true) return false;
  if (sources.heldElsewhere(riName)) return true;
  return writer !== undefined && sources.others().some((id) => toLabelValue(id) === writer);
}
