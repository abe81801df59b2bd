/**
 * Helpers over the errors that `@kubernetes/client-node` 2.0.1 produces. Shapes, as read from
 * its dist/ code and observed against a loopback server:
 *
 * - Generated API calls throw `ApiException` with `.code` (HTTP status), `.headers` (the
 *   *response* headers) and `.body`. For non-2xx answers other than 401, `.body` is the raw
 *   response **string** (a JSON `Status` from the API server, or HTML/text from a proxy); for 401
 *   it is `undefined`. The log and metrics helpers instead pass an already parsed `Status`
 *   object. `.message` is `"HTTP-Code: …\nMessage: …\nBody: …\nHeaders: {…}"`, so it is never
 *   used here.
 * - `Watch.watch` reports a non-200 answer to `done` as a plain `Error(statusText)` with a
 *   numeric `.statusCode`, and a stream `ERROR` event carries a `Status` object (`code: 410`,
 *   `reason: 'Expired'` when the resourceVersion is too old).
 * - Transport failures come from undici as `TypeError('fetch failed')` whose `.cause` holds
 *   the Node error with a string `.code` (`ECONNREFUSED`, `ENOTFOUND`,
 *   `DEPTH_ZERO_SELF_SIGNED_CERT`, `ERR_TLS_CERT_ALTNAME_INVALID`, …). The TLS altname error
 *   also carries the peer certificate as `.cause.cert`.
 *
 * - `rest-client.ts` throws `ApiError` (`.code`, `.statusCode`, `.body` = parsed `Status`) for a
 *   Status answer and `UnexpectedResponseError` (`.statusCode`, no body) for anything else.
 *
 * All helpers follow `.cause` chains, so errors wrapped with context
 * (`new Error('reading Lease', { cause })`) classify the same as the original.
 */
import { STATUS_CODES } from 'node:http';
import { UnexpectedResponseError } from './rest-client.js';
import { isRecord } from './json.js';

export interface ApiStatusDetails {
  readonly kind?: string;
  readonly name?: string;
  readonly group?: string;
}

/** The parts of a Kubernetes `Status` object this project acts on. */
export interface ApiStatus {
  readonly reason?: string;
  readonly message?: string;
  readonly code?: number;
  readonly details?: ApiStatusDetails;
}

// Same placeholder as the logger's, so one search finds every redaction.
const REDACTED = '[REDACTED]';
const MAX_CHAIN = 10;
const MAX_DESCRIPTION = 1000;

/**
 * OpenSSL verification results as Node reports them in `err.code`, plus Node's own hostname
 * check. All mean "the peer could not be authenticated", i.e. a CA or server URL problem
 * rather than a network outage.
 */
const TLS_VERIFICATION_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function isHttpStatus(value: unknown): value is number {
  // DOMException also has a numeric `code` (20 for AbortError), hence the range check.
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;
}

/** The error followed by its causes; an AggregateError without a cause continues with its first error. */
function* causeChain(err: unknown): Generator {
  const seen = new Set<unknown>();
  let current = err;
  while (current !== undefined && current !== null && !seen.has(current) && seen.size < MAX_CHAIN) {
    seen.add(current);
    yield current;
    if (!isRecord(current)) {
      return;
    }
    const { cause, errors } = current;
    current = cause ?? (Array.isArray(errors) ? (errors[0] as unknown) : undefined);
  }
}

function ownStatus(link: unknown): number | undefined {
  if (!isRecord(link)) {
    return undefined;
  }
  // ApiException and Status objects use `code`; Watch's non-200 error uses `statusCode`.
  if (isHttpStatus(link.code)) {
    return link.code;
  }
  return isHttpStatus(link.statusCode) ? link.statusCode : undefined;
}

