// Which ServiceAccounts of the leader namespace this chart's admission policies exempt: a member
// token for one of them could write any member's announce and exports, so create-member-token
// refuses them. Each policy says so in a structured annotation (EXEMPT_USERNAMES_ANNOTATION),
// which the chart renders from the same list as the CEL condition that does the exempting
// (templates/leader-admission.yaml, leader-announce-admission.yaml, leader-event-admission.yaml); reading the CEL text itself
// would tie this code to how the chart happens to spell its expressions. chart.test.ts checks
// that every rendered policy's annotation names exactly the usernames its CEL exempts.
import type { KubeConfig, V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { apisOf } from '../common/kube/typed-api.js';
import { httpStatus } from '../common/kube/errors.js';

/** On this chart's ValidatingAdmissionPolicies: the usernames its matchConditions exempt, comma-separated (may be empty). */
export const EXEMPT_USERNAMES_ANNOTATION = 'multicluster.clusterset-agent.io/exempt-usernames';
/** This chart's policies are named `clusterset-agent-<what>-<leader namespace>`. */
export const POLICY_NAME_PREFIX = 'clusterset-agent-';

/** The ServiceAccounts of `namespace` that `policies` (only this chart's count) exempt, by name. */
export function exemptServiceAccountsOf(policies: readonly V1ValidatingAdmissionPolicy[], namespace: string): Set<string> {
  const prefix = `system:serviceaccount:${namespace}:`;
  const names = new Set<string>();
  for (const policy of policies) {
    if (!(policy.metadata?.name ?? '').startsWith(POLICY_NAME_PREFIX)) continue;
    for (const username of (policy.metadata?.annotations?.[EXEMPT_USERNAMES_ANNOTATION] ?? '').split(',')) {
      const name = username.trim();
      // Another namespace's ServiceAccount (the chart's own, installed elsewhere) is not one a member token could be for.
      if (name.startsWith(prefix) && name.length > prefix.length) names.add(name.slice(prefix.length));
    }
  }
  return names;
}

/**
 * The ServiceAccounts of `namespace` the installed policies exempt. Empty when there are none or
 * they cannot be read (the caller is not allowed to: then only the reserved names guard).
 */
export async function readExemptServiceAccounts(kc: KubeConfig, namespace: string): Promise<Set<string>> {
  let policies: V1ValidatingAdmissionPolicy[];
  try {
    policies = (await apisOf(kc, 'leader').admission.listValidatingAdmissionPolicy()).items;
  } catch (err) {
    if (httpStatus(err) === 403 || httpStatus(err) === 404) return new Set();
    throw err;
  }
  return exemptServiceAccountsOf(policies, namespace);
}
