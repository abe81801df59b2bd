// Aggregation of exports into imports: for one import key, plan it from the exports that feed
// it (aggregate.ts), write the import (books.ts decides create/update/delete), write each
// export's verdict, and release the finalizers of withdrawn exports once the import no longer
// holds what they carried.
import type { Condition } from '../common/api/meta.js';
import { RESOURCE_EXPORT, RESOURCE_EXPORT_KIND, RESOURCE_IMPORT, type ResourceExport, type ResourceImportSpec } from '../common/api/antrea.js';
import { apiStatus, httpStatus, isAlreadyExists, isConflict, isNotFound, networkErrorCode } from '../common/kube/errors.js';
import { rfc3339 } from '../common/kube/time.js';
import { hasLeaderFinalizer, importKeyOf, isDeleting, withoutLeaderFinalizers, type ExportVerdict } from './decisions/aggregate.js';
import { decideImportWrite, importBody } from './decisions/books.js';
import { ClusterInfoJudge } from './decisions/clusterinfo-check.js';
import { eventTarget, nameOf, refOf, type LeaderContext } from './context.js';
import { REASON_TOO_MANY_EXPORTS, type ExportCap } from './decisions/export-cap.js';
import type { ExportIndex } from './decisions/export-index.js';
import { planWithinBudget } from './decisions/import-budget.js';

/** The import is waiting for its previous incarnation to go: a retry, not a failure. */
class ImportPending extends Error {}

export class ImportReconciler {
  readonly #ctx: LeaderContext;
  readonly #index: ExportIndex;
  /** One judgement per state of the ClusterInfo exports, however many import keys ask. */
  readonly #clusterInfo = new ClusterInfoJudge();

  /** Each member's exports the leader takes in (leader.maxExportsPerMember). */
  readonly #cap: ExportCap;
  /** The largest import spec written, in bytes (leader.maxImportBytes). */
  readonly #budgetBytes: number;

  constructor(ctx: LeaderContext, index: ExportIndex, cap: ExportCap, budgetBytes: number) {
    this.#ctx = ctx;
    this.#index = index;
    this.#cap = cap;
    this.#budgetBytes = budgetBytes;
  }

