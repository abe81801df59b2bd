// "did you mean" hints for unknown flags and file keys: the closest known name, if any is close.

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

export function suggest(name: string, candidates: readonly string[], prefix = ''): string {
  const squash = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const best = candidates
    .map((candidate) => ({ candidate, distance: squash(candidate) === squash(name) ? 0 : levenshtein(name, candidate) }))
    .filter(({ distance }) => distance <= 2)
    .sort((x, y) => x.distance - y.distance)[0];
  return best === undefined ? '' : `; did you mean ${prefix}${best.candidate}?`;
}
