// Times as Kubernetes writes them in conditions and annotations: RFC 3339, whole seconds, UTC.

/** `2026-12-02T10:00:05Z`: milliseconds dropped, as metav1.Time serialises. */
export function rfc3339(date: Date | number): string {
  return (typeof date === 'number' ? new Date(date) : date).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
