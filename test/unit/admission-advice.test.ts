import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionDenialAdvice } from '../../src/conditions/admission-advice.js';
import { classifyLeaderError } from '../../src/conditions/classify.js';
import { apiError } from './fakes/fake-leader.js';

const call = { verb: 'create', resource: 'memberclusterannounces', group: 'multicluster.crd.antrea.io', namespace: 'antrea-multicluster', server: 'https://l:6443' };
const POLICY = "memberclusterannounces.multicluster.crd.antrea.io \"member-announce-from-east\" is forbidden: ValidatingAdmissionPolicy 'clusterset-agent-memberclusterannounces-antrea-multicluster' with binding 'clusterset-agent-memberclusterannounces-antrea-multicluster' denied request: ";

describe('AdmissionDenied tells "leader run is not running" from "wrong ServiceAccount or cluster ID" (issue 33, item 3)', () => {
  it('the policies without their ConfigMap: leader run is not running, the ServiceAccount is not at fault', () => {
    const f = classifyLeaderError(apiError(403, 'Forbidden', `${POLICY}failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`), call);
    assert.equal(f.reason, 'AdmissionDenied');
    assert.match(f.message, /no params found.*\. The leader's admission policies have no member-ID ConfigMap to read: `leader run` writes it, so it is not running/);
    assert.match(f.message, /the member ServiceAccount is not at fault/);
  });
  it('the ConfigMap without this member: leader run not running (yet), or the annotation', () => {
    const text = `${POLICY}ClusterID "east" is not permitted for ServiceAccount "member-east" (expected multicluster.antrea.io/cluster-id annotation to match; the ServiceAccount has no cluster ID in ConfigMap antrea-multicluster/clusterset-member-ids)`;
    const advice = admissionDenialAdvice(text) ?? '';
    assert.match(advice, /^The leader's member-ID ConfigMap has no entry for this member's ServiceAccount yet: `leader run` adds it/);
    assert.doesNotMatch(advice, /Wrong ServiceAccount/);
  });
  it('another cluster ID on the ServiceAccount (the policy, or Antrea\'s webhook): wrong ServiceAccount or cluster ID', () => {
    for (const text of [
      `${POLICY}ClusterID "east" is not permitted for ServiceAccount "member-west" (expected multicluster.antrea.io/cluster-id annotation to match, it is "west")`,
      'admission webhook "vmemberclusterannounce.kb.io" denied the request: ClusterID "east" is not permitted for ServiceAccount "member-west"',
    ]) {
      assert.match(admissionDenialAdvice(text) ?? '', /^Wrong ServiceAccount or cluster ID: .*leader create-member-token --member-id <spec\.clusterID>/, text);
    }
  });
  it('a denial it does not know gets no advice', () => {
    assert.equal(admissionDenialAdvice(`${POLICY}the cluster ID is not a DNS-1123 label`), undefined);
    assert.doesNotMatch(classifyLeaderError(apiError(403, 'Forbidden', `${POLICY}the name must be member-announce-from-east`), call).message, /\. [A-Z]/);
  });
});
