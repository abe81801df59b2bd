// The ClusterSet status writer's pacing (conditions/status/writer.ts) is a duration: a wall
// clock stepped back must not hold a status write back by the size of the step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ComputedStatus } from '../../src/conditions/status/compute.js';
import { StatusWriter, type StatusTarget } from '../../src/conditions/status/writer.js';
import { waitFor } from '../harness/wait.js';

const status = (readyClusters: number): ComputedStatus => ({ totalClusters: 1, readyClusters, conditions: [], clusterStatuses: [] });

describe('StatusWriter pacing', () => {
  it('writes the next change one interval after the last write even when the wall clock stepped back 60 s meanwhile', async (t) => {
    let object: StatusTarget = { metadata: { name: 'cs', resourceVersion: '1' }, status: {} };
    let desired = status(0);
    const writes: number[] = [];
    const realNow = Date.now.bind(Date);
    let step = 0;
    Date.now = () => realNow() + step;
    const writer = new StatusWriter({
      minIntervalMs: 200,
      desired: () => desired,
      store: {
        get: () => object,
        replaceStatus: (_o, next) => { writes.push(performance.now()); object = { ...object, status: next }; return Promise.resolve(); },
      },
    });
    t.after(async () => { Date.now = realNow; await writer.stop(); });
    writer.request('cs');
    await waitFor('the first write', () => writes.length === 1, { timeoutMs: 2_000, intervalMs: 5 });
    step = -60_000;
    desired = status(1);
    writer.request('cs');
    await waitFor('the second write, paced', () => writes.length === 2, { timeoutMs: 3_000, intervalMs: 5 });
    assert.ok((writes[1] ?? 0) - (writes[0] ?? 0) >= 190, 'still paced');
  });
});
