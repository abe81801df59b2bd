// KEP-1645 exported labels and annotations (issue 27 item 4), each pure step on its own: the one
// rule set, the exporter's Service RE, the leader's aggregation and books, the member's firewall
// and the ServiceImport metadata the importer writes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceExport, ResourceImport } from '../../src/common/api/antrea.js';
import {
  EXPORTED_ANNOTATIONS_ANNOTATION, EXPORTED_KEYS_ANNOTATION, EXPORTED_LABELS_ANNOTATION, exportedKeyProblem, exportedMapProblem,
  MAX_EXPORTED_ENTRIES, readExportedMetadata,
} from '../../src/common/api/exported-metadata.js';
import type { ServiceExport } from '../../src/common/api/mcs.js';
import { planImport } from '../../src/leader/decisions/aggregate.js';
import { decideImportWrite, importBody } from '../../src/leader/decisions/books.js';
import { mergeForUpdate as mergeExport, sameExport, serviceExportPlan } from '../../src/exporter/service-export.js';
import { checkImport } from '../../src/importer/policy.js';
import { desiredForImport, mergeForUpdate, semanticallyEqual, type DesiredObject } from '../../src/importer/rules.js';
import { HOSTILE_OWNER, HOSTILE_POLICY } from '../fixtures/hostile-imports.js';

const NS = 'antrea-multicluster';

function exportedAnnotations(labels?: Record<string, string>, annotations?: Record<string, string>): Record<string, string> {
  return {
    ...(labels && { [EXPORTED_LABELS_ANNOTATION]: JSON.stringify(labels) }),
    ...(annotations && { [EXPORTED_ANNOTATIONS_ANNOTATION]: JSON.stringify(annotations) }),
  };
}

function serviceRE(cluster: string, created: string, annotations: Record<string, string> = {}): ResourceExport {
  return {
    metadata: {
      name: `${cluster}-team-a-web-service`, namespace: NS, creationTimestamp: created as unknown as Date, annotations,
      labels: { sourceClusterID: cluster, sourceKind: 'Service', sourceName: 'web', sourceNamespace: 'team-a' },
    },
    spec: { clusterID: cluster, name: 'web', namespace: 'team-a', kind: 'Service', service: { serviceSpec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } },
  };
}

function serviceImportRI(annotations: Record<string, string>): ResourceImport {
  return {
    apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImport',
    metadata: { name: 'team-a-web-service', namespace: HOSTILE_OWNER.leaderNamespace, annotations },
    spec: { name: 'web', namespace: 'team-a', kind: 'ServiceImport', serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } },
  };
}

function desiredServiceImport(ri: ResourceImport): DesiredObject {
  const plan = desiredForImport(ri, HOSTILE_OWNER, { enableLabelIdentity: false });
  assert.equal(plan.kind, 'apply');
  const si = plan.kind === 'apply' ? plan.objects.find((o) => o.kind === 'ServiceImport') : undefined;
  assert.ok(si);
  return si;
}

function metaOf(body: Record<string, unknown>): { labels: Record<string, string>; annotations: Record<string, string> } {
  return body['metadata'] as { labels: Record<string, string>; annotations: Record<string, string> };
}

describe('exported labels and annotations: the rules', () => {
  it('accepts qualified names, user prefixes and app.kubernetes.io; refuses Kubernetes\', the MCS API\'s, Antrea\'s and the agent\'s prefixes', () => {
    for (const ok of ['dummy-label', 'example.com/team', 'app.kubernetes.io/name', 'a_b.c']) assert.equal(exportedKeyProblem(ok), undefined, ok);
    for (const bad of ['kubernetes.io/x', 'node-role.kubernetes.io/x', 'k8s.io/y', 'multicluster.x-k8s.io/z', 'multicluster.antrea.io/imported-service',
      'multicluster.clusterset-agent.io/leader', 'app.kubernetes.io/managed-by', '-x', 'a/b/c', 'UPPER_/x', '']) {
      assert.match(exportedKeyProblem(bad) ?? 'accepted', /reserved|agent's own|qualified name|prefix/, bad);
    }
  });

  it('bounds the entries and the bytes, and label values are label values', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_EXPORTED_ENTRIES + 1 }, (_, i) => [`k${String(i)}`, 'v']));
    assert.match(exportedMapProblem('labels', many) ?? '', /has 65 entries, more than 64/);
    assert.match(exportedMapProblem('annotations', { big: 'x'.repeat(20_000) }) ?? '', /bytes of keys and values, more than 16384/);
    assert.match(exportedMapProblem('labels', { team: 'not a label value' }) ?? '', /is not a label value/);
    assert.equal(exportedMapProblem('annotations', { note: 'any text, even with spaces' }), undefined);
    assert.match(exportedMapProblem('labels', ['a']) ?? '', /is not a map/);
  });

  it('reading a peer\'s annotation: bad JSON, a non-string value or a reserved key is a refusal, never a throw', () => {
    assert.deepEqual(readExportedMetadata(undefined), { labels: {}, annotations: {} });
    assert.match((readExportedMetadata({ [EXPORTED_LABELS_ANNOTATION]: '{not json' }) as { problem: string }).problem, /is not JSON/);
    assert.match((readExportedMetadata({ [EXPORTED_LABELS_ANNOTATION]: '{"a":1}' }) as { problem: string }).problem, /is not a string/);
    assert.match((readExportedMetadata({ [EXPORTED_ANNOTATIONS_ANNOTATION]: '{"kubernetes.io/x":"y"}' }) as { problem: string }).problem, /reserved prefix/);
    assert.match((readExportedMetadata({ [EXPORTED_LABELS_ANNOTATION]: 'x'.repeat(200_000) }) as { problem: string }).problem, /more than any map/);
  });
});

