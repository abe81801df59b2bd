// Smoke tests proving the harness runs real Kubernetes: RBAC, TokenRequest, TLS
// verification, CRDs with status and printer columns, and kubectl printing them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, VersionApi } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { applyCrds, createNamespace, createServiceAccountWithRole, issueToken, kubectl, tokenConfig, waitForAccess } from '../harness/kube.js';
import { leftoverHarnessProcesses } from '../harness/processes.js';
import { onFailureShowLogs } from '../harness/report.js';

function statusCode(err: unknown): unknown {
  return (err as { code?: unknown }).code;
}

describe('real control-plane harness', () => {
  let a: ControlPlane;
  let b: ControlPlane;
  let token: string;

  before(async () => {
    [a, b] = await Promise.all([startControlPlane('smoke-a'), startControlPlane('smoke-b')]);
    const kc = a.adminConfig();
    await createNamespace(kc, 'team-x');
    await createNamespace(kc, 'team-y');
    await createServiceAccountWithRole(kc, {
      namespace: 'team-x', serviceAccount: 'reader',
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    });
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'team-x', body: { metadata: { name: 'cfg' }, data: { k: 'v' } } });
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'team-y', body: { metadata: { name: 'cfg' }, data: { k: 'v' } } });
    token = await issueToken(kc, 'team-x', 'reader');
    await waitForAccess(a, token, { verb: 'get', resource: 'configmaps', namespace: 'team-x' });
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
  });
  onFailureShowLogs(() => [a, b]);

  it('serves the stamped Kubernetes version', async () => {
    const version = await a.adminConfig().makeApiClient(VersionApi).getCode();
    assert.match(version.gitVersion, /^v1\.36\.\d+$/);
  });

  it('lets a Role-bound ServiceAccount token read what the Role allows and nothing else', async () => {
    const core = tokenConfig(a, token).makeApiClient(CoreV1Api);
    const cm = await core.readNamespacedConfigMap({ namespace: 'team-x', name: 'cfg' });
    assert.equal(cm.data?.['k'], 'v');
    await assert.rejects(core.readNamespacedConfigMap({ namespace: 'team-y', name: 'cfg' }), (err) => statusCode(err) === 403);
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'team-x', body: { metadata: { name: 'new' } } }), (err) => statusCode(err) === 403);
  });

  it('rejects a token issued by another control plane', async () => {
    const core = tokenConfig(b, token).makeApiClient(CoreV1Api);
    await assert.rejects(core.readNamespacedConfigMap({ namespace: 'team-x', name: 'cfg' }), (err) => statusCode(err) === 401);
  });

  it('verifies TLS against the given CA: URL + CA + token works, another CA fails', async () => {
    const good = tokenConfig(a, token).makeApiClient(CoreV1Api);
    await good.readNamespacedConfigMap({ namespace: 'team-x', name: 'cfg' });
    const wrongCa = tokenConfig(a, token, 'token-user', b.caPem).makeApiClient(CoreV1Api);
    await assert.rejects(wrongCa.readNamespacedConfigMap({ namespace: 'team-x', name: 'cfg' }), (err: unknown) => {
      const text = `${String(err)} ${String((err as { cause?: unknown }).cause)}`;
      return /certificate|self[- ]signed|verify/i.test(text);
    });
  });

  it('serves a CRD with a status subresource and printer columns that kubectl prints', async () => {
    const kc = a.adminConfig();
    await applyCrds(kc, [{
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.smoke.test' },
      spec: {
        group: 'smoke.test', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{
          name: 'v1', served: true, storage: true, subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          ],
          schema: { openAPIV3Schema: { type: 'object', properties: {
            spec: { type: 'object', properties: { size: { type: 'integer' } } },
            status: { type: 'object', properties: { phase: { type: 'string' } } },
          } } },
        }],
      },
    }]);
    const co = kc.makeApiClient(CustomObjectsApi);
    const ref = { group: 'smoke.test', version: 'v1', namespace: 'team-x', plural: 'widgets' };
    await co.createNamespacedCustomObject({ ...ref, body: { apiVersion: 'smoke.test/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 }, status: { phase: 'ignored' } } });
    const created = (await co.getNamespacedCustomObject({ ...ref, name: 'w1' })) as { status?: unknown };
    assert.equal(created.status, undefined, 'status written through the main resource must be dropped');
    await co.patchNamespacedCustomObjectStatus({ ...ref, name: 'w1', body: [{ op: 'add', path: '/status', value: { phase: 'Running' } }] });
    const table = await kubectl(a, ['get', 'widgets', '-n', 'team-x']);
    const [header, row] = table.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+SIZE\s+PHASE$/);
    assert.match(row ?? '', /^w1\s+3\s+Running$/);
  });

  it('leaves no process behind when a control plane stops', async () => {
    const c = await startControlPlane('smoke-stop');
    assert.ok(leftoverHarnessProcesses().some((p) => p.cmdline.includes(c.dir)));
    await c.stop();
    assert.deepEqual(leftoverHarnessProcesses().filter((p) => p.cmdline.includes(c.dir)), []);
  });
});
