// What to do about a leader's admission denial of the announce, read from the denial's text.
// Two causes look alike from the member and need opposite fixes: the leader's member-ID
// ConfigMap (which `leader run` writes, and the chart's policies read) missing or without this
// member yet, usually because `leader run` is not running; or a token whose ServiceAccount is
// annotated for another cluster ID than the ClusterSet's. Antrea's webhook says only the latter.

/** The advice to append to an AdmissionDenied message, or undefined when the text is not one we know. */
export function admissionDenialAdvice(message: string): string | undefined {
  // The chart's policies when their parameter ConfigMap does not exist (parameterNotFoundAction: Deny).
  if (/no params found|parameterNotFoundAction/i.test(message)) {
    return "The leader's admission policies have no member-ID ConfigMap to read: `leader run` writes it, so it is not running on the " +
      'leader (check its Deployment and Pod there, e.g. an image it cannot pull: clusterset-agent status on the leader names it). ' +
      'No member is admitted until it runs; the member ServiceAccount is not at fault';
  }
  // The chart's policies: the ConfigMap exists but has no entry for this ServiceAccount.
  if (/has no cluster ID in ConfigMap/.test(message)) {
    return "The leader's member-ID ConfigMap has no entry for this member's ServiceAccount yet: `leader run` adds it from the " +
      "ServiceAccount's multicluster.antrea.io/cluster-id annotation, so either `leader run` is not running on the leader (check its " +
      'Deployment and Pod there), or the annotation is missing or claimed by another ServiceAccount too (its log names them)';
  }
  // The chart's policies, with an entry for another ID; no ClusterSet in the ConfigMap.
  if (/no ClusterSet found in Namespace|Unknown ClusterSet ID/.test(message)) {
    return "The leader has no ClusterSet of this name (deleted there, or never created), or `leader run`, which records it for the " +
      "leader's admission policies, is not running: check the leader ClusterSet in the leader namespace and `leader run` on the leader";
  }
  // Antrea's webhook and the chart's policies: the ServiceAccount is annotated for another cluster ID.
  if (/is not permitted for ServiceAccount|is not the cluster ID of ServiceAccount/.test(message)) {
    return "Wrong ServiceAccount or cluster ID: the token's ServiceAccount is annotated multicluster.antrea.io/cluster-id for another " +
      "cluster than this ClusterSet's spec.clusterID. Use this member's own token (leader create-member-token --member-id <spec.clusterID>), " +
      'or fix spec.clusterID, or annotate the ServiceAccount with this cluster ID';
  }
  return undefined;
}
