// Whether the leader's member-ID ConfigMap, which the chart's admission policies read, is there
// and lists every member ServiceAccount. `leader run` writes it; when it never started (its
// image, say) the ConfigMap is missing, or stale after new members joined, and the policies
// deny those members' announces, which the members see as AdmissionDenied. Pure; the reads are
// readMemberIds' (only where the chart's announce policy is bound, so an Antrea leader is left alone).
import type { KubeConfig } from '@kubernetes/client-node';
import { apisOf } from '../../common/kube/typed-api.js';
import { CLUSTER_ID_ANNOTATION } from '../../common/api/names.js';
import { httpStatus } from '../../common/kube/errors.js';

export interface MemberIdsInput {
  readonly namespace: string;
  readonly configMapName: string;
  /** The ConfigMap's data, or undefined when it does not exist. */
  readonly data: Readonly<Record<string, string>> | undefined;
  /** ServiceAccounts of the leader namespace with their cluster-ID annotation. */
  readonly members: readonly { readonly serviceAccount: string; readonly clusterID: string }[];
}

export function memberIdsProblems(input: MemberIdsInput): string[] {
  const where = `${input.namespace}/${input.configMapName}`;
  if (input.data === undefined) {
    return [`ConfigMap ${where}, which the leader's admission policies read, does not exist: \`leader run\` writes it, so it is not running ` +
      "(its Deployment and Pod, in the chart's release namespace); until it runs every member's announce is denied (AdmissionDenied)"];
  }
  const data = input.data;
  const missing = input.members.filter((m) => data[m.serviceAccount] !== m.clusterID).sort((a, b) => a.serviceAccount.localeCompare(b.serviceAccount));
  if (missing.length === 0) return [];
  return [`ConfigMap ${where} is stale: ${missing.map((m) => `ServiceAccount ${m.serviceAccount} (${m.clusterID})`).join(', ')} ` +
    `${missing.length === 1 ? 'has' : 'have'} no entry there, so ${missing.length === 1 ? "that member's" : "those members'"} announces are denied (AdmissionDenied): ` +
    '`leader run` is not running, or it left them out on purpose (two ServiceAccounts claiming one ID, a dash-prefix pair: its log names them)'];
}

/** The binding name the chart gives the announce policy (templates/leader-announce-admission.yaml). */
export function announcePolicyBindingName(leaderNamespace: string): string {
  return `clusterset-agent-memberclusterannounces-${leaderNamespace}`;
}

/**
 * Problems of the member-ID ConfigMap of `leaderNamespace`, when the chart's announce policy is
 * bound there (its paramRef names the ConfigMap); none when it is not, or cannot be read.
 */
export async function readMemberIdsProblems(kc: KubeConfig, leaderNamespace: string): Promise<string[]> {
  const { core, admission } = apisOf(kc, 'status (leader)');
  let configMapName: string | undefined;
  try {
    const binding = await admission.readValidatingAdmissionPolicyBinding({ name: announcePolicyBindingName(leaderNamespace) });
    configMapName = binding.spec.paramRef?.name;
  } catch (err) {
    const status = httpStatus(err);
    if (status === 404 || status === 403) return [];
    throw err;
  }
  if (configMapName === undefined) return [];
  let data: Record<string, string> | undefined;
  try {
    data = (await core.readNamespacedConfigMap({ namespace: leaderNamespace, name: configMapName })).data ?? {};
  } catch (err) {
    const status = httpStatus(err);
    if (status === 403) return [];
    if (status !== 404) throw err;
  }
  let accounts;
  try {
    accounts = await core.listNamespacedServiceAccount({ namespace: leaderNamespace });
  } catch (err) {
    if (httpStatus(err) === 403) return [];
    throw err;
  }
  const members = accounts.items
    .map((sa) => ({ serviceAccount: sa.metadata?.name ?? '', clusterID: sa.metadata?.annotations?.[CLUSTER_ID_ANNOTATION] ?? '' }))
    .filter((m) => m.clusterID !== '');
  return memberIdsProblems({ namespace: leaderNamespace, configMapName, data, members });
}
