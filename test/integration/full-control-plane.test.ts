// The fuller control plane (kube-controller-manager, kube-scheduler, a kwok node) that tests
// opt into: what a bare apiserver never does, it does. Deployments get Running Pods with IPs,
// the EndpointSlice controller publishes them, and a deleted namespace goes away.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace } from '../harness/kube.js';
import { maybe } from '../harness/imports.js';
import { onFailureShowLogs } from '../harness/report.js';
import { waitFor } from '../harness/wait.js';

describe('fuller control plane (controllers: true)', () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startControlPlane('full', { controllers: true, podCIDR: '10.246.0.0/16' });
  });
  after(async () => {
    await cp.stop();
  });
  onFailureShowLogs(() => [cp]);

  it('runs a Deployment\'s Pod on the kwok node, with an IP, and publishes it in an EndpointSlice', async () => {
    const kc = cp.adminConfig();
    await createNamespace(kc, 'app');
    const labels = { app: 'hello' };
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: 'app',
      body: {
        metadata: { name: 'hello' },
        spec: {
          replicas: 2, selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'example.invalid/hello:1', ports: [{ containerPort: 8080 }] }] } },
        },
      },
    });
    await kc.makeApiClient(CoreV1Api).createNamespacedService({
      namespace: 'app',
      body: { metadata: { name: 'hello' }, spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    });
    const core = kc.makeApiClient(CoreV1Api);
    const pods = await waitFor('two Running Pods with IPs', async () => {
      const list = await core.listNamespacedPod({ namespace: 'app', labelSelector: 'app=hello' });
      const running = list.items.filter((p) => p.status?.phase === 'Running' && (p.status.podIP ?? '') !== '');
      return running.length === 2 ? running : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    for (const pod of pods) {
      assert.equal(pod.spec?.nodeName, cp.nodeName);
      assert.match(pod.status?.podIP ?? '', /^10\.246\./);
    }
    const slice = await waitFor('an EndpointSlice of the controller with both Pod IPs', async () => {
      const list = await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: 'app', labelSelector: 'kubernetes.io/service-name=hello' });
      return list.items.find((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length === 2);
    }, { timeoutMs: 60_000, intervalMs: 250 });
    assert.equal(slice.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
    assert.deepEqual(slice.endpoints?.flatMap((e) => e.addresses).sort(), pods.map((p) => p.status?.podIP).sort());
    assert.deepEqual(slice.ports?.map((p) => p.port), [8080]);
  });

  it('finalises a deleted namespace, its contents garbage-collected', async () => {
    const kc = cp.adminConfig();
    const core = kc.makeApiClient(CoreV1Api);
    await createNamespace(kc, 'gone');
    await core.createNamespacedConfigMap({ namespace: 'gone', body: { metadata: { name: 'cfg' } } });
    await core.deleteNamespace({ name: 'gone' });
    await waitFor('namespace gone to be removed', async () => (await maybe(() => core.readNamespace({ name: 'gone' }))) === undefined,
      { timeoutMs: 60_000, intervalMs: 250 });
    // The name is free again, and empty: the ConfigMap went with the namespace.
    await createNamespace(kc, 'gone');
    assert.equal(await maybe(() => core.readNamespacedConfigMap({ namespace: 'gone', name: 'cfg' })), undefined);
  });
});
