// Aggregation of exports into imports: for one import key, plan it from the exports that feed
// it (aggregate.ts), write the import (books.ts decides create/update/delete), write each
// export's verdict, and release the finalizers of withdrawn exports once the import no longer
// holds what they carried.
import type { Condition } from '../common/api/meta.js';
import { RESOURCE_EXPORT, RESOURCE_IMPORT, type ResourceExport, type ResourceImportSpec } from '../common/api/antrea.js';
import { apiStatus, httpStatus, isAlreadyExists, isConflict, isNotFound, networkErrorCode } from '../common/kube/errors.js';
import { rfc3339 } from '../common/kube/time.js';
import { hasLeaderFinalizer, importKeyOf, isDeleting, planImport, withoutLeaderFinalizers, type ExportVerdict } from './aggregate.js';
import { decideImportWrite, importBody } from './books.js';
import { ClusterInfoJudge } from './clusterinfo-check.js';
import { eventTarget, nameOf, refOf, type LeaderContext } from './context.js';
import type { ExportIndex } from './export-index.js';

/** The import is waiting for its previous incarnation to go: a retry, not a failure. */
class ImportPending extends Error {}

export class ImportReconciler {
  readonly #ctx: LeaderContext;
  readonly #index: ExportIndex;
  /** One judgement per state of the ClusterInfo exports, however many import keys ask. */
  readonly #clusterInfo = new ClusterInfoJudge();

  constructor(ctx: LeaderContext, index: ExportIndex) {
    this.#ctx = ctx;
    this.#index = index;
  }

  async reconcile(key: string): Promise<undefined> {
    const ctx = this.#ctx;
    const feeding = this.#index.exportsOf(key).flatMap((name) => {
      const re = ctx.exports.get(name, ctx.ns);
      return re === undefined ? [] : [re];
    });
    const plan = planImport(key, feeding);
    const mine = feeding.filter((re) => importKeyOf(re) === key);
    // ClusterInfo: syntax and CIDR overlap with other members are judged here, across keys.
    const checked = this.#clusterInfo.verdicts(mine, ctx.exports.list(ctx.ns));
    const refused = [...checked.values()].some((v) => !v.ok);
    try {
      await this.#applyImport(key, refused ? undefined : plan.spec, plan.annotations ?? {});
    } catch (err) {
      if (!(err instanceof ImportPending)) ctx.metrics?.recordAggregationError(errorReason(err));
      throw err;
    }
    for (const re of mine) {
      const verdict = checked.get(nameOf(re)) ?? plan.verdicts.get(nameOf(re));
      if (verdict !== undefined && !isDeleting(re)) await this.#writeVerdict(re, verdict);
    }
    // The import no longer holds what a deleting export carried: let the export go.
    for (const re of mine) {
      if (isDeleting(re) && hasLeaderFinalizer(re)) await this.#releaseExport(re);
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
    try {
      await ctx.objects.replaceNamespacedCustomObjectStatus({
        ...refOf(RESOURCE_EXPORT), namespace: ctx.ns, name: nameOf(re),
        body: { ...re, status: { conditions: [condition] } },
      });
      ctx.metrics?.recordLeaderWrite('resourceexports', 'status');
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!verdict.ok) {
      ctx.log.warn('ResourceExport not converged', { resourceExport: nameOf(re), reason: verdict.reason, message: verdict.message });
      ctx.events?.record(eventTarget(RESOURCE_EXPORT, re, ctx.ns), 'Warning', verdict.reason, verdict.message);
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
