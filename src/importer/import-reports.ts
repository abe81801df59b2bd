// What the importer says about an import it cannot land as asked: log lines and Warning Events
// on the ClusterSet (a rejection by the firewall, a name held by an object that is not ours, an
// imported Service kept because deleting it would delete Endpoints that are not ours, leaders
// whose copies of one import differ). The wording in one place; when to say it is the importer's.
import type { ObjectRef } from './local-store.js';
import type { ImporterOptions } from './importer-options.js';
import type { Rejection } from './policy.js';

export class ImportReports {
  constructor(private readonly options: Pick<ImporterOptions, 'owner' | 'logger' | 'events' | 'eventTarget' | 'onRejection' | 'onOutcome'>) {}

  /** A rejection new to this import: held back quietly (a namespace still coming) or said. */
  rejected(riName: string, kind: string, rejection: Rejection, quiet: boolean): void {
    if (quiet) {
      this.options.logger.debug('resource import held back', { resourceImport: riName, rule: rejection.rule, detail: rejection.message });
      return;
    }
    this.options.logger.warn('resource import rejected', { resourceImport: riName, rule: rejection.rule, detail: rejection.message });
    this.options.events.record(this.options.eventTarget(), 'Warning', `ImportRejected${rejection.rule}`, rejection.message);
    this.options.onRejection?.(rejection.rule);
    this.options.onOutcome?.(kind, 'rejected');
  }

  /** An object the import needs exists and is not ours; said when `isNew(message)` (once per message). */
  conflict(riName: string, ref: ObjectRef, why: string, claimed: boolean, isNew: (message: string) => boolean): void {
    const object = `${ref.plural} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
    const message = claimed
      ? `ResourceImport ${this.options.owner.leaderNamespace}/${riName} needs ${object}, which exists and ${why}: nothing of the imported Service was created, and ${object} is left untouched (rename or remove it to let the import land)`
      : `ResourceImport ${this.options.owner.leaderNamespace}/${riName} wants ${object}, which exists and ${why}: left untouched`;
    if (!isNew(message)) return;
    this.options.logger.warn('import conflicts with an existing object', { resourceImport: riName, object: `${ref.plural}/${ref.namespace ?? ''}/${ref.name}` });
    this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportConflict', message);
  }

  deleteHeld(service: ObjectRef, endpoints: ObjectRef, why: string): void {
    const name = `${service.namespace ?? ''}/${service.name}`;
    const message = `imported Service ${name} is no longer wanted but was not deleted: kube-apiserver would delete Endpoints ${endpoints.namespace ?? ''}/${endpoints.name} with it, and ${why}; remove or rename those Endpoints to let the agent clean up`;
    this.options.logger.warn('imported Service kept: deleting it would delete Endpoints that are not ours', { service: name, why });
    this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportConflict', message);
  }

  /** Imports this leader is the source of whose copy other connected leaders differ from: which leaders. */
  readonly #divergent = new Map<string, string>();

  get divergentCount(): number {
    return this.#divergent.size;
  }

  /**
   * This leader is the import's source and `differing` leaders hold another copy of it: said
   * once per set of leaders (a Warning Event), and counted while it lasts.
   */
  divergence(riName: string, differing: readonly string[]): void {
    const leaders = differing.join(', ');
    if (differing.length === 0) {
      this.#divergent.delete(riName);
      return;
    }
    if (this.#divergent.get(riName) === leaders) return;
    this.#divergent.set(riName, leaders);
    const source = this.options.owner.leaderClusterID;
    const message = `ResourceImport ${this.options.owner.leaderNamespace}/${riName} differs between leaders: leader ${source} (the first connected in spec.leaders that holds it) ` +
      `and ${leaders}; the member keeps leader ${source}'s`;
    this.options.logger.warn('an import differs between leaders', { resourceImport: riName, source, differing: leaders });
    this.options.events.record(this.options.eventTarget(), 'Warning', 'ImportSourcesDiffer', message);
  }

  /** The import is gone or another leader's now: no longer counted as divergent. */
  forgetDivergence(riName: string): void {
    this.#divergent.delete(riName);
  }
}
