import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { listProblem } from '../../src/common/kube/typed-api.js';
import type { RequestOptions } from '../../src/common/kube/json-client.js';
import { jsonList } from '../../src/leader/lists.js';

/** A JSON client's request as createJsonClient's checks it: a 2xx answer `expect` refuses fails naming the request. */
function answering(answer: (query: Record<string, unknown> | undefined) => Record<string, unknown>, calls: { method: string; path: string; query: unknown }[] = []) {
  return {
    request: <T>(method: string, path: string, options?: RequestOptions): Promise<T> => {
      calls.push({ method, path, query: options?.query });
      const body = answer(options?.query);
      const problem = options?.expect?.(body);
      if (problem !== undefined) return Promise.reject(new UnexpectedResponseError(200, 'application/json', problem, '', `leader GET ${path}`));
      return Promise.resolve(body as T);
    },
  };
}

test('listProblem: a list with items and metadata passes', () => {
  assert.equal(listProblem({ kind: 'List', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'a' } }] }), undefined);
  assert.equal(listProblem({ items: [] }), undefined);
  assert.equal(listProblem({ kind: 'ServiceAccountList', items: [] }), undefined);
});

test('listProblem: an answer that is not a list is refused, and jsonList fails naming where it came from', async () => {
  for (const [answer, problem] of [
    [{ metadata: {} }, 'items array'],
    [{ items: { a: 1 } }, 'items array'],
    [{ items: [{ metadata: {} }, 'x'] }, 'every list item'],
    [{ items: [null] }, 'every list item'],
    [{ items: [[]] }, 'every list item'],
    [{ items: [], metadata: 'rv' }, 'list metadata'],
    [{ items: [], metadata: [] }, 'list metadata'],
    [{ kind: 'Status', items: [] }, 'list kind, got "Status"'],
    [{ kind: 7, items: [] }, 'list kind, got 7'],
  ] as const) {
    assert.ok(listProblem(answer)?.includes(problem), JSON.stringify(answer));
    await assert.rejects(jsonList(answering(() => answer as Record<string, unknown>), '/x')(), (err: unknown) =>
      err instanceof UnexpectedResponseError && err.message.includes(problem) && err.message.includes('leader GET /x'), JSON.stringify(answer));
  }
});

test('jsonList: every page through the JSON client, with limit, continue and the selectors', async () => {
  const calls: { method: string; path: string; query: unknown }[] = [];
  const pages: Record<string, Record<string, unknown>> = {
    '': { metadata: { resourceVersion: '1', continue: 't1' }, items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] },
    t1: { metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'c' } }] },
  };
  const client = answering((query) => {
    const token = query?.['continue'];
    return pages[typeof token === 'string' ? token : ''] ?? {};
  }, calls);
  const list = await jsonList(client, '/api/v1/namespaces/ns/configmaps', { labelSelector: 'a=b' }, 2)();
  assert.deepEqual(list.items.map((i) => i.metadata?.name), ['a', 'b', 'c']);
  assert.equal(list.metadata?.resourceVersion, '1');
  assert.deepEqual(calls, [
    { method: 'GET', path: '/api/v1/namespaces/ns/configmaps', query: { limit: 2, continue: undefined, labelSelector: 'a=b', fieldSelector: undefined } },
    { method: 'GET', path: '/api/v1/namespaces/ns/configmaps', query: { limit: 2, continue: 't1', labelSelector: 'a=b', fieldSelector: undefined } },
  ]);
});

test('jsonList: a page that is not a list fails the whole list (the informer lists again later)', async () => {
  await assert.rejects(jsonList(answering(() => ({ kind: 'Status' })), '/api/v1/namespaces/ns/events')(), UnexpectedResponseError);
});
