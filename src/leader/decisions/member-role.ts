// The Role a leader grants every member in its namespace: Antrea's
// `antrea-mc-member-cluster-role` (multicluster/config/overlays/leader-ns/member_cluster_role.yaml),
// rule for rule. Members bound to it can announce themselves, export and read imports in the
// leader namespace, and nothing else; the agent is written to need no more than this.
import type { V1PolicyRule } from '@kubernetes/client-node';

export const MEMBER_ROLE_NAME = 'antrea-mc-member-cluster-role';

/** Antrea's `antrea-mc-member-cluster-role` (leader namespace), verbatim. */
export const ANTREA_MEMBER_ROLE_RULES: readonly V1PolicyRule[] = [
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['memberclusterannounces'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['memberclusterannounces/status'], verbs: ['get'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['resourceexports'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['resourceexports/status'], verbs: ['get', 'patch', 'update'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['resourceimports'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['resourceimports/status'], verbs: ['get', 'patch', 'update'] },
];

/** The `verb group/resource` grants of `rule` that `rules` do not give. resourceNames-limited rules count as not granting. */
function ungranted(rule: V1PolicyRule, rules: readonly V1PolicyRule[]): string[] {
  const covers = (list: readonly string[] | undefined, value: string) => list?.includes(value) === true || list?.includes('*') === true;
  const missing: string[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const granted = rules.some((r) => (r.resourceNames ?? []).length === 0 && covers(r.apiGroups, group) && covers(r.resources, resource) && covers(r.verbs, verb));
        if (!granted) missing.push(`${verb} ${group === '' ? 'core' : group}/${resource}`);
      }
    }
  }
  return missing;
}

/** The member permissions that `rules` do not grant, as `verb group/resource` strings. */
export function missingMemberPermissions(rules: readonly V1PolicyRule[]): string[] {
  return ANTREA_MEMBER_ROLE_RULES.flatMap((rule) => ungranted(rule, rules));
}

/** The member rules that `rules` do not fully grant (what to append to a Role to make it sufficient). */
export function memberRulesNotGranted(rules: readonly V1PolicyRule[]): V1PolicyRule[] {
  return ANTREA_MEMBER_ROLE_RULES.filter((rule) => ungranted(rule, rules).length > 0);
}
