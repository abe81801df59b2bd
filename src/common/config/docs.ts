// Documentation derived from the configuration schema: docs/configuration.md's table and
// the `config` section of the Helm chart's values.schema.json. `npm run config:docs` writes
// them (scripts/config-docs.ts); test/unit/config-docs.test.ts fails when they are stale.
import { z } from 'zod';
import { LEAVES, type Leaf } from './schema.js';

export const CONFIG_DOC_PATH = 'docs/configuration.md';
export const VALUES_SCHEMA_PATH = 'charts/clusterset-agent/values.schema.json';
export const GENERATE_COMMAND = 'npm run config:docs';

const TABLE_BEGIN = `<!-- config-table: generated from src/common/config/schema.ts by \`${GENERATE_COMMAND}\`; edit the schema, not this table -->`;
const TABLE_END = '<!-- end of config-table -->';

function code(text: string): string {
  return `\`${text}\``;
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function readmeDefault(leaf: Leaf): string {
  if (leaf.meta.defaultText !== undefined) return leaf.meta.defaultText;
  const value = leaf.default;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map((item) => code(String(item))).join(', ');
  return typeof value === 'string' ? code(value) : String(value);
}

function readmeSources(leaf: Leaf): string {
  const flag = leaf.meta.flag === undefined ? '' : `${code(`--${leaf.meta.flag}`)} / `;
  const fallback = leaf.meta.fallbackEnv === undefined ? '' : ` (${code(leaf.meta.fallbackEnv)})`;
  const list = leaf.kind === 'stringList' ? ' (comma list)' : '';
  return `${flag}${code(leaf.meta.env)}${fallback}${list}`;
}

/** docs/configuration.md's configuration table, one row per setting, between its markers. */
export function renderConfigTable(): string {
  const rows = LEAVES.map((leaf) => `| ${code(leaf.path)} | ${cell(readmeSources(leaf))} | ${cell(readmeDefault(leaf))} | ${cell(leaf.meta.notes ?? leaf.meta.description)} |`);
  return [TABLE_BEGIN, '| Setting | Flag / env | Default | Notes |', '|---|---|---|---|', ...rows, TABLE_END].join('\n');
}

/** `readme` with its configuration table regenerated. Throws when the markers are missing. */
export function updateConfigDoc(readme: string): string {
  const begin = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END);
  if (begin === -1 || end === -1 || end < begin) {
    throw new Error(`${CONFIG_DOC_PATH} has no configuration table markers; put these two lines where the table goes:\n${TABLE_BEGIN}\n${TABLE_END}`);
  }
  return `${readme.slice(0, begin)}${renderConfigTable()}${readme.slice(end + TABLE_END.length)}`;
}

type Json = Record<string, unknown>;

// JSON schema keywords first in this order, the rest as zod emits them.
const KEY_ORDER = ['type', 'description', 'default'];

/** Drops zod's safe-integer bounds, types integer enums as integers and orders keys for reading. */
function tidy(schema: Json): Json {
  const out: Json = {};
  const keys = [...KEY_ORDER.filter((k) => k in schema), ...Object.keys(schema).filter((k) => !KEY_ORDER.includes(k))];
  for (const key of keys) {
    const value = schema[key];
    if (key === '$schema') continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    // RegExp#source escapes '/', which JSON schema patterns need not do.
    if (key === 'pattern' && typeof value === 'string') {
      out[key] = value.replace(/(?<!\\)((?:\\\\)*)\\\//g, '$1/');
      continue;
    }
    out[key] = typeof value === 'object' && value !== null && !Array.isArray(value) ? tidy(value as Json) : value;
  }
  const values = out['enum'];
  if (out['type'] === 'number' && Array.isArray(values) && values.every((v) => Number.isSafeInteger(v))) out['type'] = 'integer';
  return out;
}

function leafJsonSchema(leaf: Leaf): Json {
  const generated = z.toJSONSchema(leaf.schema, { target: 'draft-07', io: 'input' }) as Json;
  return tidy({ ...generated, description: leaf.meta.description });
}

function section(properties: Json, description?: string): Json {
  return { type: 'object', ...(description === undefined ? {} : { description }), additionalProperties: false, properties };
}

/**
 * The `config` section of values.schema.json: the settings the chart passes through to the
 * agent's config file as they are, closed at every level so a typo fails `helm install`.
 */
export function chartConfigSchema(): Json {
  const root: Json = {};
  for (const leaf of LEAVES.filter((l) => l.meta.notInChart === undefined)) {
    const segments = leaf.path.split('.');
    let properties = root;
    for (const segment of segments.slice(0, -1)) {
      properties[segment] ??= section({});
      properties = (properties[segment] as { properties: Json }).properties;
    }
    properties[segments[segments.length - 1] ?? leaf.path] = leafJsonSchema(leaf);
  }
  const excluded = new Map<string, string[]>();
  for (const leaf of LEAVES) {
    if (leaf.meta.notInChart !== undefined) excluded.set(leaf.meta.notInChart, [...(excluded.get(leaf.meta.notInChart) ?? []), leaf.path]);
  }
  const left = [...excluded].map(([reason, paths]) => `${paths.join(', ')} (${reason})`).join('; ');
  return section(root, `The agent's config file, generated from src/common/config/schema.ts by ${GENERATE_COMMAND}. Not set here, as the chart renders or leaves them: ${left}.`);
}

/** values.schema.json's text with its `config` section regenerated; the rest is kept as it is. */
export function updateValuesSchema(text: string): string {
  const schema = JSON.parse(text) as { properties?: Json };
  if (schema.properties === undefined) throw new Error(`${VALUES_SCHEMA_PATH} has no top-level properties`);
  schema.properties['config'] = chartConfigSchema();
  return `${JSON.stringify(schema, null, 2)}\n`;
}
