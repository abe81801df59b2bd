// The recorder's caches are Maps kept in least-recently-used order, so expiry and the size cap
// only ever look at the front.

/** Re-inserts so that Map order is least-recently-used first. */
export function touch<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
}
