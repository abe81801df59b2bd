// Reads what `clusterset-agent status` shows: the ClusterSets of one cluster and, per
// ClusterSet, the objects that explain it. Read-only: list and get, nothing else, so any
// kubeconfig that may read those kinds can run it (never a token printed: only the `exp`
// claim of a member's token is read, in model.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import { apisOf, type CoreApi, type CustomApi } from '../../common/kube/typed-api.js';
import type { KubeList, KubeObject, ResourceDescriptor } from '../../common/api/meta.js';
import { SERVICE_EXPORT, SERVICE_EXPORT_V1ALPHA1, type ServiceExport } from '../../common/api/mcs.js';
import {
  CLUSTERSET,
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ClusterSet,
  type MemberClusterAnnounce,
  type ResourceExport,
  type ResourceImport,
} from '../../common/api/antrea.js';
import { LEADER_SECRET_TOKEN_KEY } from '../../common/api/names.js';
import { describeError, httpStatus } from '../../common/kube/errors.js';
import { AGENT_POD_SELECTOR, LEADER_POD_SELECTOR, readAgentPodProblems } from './agent-pods.js';
import { readMemberIdsProblems } from './member-ids-check.js';
import { isMemberClusterSet, leaderReport, memberReport, type ClusterSetReport, type EventInput, type MemberInput } from './model.js';

export interface CollectOptions {
  /** Only ClusterSets in this namespace; all namespaces when undefined. */
  readonly namespace?: string;
  /** Only the ClusterSet of this name. */
  readonly name?: string;
  readonly nowMs?: number;
  /** See model.ts DEFAULT_STALE_AFTER_SECONDS. */
  readonly staleAfterSeconds?: number;
}

/** Why `status` could not read what it needs: shown as the command's error (exit 1). */
export class StatusReadError extends Error {}

async function list<T extends KubeObject>(api: CustomApi, d: ResourceDescriptor, namespace: string | undefined): Promise<T[]> {
  const base = { group: d.group, version: d.version, plural: d.plural };
  const res = (namespace === undefined
    ? await api.listClusterCustomObject(base)
    : await api.listNamespacedCustomObject({ ...base, namespace })) as KubeList<T>;
  if (!Array.isArray(res.items)) throw new StatusReadError(`the API server answered the list of ${d.plural} without items`);
  return res.items;
}

/** A list that is empty, not an error, when the kind is not installed in this cluster (404). */
async function listIfServed<T extends KubeObject>(api: CustomApi, d: ResourceDescriptor, namespace: string | undefined): Promise<T[]> {
  try {
    return await list<T>(api, d, namespace);
  } catch (err) {
    if (httpStatus(err) === 404) return [];
    throw err;
  }
}

/** ServiceExports in v1beta1, or v1alpha1 where only that is served (Antrea's member CRDs, older clusters). */
async function serviceExportsIfServed(api: CustomApi): Promise<ServiceExport[]> {
  try {
    return await list<ServiceExport>(api, SERVICE_EXPORT, undefined);
  } catch (err) {
    if (httpStatus(err) !== 404) throw err;
  }
  return listIfServed<ServiceExport>(api, SERVICE_EXPORT_V1ALPHA1, undefined);
}

