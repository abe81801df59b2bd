import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyLeaderError } from '../../src/conditions/classify.js';
import { apiError } from './fakes/fake-leader.js';

const call = { verb: 'update', resource: 'memberclusterannounces', group: 'multicluster.crd.antrea.io', namespace: 'antrea-multicluster', server: 'https://l:6443' };

function networkError(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
}

describe('classifyLeaderError()', () => {
  const cases: [string, unknown, string, RegExp][] = [
    ['connection refused', networkError('ECONNREFUSED'), 'ConnectionFailed', /cannot reach leader API server https:\/\/l:6443: ECONNREFUSED/],
    ['a timeout', Object.assign(new Error('aborted'), { name: 'TimeoutError' }), 'ConnectionFailed', /cannot reach/],
    ['an untrusted certificate', networkError('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'TLSVerificationFailed', /ca\.crt is the CA/],
    ['401', apiError(401, 'Unauthorized', 'Unauthorized'), 'Unauthorized', /expired, revoked/],
    ['403', apiError(403, 'Forbidden', 'cannot update resource'), 'Forbidden', /grant verb "update" on "memberclusterannounces"/],
    ['a webhook denial (403)', apiError(403, 'Forbidden', 'admission webhook "vmemberclusterannounce.kb.io" denied the request: ClusterID "x" is not permitted'), 'AdmissionDenied', /ClusterID "x" is not permitted/],
    ['a policy denial (422)', apiError(422, 'Invalid', "memberclusterannounces \"m\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no"), 'AdmissionDenied', /denied request: no/],
    ['a missing namespace', apiError(404, 'NotFound', 'namespaces "antrea-multicluster" not found', { name: 'antrea-multicluster', kind: 'namespaces' }), 'LeaderNamespaceNotFound', /check spec\.namespace/],
    ['an unserved resource', apiError(404, 'NotFound', 'the server could not find the requested resource'), 'CRDNotInstalled', /install the leader CRDs/],
    ['anything else', apiError(500, 'InternalError', 'etcd down'), 'LeaderError', /answered 500 .*etcd down/],
  ];
  for (const [what, err, reason, message] of cases) {
    it(`${what} → ${reason}`, () => {
      const f = classifyLeaderError(err, call);
      assert.equal(f.reason, reason);
      assert.match(f.message, message);
      assert.equal(f.permanent, false, 'leader answers may heal; only configuration errors are permanent');
    });
  }
});