/** The HTTP status of the first error in the cause chain that has one. */
export function httpStatus(err: unknown): number | undefined {
  for (const link of causeChain(err)) {
    const status = ownStatus(link);
    if (status !== undefined) {
      return status;
    }
  }
  return undefined;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function parseStatus(value: unknown): ApiStatus | undefined {
  let parsed: unknown = value;
  if (value instanceof Uint8Array) {
    parsed = new TextDecoder().decode(value);
  }
  if (typeof parsed === 'string') {
    try {
      parsed = JSON.parse(parsed);
    } catch {
      // A proxy's HTML error page, for instance: there is no Status to report.
      return undefined;
    }
  }
  if (!isRecord(parsed) || (parsed.kind !== 'Status' && typeof parsed.reason !== 'string')) {
    return undefined;
  }
  const reason = nonEmptyString(parsed.reason);
  const message = nonEmptyString(parsed.message);
  const details = isRecord(parsed.details) ? parsed.details : undefined;
  const kind = nonEmptyString(details?.kind);
  const name = nonEmptyString(details?.name);
  const group = nonEmptyString(details?.group);
  return {
    ...(reason !== undefined && { reason }),
    ...(message !== undefined && { message }),
    ...(isHttpStatus(parsed.code) && { code: parsed.code }),
    ...(details !== undefined && {
      details: {
        ...(kind !== undefined && { kind }),
        ...(name !== undefined && { name }),
        ...(group !== undefined && { group }),
      },
    }),
  };
}

/**
 * The Kubernetes `Status` carried by the error: `ApiException.body` (a JSON string or an object),
 * or the error itself when it is a `Status` (a watch `ERROR` event's object).
 * `undefined` when the server sent none (401, or a non-JSON body).
 */
export function apiStatus(err: unknown): ApiStatus | undefined {
  for (const link of causeChain(err)) {
    if (!isRecord(link)) {
      continue;
    }
    const status = link.kind === 'Status' ? parseStatus(link) : parseStatus(link.body);
    if (status !== undefined) {
      return status;
    }
    if (ownStatus(link) !== undefined) {
      // The HTTP error itself has no Status; one further down the chain would be unrelated.
      return undefined;
    }
  }
  return undefined;
}

// Like client-go's apierrors: match on the reason, and fall back to the HTTP code only when the
// server gave no reason (e.g. a bare 404 from an unknown API group path).
function hasReasonOrCode(err: unknown, reason: string, code: number): boolean {
  const status = apiStatus(err);
  if (status?.reason !== undefined) {
    return status.reason === reason;
  }
  return httpStatus(err) === code;
}

export function isNotFound(err: unknown): boolean {
  return hasReasonOrCode(err, 'NotFound', 404);
}

/** 409 because the resourceVersion was stale (not because the name is taken). */
/** A 404 about the request's namespace (it does not exist), as opposed to the object itself. */
export function isNamespaceNotFound(err: unknown): boolean {
  return httpStatus(err) === 404 && apiStatus(err)?.details?.kind === 'namespaces';
}

/** A 403 because the request's namespace is being deleted ("unable to create new content in namespace ... because it is being terminated"). */
export function isNamespaceTerminating(err: unknown): boolean {
  return httpStatus(err) === 403 && /because it is being terminated/.test(apiStatus(err)?.message ?? '');
}

export function isConflict(err: unknown): boolean {
  return hasReasonOrCode(err, 'Conflict', 409);
}

/** 409 from a create whose name is taken. */
export function isAlreadyExists(err: unknown): boolean {
  return apiStatus(err)?.reason === 'AlreadyExists';
}

/** 410: the requested resourceVersion is too old (reason `Expired` or `Gone`); relist. */
export function isGone(err: unknown): boolean {
  if (httpStatus(err) === 410) {
    return true;
  }
  const reason = apiStatus(err)?.reason;
  return reason === 'Gone' || reason === 'Expired';
}

/** The first string `.code` along the cause chain, e.g. `ECONNREFUSED` or `CERT_HAS_EXPIRED`. */
export function networkErrorCode(err: unknown): string | undefined {
  for (const link of causeChain(err)) {
    if (isRecord(link) && typeof link.code === 'string' && link.code !== '') {
      return link.code;
    }
  }
  return undefined;
}

/** Whether the TLS peer could not be verified (unknown CA, self-signed, expired, wrong host name). */
export function isTlsVerificationError(err: unknown): boolean {
  for (const link of causeChain(err)) {
    if (isRecord(link) && typeof link.code === 'string' && TLS_VERIFICATION_CODES.has(link.code)) {
      return true;
    }
  }
  return false;
}

function describeHttp(link: unknown, status: number): string {
  // Its message is built from safe parts (status, content type, redacted snippet) and says
  // what was wrong; "HTTP 200 OK" alone would read as a success.
  if (link instanceof UnexpectedResponseError) {
    return link.message;
  }
  const body = apiStatus(link);
  const reason = body?.reason ?? STATUS_CODES[status];
  const head = reason === undefined ? `HTTP ${status}` : `HTTP ${status} ${reason}`;
  return body?.message === undefined ? head : `${head}: ${body.message}`;
}

function describeLink(link: unknown): string {
  if (!isRecord(link)) {
    return String(link);
  }
  const message = nonEmptyString(link.message);
  const name = nonEmptyString(link.name);
  const code = nonEmptyString(link.code);
  let text = message ?? code ?? '';
  // "TypeError: fetch failed" adds nothing; "TimeoutError: …" or "AbortError: …" does.
  if (name !== undefined && name !== 'Error' && name !== 'TypeError' && !text.startsWith(name)) {
    text = text === '' ? name : `${name}: ${text}`;
  }
  if (code !== undefined && !text.includes(code)) {
    text = text === '' ? code : `${text} (${code})`;
  }
  return text === '' ? 'unknown error' : text;
}

/** Removes credentials that could have been copied into a message by some library. */
function redact(text: string): string {
  return text
    .replace(/(authorization["']?\s*[:=]\s*["']?)[^"',;}]+/gi, `$1${REDACTED}`)
    .replace(/\b(bearer|basic)\s+[\w\-.~+/]+=*/gi, `$1 ${REDACTED}`)
    .replace(/\beyJ[\w-]*\.[\w-]+\.[\w-]*/g, REDACTED)
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, `$1${REDACTED}@`)
    .replace(/([?&](?:access_)?token=)[^&\s]+/gi, `$1${REDACTED}`);
}