  async reconcile(key: string): Promise<undefined> {
    const ctx = this.#ctx;
    const feeding = this.#index.exportsOf(key).flatMap((name) => {
      const re = ctx.exports.get(name, ctx.ns);
      return re === undefined ? [] : [re];
    });
    // Exports beyond their member's cap feed nothing; those that do must fit the budget. Which
    // Service holds a contested import name is read from the stored import.
    const taken = feeding.filter((re) => !this.#cap.beyond(nameOf(re)));
    const { plan, refused: overBudget } = planWithinBudget(key, taken, this.#budgetBytes, (name) => ctx.imports.get(name, ctx.ns));
    const mine = feeding.filter((re) => importKeyOf(re) === key);
    // ClusterInfo: syntax and CIDR overlap with other members are judged here, across keys.
    const isClusterInfo = mine.some((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo);
    const checked = this.#clusterInfo.verdicts(mine.filter((re) => !this.#cap.beyond(nameOf(re))),
      isClusterInfo ? ctx.exports.list(ctx.ns).filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo && !this.#cap.beyond(nameOf(re))) : []);
    const refused = [...checked.values()].some((v) => !v.ok);
    try {
      await this.#applyImport(key, refused ? undefined : plan.spec, plan.annotations ?? {});
    } catch (err) {
      if (!(err instanceof ImportPending)) ctx.metrics?.recordAggregationError(errorReason(err));
      throw err;
    }
    for (const re of mine) {
      // The cap first, then a refusal of the ClusterInfo check, then the budget's, then the plan's.
      const check = checked.get(nameOf(re));
      const verdict = this.#cap.beyond(nameOf(re)) ? this.#cap.verdict(re)
        : check?.ok === false ? check : overBudget.get(nameOf(re)) ?? check ?? plan.verdicts.get(nameOf(re));
      if (verdict !== undefined && !isDeleting(re)) await this.#writeVerdict(re, verdict);
    }
    // The import no longer holds what a deleting export carried: let the export go.
    for (const re of mine) {
      if (isDeleting(re) && hasLeaderFinalizer(re)) await this.#releaseExport(re);
    }
    return undefined;
  }

  /**
   * An export of a kind the leader does not aggregate (LabelIdentity): its only verdict is the
   * cap's. Beyond it, Failure TooManyExports; back within it, that verdict is taken away.
   */
  async judgeUnaggregated(name: string): Promise<undefined> {
    const ctx = this.#ctx;
    const re = ctx.exports.get(name, ctx.ns);
    if (re === undefined || isDeleting(re)) return undefined;
    if (this.#cap.beyond(name)) {
      await this.#writeVerdict(re, this.#cap.verdict(re));
    } else if (re.status?.conditions?.[0]?.reason === REASON_TOO_MANY_EXPORTS) {
      await this.#writeConditions(re, []);
    }
    return undefined;
  }

  async #applyImport(key: string, spec: ResourceImportSpec | undefined, annotations: Readonly<Record<string, string>>): Promise<void> {
    const ctx = this.#ctx;
    const existing = ctx.imports.get(key, ctx.ns);
    const ref = { ...refOf(RESOURCE_IMPORT), namespace: ctx.ns };
    const write = decideImportWrite(existing, spec, annotations);
    switch (write.op) {
      case 'none':
        return;
      case 'wait':
        throw new ImportPending(`ResourceImport ${key} is being deleted; it is re-created once it is gone`);
      case 'delete':
        try {
          await ctx.objects.deleteNamespacedCustomObject({ ...ref, name: key, ...(existing?.metadata?.uid ? { body: { preconditions: { uid: existing.metadata.uid } } } : {}) });
          ctx.metrics?.recordLeaderWrite('resourceimports', 'delete');
          ctx.log.info('ResourceImport deleted: no export feeds it any more', { resourceImport: key });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
        return;
      case 'create':
        try {
          await ctx.objects.createNamespacedCustomObject({ ...ref, body: importBody(RESOURCE_IMPORT.apiVersion, RESOURCE_IMPORT.kind, key, ctx.ns, write.spec, undefined, annotations) });
          ctx.metrics?.recordLeaderWrite('resourceimports', 'create');
          ctx.log.info('ResourceImport created', { resourceImport: key, kind: write.spec.kind });
        } catch (err) {
          // Our cache is behind: the informer event brings the object and another pass.
          if (!isAlreadyExists(err)) throw err;
        }
        return;
      case 'update':
        // The cached copy's resourceVersion makes this a compare-and-swap.
        await ctx.objects.replaceNamespacedCustomObject({ ...ref, name: key, body: importBody(RESOURCE_IMPORT.apiVersion, RESOURCE_IMPORT.kind, key, ctx.ns, write.spec, existing, annotations) });
        ctx.metrics?.recordLeaderWrite('resourceimports', 'update');
        ctx.log.info('ResourceImport updated', { resourceImport: key, kind: write.spec.kind });
        return;
    }
  }

  async #writeVerdict(re: ResourceExport, verdict: ExportVerdict): Promise<void> {
    const ctx = this.#ctx;
    const current = re.status?.conditions?.[0];
    const next: Condition = verdict.ok
      ? { type: 'Succeeded', status: 'True' }
      : { type: 'Failure', status: 'False', reason: verdict.reason, message: verdict.message };
    if (current !== undefined && current.type === next.type && current.status === next.status && (current.reason ?? '') === (next.reason ?? '') && (current.message ?? '') === (next.message ?? '')) return;
    const condition: Condition = { ...next, lastTransitionTime: rfc3339(ctx.now()) };
    if (!await this.#writeConditions(re, [condition])) return;
    if (!verdict.ok) {
      ctx.log.warn('ResourceExport not converged', { resourceExport: nameOf(re), reason: verdict.reason, message: verdict.message });
      ctx.events?.record(eventTarget(RESOURCE_EXPORT, re, ctx.ns), 'Warning', verdict.reason, verdict.message);
    }
  }

  /** Writes the export's status conditions; false when the export is gone. */
  async #writeConditions(re: ResourceExport, conditions: Condition[]): Promise<boolean> {
    const ctx = this.#ctx;
    try {
      await ctx.objects.replaceNamespacedCustomObjectStatus({
        ...refOf(RESOURCE_EXPORT), namespace: ctx.ns, name: nameOf(re),
        body: { ...re, status: { conditions } },
      });
      ctx.metrics?.recordLeaderWrite('resourceexports', 'status');
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async #releaseExport(re: ResourceExport): Promise<void> {
    const ctx = this.#ctx;
    const finalizers = withoutLeaderFinalizers(re.metadata?.finalizers ?? []);
    try {
      await ctx.objects.replaceNamespacedCustomObject({
        ...refOf(RESOURCE_EXPORT), namespace: ctx.ns, name: nameOf(re),
        body: { ...re, metadata: { ...re.metadata, finalizers } },
      });
      ctx.metrics?.recordLeaderWrite('resourceexports', 'update');
      ctx.log.info('ResourceExport released after its import was updated', { resourceExport: nameOf(re) });
    } catch (err) {
      if (isNotFound(err)) return;
      // A newer copy is on its way through the informer, and with it another pass.
      if (isConflict(err)) return;
      throw err;
    }
  }
}

/** A failed import write's reason for the aggregation-errors metric: the API's reason, else the HTTP status or network error. */
function errorReason(err: unknown): string {
  const status = httpStatus(err);
  return apiStatus(err)?.reason ?? (status !== undefined ? `HTTP${String(status)}` : networkErrorCode(err) ?? 'Unknown');
}
