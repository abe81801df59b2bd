import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { EXEMPT_USERNAMES_ANNOTATION, exemptServiceAccountsOf } from '../../src/leader/admission-exemptions.js';

function policy(name: string, usernames?: string): V1ValidatingAdmissionPolicy {
  return { metadata: { name, ...(usernames !== undefined && { annotations: { [EXEMPT_USERNAMES_ANNOTATION]: usernames } }) } };
}

describe('exemptServiceAccountsOf', () => {
  it("collects the leader namespace's ServiceAccounts from this chart's policies", () => {
    const names = exemptServiceAccountsOf([
      policy('clusterset-agent-resourceexports-antrea-multicluster', 'system:serviceaccount:antrea-multicluster:antrea-mc-controller'),
      policy('clusterset-agent-memberclusterannounces-antrea-multicluster',
        'system:serviceaccount:clusterset-agent:csa-clusterset-agent,system:serviceaccount:antrea-multicluster:antrea-mc-controller,system:serviceaccount:antrea-multicluster:ops-robot'),
    ], 'antrea-multicluster');
    assert.deepEqual([...names].sort(), ['antrea-mc-controller', 'ops-robot']);
  });
  it('ignores other namespaces, other policies, and policies that exempt nobody or do not say', () => {
    assert.deepEqual([...exemptServiceAccountsOf([
      policy('clusterset-agent-resourceexports-antrea-multicluster', ''),
      policy('clusterset-agent-memberclusterannounces-antrea-multicluster'),
      policy('someone-elses-policy', 'system:serviceaccount:antrea-multicluster:theirs'),
      policy('clusterset-agent-resourceexports-other', 'system:serviceaccount:other:robot,system:serviceaccount:antrea-multicluster-2:robot,system:serviceaccount:antrea-multicluster:'),
    ], 'antrea-multicluster')], []);
  });
});
