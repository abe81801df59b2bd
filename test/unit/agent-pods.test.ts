import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { agentPodProblem } from '../../src/cli/report/agent-pods.js';

const IMAGE = 'clusterset-agent:0.1.0';

function pod(status: NonNullable<V1Pod['status']>, deleting = false): V1Pod {
  return { metadata: { namespace: 'clusterset-agent', name: 'agent-7d9f', ...(deleting && { deletionTimestamp: new Date() }) }, status };
}

function waiting(reason: string, message?: string, extra: Partial<V1ContainerStatus> = {}): V1ContainerStatus {
  return { name: 'agent', image: IMAGE, imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, ...(message !== undefined && { message }) } }, ...extra };
}

describe('agentPodProblem()', () => {
  it('names an image that cannot be pulled, and the chart values that fix it', () => {
    for (const reason of ['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName']) {
      const problem = agentPodProblem(pod({ phase: 'Pending', containerStatuses: [waiting(reason, 'Back-off pulling image "clusterset-agent:0.1.0"')] }));
      assert.equal(problem, `Pod clusterset-agent/agent-7d9f: container agent cannot pull image ${IMAGE} (${reason}): Back-off pulling image "clusterset-agent:0.1.0". ` +
        'Push the image where this cluster pulls from and set image.repository and image.tag (docs/install.md, "The image")');
    }
  });
  it('names a crash loop with its restarts, last exit and where to read why', () => {
    const problem = agentPodProblem(pod({
      phase: 'Running',
      containerStatuses: [waiting('CrashLoopBackOff', 'back-off 40s restarting failed container', { restartCount: 4, lastState: { terminated: { exitCode: 2, reason: 'Error' } } })],
    }));
    assert.equal(problem, 'Pod clusterset-agent/agent-7d9f: container agent is not running (CrashLoopBackOff, 4 restart(s); last exit 2 (Error)): back-off 40s restarting failed container. ' +
      'Its log says why: kubectl logs -n clusterset-agent agent-7d9f -c agent --previous');
  });
  it("names a Pod the scheduler could not place, with the scheduler's reason", () => {
    const problem = agentPodProblem(pod({
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient memory.' }],
    }));
    assert.equal(problem, 'Pod clusterset-agent/agent-7d9f is Pending, not scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient memory.');
  });
  it('says nothing of a running Pod, a Pod starting normally, or one being deleted', () => {
    const running: V1ContainerStatus = { name: 'agent', image: IMAGE, imageID: '', ready: true, restartCount: 0, state: { running: {} } };
    assert.equal(agentPodProblem(pod({ phase: 'Running', containerStatuses: [running] })), undefined);
    assert.equal(agentPodProblem(pod({ phase: 'Pending', containerStatuses: [waiting('ContainerCreating')] })), undefined);
    assert.equal(agentPodProblem(pod({ phase: 'Pending' })), undefined);
    assert.equal(agentPodProblem(pod({ phase: 'Pending', containerStatuses: [waiting('ImagePullBackOff')] }, true)), undefined);
  });
});
