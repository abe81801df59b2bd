import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { checkedList, jsonList } from '../../src/leader/lists.js';

test('checkedList: a list with items and metadata passes as it is', () => {
  const answer = { kind: 'List', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'a' } }] };
  assert.equal(checkedList(answer, 'w'), answer);
  assert.deepEqual(checkedList({ items: [] }, 'w').items, []);
  assert.deepEqual(checkedList({ kind: 'ServiceAccountList', items: [] }, 'w').items, []);
});

test('checkedList: an answer that is not a list is refused, naming where it came from', () => {
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
    assert.throws(() => checkedList(answer as Record<string, unknown>, 'leader LIST /x'), (err: unknown) =>
      err instanceof UnexpectedResponseError && err.message.includes(problem) && err.message.includes('leader LIST /x'), JSON.stringify(answer));
  }
});

test('jsonList: every page through the JSON client, with limit, continue and the selectors', async () => {
  const calls: { method: string; path: string; query: unknown }[] = [];
  const pages: Record<string, Record<string, unknown>> = {
    '': { metadata: { resourceVersion: '1', continue: 't1' }, items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] },
    t1: { metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'c' } }] },
  };
  const client = {
    request: <T>(method: string, path: string, options?: { query?: Record<string, unknown> }): Promise<T> => {
      calls.push({ method, path, query: options?.query });
      const token = options?.query?.['continue'];
      return Promise.resolve(pages[typeof token === 'string' ? token : ''] as T);
    },
  };
  const list = await jsonList(client, '/api/v1/namespaces/ns/configmaps', { labelSelector: 'a=b' }, 2)();
  assert.deepEqual(list.items.map((i) => i.metadata?.name), ['a', 'b', 'c']);
  assert.equal(list.metadata?.resourceVersion, '1');
  assert.deepEqual(calls, [
    { method: 'GET', path: '/api/v1/namespaces/ns/configmaps', query: { limit: 2, continue: undefined, labelSelector: 'a=b', fieldSelector: undefined } },
    { method: 'GET', path: '/api/v1/namespaces/ns/configmaps', query: { limit: 2, continue: 't1', labelSelector: 'a=b', fieldSelector: undefined } },
  ]);
});

test('jsonList: a page that is not a list fails the whole list (the informer lists again later)', async () => {
  const client = { request: <T>(): Promise<T> => Promise.resolve({ kind: 'Status' } as T) };
  await assert.rejects(jsonList(client, '/api/v1/namespaces/ns/events')(), UnexpectedResponseError);
});
