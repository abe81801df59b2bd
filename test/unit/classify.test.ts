import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyLeaderError, isRetryableLeaderError } from '../../src/conditions/classify.js';
import { ApiError, TimeoutError, UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { apiError } from './fakes/fake-leader.js';

const call = { verb: 'update', resource: 'memberclusterannounces', group: 'multicluster.crd.antrea.io', namespace: 'antrea-multicluster', server: 'https://l:6443' };

function networkError(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
}

function unexpected(status: number, contentType: string, snippet: string, problem = 'expected a Kubernetes Status'): UnexpectedResponseError {
  return new UnexpectedResponseError(status, contentType, problem, snippet, 'leader PUT /apis/x');
}

function status(code: number, reason: string, message: string, details?: object): ApiError {
  return new ApiError(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code, ...(details && { details }) });
}

const html = '<!DOCTYPE html><html><body>maintenance</body></html>';

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
    // The rest client's shapes.
    ['a rest-client timeout', new TimeoutError('leader GET /x did not complete within 10 ms'), 'ConnectionFailed', /cannot reach leader API server https:\/\/l:6443: ETIMEDOUT/],
    ['200 text/html (a maintenance page)', unexpected(200, 'text/html', html, 'expected application/json'), 'UnexpectedResponse',
      /unexpected answer to update memberclusterannounces.*: HTTP 200 with content type "text\/html" \(expected application\/json\), body "<!DOCTYPE html>.*is https:\/\/l:6443 the leader's Kubernetes API server\? a proxy or load balancer may be answering/],
    ['200 JSON of another kind', unexpected(200, 'application/json', '{"kind":"Foo"}', 'expected kind MemberClusterAnnounce (multicluster.crd.antrea.io/v1alpha1), got kind "Foo" apiVersion "v1"'),
      'UnexpectedResponse', /got kind "Foo"/],
    ['401 with an empty body', unexpected(401, '', ''), 'Unauthorized', /rejected the token/],
    ['403 text/html', unexpected(403, 'text/html', '<html>Forbidden by WAF</html>'), 'Forbidden', /grant verb "update"/],
    ['401 Status', status(401, 'Unauthorized', 'Unauthorized'), 'Unauthorized', /rejected the token/],
    ['a webhook denial (ApiError 400)', status(400, 'BadRequest', 'admission webhook "v.kb.io" denied the request: no'), 'AdmissionDenied', /denied the request: no/],
    ['a 404 Status about the namespace', status(404, 'NotFound', 'namespaces "antrea-multicluster" not found', { name: 'antrea-multicluster', kind: 'namespaces' }),
      'LeaderNamespaceNotFound', /check spec\.namespace/],
    ['a 404 Status for a path nothing serves', status(404, 'NotFound', 'the server could not find the requested resource', {}), 'CRDNotInstalled', /install the leader CRDs/],
    ['a 404 Status about the object itself', status(404, 'NotFound', 'memberclusterannounces.multicluster.crd.antrea.io "m" not found', { name: 'm', kind: 'memberclusterannounces' }),
      'LeaderError', /answered 404/],
    ['a 404 Status without details and another message', status(404, 'NotFound', 'something else'), 'LeaderError', /answered 404/],
    ['a 404 HTML page', unexpected(404, 'text/html', '<html>Not Found</html>'), 'UnexpectedResponse', /HTTP 404 with content type "text\/html"/],
    ['a 404 text/plain from an old apiserver', unexpected(404, 'text/plain', '404 page not found'), 'UnexpectedResponse', /older than 1\.24, its CRDs are not installed/],
    ['a wrapped UnexpectedResponseError', new Error('update failed', { cause: unexpected(502, 'text/html', '<html>Bad Gateway</html>') }), 'UnexpectedResponse', /HTTP 502/],
    ['a webhook-like message in an HTML page', unexpected(403, 'text/html', 'admission webhook "x" denied the request'), 'Forbidden', /grant verb/],
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

describe('isRetryableLeaderError()', () => {
  const cases: [string, unknown, boolean][] = [
    ['connection refused', networkError('ECONNREFUSED'), true],
    ['connection reset', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true],
    ['a timeout', new TimeoutError('timed out'), true],
    ['an AbortError', new DOMException('aborted', 'AbortError'), true],
    ['429', status(429, 'TooManyRequests', 'slow down'), true],
    ['500', apiError(500, 'InternalError', 'etcd down'), true],
    ['502 text/html from a proxy', unexpected(502, 'text/html', '<html>Bad Gateway</html>'), true],
    ['503 text/plain from a proxy', unexpected(503, 'text/plain', 'upstream connect error'), true],
    ['504', unexpected(504, 'text/html', 'Gateway Timeout'), true],
    ['an untrusted certificate', networkError('DEPTH_ZERO_SELF_SIGNED_CERT'), false],
    ['401', unexpected(401, '', ''), false],
    ['403', status(403, 'Forbidden', 'forbidden'), false],
    ['404', status(404, 'NotFound', 'not found'), false],
    ['409', status(409, 'Conflict', 'modified'), false],
    ['422', status(422, 'Invalid', 'invalid'), false],
    ['an admission denial with a 500', status(500, 'InternalError', 'admission webhook "x" denied the request: no'), false],
    ['200 text/html', unexpected(200, 'text/html', html, 'expected application/json'), false],
    ['a plain programming error', new TypeError('x is not a function'), false],
  ];
  for (const [what, err, retryable] of cases) {
    it(`${what} → ${String(retryable)}`, () => {
      assert.equal(isRetryableLeaderError(err), retryable);
    });
  }
});