/**
 * A one-line description for logs and status conditions, e.g.
 * `HTTP 409 Conflict: Operation cannot be fulfilled on …` or
 * `fetch failed: connect ECONNREFUSED 10.0.0.1:6443`.
 *
 * Built from the status code, the server's `Status` and the messages of the cause chain; never
 * from `ApiException.message` (which embeds response headers and the raw body). Bearer tokens,
 * JWTs and URL credentials are masked in case a library echoed them into a message.
 */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (const link of causeChain(err)) {
    const status = ownStatus(link);
    const text = status === undefined ? describeLink(link) : describeHttp(link, status);
    if (!parts.includes(text)) {
      parts.push(text);
    }
    if (status !== undefined) {
      // Whatever an HTTP error wraps is transport detail of the same answer.
      break;
    }
  }
  const line = redact(parts.join(': ').replace(/\s+/g, ' ').trim());
  return line.length > MAX_DESCRIPTION ? `${line.slice(0, MAX_DESCRIPTION - 1)}…` : line;
}

/**
 * What kube-apiserver refused as invalid (422 Invalid, 400 BadRequest): the same object is
 * refused again, so retrying cannot help; undefined for every other error.
 */
export function refusedAsInvalid(err: unknown): { object: string; reason: string } | undefined {
  const status = httpStatus(err);
  if (status !== 422 && status !== 400) return undefined;
  const details = apiStatus(err)?.details;
  return {
    object: details?.name !== undefined ? `${details.kind ?? 'object'} ${details.name}` : 'an object',
    reason: apiStatus(err)?.message ?? `HTTP ${String(status)}`,
  };
}
