// Why a leader is not (or no longer) reachable, as a stable machine-readable reason plus a
// message a human can act on. The reasons are API: users alert on them.

export const FailureReason = {
  SecretNotFound: 'SecretNotFound',
  SecretInvalid: 'SecretInvalid',
  InvalidServerURL: 'InvalidServerURL',
  InvalidSpec: 'InvalidSpec',
  ConnectionFailed: 'ConnectionFailed',
  TLSVerificationFailed: 'TLSVerificationFailed',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  LeaderNamespaceNotFound: 'LeaderNamespaceNotFound',
  CRDNotInstalled: 'CRDNotInstalled',
  AdmissionDenied: 'AdmissionDenied',
  LeaderError: 'LeaderError',
  /** An answer no Kubernetes API server sends (HTML, wrong kind…): a proxy or another service is answering. */
  UnexpectedResponse: 'UnexpectedResponse',
  /** Two ClusterSets in this member claim the same (leader server, namespace, clusterID). */
  DuplicateMembership: 'DuplicateMembership',
  /** Another member cluster configured with the same cluster ID holds its announce on the leader: this one writes nothing. */
  DuplicateClusterID: 'DuplicateClusterID',
} as const;
export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

export interface Failure {
  readonly reason: FailureReason;
  readonly message: string;
  /**
   * Configuration problems (bad Secret, bad URL, bad spec) cannot heal by retrying the
   * same request, so they are reported at once instead of after the failure threshold.
   */
  readonly permanent: boolean;
}

export function failure(reason: FailureReason, message: string, permanent = false): Failure {
  return { reason, message, permanent };
}
