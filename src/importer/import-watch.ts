// The watch of one leader's ResourceImports, and what its failures mean. A watcher that keeps
// failing (a list too large, `watch` taken from the Role) freezes imports while the heartbeat
// keeps Ready True: the importer reports it as ImportsSynced=False, with the reason and since when.
import { RESOURCE_IMPORT, type ResourceImport } from '../common/api/antrea.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import { InformerStoppedError, ResilientInformer } from '../common/kube/informer.js';
import { describeError } from '../common/kube/errors.js';
import { classifyLeaderError } from '../conditions/classify.js';
import type { ImporterLogger } from './importer-options.js';

/** Why the watcher fails, and since when (kept across failures until it recovers). */
export interface WatchFailure {
  readonly reason: string;
  readonly message: string;
  readonly sinceMs: number;
}

export interface ImportWatchHandlers {
  readonly logger: ImporterLogger;
  /** A ResourceImport was added, updated or deleted: its name. */
  readonly changed: (name: string) => void;
  /** The watcher failed (`err`) or recovered (undefined). */
  readonly healthChanged: (err: unknown) => void;
  /** The first list is in the cache. */
  readonly synced: () => void;
}

/** The watcher's health after `err` (undefined: healthy). Pure. */
export function watchFailureOf(err: unknown, api: Pick<LeaderApi, 'namespace' | 'server'>, previous: WatchFailure | undefined, nowMs = Date.now()): WatchFailure | undefined {
  if (err === undefined) return undefined;
  const why = classifyLeaderError(err, { verb: 'list/watch', resource: 'resourceimports', group: RESOURCE_IMPORT.group, namespace: api.namespace, server: api.server });
  return { reason: why.reason, message: `the ResourceImport watcher fails, imports are frozen: ${why.message}`, sinceMs: previous?.sinceMs ?? nowMs };
}

/** Starts watching `api`'s ResourceImports; `handlers` hear every change, health change, and the first sync. */
export function startImportWatch(api: LeaderApi, leaderClusterID: string, handlers: ImportWatchHandlers): ResilientInformer<ResourceImport> {
  const informer = new ResilientInformer<ResourceImport>({
    name: `resourceimports@${leaderClusterID}`,
    path: api.resourceImportsPath,
    list: () => api.listResourceImports(),
    watch: api.watch,
    logger: handlers.logger,
    onHealthChange: (err) => { handlers.healthChanged(err); },
  });
  const enqueue = (ri: ResourceImport) => { handlers.changed(ri.metadata?.name ?? ''); };
  informer.on('add', enqueue);
  informer.on('update', enqueue);
  informer.on('delete', enqueue);
  informer.start().then(() => { handlers.synced(); }, (err: unknown) => {
    // Stopped before it synced: a reconnect, a pause or a stop, all normal.
    if (err instanceof InformerStoppedError) return;
    handlers.logger.warn('resource import watcher did not start', { error: describeError(err) });
  });
  return informer;
}

/** Stops a watcher; never throws (a watcher stopped before it synced is normal). */
export async function stopImportWatch(informer: ResilientInformer<ResourceImport>, logger: ImporterLogger): Promise<void> {
  try {
    await informer.stop();
  } catch (err) {
    if (err instanceof InformerStoppedError) logger.debug('resource import watcher stopped before it synced');
    else logger.warn('resource import watcher did not stop cleanly', { error: describeError(err) });
  }
}
