// Turns an error from a call to the leader into a condition reason and a message that
// says what to fix. The order matters: admission denials arrive as 400/403/422 and must
// not be mistaken for RBAC; an unknown resource and a missing namespace are both 404.
import { apiStatus, describeError, httpStatus, isNamespaceNotFound, isTlsVerificationError, networkErrorCode } from '../kube/errors.js';
import { type Failure, failure, FailureReason } from './reasons.js';

/** What the agent was doing when the call failed, to name it in the message. */
export interface LeaderCall {
  readonly verb: string;
  readonly resource: string;
  readonly group: string;
  readonly namespace: string;
  readonly server: string;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
]);

export function classifyLeaderError(err: unknown, call: LeaderCall): Failure {
  const what = `${call.verb} ${call.resource}.${call.group} in namespace ${call.namespace}`;
  if (isTlsVerificationError(err)) {
    return failure(FailureReason.TLSVerificationFailed,
      `TLS verification of ${call.server} failed (${networkErrorCode(err) ?? describeError(err)}): check that the Secret's ca.crt is the CA of the leader's API server`);
  }
  const code = networkErrorCode(err);
  const status = httpStatus(err);
  if (status === undefined) {
    if ((code !== undefined && CONNECTION_CODES.has(code)) || isAbort(err)) {
      return failure(FailureReason.ConnectionFailed, `cannot reach leader API server ${call.server}: ${code ?? describeError(err)}`);
    }
    return failure(FailureReason.ConnectionFailed, `request to leader API server ${call.server} failed: ${describeError(err)}`);
  }
  const body = apiStatus(err);
  const serverMessage = body?.message ?? describeError(err);
  if (/admission webhook .* denied|denied request|ValidatingAdmissionPolicy/i.test(serverMessage)) {
    return failure(FailureReason.AdmissionDenied, `leader refused to ${what}: ${serverMessage}`);
  }
  if (status === 401) {
    return failure(FailureReason.Unauthorized,
      `leader ${call.server} rejected the token (401 Unauthorized): it is expired, revoked, or its ServiceAccount was deleted; issue a new token into the Secret`);
  }
  if (status === 403) {
    return failure(FailureReason.Forbidden, `leader forbids ${what}: grant verb "${call.verb}" on "${call.resource}" (group ${call.group}) to the member's ServiceAccount (${serverMessage})`);
  }
  if (status === 404) {
    if (isNamespaceNotFound(err)) {
      return failure(FailureReason.LeaderNamespaceNotFound, `leader namespace ${call.namespace} does not exist on ${call.server}: check spec.namespace`);
    }
    if (body?.details?.kind === undefined || /could not find the requested resource/i.test(serverMessage)) {
      return failure(FailureReason.CRDNotInstalled, `leader ${call.server} does not serve ${call.resource}.${call.group}: install the leader CRDs`);
    }
  }
  return failure(FailureReason.LeaderError, `leader answered ${String(status)} to ${what}: ${serverMessage}`);
}

function isAbort(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}