describe('exported labels and annotations: the exporter', () => {
  const svcExport = (spec: ServiceExport['spec']): ServiceExport => ({ metadata: { name: 'nginx', namespace: 'default' }, ...(spec && { spec }) });
  const input = (se: ServiceExport) => ({
    localClusterID: 'east', leaderNamespace: NS, serviceExport: se, endpointIPType: 'ClusterIP' as const,
    service: { metadata: { name: 'nginx', namespace: 'default', labels: { own: 'label' } }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    endpointSlices: [{ metadata: { namespace: 'default', labels: { 'kubernetes.io/service-name': 'nginx' } }, addressType: 'IPv4', endpoints: [{ addresses: ['10.244.1.5'] }] }],
  });

  it('puts them on the Service RE as sorted JSON (not on the Endpoints RE); none: no annotation', () => {
    const plan = serviceExportPlan(input(svcExport({ exportedLabels: { z: '1', a: '2' }, exportedAnnotations: { note: 'hi' } })));
    assert.equal(plan.valid.status, 'True');
    assert.deepEqual(plan.exports[0]?.metadata?.annotations, { [EXPORTED_LABELS_ANNOTATION]: '{"a":"2","z":"1"}', [EXPORTED_ANNOTATIONS_ANNOTATION]: '{"note":"hi"}' });
    assert.equal(plan.exports[1]?.metadata?.annotations, undefined);
    assert.equal(serviceExportPlan(input(svcExport(undefined))).exports[0]?.metadata?.annotations, undefined);
  });

  it('refuses a ServiceExport whose exported metadata breaks the rules, saying why in its Valid condition', () => {
    const plan = serviceExportPlan(input(svcExport({ exportedLabels: { 'kubernetes.io/x': 'y' } })));
    assert.deepEqual(plan.exports, []);
    assert.equal(plan.valid.reason, 'InvalidExportedMetadata');
    assert.match(plan.valid.message, /exportedLabels: key "kubernetes.io\/x" has a reserved prefix/);
  });

  it('a change of them is a change of the RE; an update removes what is no longer exported and keeps foreign annotations', () => {
    const before = serviceExportPlan(input(svcExport({ exportedLabels: { a: '1' } }))).exports[0];
    const after = serviceExportPlan(input(svcExport({}))).exports[0];
    assert.ok(before && after);
    assert.equal(sameExport(before, before), true);
    assert.equal(sameExport(after, before), false, 'a label no longer exported is a difference');
    const live = { ...before, metadata: { ...before.metadata, annotations: { ...before.metadata?.annotations, foreign: 'kept' } } };
    assert.deepEqual(mergeExport(after, live).metadata?.annotations, { foreign: 'kept' });
  });
});

describe('exported labels and annotations: the leader aggregates them', () => {
  it('one exporter: its labels and annotations travel on the ServiceImport RI', () => {
    const plan = planImport('team-a-web-service', [serviceRE('east', '2026-01-01T00:00:00Z', exportedAnnotations({ team: 'a' }, { note: 'x' }))]);
    assert.deepEqual(plan.annotations, exportedAnnotations({ team: 'a' }, { note: 'x' }));
    assert.deepEqual([...plan.verdicts.values()], [{ ok: true }]);
  });

  it('two exporters that differ: the oldest export\'s values, and a conflict on EVERY exporter naming what differs', () => {
    const older = serviceRE('west', '2026-01-01T00:00:00Z', exportedAnnotations({ 'dummy-label': 'true' }, { 'dummy-annotation': 'true' }));
    const newer = serviceRE('east', '2026-01-01T00:00:05Z', exportedAnnotations({ 'dummy-label2': 'true' }, { 'dummy-annotation2': 'true' }));
    const plan = planImport('team-a-web-service', [newer, older]);
    assert.deepEqual(plan.annotations, exportedAnnotations({ 'dummy-label': 'true' }, { 'dummy-annotation': 'true' }));
    for (const name of ['west-team-a-web-service', 'east-team-a-web-service']) {
      const v = plan.verdicts.get(name);
      assert.ok(v && !v.ok, name);
      assert.equal(v.reason, 'ConvergeFailure');
      assert.match(v.message, /exported labels differ \(cluster west: \{"dummy-label":"true"\}; cluster east: \{"dummy-label2":"true"\}\); imported: \{"dummy-label":"true"\}/);
      assert.match(v.message, /exported annotations differ/);
    }
  });

  it('exporters that agree (keys in any order) are no conflict; one with none against one with some is', () => {
    const a = serviceRE('east', '2026-01-01T00:00:00Z', { [EXPORTED_LABELS_ANNOTATION]: '{"a":"1","b":"2"}' });
    const b = serviceRE('west', '2026-01-01T00:00:01Z', { [EXPORTED_LABELS_ANNOTATION]: '{"b":"2","a":"1"}' });
    assert.deepEqual([...planImport('team-a-web-service', [a, b]).verdicts.values()], [{ ok: true }, { ok: true }]);
    const bare = serviceRE('west', '2026-01-01T00:00:01Z');
    const plan = planImport('team-a-web-service', [a, bare]);
    assert.equal([...plan.verdicts.values()].filter((v) => !v.ok).length, 2);
    assert.deepEqual(plan.annotations, { [EXPORTED_LABELS_ANNOTATION]: '{"a":"1","b":"2"}' });
  });

  it('a peer\'s malformed or reserved value refuses that export alone; the oldest valid one is imported', () => {
    const bad = serviceRE('east', '2026-01-01T00:00:00Z', { [EXPORTED_LABELS_ANNOTATION]: '{"multicluster.clusterset-agent.io/leader":"evil"}' });
    const good = serviceRE('west', '2026-01-01T00:00:01Z', exportedAnnotations({ team: 'a' }));
    const plan = planImport('team-a-web-service', [bad, good]);
    assert.deepEqual(plan.annotations, exportedAnnotations({ team: 'a' }));
    const refused = plan.verdicts.get('east-team-a-web-service');
    assert.ok(refused && !refused.ok);
    assert.equal(refused.reason, 'InvalidExportedMetadata');
    assert.match(refused.message, /reserved prefix/);
    assert.deepEqual(plan.verdicts.get('west-team-a-web-service'), { ok: true });
    assert.ok(plan.spec, 'the Service is imported all the same');
    assert.doesNotThrow(() => planImport('team-a-web-service', [serviceRE('east', '2026-01-01T00:00:00Z', { [EXPORTED_LABELS_ANNOTATION]: '\u0000{' })]));
  });

  it('the books: an annotation no longer exported is a write, and the written import no longer has it', () => {
    const plan = planImport('team-a-web-service', [serviceRE('east', '2026-01-01T00:00:00Z', exportedAnnotations({ team: 'a' }))]);
    assert.ok(plan.spec);
    const stored = importBody('multicluster.crd.antrea.io/v1alpha1', 'ResourceImport', 'team-a-web-service', NS, plan.spec, undefined, plan.annotations);
    assert.deepEqual(decideImportWrite(stored, plan.spec, plan.annotations), { op: 'none' });
    const without = planImport('team-a-web-service', [serviceRE('east', '2026-01-01T00:00:00Z')]);
    assert.ok(without.spec);
    assert.equal(decideImportWrite(stored, without.spec, without.annotations).op, 'update');
    const rewritten = importBody('multicluster.crd.antrea.io/v1alpha1', 'ResourceImport', 'team-a-web-service', NS, without.spec, stored, without.annotations);
    assert.equal(rewritten.metadata?.annotations?.[EXPORTED_LABELS_ANNOTATION], undefined);
    assert.deepEqual(decideImportWrite(rewritten, without.spec, without.annotations), { op: 'none' });
  });
});

describe('exported labels and annotations: the member\'s firewall', () => {
  const check = (ri: ResourceImport) => {
    const plan = desiredForImport(ri, HOSTILE_OWNER, { enableLabelIdentity: false });
    assert.equal(plan.kind, 'apply');
    return plan.kind === 'apply' ? checkImport({ ri, objects: plan.objects, policy: HOSTILE_POLICY, namespaceExists: () => true }) : undefined;
  };

  it('admits bounded, well-formed values', () => {
    assert.equal(check(serviceImportRI(exportedAnnotations({ team: 'a' }, { note: 'x' }))), undefined);
  });

  for (const [what, annotations, detail] of [
    ['the agent\'s own label', exportedAnnotations({ 'app.kubernetes.io/managed-by': 'someone' }), /agent's own/],
    ['a leader label', exportedAnnotations({ 'multicluster.clusterset-agent.io/leader': 'x' }), /reserved prefix/],
    ['a kubernetes.io annotation', exportedAnnotations(undefined, { 'kubectl.kubernetes.io/last-applied-configuration': '{}' }), /reserved prefix/],
    ['too many labels', exportedAnnotations(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${String(i)}`, 'v']))), /more than 64/],
    ['too many bytes', exportedAnnotations(undefined, { a: 'x'.repeat(17_000) }), /more than 16384/],
    ['not JSON', { [EXPORTED_ANNOTATIONS_ANNOTATION]: '[' }, /is not JSON/],
  ] as const) {
    it(`refuses ${what} (InvalidPayload), naming the annotation`, () => {
      const rejection = check(serviceImportRI(annotations));
      assert.equal(rejection?.rule, 'InvalidPayload');
      assert.match(rejection.message, detail);
      assert.match(rejection.message, /annotation multicluster\.clusterset-agent\.io\/exported-/);
    });
  }
});

describe('exported labels and annotations: the member\'s ServiceImport', () => {
  it('carries them, with the record of their keys; the agent\'s labels and annotations win; the Service does not carry them', () => {
    const ri = serviceImportRI(exportedAnnotations({ team: 'a' }, { note: 'x' }));
    const plan = desiredForImport(ri, HOSTILE_OWNER, { enableLabelIdentity: false });
    assert.equal(plan.kind, 'apply');
    const objects = plan.kind === 'apply' ? plan.objects : [];
    const si = metaOf(desiredServiceImport(ri).body);
    assert.equal(si.labels['team'], 'a');
    assert.equal(si.annotations['note'], 'x');
    assert.equal(si.labels['app.kubernetes.io/managed-by'], 'clusterset-agent');
    assert.equal(si.annotations[EXPORTED_KEYS_ANNOTATION], '{"annotations":["note"],"labels":["team"]}');
    const service = objects.find((o) => o.kind === 'Service');
    assert.ok(service);
    assert.equal(metaOf(service.body).labels['team'], undefined);
    assert.equal(metaOf(service.body).annotations['note'], undefined);
  });

  it('a key dropped from the export is removed from the live ServiceImport; a key a user added is kept', () => {
    const withTeam = desiredServiceImport(serviceImportRI(exportedAnnotations({ team: 'a', tier: 'web' }, { note: 'x' })));
    const live = structuredClone(withTeam.body);
    metaOf(live).labels['user'] = 'mine';
    metaOf(live).annotations['user-note'] = 'mine';
    assert.equal(semanticallyEqual(withTeam, live), true, 'a user\'s keys are no difference');

    const onlyTier = desiredServiceImport(serviceImportRI(exportedAnnotations({ tier: 'web' })));
    assert.equal(semanticallyEqual(onlyTier, live), false);
    const merged = metaOf(mergeForUpdate(onlyTier, live));
    assert.deepEqual([merged.labels['team'], merged.labels['tier'], merged.labels['user']], [undefined, 'web', 'mine']);
    assert.deepEqual([merged.annotations['note'], merged.annotations['user-note']], [undefined, 'mine']);
    assert.equal(merged.annotations[EXPORTED_KEYS_ANNOTATION], '{"annotations":[],"labels":["tier"]}');

    const none = desiredServiceImport(serviceImportRI({}));
    const bare = metaOf(mergeForUpdate(none, live));
    assert.deepEqual([bare.labels['team'], bare.labels['tier'], bare.annotations[EXPORTED_KEYS_ANNOTATION], bare.labels['user']], [undefined, undefined, undefined, 'mine']);
    assert.equal(semanticallyEqual(none, mergeForUpdate(none, live)), true, 'then nothing more to write');
  });
});
