// A LIST read in pages (`limit` and `continue`), as client-go's pager reads one: each answer
// stays small (and under the client's byte cap, which applies per answer), however large the
// collection, and the API server serves every page from the snapshot of the first. A continue
// token the API server has compacted away answers 410 Gone: the list starts over from the first
// page (a new snapshot), a bounded number of times.
import { isGone } from './errors.js';

/** Objects per page: client-go's pager default. */
export const LIST_PAGE_SIZE = 500;
/** A list that keeps losing its continue token this many times in a row fails. */
export const LIST_GONE_RESTARTS = 3;

export interface Page {
  readonly limit: number;
  /** Undefined for the first page. */
  readonly continue: string | undefined;
}

interface ListAnswer<T> {
  items: T[];
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
}

/**
 * Reads every page of a list through `fetch` and returns one list: all items, in order, with
 * the metadata of the last page (its resourceVersion is the snapshot's, what a watch starts from).
 */
export async function listAllPages<L extends ListAnswer<unknown>>(fetch: (page: Page) => Promise<L>, pageSize = LIST_PAGE_SIZE): Promise<L> {
  for (let restarts = 0; ; restarts++) {
    try {
      let answer = await fetch({ limit: pageSize, continue: undefined });
      const items = [...answer.items];
      while (answer.metadata?.continue !== undefined && answer.metadata.continue !== '') {
        answer = await fetch({ limit: pageSize, continue: answer.metadata.continue });
        items.push(...answer.items);
      }
      const { continue: _done, remainingItemCount: _none, ...metadata } = answer.metadata ?? {};
      return Object.assign(answer, { items, metadata });
    } catch (err) {
      // An expired continue token: start over, from a new snapshot.
      if (!isGone(err) || restarts >= LIST_GONE_RESTARTS) throw err;
    }
  }
}

/** The same, for client-node's generated list calls, whose parameters are `limit` and `_continue`. */
export function paged<L extends ListAnswer<unknown>>(fetch: (page: { limit: number; _continue?: string }) => Promise<L>, pageSize = LIST_PAGE_SIZE): () => Promise<L> {
  return () => listAllPages((page) => fetch({ limit: page.limit, ...(page.continue !== undefined && { _continue: page.continue }) }), pageSize);
}
