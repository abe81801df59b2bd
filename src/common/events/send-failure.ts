// What the sender does with a request the API server failed. Pure: the caller passes the time
// and acts on the decision.
import { httpStatus, isAlreadyExists, isNotFound } from '../kube/errors.js';

// A broken or hostile Retry-After must not park the sender for hours.
const MAX_RETRY_AFTER_MS = 10 * 60_000;

export type FailureDecision =
  /** Send again at once, as a create if it was a PATCH and the other way round. */
  | { readonly op: 'flip' }
  /** Pause the whole sender, at least `retryAfterMs` if the server said so, then send again. */
  | { readonly op: 'retry'; readonly retryAfterMs: number | undefined }
  /** Retryable, but the request has used up its retries. */
  | { readonly op: 'exhausted' }
  /** Not worth another try (e.g. 403, 422). */
  | { readonly op: 'rejected' };

/**
 * `create`: the failed request was a create. `attempts`: how many times it has failed, this
 * failure included.
 */
export function decideOnFailure(err: unknown, create: boolean, attempts: number, maxRetries: number, now: number): FailureDecision {
  // Like client-go's recordToSink: a PATCH of an Event the API server has expired (TTL 1 h)
  // turns into a create; a create that landed although we saw an error turns into a PATCH.
  const flip = create ? isAlreadyExists(err) : isNotFound(err);
  if (!flip && !retryable(httpStatus(err))) return { op: 'rejected' };
  if (attempts > maxRetries) return { op: 'exhausted' };
  return flip ? { op: 'flip' } : { op: 'retry', retryAfterMs: retryAfterMs(err, now) };
}

function retryable(status: number | undefined): boolean {
  // No status: a transport error (connection refused or reset), worth another try.
  return status === undefined || status === 429 || status >= 500;
}

/** Retry-After (seconds or HTTP date) from a client-node ApiException's response headers. */
export function retryAfterMs(err: unknown, now: number): number | undefined {
  if (typeof err !== 'object' || err === null || !('headers' in err)) return undefined;
  const headers: unknown = err.headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'retry-after' || (typeof value !== 'string' && typeof value !== 'number')) continue;
    const text = String(value).trim();
    const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
    return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
  }
  return undefined;
}
