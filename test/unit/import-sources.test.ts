import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceImport } from '../../src/common/api/antrea.js';
import { decideSource, differingSources, heldElsewhere, sourceOf, type SourceView } from '../../src/importer/import-sources.js';

function ri(port: number, annotations?: Record<string, string>): ResourceImport {
  return {
    metadata: { name: 'team-a-api-service', ...(annotations ? { annotations } : {}) },
    spec: { name: 'api', namespace: 'team-a', kind: 'ServiceImport', serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ name: 'http', port, protocol: 'TCP' }] } } },
  };
}
const view = (leaderClusterID: string, state: SourceView['state'], held?: ResourceImport): SourceView => ({ leaderClusterID, state, ri: held });

describe('which leader is the source of an import', () => {
  it('the first connected leader in spec order that holds it; a paused or still-listing one does not count', () => {
    assert.equal(sourceOf([view('a', 'connected', ri(80)), view('b', 'connected', ri(80))]), 'a');
    assert.equal(sourceOf([view('a', 'absent'), view('b', 'connected', ri(80))]), 'b');
    assert.equal(sourceOf([view('a', 'syncing'), view('b', 'connected', ri(80))]), 'b');
    assert.equal(sourceOf([view('a', 'connected'), view('b', 'connected', ri(80))]), 'b', 'a withdrew it');
    assert.equal(sourceOf([view('a', 'absent'), view('b', 'connected')]), undefined);
  });

  it('the source applies, the others yield to it; nobody holding it: withdraw, unless a leader still listing may', () => {
    const both = [view('a', 'connected', ri(80)), view('b', 'connected', ri(80))];
    assert.deepEqual(decideSource('a', both), { kind: 'apply' });
    assert.deepEqual(decideSource('b', both), { kind: 'yield', to: 'a' });
    const aLost = [view('a', 'absent'), view('b', 'connected', ri(80))];
    assert.deepEqual(decideSource('b', aLost), { kind: 'apply' }, 'b takes over when a disconnects');
    const aWithdrew = [view('a', 'connected'), view('b', 'connected', ri(80))];
    assert.deepEqual(decideSource('a', aWithdrew), { kind: 'yield', to: 'b' }, 'a withdrawing it removes nothing b holds');
    assert.deepEqual(decideSource('a', [view('a', 'connected'), view('b', 'connected')]), { kind: 'withdraw' });
    assert.deepEqual(decideSource('a', [view('a', 'connected'), view('b', 'syncing')]), { kind: 'wait', for: 'b' });
    assert.deepEqual(decideSource('a', [view('a', 'connected'), view('b', 'absent')]), { kind: 'withdraw' }, 'a lost leader holds nothing');
  });

  it('one leader: apply what it holds, withdraw what it does not (as without several leaders)', () => {
    assert.deepEqual(decideSource('a', [view('a', 'connected', ri(80))]), { kind: 'apply' });
    assert.deepEqual(decideSource('a', [view('a', 'connected')]), { kind: 'withdraw' });
  });

  it('held elsewhere: another connected leader holds it, or one still listing may; a lost one does not keep it', () => {
    assert.equal(heldElsewhere('a', [view('a', 'absent', ri(80)), view('b', 'connected', ri(80))]), true);
    assert.equal(heldElsewhere('a', [view('a', 'absent'), view('b', 'syncing')]), true);
    assert.equal(heldElsewhere('a', [view('a', 'absent', ri(80)), view('b', 'connected')]), false);
    assert.equal(heldElsewhere('a', [view('a', 'connected', ri(80)), view('b', 'absent', ri(80))]), false);
  });

  it('differing copies: the connected leaders whose spec or annotations differ from the source\'s', () => {
    assert.deepEqual(differingSources([view('a', 'connected', ri(80)), view('b', 'connected', ri(80))]), []);
    assert.deepEqual(differingSources([view('a', 'connected', ri(80)), view('b', 'connected', ri(81)), view('c', 'absent', ri(82))]), ['b']);
    assert.deepEqual(differingSources([view('a', 'connected', ri(80)), view('b', 'connected', ri(80, { 'endpoint-sources': 'x' }))]), ['b']);
    assert.deepEqual(differingSources([view('a', 'absent', ri(81)), view('b', 'connected', ri(80)), view('c', 'connected', ri(80))]), []);
  });
});
