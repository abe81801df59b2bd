// The order of Kubernetes names and cluster IDs in what the leader writes (ClusterSet status,
// the member-ID ConfigMap) and decides (which ClusterInfo holds a CIDR first).
//
// String.prototype.localeCompare sorted them before. Its first call loads ICU's collation data
// (about 2.8 MiB more RSS in a process that otherwise never touches ICU: measured on the idle
// bundle), and the leader sorted at every status run. For names of lower-case letters, digits,
// '-' and '.', every ICU collation of the locales the agent runs under (root, en, en-US-POSIX)
// orders them as their code units do: each of these characters has its own primary weight, in
// code-unit order ('-' < '.' < digits < letters), and none is ignorable or contracts. So those
// are compared by code units, and anything else (never a valid name or cluster ID) still goes
// to localeCompare: the order written stays what it was for every input.

const PLAIN_NAME = /^[a-z0-9.-]*$/;

/** localeCompare's order of `a` and `b`, without ICU when both are plain Kubernetes names. */
export function compareNames(a: string, b: string): number {
  if (PLAIN_NAME.test(a) && PLAIN_NAME.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return a.localeCompare(b);
}
