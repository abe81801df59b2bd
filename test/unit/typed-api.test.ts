// The generated APIs' calls the agents and the CLI make, over the plain-JSON client: the path,
// verb, query and body each sends, and the answers each refuses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonClient, Method, RequestOptions } from '../../src/common/kube/json-client.js';
import { UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { kubeApis, queryOf } from '../../src/common/kube/typed-api.js';

interface Sent { readonly method: Method; readonly path: string; readonly options: RequestOptions | undefined }

/** A client that records each request and answers `answer(request)`. */
function recording(answer: (sent: Sent) => Record<string, unknown>): { client: JsonClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const client: JsonClient = {
    // As the JSON client does: an answer its `expect` finds wrong fails.
    request: <T>(method: Method, path: string, options?: RequestOptions) => {
      const request = { method, path, options };
      sent.push(request);
      const body = answer(request);
      const problem = options?.expect?.(body);
      if (problem !== undefined) return Promise.reject(new UnexpectedResponseError(200, 'application/json', problem, '', `member ${method} ${path}`));
      return Promise.resolve(body as T);
    },
    watch: () => Promise.reject(new Error('no watches here')),
  };
  return { client, sent };
}

/** Answers what a real API server would: the kind of the path's resource, or its list. */
const KINDS: Record<string, string> = {
  namespaces: 'Namespace', secrets: 'Secret', events: 'Event', serviceaccounts: 'ServiceAccount', pods: 'Pod', services: 'Service', configmaps: 'ConfigMap',
  endpointslices: 'EndpointSlice', servicecidrs: 'ServiceCIDR', roles: 'Role', rolebindings: 'RoleBinding', clusterroles: 'ClusterRole',
  clusterrolebindings: 'ClusterRoleBinding', deployments: 'Deployment', validatingadmissionpolicies: 'ValidatingAdmissionPolicy',
  validatingadmissionpolicybindings: 'ValidatingAdmissionPolicyBinding', subjectaccessreviews: 'SubjectAccessReview', token: 'TokenRequest',
};
function server(sent: Sent): Record<string, unknown> {
  const parts = sent.path.split('/');
  const plural = parts.findLast((p) => KINDS[p] !== undefined) ?? '';
  const isCollection = parts.at(-1) === plural && plural !== 'token' && sent.method === 'GET';
  const kind = KINDS[plural] ?? 'Unknown';
  return isCollection ? { kind: `${kind}List`, metadata: { continue: '' }, items: [] } : { kind, metadata: { name: parts.at(-1) } };
}

describe('typed API calls', () => {
  it('send the verb, path and query client-node would, with `_continue` as the API server\'s `continue`', async () => {
    const { client, sent } = recording(server);
    const { core, discovery, networking, rbac, apps, admission, authorization } = kubeApis(client);
    await core.readNamespace({ name: 'kube-system' });
    await core.listNamespacedSecret({ namespace: 'ns', labelSelector: 'a=b', limit: 500, _continue: 'tok' });
    await core.listServiceForAllNamespaces({ limit: 500 });
    await core.createNamespacedServiceAccountToken({ namespace: 'ns', name: 'sa', body: { spec: { audiences: [] } } });
    await core.patchNamespacedEvent({ namespace: 'ns', name: 'e.1', body: [{ op: 'replace', path: '/count', value: 2 }] });
    await core.deleteNamespacedSecret({ namespace: 'ns', name: 's', body: { preconditions: { uid: 'u' } } });
    await discovery.listEndpointSliceForAllNamespaces({});
    await networking.readServiceCIDR({ name: 'kubernetes' });
    await rbac.replaceNamespacedRoleBinding({ namespace: 'ns', name: 'rb', body: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } } });
    await rbac.deleteClusterRole({ name: 'cr' });
    await apps.readNamespacedDeployment({ namespace: 'kube-system', name: 'coredns' });
    await admission.listValidatingAdmissionPolicy();
    await authorization.createSubjectAccessReview({ body: { spec: {} } });
    assert.deepEqual(sent.map((s) => `${s.method} ${s.path}`), [
      'GET /api/v1/namespaces/kube-system',
      'GET /api/v1/namespaces/ns/secrets',
      'GET /api/v1/services',
      'POST /api/v1/namespaces/ns/serviceaccounts/sa/token',
      'PATCH /api/v1/namespaces/ns/events/e.1',
      'DELETE /api/v1/namespaces/ns/secrets/s',
      'GET /apis/discovery.k8s.io/v1/endpointslices',
      'GET /apis/networking.k8s.io/v1/servicecidrs/kubernetes',
      'PUT /apis/rbac.authorization.k8s.io/v1/namespaces/ns/rolebindings/rb',
      'DELETE /apis/rbac.authorization.k8s.io/v1/clusterroles/cr',
      'GET /apis/apps/v1/namespaces/kube-system/deployments/coredns',
      'GET /apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
      'POST /apis/authorization.k8s.io/v1/subjectaccessreviews',
    ]);
    assert.deepEqual(sent[1]?.options?.query, { labelSelector: 'a=b', limit: 500, continue: 'tok' });
    assert.deepEqual(sent[4]?.options?.body, [{ op: 'replace', path: '/count', value: 2 }]);
    assert.deepEqual(sent[5]?.options?.body, { preconditions: { uid: 'u' } }, 'a DELETE carries its options (the uid precondition) as its body');
  });

  it('put custom objects under their group, version and plural, and a status write under /status', async () => {
    const { client, sent } = recording((s) => (s.method === 'GET' && s.path.endsWith('clustersets') ? { kind: 'ClusterSetList', items: [] } : { kind: 'ClusterSet' }));
    const { custom } = kubeApis(client);
    const ref = { group: 'multicluster.crd.antrea.io', version: 'v1alpha2', plural: 'clustersets' };
    await custom.listClusterCustomObject(ref);
    await custom.listNamespacedCustomObject({ ...ref, namespace: 'ns', limit: 1 });
    await custom.replaceNamespacedCustomObjectStatus({ ...ref, namespace: 'ns', name: 'a b', body: {} });
    await custom.patchNamespacedCustomObject({ ...ref, namespace: 'ns', name: 'a', body: [] });
    assert.deepEqual(sent.map((s) => `${s.method} ${s.path}`), [
      'GET /apis/multicluster.crd.antrea.io/v1alpha2/clustersets',
      'GET /apis/multicluster.crd.antrea.io/v1alpha2/namespaces/ns/clustersets',
      'PUT /apis/multicluster.crd.antrea.io/v1alpha2/namespaces/ns/clustersets/a%20b/status',
      'PATCH /apis/multicluster.crd.antrea.io/v1alpha2/namespaces/ns/clustersets/a',
    ]);
    assert.deepEqual(sent[1]?.options?.query, { limit: 1 }, 'group, version, plural and namespace are the path, not the query');
  });

  it('refuse an answer of another kind, a list without items, and a version without gitVersion', async () => {
    const wrong = kubeApis(recording(() => ({ kind: 'Status', status: 'Success' })).client);
    await assert.rejects(wrong.core.readNamespace({ name: 'kube-system' }), (err: unknown) =>
      err instanceof UnexpectedResponseError && /expected kind Namespace, got "Status"/.test(err.message) && /GET \/api\/v1\/namespaces\/kube-system/.test(err.message));
    await assert.rejects(wrong.core.listNamespace({}), /expected kind NamespaceList/);
    await assert.rejects(wrong.custom.listNamespacedCustomObject({ group: 'g', version: 'v1', plural: 'things', namespace: 'ns' }), /expected a list with items/);
    await assert.rejects(wrong.version.getCode(), /expected version information/);
    // A DELETE answers the object or a Status, and nothing else.
    await wrong.core.deleteNamespacedSecret({ namespace: 'ns', name: 's' });
    const odd = kubeApis(recording(() => ({ kind: 'ConfigMap' })).client);
    await assert.rejects(odd.core.deleteNamespacedSecret({ namespace: 'ns', name: 's' }), /expected kind Secret or Status, got "ConfigMap"/);
  });

  it('refuse a request without the path parts it needs, before sending anything', async () => {
    const { client, sent } = recording(server);
    await assert.rejects(kubeApis(client).core.readNamespacedSecret({ namespace: 'ns', name: '' }), /needs a name/);
    assert.equal(sent.length, 0);
  });

  it('leave undefined and structured parameters out of the query', () => {
    assert.deepEqual(queryOf({ name: 'x', namespace: 'y', body: {}, limit: undefined, pretty: 'true', dryRun: 'All', propagationPolicy: 'Foreground', watch: false }),
      { pretty: 'true', dryRun: 'All', propagationPolicy: 'Foreground', watch: false });
  });
});
