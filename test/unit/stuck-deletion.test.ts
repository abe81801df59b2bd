import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSet } from '../../src/common/api/antrea.js';
import { LEAVE_FINALIZER } from '../../src/clusterset/controller.js';
import { memberReport } from '../../src/cli/report/model.js';
import { stuckDeletionProblem } from '../../src/cli/report/stuck-deletion.js';

const NOW = Date.parse('2026-12-03T12:10:00Z');

function clusterSet(deletionTimestamp: string | undefined, finalizers: string[] = [LEAVE_FINALIZER]): ClusterSet {
  return {
    metadata: { namespace: 'clusterset-agent', name: 'prod', finalizers, ...(deletionTimestamp !== undefined && { deletionTimestamp: deletionTimestamp as unknown as Date }) },
    spec: { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [{ clusterID: 'leader', server: 'https://10.0.0.1:6443', secret: 'leader-token' }] },
  };
}

describe('stuckDeletionProblem() (issue 33, item 7)', () => {
  it('names a ClusterSet held by the leave finalizer, the agent not running, at once', () => {
    const problem = stuckDeletionProblem(clusterSet('2026-12-03T12:09:50Z'), NOW, true);
    assert.match(problem ?? '', /^being deleted since 2026-12-03T12:09:50Z, held by the agent's finalizer clusterset-agent\.multicluster\.x-k8s\.io\/leave-leader, which only the running agent removes .*: the agent is not running \(above\)\. /);
    assert.match(problem ?? '', /docs\/install\.md, "Uninstall"/);
  });
  it('without a Pod that says so, only after a minute, asking whether the agent runs', () => {
    assert.equal(stuckDeletionProblem(clusterSet('2026-12-03T12:09:30Z'), NOW, false), undefined);
    assert.match(stuckDeletionProblem(clusterSet('2026-12-03T12:08:00Z'), NOW, false) ?? '', /is the agent running\? \(helm uninstall before leave removes it\)/);
  });
  it('nothing for a ClusterSet not being deleted, or with no finalizer left', () => {
    assert.equal(stuckDeletionProblem(clusterSet(undefined), NOW, true), undefined);
    assert.equal(stuckDeletionProblem(clusterSet('2026-12-03T12:00:00Z', []), NOW, true), undefined);
  });
  it("status puts it, and the agent Pod's problem, among what needs attention", () => {
    const report = memberReport({
      clusterSet: clusterSet('2026-12-03T12:00:00Z'), token: { problem: 'x' }, events: [], serviceExports: [], nowMs: NOW,
      agentPods: ['Pod clusterset-agent/a: container agent cannot pull image x:1 (ImagePullBackOff)'],
    });
    assert.equal(report.problems[0], 'Pod clusterset-agent/a: container agent cannot pull image x:1 (ImagePullBackOff)');
    assert.match(report.problems[1] ?? '', /^being deleted since 2026-12-03T12:00:00Z/);
    assert.equal(report.problems[2], 'no Ready condition yet: the agent is not running (above)');
  });
});
