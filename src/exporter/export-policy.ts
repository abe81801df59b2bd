// Which namespaces' ServiceExports the agent publishes to the leader. Antrea exports from
// every namespace; this agent by default keeps the system namespaces and its own out, so a
// ServiceExport there (e.g. from a careless manifest) does not announce cluster internals to
// every member of the ClusterSet. Pure.
import { SYSTEM_DENIED_NAMESPACES } from '../common/config/config.js';

export type ExportRefusalReason = 'ExportsDisabled' | 'NamespaceNotAllowed' | 'NamespaceDenied';

export interface ExportRefusal {
  reason: ExportRefusalReason;
  message: string;
}

export interface ExportPolicy {
  /** Exports switched off altogether. */
  enabled: boolean;
  /** When non-empty, only these namespaces export (still minus the denied ones). When empty, every namespace but the denied ones. */
  allowedNamespaces: readonly string[];
  /** Never export from these, on top of the system namespaces and the agent's own. */
  deniedNamespaces: readonly string[];
  /** The agent's own Namespace: always denied, like kube-system, kube-public and kube-node-lease. */
  agentNamespace: string;
}

/**
 * Undefined when ServiceExports of `namespace` may be published, else why not. The system
 * namespaces and the agent's own are denied whatever the lists say (config validation refuses
 * to allow-list them), then `deniedNamespaces`, then the allow-list when set.
 */
export function exportAllowed(namespace: string, policy: ExportPolicy): ExportRefusal | undefined {
  if (!policy.enabled) return { reason: 'ExportsDisabled', message: 'exports are disabled (exports.enabled is false)' };
  const shown = JSON.stringify(namespace);
  if ((SYSTEM_DENIED_NAMESPACES as readonly string[]).includes(namespace) || namespace === policy.agentNamespace) {
    return { reason: 'NamespaceDenied', message: `namespace ${shown} is a system or agent namespace, never exported` };
  }
  if (policy.deniedNamespaces.includes(namespace)) {
    return { reason: 'NamespaceDenied', message: `namespace ${shown} is in exports.deniedNamespaces` };
  }
  if (policy.allowedNamespaces.length > 0 && !policy.allowedNamespaces.includes(namespace)) {
    return { reason: 'NamespaceNotAllowed', message: `namespace ${shown} is not in exports.allowedNamespaces` };
  }
  return undefined;
}
