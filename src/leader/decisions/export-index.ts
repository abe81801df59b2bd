// Which exports feed which import keys, kept in step with the export informer's events so an
// import reconcile reads only its own exports instead of scanning them all. Pure (no I/O).
import type { ResourceExport } from '../../common/api/antrea.js';
import { dependentImportKeys } from './aggregate.js';

export class ExportIndex {
  /** Export name → import keys it feeds, and the reverse. */
  readonly #keysOfExport = new Map<string, string[]>();
  readonly #exportsOfKey = new Map<string, Set<string>>();

  /** Records `re` (or its deletion); returns every import key whose plan may have changed. */
  update(re: ResourceExport, deleted: boolean): string[] {
    const name = re.metadata?.name ?? '';
    const previous = this.#keysOfExport.get(name) ?? [];
    const current = deleted ? [] : dependentImportKeys(re);
    for (const key of previous) {
      const names = this.#exportsOfKey.get(key);
      names?.delete(name);
      if (names?.size === 0) this.#exportsOfKey.delete(key);
    }
    for (const key of current) {
      let names = this.#exportsOfKey.get(key);
      if (names === undefined) {
        names = new Set();
        this.#exportsOfKey.set(key, names);
      }
      names.add(name);
    }
    if (deleted) this.#keysOfExport.delete(name);
    else this.#keysOfExport.set(name, current);
    return [...new Set([...previous, ...current])];
  }

  /** Names of the exports whose plan feeds `key`. */
  exportsOf(key: string): string[] {
    return [...(this.#exportsOfKey.get(key) ?? [])];
  }

  /** Whether any export feeds `key`. */
  feeds(key: string): boolean {
    return (this.#exportsOfKey.get(key)?.size ?? 0) > 0;
  }
}
