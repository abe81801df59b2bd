// Turns an error from a call to the leader into a condition reason and a message that
// says what to fix. The order matters: admission denials arrive as 400/403/422 and must
// not be mistaken for RBAC; an unknown resource and a missing namespace are both 404, told
// apart by the Status body; and an answer that is not from an API server at all (a load
// balancer's HTML page) must never pass for one of those.
import { apiStatus, type ApiStatus, describeError, httpStatus, isNamespaceNotFound, isTlsVerificationError, networkErrorCode } from '../common/kube/errors.js';
import { UnexpectedResponseError } from '../common/kube/rest-client.js';
import { type Failure, failure, FailureReason } from './reasons.js';
import { admissionDenialAdvice } from './admission-advice.js';

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
  // Only the API server's own Status can carry an admission denial; a proxy's page cannot.
  const body = apiStatus(err);
  if (isAdmissionDenial(body)) {
    const advice = admissionDenialAdvice(body?.message ?? '');
    return failure(FailureReason.AdmissionDenied, `leader refused to ${what}: ${body?.message ?? ''}${advice === undefined ? '' : `. ${advice}`}`);
  }
  // 401/403 whatever the body: kube-apiserver may send a 401 with no JSON at all.
  if (status === 401) {
    return failure(FailureReason.Unauthorized,
      `leader ${call.server} rejected the token (401 Unauthorized): it is expired, revoked, or its ServiceAccount was deleted; issue a new token into the Secret`);
  }
  const serverMessage = body?.message ?? describeError(err);
  if (status === 403) {
    return failure(FailureReason.Forbidden, `leader forbids ${what}: grant verb "${call.verb}" on "${call.resource}" (group ${call.group}) to the member's ServiceAccount (${serverMessage})`);
  }
  const unexpected = unexpectedResponse(err);
  // A 404 is classified by its body: only a Kubernetes Status says what is missing.
  if (status === 404 && unexpected === undefined) {
    if (isNamespaceNotFound(err)) {
      return failure(FailureReason.LeaderNamespaceNotFound, `leader namespace ${call.namespace} does not exist on ${call.server}: check spec.namespace`);
    }
    // The apiserver's answer for a path nothing serves: no details, this message. A NotFound
    // naming the resource in details is about one object, which callers handle themselves.
    if (body?.details?.kind === undefined && /could not find the requested resource/i.test(body?.message ?? '')) {
      return failure(FailureReason.CRDNotInstalled, `leader ${call.server} does not serve ${call.resource}.${call.group}: install the leader CRDs`);
    }
  }
  if (unexpected !== undefined) {
    // Kubernetes < 1.24 answered unserved paths with this text; newer ones send a Status.
    if (unexpected.problem.includes('the cap derived from')) {
      return failure(FailureReason.UnexpectedResponse,
        `unexpected answer to ${what}: leader ${call.server} sent an ${unexpected.problem}; it was not read, so that the agent stays within its memory limit: `
        + 'check what the leader serves, or give the agent more memory');
    }
    const oldApiserver = unexpected.statusCode === 404 && unexpected.snippet.trim() === '404 page not found'
      ? ' (or, if the leader runs Kubernetes older than 1.24, its CRDs are not installed)' : '';
    return failure(FailureReason.UnexpectedResponse,
      `unexpected answer to ${what}: HTTP ${String(unexpected.statusCode)} with content type ${JSON.stringify(unexpected.contentType)} `
      + `(${unexpected.problem}), body ${JSON.stringify(unexpected.snippet)}: is ${call.server} the leader's Kubernetes API server? `
      + `a proxy or load balancer may be answering${oldApiserver}`);
  }
  return failure(FailureReason.LeaderError, `leader answered ${String(status)} to ${what}: ${serverMessage}`);
}

const RETRYABLE_STATUS: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Whether repeating the same request may succeed: transport failures (resets, refusals,
 * timeouts) and overload/gateway answers, whatever their content type (a proxy's 503 page
 * included). Not: TLS verification, 401, 403, 404, 409, 422, admission denials, or a 2xx
 * answer that is not what an API server sends.
 */
export function isRetryableLeaderError(err: unknown): boolean {
  if (isTlsVerificationError(err)) return false;
  const status = httpStatus(err);
  if (status === undefined) return networkErrorCode(err) !== undefined || isAbort(err);
  if (isAdmissionDenial(apiStatus(err))) return false;
  return RETRYABLE_STATUS.has(status);
}

function isAdmissionDenial(body: ApiStatus | undefined): boolean {
  return body?.message !== undefined && /admission webhook .* denied|denied request|ValidatingAdmissionPolicy/i.test(body.message);
}

/** The UnexpectedResponseError along the cause chain (callers wrap errors with context). */
function unexpectedResponse(err: unknown): UnexpectedResponseError | undefined {
  let current = err;
  for (let depth = 0; depth < 10 && current !== undefined && current !== null; depth += 1) {
    if (current instanceof UnexpectedResponseError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isAbort(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}
