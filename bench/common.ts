// What every benchmark needs: the compiled agent (users run dist/, so benchmarks do too) and a
// bounded pool of concurrent calls.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '..');
export const agentEntry = path.join(repoRoot, 'dist', 'cli', 'main.js');

/** Compiles dist/ (tsc -p tsconfig.build.json); throws when that fails. */
export function buildDist(): void {
  const built = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: repoRoot, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`the build failed (exit ${String(built.status)}): the benchmark runs ${agentEntry}`);
}

/** Runs `fn` over `items` with at most `width` calls in flight. */
export async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  }));
}