async function clusterSetEvents(core: CoreApi, cs: ClusterSet): Promise<EventInput[]> {
  const namespace = cs.metadata?.namespace ?? '';
  const res = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.kind=${CLUSTERSET.kind},involvedObject.name=${cs.metadata?.name ?? ''}` });
  return res.items;
}

/** The token of each leader's Secret beyond the first, by Secret name (several leaders). */
async function leaderTokens(core: CoreApi, cs: ClusterSet): Promise<NonNullable<MemberInput['leaderTokens']>> {
  const listed = (cs.spec?.leaders ?? []).filter((l) => (l.server ?? '') !== '');
  if (listed.length < 2) return {};
  return Object.fromEntries(await Promise.all(listed.slice(1).map(async (l) => [l.secret ?? '', await memberToken(core, cs, l.secret ?? '')] as const)));
}

async function memberToken(core: CoreApi, cs: ClusterSet, secret = (cs.spec?.leaders ?? []).find((l) => (l.server ?? '') !== '')?.secret ?? ''): Promise<MemberInput['token']> {
  const namespace = cs.metadata?.namespace ?? '';
  if (secret === '') return { problem: 'the ClusterSet names no Secret' };
  try {
    const s = await core.readNamespacedSecret({ namespace, name: secret });
    const encoded = s.data?.[LEADER_SECRET_TOKEN_KEY];
    if (encoded === undefined || encoded === '') return { problem: `Secret ${namespace}/${secret} has no ${LEADER_SECRET_TOKEN_KEY}` };
    return { value: Buffer.from(encoded, 'base64').toString('utf8') };
  } catch (err) {
    const code = httpStatus(err);
    if (code === 404) return { problem: `Secret ${namespace}/${secret} does not exist` };
    if (code === 403) return { problem: `not allowed to read Secret ${namespace}/${secret} (its expiry is not shown)` };
    return { problem: `cannot read Secret ${namespace}/${secret}: ${describeError(err)}` };
  }
}

/** Every ClusterSet the options select, as reports, sorted by namespace and name. */
export async function collectReports(kc: KubeConfig, options: CollectOptions = {}): Promise<ClusterSetReport[]> {
  const { custom, core } = apisOf(kc, 'status');
  const nowMs = options.nowMs ?? Date.now();
  const stale = options.staleAfterSeconds === undefined ? {} : { staleAfterSeconds: options.staleAfterSeconds };
  let clusterSets: ClusterSet[];
  try {
    clusterSets = await list<ClusterSet>(custom, CLUSTERSET, options.namespace);
  } catch (err) {
    if (err instanceof StatusReadError) throw err;
    if (httpStatus(err) === 404) {
      throw new StatusReadError(`this cluster serves no ${CLUSTERSET.plural}.${CLUSTERSET.group}/${CLUSTERSET.version}: the chart (its CRDs) is not installed here`);
    }
    throw new StatusReadError(`cannot list ClusterSets: ${describeError(err)}`);
  }
  const selected = clusterSets
    .filter((cs) => options.name === undefined || cs.metadata?.name === options.name)
    .sort((a, b) => `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`.localeCompare(`${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`));
  const reports: ClusterSetReport[] = [];
  for (const cs of selected) {
    const namespace = cs.metadata?.namespace ?? '';
    try {
      if (isMemberClusterSet(cs)) {
        const [token, tokens, events, serviceExports, agentPods] = await Promise.all([
          memberToken(core, cs),
          leaderTokens(core, cs),
          clusterSetEvents(core, cs),
          // Every ServiceExport of the cluster is exported to each of its ClusterSets.
          serviceExportsIfServed(custom),
          // The chart runs the agent in the ClusterSets' namespace.
          readAgentPodProblems(kc, AGENT_POD_SELECTOR, namespace),
        ]);
        reports.push(memberReport({ clusterSet: cs, token, leaderTokens: tokens, events, serviceExports, agentPods, nowMs, ...stale }));
      } else {
        const [announces, exports, imports, events, leaderPods, memberIds] = await Promise.all([
          listIfServed<MemberClusterAnnounce>(custom, MEMBER_CLUSTER_ANNOUNCE, namespace),
          listIfServed<ResourceExport>(custom, RESOURCE_EXPORT, namespace),
          listIfServed<ResourceImport>(custom, RESOURCE_IMPORT, namespace),
          clusterSetEvents(core, cs),
          // `leader run` runs in the chart's release namespace, which the ClusterSet does not name.
          readAgentPodProblems(kc, LEADER_POD_SELECTOR, undefined),
          readMemberIdsProblems(kc, namespace),
        ]);
        reports.push(leaderReport({ clusterSet: cs, announces, exports, imports, events, leaderPods: [...leaderPods, ...memberIds], nowMs, ...stale }));
      }
    } catch (err) {
      throw new StatusReadError(`cannot read the objects of ClusterSet ${namespace}/${cs.metadata?.name ?? ''}: ${describeError(err)}`);
    }
  }
  return reports;
}
