// What a Kubernetes API server (and Go's `omitempty`) makes of a value: null, '', and empty
// lists and maps are dropped, so they are never differences worth a write.
import { isDeepStrictEqual } from 'node:util';

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` without its empty parts; undefined when nothing is left. List positions are kept (an emptied element becomes null). */
export function canonical(value: unknown): unknown {
  if (value === null || value === undefined || value === '') return undefined;
  if (Array.isArray(value)) {
    const items = value.map((v) => canonical(v) ?? null);
    return items.length === 0 ? undefined : items;
  }
  if (isPlainRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const c = canonical(v);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value;
}

/** Equal once both are canonical. */
export function sameCanonical(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(canonical(a), canonical(b));
}
