// Kubernetes object names, with the API server's exact rules (apimachinery's IsDNS1123Label and
// IsDNS1123Subdomain). The one place these checks live.

export const DNS_LABEL_MAX_LENGTH = 63;
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

const LABEL = '[a-z0-9](?:[-a-z0-9]*[a-z0-9])?';
const DNS_LABEL = new RegExp(`^${LABEL}$`);
// Dot-separated labels: no empty label (`a..b`), none starting or ending with '-'. Like
// Kubernetes, only the whole name is length-limited, not each label in it.
const DNS_SUBDOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** A DNS-1123 label: lower-case letters, digits and '-', alphanumeric at both ends, 1-63 characters (e.g. a namespace). */
export function isDnsLabel(value: unknown): value is string {
  // Length first: it also bounds the regex's backtracking on long hostile input.
  return typeof value === 'string' && value.length <= DNS_LABEL_MAX_LENGTH && DNS_LABEL.test(value);
}

/** A DNS-1123 subdomain: DNS labels joined by '.', 1-253 characters (most object names). */
export function isDnsSubdomain(value: unknown): value is string {
  return typeof value === 'string' && value.length <= DNS_SUBDOMAIN_MAX_LENGTH && DNS_SUBDOMAIN.test(value);
}

/**
 * The one cluster-ID grammar (README, "Cluster IDs"), shared by the member's ClusterSet spec,
 * `leader create-member-token`, the leader's ServiceAccount → cluster-ID map and the admission
 * policies: a DNS-1123 label. An ID is embedded in object names (`member-announce-from-<id>`,
 * `<id>-<ns>-<name>-service`) and Antrea's leader requires a label, so dots are refused.
 */
export const CLUSTER_ID_RULE = "a cluster ID is a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit (no dots)";

export function isClusterId(value: unknown): value is string {
  return isDnsLabel(value);
}

/** Why `value` is not a cluster ID, in the same words everywhere; undefined when it is one. */
export function clusterIdProblem(value: unknown): string | undefined {
  return isClusterId(value) ? undefined : `cluster ID ${JSON.stringify(value)} is not valid: ${CLUSTER_ID_RULE}`;
}

/** Whether two cluster IDs form a dash-prefix pair (`east`, `east-1`): their export names can collide. */
export function dashPrefixPair(a: string, b: string): boolean {
  return a !== b && (a.startsWith(`${b}-`) || b.startsWith(`${a}-`));
}
