// Reads the leader credentials a ClusterSet points at: the server URL from the spec, and
// `ca.crt` + `token` from the Secret. Pure: everything it needs is passed in, so every bad
// input has a unit test and a precise message. Secret values never appear in messages.
import { createHash, X509Certificate } from 'node:crypto';
import { failure, FailureReason, type Failure } from '../conditions/reasons.js';

export interface SecretLike {
  readonly data?: Readonly<Record<string, string>> | undefined;
}

export interface LeaderCredentials {
  readonly server: string;
  /** PEM bundle the leader's serving certificate must chain to. */
  readonly caPem: string;
  readonly token: string;
  /** Digest of server + CA + token: tells a rotation from a no-op resync without keeping copies around. */
  readonly fingerprint: string;
  /** When the token expires (ms since epoch), from its JWT `exp` claim; undefined for a token without one. */
  readonly expiresAtMs?: number;
}

/**
 * The `exp` claim of a JWT (a ServiceAccount token), in ms since epoch; undefined when the token
 * is not a JWT or has no expiry (a legacy Secret-based token). Read, not verified: only the
 * leader can verify it, and this only says when to rotate.
 */
export function tokenExpiresAtMs(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined || token.split('.').length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export type CredentialsResult = { readonly ok: true; readonly credentials: LeaderCredentials } | { readonly ok: false; readonly failure: Failure };

export const CA_KEY = 'ca.crt';
export const TOKEN_KEY = 'token';

export function validateServerURL(server: string): Failure | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return failure(FailureReason.InvalidServerURL, `spec.leaders[0].server ${JSON.stringify(server)} is not a URL: use https://<host>:<port> of the leader's API server`, true);
  }
  if (url.protocol !== 'https:') {
    return failure(FailureReason.InvalidServerURL, `spec.leaders[0].server ${JSON.stringify(server)} must use https:// (the agent always verifies the leader's TLS certificate)`, true);
  }
  if (url.hostname === '' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return failure(FailureReason.InvalidServerURL, `spec.leaders[0].server ${JSON.stringify(server)} must be https://<host>[:<port>][/<path>] with no credentials, query or fragment`, true);
  }
  return undefined;
}

export function credentialsFromSecret(server: string, secretRef: { namespace: string; name: string }, secret: SecretLike | undefined): CredentialsResult {
  const urlProblem = validateServerURL(server);
  if (urlProblem) return { ok: false, failure: urlProblem };
  const where = `Secret ${secretRef.namespace}/${secretRef.name}`;
  if (!secret) {
    return { ok: false, failure: failure(FailureReason.SecretNotFound, `${where} not found: create it with keys ${CA_KEY} (the leader's CA, PEM) and ${TOKEN_KEY} (the member ServiceAccount token)`, true) };
  }
  const data = secret.data ?? {};
  const missing = [CA_KEY, TOKEN_KEY].filter((key) => !data[key]);
  if (missing.length > 0) {
    return { ok: false, failure: failure(FailureReason.SecretInvalid, `${where} has no ${missing.map((k) => `"${k}"`).join(' or ')} key: it needs ${CA_KEY} (PEM) and ${TOKEN_KEY}`, true) };
  }
  const caPem = Buffer.from(data[CA_KEY] ?? '', 'base64').toString('utf8');
  const token = Buffer.from(data[TOKEN_KEY] ?? '', 'base64').toString('utf8').trim();
  if (!/-----BEGIN CERTIFICATE-----/.test(caPem)) {
    return { ok: false, failure: failure(FailureReason.SecretInvalid, `${where} key ${CA_KEY} is not a PEM certificate`, true) };
  }
  try {
    new X509Certificate(caPem);
  } catch (err) {
    return { ok: false, failure: failure(FailureReason.SecretInvalid, `${where} key ${CA_KEY} does not parse as an X.509 certificate: ${(err as Error).message}`, true) };
  }
  if (token === '' || /\s/.test(token)) {
    return { ok: false, failure: failure(FailureReason.SecretInvalid, `${where} key ${TOKEN_KEY} is empty or contains whitespace`, true) };
  }
  const fingerprint = createHash('sha256').update(server).update('\0').update(caPem).update('\0').update(token).digest('hex');
  const expiresAtMs = tokenExpiresAtMs(token);
  return { ok: true, credentials: { server, caPem, token, fingerprint, ...(expiresAtMs === undefined ? {} : { expiresAtMs }) } };
}
