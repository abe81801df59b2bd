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
  /**
   * `continue` in JSON; client-node's generated models (V1ListMeta) call it `_continue`, so a
   * typed list (ServiceAccounts, Services, Namespaces...) carries the token there. Reading only
   * `continue` stopped every typed list at its first page: a restarted leader saw 500 of 1,050
   * ServiceAccounts and rewrote its admission parameter with 500 members (bench:leader at 1,000
   * members), and a member's exporter saw the first 500 Services.
   */
  metadata?: { resourceVersion?: string; continue?: string; _continue?: string; remainingItemCount?: number };
}

/** The answer's continue token, in JSON's spelling or client-node's; undefined on the last page. */
function continueOf(answer: ListAnswer<unknown>): string | undefined {
  const token = answer.metadata?.continue ?? answer.metadata?._continue;
  return token === undefined || token === '' ? undefined : token;
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
      for (let token = continueOf(answer); token !== undefined; token = continueOf(answer)) {
        answer = await fetch({ limit: pageSize, continue: token });
        items.push(...answer.items);
      }
      const { continue: _done, _continue: _typedDone, remainingItemCount: _none, ...metadata } = answer.metadata ?? {};
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
