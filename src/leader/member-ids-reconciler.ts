// The admission policies' parameter ConfigMap, kept in step with the member ServiceAccounts'
// cluster-ID annotations and the leader ClusterSet (member-ids.ts decides its content).
import type { V1ConfigMap } from '@kubernetes/client-node';
import { sameCanonical } from '../common/kube/canonical.js';
import { isAlreadyExists } from '../common/kube/errors.js';
import { LEADER_LABELS } from './decisions/books.js';
import type { LeaderContext } from './context.js';
import { memberIdsData } from './decisions/member-ids.js';

export class MemberIdsReconciler {
  readonly #ctx: LeaderContext;
  readonly #name: string;
  #lastProblems = '';

  constructor(ctx: LeaderContext, configMapName: string) {
    this.#ctx = ctx;
    this.#name = configMapName;
  }

  async reconcile(): Promise<undefined> {
    const ctx = this.#ctx;
    const plan = memberIdsData(ctx.serviceAccounts.list(ctx.ns), ctx.clusterSets.list(ctx.ns));
    const problems = plan.problems.join('\n');
    if (problems !== this.#lastProblems) {
      for (const problem of plan.problems) ctx.log.warn('member identity problem', { problem });
      this.#lastProblems = problems;
    }
    const existing = ctx.configMaps.get(this.#name, ctx.ns);
    if (existing !== undefined && sameCanonical(existing.data ?? {}, plan.data)) return undefined;
    // Our label added to whatever labels the stored copy has; its resourceVersion makes a replace a compare-and-swap.
    const body = (stored: V1ConfigMap | undefined): V1ConfigMap => ({
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: {
        name: this.#name, namespace: ctx.ns,
        labels: { ...(stored?.metadata?.labels ?? {}), ...LEADER_LABELS },
        ...(stored?.metadata?.resourceVersion ? { resourceVersion: stored.metadata.resourceVersion } : {}),
      },
      data: plan.data,
    });
    const replace = (stored: V1ConfigMap) => ctx.core.replaceNamespacedConfigMap({ name: this.#name, namespace: ctx.ns, body: body(stored) });
    if (existing === undefined) {
      try {
        await ctx.core.createNamespacedConfigMap({ namespace: ctx.ns, body: body(undefined) });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        // Made by hand before this leader ran (without our label, so not in our cache): take it over.
        await replace(await ctx.core.readNamespacedConfigMap({ name: this.#name, namespace: ctx.ns }));
      }
    } else {
      await replace(existing);
    }
    ctx.metrics?.recordLeaderWrite('configmaps', existing === undefined ? 'create' : 'update');
    ctx.log.info('admission parameter updated', { configMap: this.#name, members: Object.keys(plan.data).filter((k) => k === k.toLowerCase()).length });
    return undefined;
  }
}
