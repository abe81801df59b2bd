// The member's ClusterInfo ResourceExport `<localID>-clusterinfo` (antrea-wire.md 2.10,
// Antrea's member/gateway_controller.go): what other members need to reach this cluster
// through its Gateway(s). The leader copies `spec.clusterInfo` into a ResourceImport of the
// same name (as `clusterinfo`, lower-case, there). Pure.
import { RESOURCE_EXPORT_KIND, type ClusterInfo, type Gateway, type ResourceExport } from '../common/api/antrea.js';
import { clusterInfoExportName, RE_LABEL_SOURCE_CLUSTER_ID, RE_LABEL_SOURCE_KIND } from '../common/api/names.js';
import { compareIPs, newResourceExport } from './service-export.js';

export interface ClusterInfoExportInput {
  localClusterID: string;
  leaderNamespace: string;
  /** The agent's (member) Namespace: `spec.namespace` of the RE, where the Gateways live. */
  agentNamespace: string;
  /** The Gateways of the agent Namespace. */
  gateways: readonly Gateway[];
  /** The cluster's Service CIDR; when empty, the first Gateway's `serviceCIDR` (what Antrea uses). */
  serviceCIDR?: string | undefined;
  podCIDRs?: readonly string[] | undefined;
}

/**
 * The ClusterInfo RE, or undefined when there is no Gateway with a gatewayIP (nothing to
 * export; an existing RE should be deleted). Fields are omitted when empty, like Go's omitempty.
 * Gateways are ordered by gatewayIP (then name): `gatewayInfos` lists each distinct IP once,
 * and `wireGuard` comes from the first Gateway that has a public key.
 */
export function clusterInfoExport(input: ClusterInfoExportInput): ResourceExport | undefined {
  const gateways = input.gateways
    .filter((gw) => gw.gatewayIP !== undefined && gw.gatewayIP !== '')
    .sort((a, b) => compareIPs(a.gatewayIP ?? '', b.gatewayIP ?? '') || compareNames(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  if (gateways.length === 0) return undefined;

  const info: ClusterInfo = { clusterID: input.localClusterID };
  const serviceCIDR = input.serviceCIDR !== undefined && input.serviceCIDR !== ''
    ? input.serviceCIDR
    : gateways.find((gw) => gw.serviceCIDR !== undefined && gw.serviceCIDR !== '')?.serviceCIDR;
  if (serviceCIDR !== undefined) info.serviceCIDR = serviceCIDR;
  info.gatewayInfos = [...new Set(gateways.map((gw) => gw.gatewayIP ?? ''))].map((gatewayIP) => ({ gatewayIP }));
  const podCIDRs = (input.podCIDRs ?? []).filter((cidr) => cidr !== '');
  if (podCIDRs.length > 0) info.podCIDRs = [...podCIDRs];
  const publicKey = gateways.map((gw) => gw.wireGuard?.publicKey).find((key) => key !== undefined && key !== '');
  if (publicKey !== undefined) info.wireGuard = { publicKey };

  return newResourceExport(
    input.leaderNamespace,
    clusterInfoExportName(input.localClusterID),
    { [RE_LABEL_SOURCE_CLUSTER_ID]: input.localClusterID, [RE_LABEL_SOURCE_KIND]: RESOURCE_EXPORT_KIND.ClusterInfo },
    {
      clusterID: input.localClusterID,
      name: input.localClusterID,
      namespace: input.agentNamespace,
      kind: RESOURCE_EXPORT_KIND.ClusterInfo,
      clusterInfo: info,
    },
  );
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
