// A list read in pages: every page asked for with limit and the previous continue token, the
// items joined in order, the snapshot's resourceVersion kept, and an expired continue token
// (410) answered by starting over, a bounded number of times.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LIST_GONE_RESTARTS, listAllPages, paged, type Page } from '../../src/common/kube/paginate.js';

type List = { items: number[]; metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number } };
const gone = () => Object.assign(new Error('410: the provided continue parameter is too old'), { code: 410 });

/** A collection of `size` numbers served `limit` at a time; `expireAt` pages (by index) answer 410 once each. */
function server(size: number, expireAt: number[] = []) {
  const asked: Page[] = [];
  let snapshot = 1;
  const fetch = async (page: Page): Promise<List> => {
    await Promise.resolve();
    asked.push(page);
    if (page.continue === undefined) snapshot++;
    const start = page.continue === undefined ? 0 : Number(page.continue.split(':')[1]);
    if (page.continue !== undefined && expireAt.includes(start)) {
      expireAt.splice(expireAt.indexOf(start), 1);
      throw gone();
    }
    const items = Array.from({ length: Math.min(page.limit, size - start) }, (_, i) => start + i);
    const next = start + items.length;
    return { items, metadata: { resourceVersion: String(snapshot), ...(next < size && { continue: `${String(snapshot)}:${String(next)}`, remainingItemCount: size - next }) } };
  };
  return { fetch, asked };
}

describe('listAllPages', () => {
  it('reads 1,201 objects in three pages of 500 and returns them in order, without a continue token', async () => {
    const s = server(1201);
    const list = await listAllPages(s.fetch);
    assert.equal(list.items.length, 1201);
    assert.deepEqual(list.items.slice(498, 502), [498, 499, 500, 501]);
    assert.deepEqual(s.asked.map((p) => [p.limit, p.continue]), [[500, undefined], [500, '2:500'], [500, '2:1000']]);
    assert.deepEqual(list.metadata, { resourceVersion: '2' });
  });

  it('an expired continue token (410) starts the list over from the first page', async () => {
    const s = server(1201, [1000]);
    const list = await listAllPages(s.fetch);
    assert.equal(list.items.length, 1201);
    assert.deepEqual(s.asked.map((p) => p.continue), [undefined, '2:500', '2:1000', undefined, '3:500', '3:1000']);
    assert.deepEqual(list.items, Array.from({ length: 1201 }, (_, i) => i), 'no item twice, none missing');
  });

  it(`gives up after ${String(LIST_GONE_RESTARTS)} restarts, and never retries another error`, async () => {
    await assert.rejects(listAllPages(server(1201, [500, 500, 500, 500]).fetch), /410/);
    let calls = 0;
    await assert.rejects(listAllPages(async () => { calls++; await Promise.resolve(); throw Object.assign(new Error('forbidden'), { code: 403 }); }), /forbidden/);
    assert.equal(calls, 1);
  });

  it("paged() hands client-node's calls limit and _continue, and reads the token where its models put it (_continue)", async () => {
    const asked: unknown[] = [];
    const list = await paged(async (page: { limit: number; _continue?: string }) => {
      await Promise.resolve();
      asked.push(page);
      // As V1ListMeta deserialises an answer's `continue` (test/integration/paginate.test.ts).
      return page._continue === undefined ? { items: [1], metadata: { _continue: 'c1' } } : { items: [2], metadata: { _continue: '' } };
    }, 1)();
    assert.deepEqual(asked, [{ limit: 1 }, { limit: 1, _continue: 'c1' }]);
    assert.deepEqual(list.items, [1, 2]);
    assert.deepEqual(list.metadata, {}, 'no token left on the whole list');
  });
});
