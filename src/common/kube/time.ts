// Times as Kubernetes writes them in conditions and annotations (RFC 3339, whole seconds, UTC),
// and the one reading of a Kubernetes or Antrea timestamp, for every role.
//
// On the wire times are RFC 3339: metav1.Time with whole seconds (also Antrea's touch-ts),
// MicroTime with six fractional digits, our own stamps with three. client-node turns some of
// them into Date objects (its typed clients and informers), while objects fetched as plain JSON
// keep the strings, so the same field can arrive either way (see the note on `metadata` in the
// CRD types).
//
// Strings must match the RFC 3339 grammar before Date.parse sees them: Date.parse also takes
// forms such as `2024-01-01` or a time without a zone (read in the local zone), which no
// Kubernetes field holds and which would make one clock reading depend on the machine.

/** `2026-12-02T10:00:05Z`: milliseconds dropped, as metav1.Time serialises. */
export function rfc3339(date: Date | number): string {
  return (typeof date === 'number' ? new Date(date) : date).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * Milliseconds since the epoch of an RFC 3339 string (fractional seconds optional, any count
 * of digits, cut to milliseconds; `Z` or a `±hh:mm` offset) or of a valid Date; undefined for
 * anything else: absent, empty, malformed, fields Date.parse refuses (month 13, second 60), or
 * another type.
 */
export function parseTimestamp(raw: unknown): number | undefined {
  const ms = raw instanceof Date ? raw.getTime() : typeof raw === 'string' && RFC3339.test(raw) ? Date.parse(raw) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}
