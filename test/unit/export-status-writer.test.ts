// The one ServiceExport status writer: the aggregate of every ClusterSet's judgement, and one
// write per change of that aggregate however often the exporters report.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MetaCondition } from '../../src/common/api/meta.js';
import type { ServiceExport, ServiceExportStatus } from '../../src/common/api/mcs.js';
import { changedConditions, ExportStatusWriter, MAX_CONFLICT_MESSAGE_BYTES, MAX_LEADER_MESSAGE_BYTES, type Judgement } from '../../src/exporter/status-writer.js';

const valid = { type: 'Valid', status: 'True', reason: 'Succeed', message: 'the ServiceExport is valid' } as const;
const ok: Judgement = { valid, refused: false, verdict: { kind: 'ok' } };
const unknown: Judgement = { valid, refused: false, verdict: { kind: 'unknown' } };
const failed = (message: string, reason = 'ImportFailed'): Judgement => ({ valid, refused: false, verdict: { kind: 'failed', reason, message } });
const condition = (type: string, status: 'True' | 'False', reason: string, message: string): MetaCondition => ({ type, status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' });

describe('changedConditions', () => {
  it('Conflict=True if any leader refuses, naming the ClusterSets in order; Valid from the local checks', () => {
    const changed = changedConditions(new Map([['set-b', failed('ports differ')], ['set-a', ok]]), []);
    assert.deepEqual(changed, [valid, { type: 'Conflict', status: 'True', reason: 'ImportFailed', message: 'ClusterSet set-b: ports differ' }]);
    const both = changedConditions(new Map([['set-b', failed('ports differ')], ['set-a', failed('name taken', 'NameConflict')]]), []);
    assert.deepEqual(both[1], { type: 'Conflict', status: 'True', reason: 'LeaderRejected', message: 'ClusterSet set-a: name taken; ClusterSet set-b: ports differ' });
  });

  it('nothing changes when the status already says it; False only where it was True; nothing while no leader judged', () => {
    const current = [condition('Valid', 'True', 'Succeed', 'the ServiceExport is valid'), condition('Conflict', 'True', 'ImportFailed', 'ClusterSet set-b: ports differ')];
    assert.deepEqual(changedConditions(new Map([['set-a', ok], ['set-b', failed('ports differ')]]), current), []);
    assert.deepEqual(changedConditions(new Map([['set-a', ok], ['set-b', ok]]), current), [{ type: 'Conflict', status: 'False', reason: 'NoConflict', message: '' }]);
    assert.deepEqual(changedConditions(new Map([['set-a', ok]]), current.slice(0, 1)), []);
    assert.deepEqual(changedConditions(new Map([['set-a', unknown]]), current), []);
  });

  it('a verdict on an older state of the member than another ClusterSet\'s counts as not judged: no flap while the exporters catch up', () => {
    const at = (j: Judgement, source: string): Judgement => ({ ...j, source });
    const refusedBefore = [condition('Valid', 'True', 'Succeed', 'the ServiceExport is valid'), condition('Conflict', 'True', 'ImportFailed', 'ClusterSet set-a: ports differ')];
    // The Service changed (resourceVersion 7 -> 9): set-a rewrote its REs (its leader has not
    // judged them yet), set-b has not seen the change and still reports its leader's acceptance
    // of the old spec. Conflict stays True: nobody has accepted what the member exports now.
    assert.deepEqual(changedConditions(new Map([['set-a', at(unknown, '9')], ['set-b', at(ok, '7')]]), refusedBefore), []);
    // The other order: set-b rewrote first, set-a still holds its refusal of the old spec.
    assert.deepEqual(changedConditions(new Map([['set-a', at(failed('ports differ'), '7')], ['set-b', at(unknown, '9')]]), refusedBefore), []);
    // Both judged the new state: one change.
    assert.deepEqual(changedConditions(new Map([['set-a', at(ok, '9')], ['set-b', at(ok, '9')]]), refusedBefore), [{ type: 'Conflict', status: 'False', reason: 'NoConflict', message: '' }]);
    // A refusal of the new state stands at once, whatever the other still says about the old one.
    const accepted = [refusedBefore[0] as MetaCondition, condition('Conflict', 'False', 'NoConflict', '')];
    assert.deepEqual(changedConditions(new Map([['set-a', at(failed('ports differ'), '9')], ['set-b', at(ok, '7')]]), accepted).map((c) => c.status), ['True']);
    // Without a comparable source (e.g. a ServiceExport whose Service is gone) nothing is discounted.
    assert.deepEqual(changedConditions(new Map([['set-a', ok], ['set-b', at(ok, '9')]]), refusedBefore), [{ type: 'Conflict', status: 'False', reason: 'NoConflict', message: '' }]);
  });
});

describe('several leaders: only the connected ones\' verdicts count', () => {
  const A = 'prod (leader leader-a)';
  const B = 'prod (leader leader-b)';
  const refused = [condition('Valid', 'True', 'Succeed', 'the ServiceExport is valid'), condition('Conflict', 'True', 'ImportFailed', `ClusterSet ${A}: ports differ`)];
  const accepted = [refused[0] as MetaCondition, condition('Conflict', 'False', 'NoConflict', '')];

  it('a disconnected leader\'s stale refusal neither holds a Conflict nor raises one', () => {
    // leader-a refused, then was lost; leader-b, connected, accepts: the Conflict clears.
    assert.deepEqual(changedConditions(new Map([[A, failed('ports differ')], [B, ok]]), refused, new Set([A])), [{ type: 'Conflict', status: 'False', reason: 'NoConflict', message: '' }]);
    // Connected, the same refusal stands.
    assert.deepEqual(changedConditions(new Map([[A, failed('ports differ')], [B, ok]]), refused), []);
    // A stale refusal of a lost leader does not turn an accepted export into a Conflict.
    assert.deepEqual(changedConditions(new Map([[A, failed('ports differ')], [B, ok]]), accepted, new Set([A])), []);
  });

  it('a Conflict clears only once every connected leader accepted; a disconnected one does not block it', () => {
    // leader-b (connected) has not judged yet: the Conflict stays.
    assert.deepEqual(changedConditions(new Map([[A, ok], [B, unknown]]), refused), []);
    // leader-b lost before it judged: leader-a's acceptance is every connected leader's.
    assert.deepEqual(changedConditions(new Map([[A, ok], [B, unknown]]), refused, new Set([B])), [{ type: 'Conflict', status: 'False', reason: 'NoConflict', message: '' }]);
    // Every leader lost: nothing is known; the condition stays as it is, Valid still from the local checks.
    assert.deepEqual(changedConditions(new Map([[A, failed('ports differ')], [B, ok]]), [], new Set([A, B])), [valid]);
  });

  it('the writer: a leader that disconnects stops counting, one that comes back counts again', async () => {
    let status: ServiceExportStatus | undefined = { conditions: refused };
    const se = (): ServiceExport => ({ metadata: { name: 'web', namespace: 'team-a', resourceVersion: '1', generation: 1 }, ...(status !== undefined && { status }) });
    const writer = new ExportStatusWriter({
      serviceExport: () => se(),
      write: (_se, next) => { status = next; return Promise.resolve(); },
      events: { record: () => undefined },
      logger: { warn: () => undefined },
    });
    writer.report(A, 'svc/team-a/web', failed('ports differ'));
    writer.report(B, 'svc/team-a/web', ok);
    await writer.onIdle();
    assert.equal(status.conditions?.find((c) => c.type === 'Conflict')?.status, 'True');
    writer.setConnected(A, false);
    await writer.onIdle();
    assert.equal(status.conditions?.find((c) => c.type === 'Conflict')?.status, 'False');
    writer.setConnected(A, true);
    await writer.onIdle();
    assert.equal(status.conditions?.find((c) => c.type === 'Conflict')?.status, 'True');
    await writer.stop();
  });
});

describe('a leader\'s verdict message is untrusted text', () => {
  const huge = `ports differ (cluster west: ${Array.from({ length: 30_000 }, (_, i) => `p${String(i)}:${String(i + 1)}/TCP`).join(', ')})`;

  it('one huge verdict: the Conflict message keeps its start, cut to the bound with how much was left out', () => {
    const [, conflict] = changedConditions(new Map([['set-a', failed(huge)]]), []);
    assert.ok(conflict !== undefined);
    assert.ok(Buffer.byteLength(conflict.message, 'utf8') <= MAX_LEADER_MESSAGE_BYTES + 'ClusterSet set-a: '.length, String(conflict.message.length));
    assert.match(conflict.message, /^ClusterSet set-a: ports differ \(cluster west: p0:1\/TCP, p1:2\/TCP/);
    assert.match(conflict.message, /… and \d+ more characters$/);
  });

  it('many ClusterSets refusing with huge verdicts: the whole message stays far below the CRD\'s 32768', () => {
    const judgements = new Map(Array.from({ length: 40 }, (_, i) => [`set-${String(i).padStart(2, '0')}`, failed(`€${huge}`)] as const));
    const [, conflict] = changedConditions(judgements, []);
    assert.ok(conflict !== undefined);
    assert.ok(Buffer.byteLength(conflict.message, 'utf8') <= MAX_CONFLICT_MESSAGE_BYTES, String(Buffer.byteLength(conflict.message, 'utf8')));
    assert.ok(!conflict.message.includes('\uFFFD'));
    assert.match(conflict.message, /^ClusterSet set-00: €ports differ/);
  });
});

describe('ExportStatusWriter', () => {
  it('two ClusterSets whose leaders disagree: one write per change of the aggregate, however often they report', async () => {
    let live: ServiceExport = { metadata: { name: 'web', namespace: 'team-a', resourceVersion: '1', generation: 1 } };
    const writes: ServiceExportStatus[] = [];
    const events: string[] = [];
    const writer = new ExportStatusWriter({
      serviceExport: () => live,
      write: (_se, status) => {
        writes.push(status);
        live = { ...live, metadata: { ...live.metadata, resourceVersion: String(Number(live.metadata?.resourceVersion) + 1) }, status };
        return Promise.resolve(undefined);
      },
      events: { record: (_t, _type, reason) => { events.push(reason); } },
      logger: { warn: () => undefined },
    });
    // Each exporter is woken by every status change and reports again: the old loop.
    for (let round = 0; round < 50; round += 1) {
      writer.report('set-a', 'svc/team-a/web', failed('ports differ'));
      writer.report('set-b', 'svc/team-a/web', ok);
      await writer.onIdle();
    }
    assert.equal(writes.length, 1, JSON.stringify(writes));
    assert.deepEqual(events, ['ExportConflict']);
    writer.report('set-a', 'svc/team-a/web', ok);
    await writer.onIdle();
    writer.report('set-b', 'svc/team-a/web', ok);
    await writer.onIdle();
    assert.equal(writes.length, 2);
    assert.equal(writes[1]?.conditions?.find((c) => c.type === 'Conflict')?.status, 'False');
    // A ClusterSet that leaves takes its refusal along.
    writer.report('set-b', 'svc/team-a/web', failed('gone wrong'));
    await writer.onIdle();
    writer.forget('set-b');
    await writer.onIdle();
    assert.equal(writes.length, 4);
    assert.equal(writes[3]?.conditions?.find((c) => c.type === 'Conflict')?.status, 'False');
    await writer.stop();
  });
});
