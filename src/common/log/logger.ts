// Structured JSON logging for the agent, with redaction applied before any transport sees a line.
//
// The agent handles bearer tokens and CA bundles read from ClusterSet Secrets, and most of its
// log lines are written while those are in scope. Redaction therefore lives in the format
// pipeline, where every line passes, instead of relying on each call site to remember it.

import type { Writable } from 'node:stream';
import winston from 'winston';

/** The levels the agent uses, most to least severe. winston's other npm levels stay callable but are never configured. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What redacted values are replaced with. Fixed so tests and log queries can look for it. */
export const REDACTED = '[REDACTED]';

export interface LoggerOptions {
  /** Least severe level that is written. */
  readonly level: LogLevel;
  /** Where JSON lines go. Defaults to process.stdout, which is what the kubelet collects. */
  readonly stream?: Writable;
}

/** Context fields that identify which ClusterSet, leader and component a line is about. */
export interface LogContext {
  readonly clusterSet?: string;
  readonly leader?: string;
  readonly component?: string;
}

// Keys are compared after lower-casing and dropping everything but letters and digits, so
// `ca.crt`, `caData`, `ca_data` and `CA-DATA` are one rule, and `bearerToken` matches `token`.
const SENSITIVE_KEY_PARTS = [
  'token',
  'password',
  'passwd',
  'secret',
  'authorization',
  'bearer',
  'cacrt',
  'cadata',
  'certdata',
  'keydata',
  'tlskey',
  'privatekey',
] as const;

// `secretName`, `tokenSecretNamespace` or `secretRef` hold the *identity* of a Secret, which is
// what an operator needs to debug "secret not found"; they never hold key material.
const IDENTIFIER_SUFFIXES = ['name', 'namespace', 'ref'] as const;

function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Whether a metadata key is treated as holding credential material. */
export function isSensitiveKey(key: string): boolean {
  const k = normaliseKey(key);
  if (IDENTIFIER_SUFFIXES.some((suffix) => k.endsWith(suffix))) return false;
  return SENSITIVE_KEY_PARTS.some((part) => k.includes(part));
}

// Applied to every string, not only `message`: error messages end up in `stack` and in nested
// fields, and client libraries echo request headers into error text.
const STRING_PATTERNS: readonly (readonly [RegExp, string])[] = [
  // An HTTP credential: the scheme word is kept so the line still says what kind of auth failed.
  [/\b(bearer)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  // A JWT (Kubernetes service-account tokens are JWTs); the signature may be empty for alg=none.
  [/eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g, REDACTED],
];

/** Masks credential-shaped substrings (Bearer values, JWTs) in free text. */
export function maskSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of STRING_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * Returns a redacted deep copy of `value`: values under sensitive keys become `[REDACTED]`,
 * strings are passed through `maskSecrets`, Errors become `{ name, message }`, and the data
 * of any Kubernetes Secret object is dropped whatever its keys are called.
 *
 * The input is never mutated: winston hands formats the caller's own nested objects.
 */
export function redactValue(value: unknown): unknown {
  return redactInner(value, new Set());
}

function redactInner(value: unknown, ancestors: Set<object>): unknown {
  if (typeof value === 'string') return maskSecrets(value);
  if (typeof value !== 'object' || value === null) return value;
  if (ancestors.has(value)) return '[Circular]';
  // Buffer#toJSON prints every byte; a Buffer in a log line is almost always key material or a body.
  if (Buffer.isBuffer(value)) return `[Buffer ${value.length} bytes]`;
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((item: unknown) => redactInner(item, ancestors));
    // An Error's useful fields are not enumerable, so without this it would serialise as {}.
    if (value instanceof Error) {
      return { name: value.name, message: maskSecrets(value.message) };
    }
    const withToJSON = value as { toJSON?: unknown };
    if (typeof withToJSON.toJSON === 'function') {
      let json: unknown;
      try {
        json = (withToJSON.toJSON as () => unknown).call(value);
      } catch {
        // A log call must never be what brings the agent down.
        return '[Unserialisable]';
      }
      return redactInner(json, ancestors);
    }
    const isSecretObject = (value as { kind?: unknown }).kind === 'Secret';
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const dropSecretData = isSecretObject && (key === 'data' || key === 'stringData');
      out[key] = isSensitiveKey(key) || dropSecretData ? REDACTED : redactInner(child, ancestors);
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

// Fields winston itself owns; they are never credential material and must keep their type.
const RESERVED_INFO_KEYS = new Set(['level', 'message']);

/** The winston format that applies `redactValue` to every field of a log entry. */
export const redactFormat = winston.format((info) => {
  // A new object, so that the caller's metadata (merged by reference into `info`) is untouched.
  const out: winston.Logform.TransformableInfo = { level: info.level, message: info.message };
  for (const sym of Object.getOwnPropertySymbols(info)) {
    (out as Record<symbol, unknown>)[sym] = (info as Record<symbol, unknown>)[sym];
  }
  for (const [key, value] of Object.entries(info)) {
    if (RESERVED_INFO_KEYS.has(key)) continue;
    out[key] = isSensitiveKey(key) ? REDACTED : redactValue(value);
  }
  out.message = typeof info.message === 'string' ? maskSecrets(info.message) : redactValue(info.message);
  return out;
});

/**
 * Creates the agent's logger: one JSON object per line with `timestamp`, `level`, `message`
 * and any metadata fields, redacted. Errors passed as the message or as the second argument
 * keep their stack.
 */
export function createLogger(options: LoggerOptions): winston.Logger {
  const { combine, errors, timestamp, json } = winston.format;
  return winston.createLogger({
    level: options.level,
    // errors() runs first so that the stack it copies out of an Error is redacted as well.
    format: combine(errors({ stack: true }), redactFormat(), timestamp(), json()),
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stdout })],
  });
}

/** A logger whose every line carries the given context fields. Absent fields are left out, not logged as null. */
export function childLogger(logger: winston.Logger, fields: LogContext): winston.Logger {
  const meta: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields) as [string, unknown][]) {
    if (typeof value === 'string') meta[key] = value;
  }
  return logger.child(meta);
}

/** How many `cause` links are followed; wrapped errors rarely go deeper and cycles must terminate. */
const MAX_CAUSE_DEPTH = 3;

/**
 * Turns anything thrown into `{ error: message }` for use as log metadata, because an Error
 * nested in metadata serialises as {}. Causes are appended (`outer: caused by: inner`), the text
 * is masked, and a throwing `message` getter or a non-Error throwable cannot make logging fail.
 */
export function errorFields(err: unknown): { readonly error: string } {
  const parts = [describeThrown(err)];
  let cause = err instanceof Error ? err.cause : undefined;
  for (let depth = 1; depth <= MAX_CAUSE_DEPTH && cause !== undefined && cause !== null; depth++) {
    parts.push(describeThrown(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return { error: maskSecrets(parts.join(': caused by: ')) };
}

function describeThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return thrown.message === '' ? thrown.name : thrown.message;
    if (typeof thrown === 'string') return thrown;
    if (typeof thrown === 'object' && thrown !== null) {
      const message = (thrown as { message?: unknown }).message;
      if (typeof message === 'string') return message;
      // Typed as string, but undefined at run time when a toJSON() returns undefined.
      const json = JSON.stringify(redactValue(thrown)) as string | undefined;
      return json ?? 'unknown error';
    }
    return String(thrown);
  } catch {
    return 'unprintable error';
  }
}
