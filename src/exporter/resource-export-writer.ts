// Writes this member's ResourceExports to the leader. `apply` brings the REs of one export to
// what is desired: it creates, replaces (over the version we hold) and deletes (with a uid
// precondition) only what differs, and keeps KnownExports current with every answer. Work
// begun before a pause or a stop writes nothing more: every write asks the link for its
// client first (`writable`), which throws PausedError. `withdrawAll` is the leave.
import type { ResourceExport } from '../common/api/antrea.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import { PausedError } from '../commonarea/leaderlink/lifecycle.js';
import { describeError, isAlreadyExists, isConflict, isNotFound } from '../common/kube/errors.js';
import { isTerminating, nameOf } from './export-keys.js';
import type { Known, KnownExports } from './known-exports.js';
import { exportConflict, mergeForUpdate, sameExport } from './service-export.js';

export type ExportOutcome = 'created' | 'updated' | 'deleted' | 'conflict';

export interface WriterLogger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ResourceExportWriterOptions {
  readonly leaderNamespace: string;
  readonly known: KnownExports;
  /** The client to read with: undefined while the link is not active. */
  readonly api: () => LeaderApi | undefined;
  /** The client to write with, for work begun at `generation`; throws PausedError once paused or stopped since. */
  readonly writable: (generation: number) => LeaderApi;
  readonly logger: WriterLogger;
  readonly onOutcome?: ((kind: string, outcome: ExportOutcome) => void) | undefined;
}

export class ResourceExportWriter {
  constructor(private readonly options: ResourceExportWriterOptions) {}

  /**
   * Brings the leader's REs of `key` to `desired`: creates, replaces, deletes only differences.
   * `conflict` when one of the names is taken by another export (nothing of it is written over).
   */
  async apply(key: string, desired: readonly ResourceExport[], generation: number): Promise<{ conflict?: string }> {
    const wanted = new Set(desired.map(nameOf));
    for (const re of desired) {
      const result = await this.applyOne(key, re, generation);
      if (typeof result === 'object') {
        this.options.onOutcome?.(re.spec?.kind ?? '', 'conflict');
        return { conflict: result.conflict };
      }
      if (result !== 'unchanged') this.options.onOutcome?.(re.spec?.kind ?? '', result);
    }
    for (const name of this.options.known.namesOf(key)) {
      if (wanted.has(name)) continue;
      await this.removeOne(name, generation);
    }
    return {};
  }

  private async applyOne(key: string, desired: ResourceExport, generation: number): Promise<'created' | 'updated' | 'unchanged' | { conflict: string }> {
    const { known } = this.options;
    const name = nameOf(desired);
    let entry = known.get(name);
    if (entry?.stale) entry = await this.reread(name, key);
    let live = entry?.live;
    if (!live) {
      const api = this.options.writable(generation);
      try {
        const created = await api.createResourceExport(desired);
        known.set(name, key, created, true);
        this.options.logger.info('exported', { resourceExport: name, kind: desired.spec?.kind });
        return 'created';
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await this.getLive(name);
        // Gone again meanwhile: the retry creates it.
        if (!existing) throw err;
        const conflict = exportConflict(desired, existing);
        if (conflict !== undefined) return { conflict };
        if (isTerminating(existing)) {
          throw new Error(`ResourceExport ${this.options.leaderNamespace}/${name} is still being deleted on the leader; it is created again once it is gone`, { cause: err });
        }
        known.set(name, key, existing);
        live = existing;
      }
    }
    if (sameExport(desired, live)) return 'unchanged';
    const conflict = exportConflict(desired, live);
    if (conflict !== undefined) return { conflict };
    const api = this.options.writable(generation);
    try {
      const updated = await api.replaceResourceExport(mergeForUpdate(desired, live));
      known.set(name, key, updated, true);
      this.options.logger.info('export updated', { resourceExport: name, kind: desired.spec?.kind });
      return 'updated';
    } catch (err) {
      // Our copy was stale (409) or the RE vanished (404): the retry re-reads it.
      const current = known.get(name);
      if (current) current.stale = true;
      throw err;
    }
  }

  /** Deletes one of our REs (with a uid precondition). */
  private async removeOne(name: string, generation: number): Promise<void> {
    const { known } = this.options;
    let entry = known.get(name);
    if (entry?.stale) entry = await this.reread(name, entry.key);
    if (!entry) return;
    if (isTerminating(entry.live)) {
      known.drop(name);
      return;
    }
    const api = this.options.writable(generation);
    try {
      await api.deleteResourceExport(name, entry.live.metadata?.uid);
    } catch (err) {
      if (isNotFound(err)) {
        known.drop(name);
        return;
      }
      // A failed uid precondition: another object holds the name now; re-read it first.
      if (isConflict(err)) entry.stale = true;
      throw err;
    }
    known.drop(name);
    this.options.logger.info('export withdrawn', { resourceExport: name, kind: entry.live.spec?.kind });
    this.options.onOutcome?.(entry.live.spec?.kind ?? '', 'deleted');
  }

  /** The live RE read again and indexed; undefined (and forgotten) when gone or not ours. */
  private async reread(name: string, key: string): Promise<Known | undefined> {
    const { known } = this.options;
    const live = await this.getLive(name);
    if (!live || !known.ours(live)) {
      known.drop(name);
      return undefined;
    }
    return known.set(name, key, live);
  }

  private async getLive(name: string): Promise<ResourceExport | undefined> {
    const api = this.options.api();
    if (!api) throw new PausedError('exports were paused');
    try {
      return await api.getResourceExport(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/**
 * Deletes every RE listed with `labelSelector` (ours) on the leader, those being deleted
 * already left alone. Best effort: failures are logged, not thrown (the leader also deletes the
 * REs of a member whose announce is deleted, antrea-wire.md 3.4). Undefined when the list failed.
 */
export async function withdrawAll(api: LeaderApi, labelSelector: string, logger: WriterLogger): Promise<{ deleted: number; failed: number } | undefined> {
  let exports: ResourceExport[];
  try {
    exports = (await api.listResourceExports(labelSelector)).items;
  } catch (err) {
    logger.warn('could not list our resource exports on the leader to delete them (the leader removes them with our announce)', { error: describeError(err) });
    return undefined;
  }
  let deleted = 0;
  let failed = 0;
  for (const re of exports) {
    if (isTerminating(re)) continue;
    try {
      await api.deleteResourceExport(nameOf(re), re.metadata?.uid);
      deleted += 1;
    } catch (err) {
      if (isNotFound(err)) continue;
      failed += 1;
      logger.warn('could not delete a resource export on the leader (the leader removes it with our announce)', { resourceExport: nameOf(re), error: describeError(err) });
    }
  }
  return { deleted, failed };
}
