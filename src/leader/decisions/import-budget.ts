// How large an import may grow: every member reads it, and etcd refuses a request above
// ~1.5 MiB, so one member's oversized Endpoints would otherwise freeze the Service's import
// for everyone (every write of it failing). Over the budget, the newest contributor (creation
// time, then name) is left out with a Failure verdict naming the budget, then the next newest,
// until the import fits: the older contributors keep being imported. Decided from the exports
// alone, so it does not flap. Pure.
import type { ResourceExport } from '../../common/api/antrea.js';
import { byAge, importKeyOf, isDeleting, planImport, type ExportVerdict, type ImportLookup, type ImportPlan } from './aggregate.js';

export const REASON_IMPORT_TOO_LARGE = 'ImportTooLarge';

/** The size of an import's spec as written (JSON; annotations and metadata are small and bounded). */
export function importBytes(plan: ImportPlan): number {
  return plan.spec === undefined ? 0 : Buffer.byteLength(JSON.stringify(plan.spec));
}

export interface BudgetedPlan {
  readonly plan: ImportPlan;
  /** Verdicts on the contributors left out, by export name. */
  readonly refused: ReadonlyMap<string, ExportVerdict>;
}

/**
 * {@link planImport} within `budgetBytes`: the newest contributors left out until it fits.
 * `existing` reads the stored import (which Service holds a contested import name).
 */
export function planWithinBudget(key: string, feeding: readonly ResourceExport[], budgetBytes: number, existing?: ImportLookup): BudgetedPlan {
  let plan = planImport(key, feeding, existing);
  const refused = new Map<string, ExportVerdict>();
  if (importBytes(plan) <= budgetBytes) return { plan, refused };
  const contributors = feeding.filter((re) => importKeyOf(re) === key && !isDeleting(re)).sort(byAge);
  let kept = feeding;
  while (contributors.length > 0 && importBytes(plan) > budgetBytes) {
    const newest = contributors.pop();
    if (newest === undefined) break;
    const size = importBytes(plan);
    kept = kept.filter((re) => re !== newest);
    plan = planImport(key, kept, existing);
    refused.set(newest.metadata?.name ?? '', {
      ok: false, reason: REASON_IMPORT_TOO_LARGE,
      message: `ResourceImport ${key} would be ${String(size)} bytes with this export, over the leader's budget of ${String(budgetBytes)} bytes ` +
        `(leader.maxImportBytes): this export, the newest contributor, is not imported; ${contributors.length === 0 ? 'nothing is' : `the ${String(contributors.length)} older ones are`}. ` +
        'Export fewer endpoints (or ports) from this cluster, or raise the budget on the leader (below etcd\'s request limit)',
    });
  }
  return { plan, refused };
}
