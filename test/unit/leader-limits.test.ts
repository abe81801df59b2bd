// What one member can make the leader hold and write (issue 29, item 9): the per-member export
// cap (ExportCap) and the per-import size budget (planWithinBudget). Pure; no API server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceExport } from '../../src/common/api/antrea.js';
import { planImport } from '../../src/leader/decisions/aggregate.js';
import { ExportCap, REASON_TOO_MANY_EXPORTS } from '../../src/leader/decisions/export-cap.js';
import { importBytes, planWithinBudget, REASON_IMPORT_TOO_LARGE } from '../../src/leader/decisions/import-budget.js';

const T0 = Date.parse('2026-12-03T10:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString() as unknown as Date;

function labelIdentity(cluster: string, n: number, createdMs: number): ResourceExport {
  return { metadata: { name: `${cluster}-${n.toString(16).padStart(16, '0')}`, creationTimestamp: at(createdMs), labels: { sourceClusterID: cluster } }, spec: { clusterID: cluster, kind: 'LabelIdentity' } };
}

function endpoints(cluster: string, createdMs: number, addresses: number): ResourceExport {
  return {
    metadata: { name: `${cluster}-ns-web-endpoints`, creationTimestamp: at(createdMs), labels: { sourceClusterID: cluster } },
    spec: { clusterID: cluster, name: 'web', namespace: 'ns', kind: 'Endpoints', endpoints: { subsets: [{ addresses: Array.from({ length: addresses }, (_, i) => ({ ip: `10.${String(createdMs % 200)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}` })), ports: [{ port: 80 }] }] } },
  };
}

function service(cluster: string, createdMs: number): ResourceExport {
  return {
    metadata: { name: `${cluster}-ns-web-service`, creationTimestamp: at(createdMs), labels: { sourceClusterID: cluster } },
    spec: { clusterID: cluster, name: 'web', namespace: 'ns', kind: 'Service', service: { serviceSpec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } },
  };
}

describe('ExportCap: each member\'s oldest exports, up to the limit', () => {
  it('the exports beyond are the newest, whatever order the events come in, and only they', () => {
    const exports = Array.from({ length: 8 }, (_, i) => labelIdentity('east', i, i * 1000));
    const forward = new ExportCap(5);
    const backward = new ExportCap(5);
    for (const re of exports) forward.update(re, false);
    for (const re of [...exports].reverse()) backward.update(re, false);
    const beyond = (cap: ExportCap) => exports.filter((re) => cap.beyond(re.metadata?.name ?? '')).map((re) => re.metadata?.name);
    assert.deepEqual(beyond(forward), exports.slice(5).map((re) => re.metadata?.name));
    assert.deepEqual(beyond(backward), beyond(forward), 'the same ones, whatever the order (a restart\'s list)');
    // Another member is not affected by east's count.
    forward.update(labelIdentity('west', 1, 99_000), false);
    assert.equal(forward.beyond('west-0000000000000001'), false);
    // An update of a known export changes nothing; the verdict names the member, the count and the setting.
    assert.deepEqual(forward.update(exports[7] ?? assert.fail(), false), []);
    const verdict = forward.verdict(exports[7] ?? assert.fail());
    assert.equal(!verdict.ok && verdict.reason, REASON_TOO_MANY_EXPORTS);
    assert.match(!verdict.ok ? verdict.message : '', /cluster east has 8 exports; the leader takes in its 5 oldest \(leader\.maxExportsPerMember\)/);
  });

  it('says which export crossed the cap when an older one goes or a late older one comes', () => {
    const cap = new ExportCap(2);
    const [a, b, c] = [labelIdentity('east', 1, 1000), labelIdentity('east', 2, 2000), labelIdentity('east', 3, 3000)];
    for (const re of [a, b, c]) cap.update(re ?? assert.fail(), false);
    assert.equal(cap.beyond(c?.metadata?.name ?? ''), true);
    assert.deepEqual(cap.update(a ?? assert.fail(), true), [c?.metadata?.name], 'a went: c is within now');
    assert.equal(cap.beyond(c?.metadata?.name ?? ''), false);
    assert.deepEqual(cap.update(labelIdentity('east', 0, 0), false), [c?.metadata?.name], 'an older one arrived: c is beyond again');
    assert.equal(cap.beyond(c?.metadata?.name ?? ''), true);
  });
});

describe('planWithinBudget: an import never grows past the budget; the newest contributors are left out', () => {
  it('keeps the older contributors, refuses the newest with a verdict naming the budget', () => {
    const feeding = [service('a', 0), service('b', 1000), service('c', 2000), endpoints('a', 0, 100), endpoints('b', 1000, 100), endpoints('c', 2000, 20_000)];
    const whole = planImport('ns-web-endpoints', feeding);
    const budget = 100_000;
    assert.ok(importBytes(whole) > budget, 'c alone pushes it over');
    const { plan, refused } = planWithinBudget('ns-web-endpoints', feeding, budget);
    assert.ok(importBytes(plan) <= budget);
    assert.deepEqual([...refused.keys()], ['c-ns-web-endpoints']);
    const verdict = refused.get('c-ns-web-endpoints');
    assert.equal(!verdict?.ok && verdict?.reason, REASON_IMPORT_TOO_LARGE);
    assert.match(!verdict?.ok ? verdict?.message ?? '' : '', /over the leader's budget of 100000 bytes \(leader\.maxImportBytes\): this export, the newest contributor, is not imported; the 2 older ones are/);
    assert.deepEqual(plan.annotations, { 'multicluster.clusterset-agent.io/endpoint-sources': 'a=1,b=1' });
    // Within the budget: nothing refused, the plan is planImport's.
    assert.deepEqual(planWithinBudget('ns-web-endpoints', feeding.slice(0, 5), budget), { plan: planImport('ns-web-endpoints', feeding.slice(0, 5)), refused: new Map() });
  });
});
