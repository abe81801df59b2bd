// Lists read in pages against a real API server, through client-node's generated calls (typed
// models, whose V1ListMeta names the token `_continue`) and its custom-object calls (plain JSON,
// `continue`): every item of every page, not the first page only. A unit test's fake answers
// could only repeat what the code assumed; at 1,000 members a restarted leader listed 500 of its
// 1,050 ServiceAccounts and rewrote its admission parameter with 500 members.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, type V1ConfigMap } from '@kubernetes/client-node';
import { paged } from '../../src/common/kube/paginate.js';
import { CLUSTERSET } from '../../src/common/api/antrea.js';
import { installCrds } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace } from '../harness/kube.js';

const NS = 'paged';
const COUNT = 7;
const PAGE = 3;

void describe('lists in pages, on a real API server', () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane('paginate');
    await installCrds(cp);
    await createNamespace(cp.adminConfig(), NS);
    const core = cp.adminConfig().makeApiClient(CoreV1Api);
    const objects = cp.adminConfig().makeApiClient(CustomObjectsApi);
    for (let i = 0; i < COUNT; i++) {
      await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: `cm-${String(i)}` }, data: { i: String(i) } } });
      await objects.createNamespacedCustomObject({
        group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: NS,
        body: { apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: `cs-${String(i)}` }, spec: { clusterID: 'x', leaders: [{ clusterID: 'x' }] } },
      });
    }
  });
  after(async () => { await cp.stop(); });

  void it('a typed list (client-node\'s models: _continue) gets every page', async () => {
    const core = cp.adminConfig().makeApiClient(CoreV1Api);
    const pages: (string | undefined)[] = [];
    const list = await paged(async (page) => {
      pages.push(page._continue);
      return core.listNamespacedConfigMap({ namespace: NS, ...page });
    }, PAGE)();
    const names = list.items.map((cm: V1ConfigMap) => cm.metadata?.name ?? '').filter((n) => n.startsWith('cm-')).sort();
    assert.deepEqual(names, Array.from({ length: COUNT }, (_, i) => `cm-${String(i)}`));
    assert.ok(pages.length >= Math.ceil(COUNT / PAGE), `read in pages of ${String(PAGE)}: ${String(pages.length)} requests`);
    assert.ok(list.metadata?.resourceVersion, 'the snapshot\'s resourceVersion, for the watch');
  });

  void it('a custom-object list (plain JSON: continue) gets every page', async () => {
    const objects = cp.adminConfig().makeApiClient(CustomObjectsApi);
    const list = await paged(async (page) => (await objects.listNamespacedCustomObject({
      group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: NS, ...page,
    })) as { items: { metadata?: { name?: string } }[]; metadata?: { resourceVersion?: string } }, PAGE)();
    assert.equal(list.items.length, COUNT);
  });
});
