import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memberIdsProblems } from '../../src/cli/report/member-ids-check.js';

const base = { namespace: 'antrea-multicluster', configMapName: 'clusterset-member-ids' };
const east = { serviceAccount: 'member-east', clusterID: 'east' };
const west = { serviceAccount: 'member-west', clusterID: 'west' };

describe('memberIdsProblems() (issue 33, item 3)', () => {
  it('a missing ConfigMap: leader run is not running, every member is denied', () => {
    assert.deepEqual(memberIdsProblems({ ...base, data: undefined, members: [east] }), [
      "ConfigMap antrea-multicluster/clusterset-member-ids, which the leader's admission policies read, does not exist: `leader run` writes it, so it is not running " +
        "(its Deployment and Pod, in the chart's release namespace); until it runs every member's announce is denied (AdmissionDenied)",
    ]);
  });
  it('a stale ConfigMap: names each annotated ServiceAccount without its entry', () => {
    const [problem, ...rest] = memberIdsProblems({ ...base, data: { 'member-east': 'east', ClusterSetID: 'cs', LeaderClusterID: 'leader' }, members: [west, east, { serviceAccount: 'member-x', clusterID: 'x' }] });
    assert.deepEqual(rest, []);
    assert.match(problem ?? '', /^ConfigMap antrea-multicluster\/clusterset-member-ids is stale: ServiceAccount member-west \(west\), ServiceAccount member-x \(x\) have no entry there, so those members' announces are denied \(AdmissionDenied\)/);
    // An entry with another ID is as good as none.
    assert.equal(memberIdsProblems({ ...base, data: { 'member-east': 'west' }, members: [east] }).length, 1);
  });
  it('nothing when every annotated ServiceAccount has its entry', () => {
    assert.deepEqual(memberIdsProblems({ ...base, data: { 'member-east': 'east', 'member-west': 'west' }, members: [east, west] }), []);
    assert.deepEqual(memberIdsProblems({ ...base, data: {}, members: [] }), []);
  });
});
