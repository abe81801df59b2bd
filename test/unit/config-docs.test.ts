// docs/configuration.md's table and the chart's values.schema.json `config` section are
// generated from src/common/config/schema.ts: editing the schema without `npm run config:docs` fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONFIG_ENV_VARS, CONFIG_FLAGS } from '../../src/common/config/config.js';
import { chartConfigSchema, CONFIG_DOC_PATH, renderConfigTable, updateConfigDoc, updateValuesSchema, VALUES_SCHEMA_PATH } from '../../src/common/config/docs.js';
import { LEAVES } from '../../src/common/config/schema.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');
const STALE = 'stale: run `npm run config:docs` and commit the result';

describe('generated configuration docs', () => {
  it('docs/configuration.md holds the table the schema generates', () => {
    const readme = read(CONFIG_DOC_PATH);
    assert.ok(readme.includes(renderConfigTable()), `${CONFIG_DOC_PATH}: configuration table ${STALE}`);
    assert.equal(updateConfigDoc(readme), readme, `${CONFIG_DOC_PATH} ${STALE}`);
  });

  it('values.schema.json holds the config section the schema generates', () => {
    const text = read(VALUES_SCHEMA_PATH);
    const onDisk = (JSON.parse(text) as { properties: Record<string, unknown> }).properties['config'];
    assert.deepEqual(onDisk, chartConfigSchema(), `${VALUES_SCHEMA_PATH}: config section ${STALE}`);
    assert.equal(updateValuesSchema(text), text, `${VALUES_SCHEMA_PATH} ${STALE}`);
  });

  it('notices a hand edit of either file', () => {
    const readme = read(CONFIG_DOC_PATH);
    const edited = readme.replace('| `imports.maxObjectsPerLeader` | `CSA_IMPORT_MAX_OBJECTS_PER_LEADER` | 5000 |', '| `imports.maxObjectsPerLeader` | `CSA_IMPORT_MAX_OBJECTS_PER_LEADER` | 4000 |');
    assert.notEqual(edited, readme, 'the row to edit is in docs/configuration.md');
    assert.equal(updateConfigDoc(edited), readme);
    const schema = JSON.parse(read(VALUES_SCHEMA_PATH)) as { properties: { config: { properties: { heartbeat: { properties: { failureThreshold: { minimum: number } } } } } } };
    schema.properties.config.properties.heartbeat.properties.failureThreshold.minimum = 0;
    const editedSchema = `${JSON.stringify(schema, null, 2)}\n`;
    assert.equal(updateValuesSchema(editedSchema), read(VALUES_SCHEMA_PATH));
  });

  it('refuses a configuration doc without the table markers instead of appending a table somewhere', () => {
    assert.throws(() => updateConfigDoc('# no table here\n'), /no configuration table markers/);
  });

  it('documents every setting with its environment variable, flag and default', () => {
    const table = renderConfigTable();
    for (const leaf of LEAVES) assert.ok(table.includes(`| \`${leaf.path}\` |`), leaf.path);
    for (const name of CONFIG_ENV_VARS.filter((n) => n !== 'CSA_CONFIG')) assert.ok(table.includes(`\`${name}\``), name);
    for (const flag of CONFIG_FLAGS.filter((f) => f !== 'config')) assert.ok(table.includes(`\`--${flag}\``), flag);
    assert.match(table, /\| `heartbeat\.intervalSeconds` \| `--heartbeat-interval` \/ `CSA_HEARTBEAT_INTERVAL` \| 10 \|/);
    assert.match(table, /\| `exports\.podCIDRs` \| `CSA_EXPORT_POD_CIDRS` \(comma list\) \| none \|/);
  });

  it('gives the chart every setting it does not render itself, closed at every level', () => {
    const schema = chartConfigSchema() as { additionalProperties: boolean; properties: Record<string, { additionalProperties?: boolean; properties?: Record<string, unknown> }> };
    assert.equal(schema.additionalProperties, false);
    const inChart = LEAVES.filter((leaf) => leaf.meta.notInChart === undefined).map((leaf) => leaf.path);
    const found: string[] = [];
    for (const [key, node] of Object.entries(schema.properties)) {
      if (node.properties === undefined) found.push(key);
      else {
        assert.equal(node.additionalProperties, false, key);
        for (const child of Object.keys(node.properties)) found.push(`${key}.${child}`);
      }
    }
    assert.deepEqual(found, inChart);
    // The chart renders these from other values, and its test expects them refused under config.
    for (const rendered of ['namespace', 'health', 'metrics']) assert.ok(!(rendered in schema.properties), rendered);
    assert.ok(!found.includes('imports.enableLabelIdentity'));
  });

  it('turns the schema into plain draft-07 keywords', () => {
    const config = chartConfigSchema() as { properties: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    const heartbeat = config.properties['heartbeat']?.properties;
    assert.deepEqual(heartbeat?.['failureThreshold'], {
      type: 'integer', description: "Consecutive failed heartbeats before the ClusterSet's Ready condition turns False.", default: 3, minimum: 1,
    });
    assert.equal(heartbeat?.['intervalSeconds']?.['type'], 'integer', 'an integer enum is an integer');
    assert.deepEqual(heartbeat?.['requestTimeoutSeconds']?.['exclusiveMinimum'], 0);
    const podCIDRs = config.properties['exports']?.properties['podCIDRs'];
    assert.deepEqual(podCIDRs?.['items'], { type: 'string', pattern: '^[0-9A-Fa-f:.]+/[0-9]{1,3}$' });
    assert.equal(podCIDRs?.['uniqueItems'], true);
  });
});
