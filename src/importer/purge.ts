// Deleting everything this agent imported for a ClusterSet: on leave, and when a leader has
// been lost for longer than the retention. Apart from the importer's reconcile loop because it
// is one sweep over what the agent owns, not a decision about one ResourceImport.
import type { ImportPolicyConfig } from '../common/config/config.js';
import { isNotFound } from '../common/kube/errors.js';
import type { LocalStore } from './local-store.js';
import { LEADER_LABEL, RESOURCE_IMPORT_ANNOTATION, type ImportOwner } from './ownership.js';
import { endpointsHazard, keyOf, listOwned } from './targets.js';

/** The log lines a purge writes. */
export interface PurgeLogger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

/**
 * Deletes every object this agent owns for the ClusterSet (leave, or a leader lost for too
 * long). `proceed` is asked before each delete; returning false stops early. `keep` spares an
 * object another leader of the ClusterSet still holds (its import name and the leader that wrote it).
 */
export async function purgeOwned(store: LocalStore, owner: ImportOwner, logger: PurgeLogger, policy: ImportPolicyConfig,
  proceed: () => boolean = () => true, keep: (riName: string, writer: string | undefined) => boolean = () => false): Promise<number> {
  let deleted = 0;
  const found = await listOwned(store, owner, policy);
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
