// Bounding text that ends up in a status message, an Event or a log line, whatever its source
// (a peer's list of thousands of ports, a leader's verdict): cut at a character boundary, never
// in the middle of a UTF-8 sequence, and say how much was left out. Pure.

/** The UTF-8 size of `text` in bytes. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * `text` when it fits in `maxBytes` of UTF-8, else its longest prefix (whole code points) that
 * fits together with the suffix `… and N more characters`. The result never exceeds `maxBytes`.
 */
export function boundText(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  const codePoints = Array.from(text);
  // The suffix's own size depends on N; the longest N (every character left out) bounds it.
  const suffixOf = (left: number) => `… and ${String(left)} more characters`;
  const room = Math.max(0, maxBytes - utf8Bytes(suffixOf(codePoints.length)));
  let used = 0;
  let kept = 0;
  for (const c of codePoints) {
    const size = utf8Bytes(c);
    if (used + size > room) break;
    used += size;
    kept++;
  }
  const out = codePoints.slice(0, kept).join('') + suffixOf(codePoints.length - kept);
  // A limit smaller than the suffix itself: the bare prefix of the suffix, still within bounds.
  return utf8Bytes(out) <= maxBytes ? out : Buffer.from(out, 'utf8').subarray(0, maxBytes).toString('utf8').replace(/\uFFFD+$/, '');
}

/**
 * The first `max` of `items` joined with `separator`, and `… and N more <what>` when some were
 * left out, so one list cannot take a whole message.
 */
export function boundList(items: readonly string[], max: number, what: string, separator = ', '): string {
  if (items.length <= max) return items.join(separator);
  return `${items.slice(0, max).join(separator)}${separator}… and ${String(items.length - max)} more ${what}`;
}
