// node-cron in the bundle (scripts/cron-utc-without-icu.mjs): a UTC schedule (the member's
// heartbeat) never constructs an Intl.DateTimeFormat, whose first use loads ICU's data (~8 MiB
// of RSS, issue 31), and matches the same times as node-cron as published.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { cronUtcWithoutIcu } from '../../scripts/cron-utc-without-icu.mjs';

const run = promisify(execFile);
const tmp = mkdtempSync(path.join(tmpdir(), 'bundle-cron-utc-'));
after(() => { rmSync(tmp, { recursive: true, force: true }); });

// node-cron's TimeMatcher and LocalizedTime (what its scheduler asks), by their file: the
// package exports neither. Intl.DateTimeFormat is counted from before node-cron is evaluated.
const shared = path.join(import.meta.dirname, '..', '..', 'node_modules', 'node-cron', 'dist', '_shared.js');
const entry = `const RealDTF = Intl.DateTimeFormat;
let constructed = 0;
globalThis.Intl.DateTimeFormat = function DateTimeFormat(...args) { constructed += 1; return new RealDTF(...args); };
const { T: TimeMatcher, L: LocalizedTime } = await import(${JSON.stringify(shared)});
const expressions = ['*/10 * * * * *', '0 */5 * * * *', '30 0 0 * * *', '0 0 0 29 2 *', '0 0 12 * * 1', '0 59 23 L * *'];
const dates = [Date.UTC(2026, 11, 4, 21, 5, 7, 123), Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2028, 1, 28, 23, 59, 50),
  Date.UTC(2027, 2, 28, 0, 59, 59), Date.UTC(2026, 9, 25, 1, 0, 0), Date.UTC(2000, 0, 1, 0, 0, 0), Date.UTC(2026, 6, 6, 12, 0, 0)];
const next = [];
for (const e of expressions) {
  const m = new TimeMatcher(e, 'UTC');
  for (const d of dates) next.push(e + ' after ' + new Date(d).toISOString() + ': ' + m.getNextMatch(new Date(d)).toISOString() + ' ' + m.match(new Date(d)));
}
const parts = dates.map((d) => { const t = new LocalizedTime(new Date(d), 'UTC'); return JSON.stringify({ ...t.getParts() }) + ' ' + t.toISO(); });
const utcConstructed = constructed;
new TimeMatcher('0 0 12 * * *', 'Europe/Paris').getNextMatch(new Date(dates[0]));
console.log(JSON.stringify({ next, parts, utcConstructed, otherZoneConstructed: constructed - utcConstructed }));
`;

interface Answer { next: string[]; parts: string[]; utcConstructed: number; otherZoneConstructed: number }

async function bundleAndRun(plugins: Plugin[]): Promise<Answer> {
  const dir = mkdtempSync(path.join(tmp, 'b-'));
  writeFileSync(path.join(dir, 'entry.mjs'), entry);
  await build({ entryPoints: [path.join(dir, 'entry.mjs')], outfile: path.join(dir, 'out.mjs'), bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', plugins });
  // TZ: the host's zone must not change what a UTC schedule answers.
  const { stdout } = await run(process.execPath, [path.join(dir, 'out.mjs')], { env: { ...process.env, NODE_OPTIONS: '', TZ: 'America/New_York' } });
  return JSON.parse(stdout) as Answer;
}

void describe('node-cron in the bundle', () => {
  void it('reads a UTC schedule\'s times without Intl.DateTimeFormat, and matches the times node-cron as published matches', async () => {
    const [patched, published] = await Promise.all([bundleAndRun([cronUtcWithoutIcu]), bundleAndRun([])]);
    assert.equal(patched.utcConstructed, 0);
    assert.deepEqual(patched.next, published.next);
    assert.deepEqual(patched.parts, published.parts);
    // Another time zone still goes to Intl.
    assert.ok(patched.otherZoneConstructed > 0);
  });

  void it('(what it prevents: as published, a UTC schedule constructs Intl.DateTimeFormat)', async () => {
    assert.ok((await bundleAndRun([])).utcConstructed > 0);
  });
});
