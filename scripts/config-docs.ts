// Regenerates the configuration docs from src/common/config/schema.ts: docs/configuration.md's
// table and the `config` section of the chart's values.schema.json.
//   npm run config:docs            rewrite both files
//   npm run config:docs -- --check exit 1, naming the stale files, instead of writing
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_DOC_PATH, updateConfigDoc, updateValuesSchema, VALUES_SCHEMA_PATH } from '../src/common/config/docs.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [file, update] of [[CONFIG_DOC_PATH, updateConfigDoc], [VALUES_SCHEMA_PATH, updateValuesSchema]] as const) {
  const full = path.join(root, file);
  const before = readFileSync(full, 'utf8');
  const after = update(before);
  if (after === before) continue;
  stale.push(file);
  if (!check) writeFileSync(full, after);
}
if (check && stale.length > 0) {
  console.error(`stale, run npm run config:docs: ${stale.join(', ')}`);
  process.exit(1);
}
console.log(stale.length === 0 ? 'configuration docs are up to date' : `rewrote ${stale.join(', ')}`);
