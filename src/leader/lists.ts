// The LISTs of the leader's informers, through the project's plain-JSON client (the one their
// watches already use) rather than client-node's generated APIs: a restart waits for these
// lists before /readyz (issue 31: restart → ready), and client-node's path (WHATWG fetch and
// streams, then ObjectSerializer walking every typed object into model classes with Date
// fields the watch path never produces) is the heavier of the two. A listed object is now what
// a watched one already was: plain JSON.
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { JsonClient } from '../common/kube/json-client.js';
import { LIST_PAGE_SIZE, listAllPages } from '../common/kube/paginate.js';
import { UnexpectedResponseError } from '../common/kube/rest-client.js';

export interface ListSelectors {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

const isObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The list answer as the informer needs it (a kind ending in List when present, an `items`
 * array of objects, `metadata` an object when present), or an UnexpectedResponseError naming
 * `where`: the informer reports it and lists again later. The JSON client has already checked that the answer is a JSON object.
 */
export function checkedList<T extends KubernetesObject>(answer: Record<string, unknown>, where: string): KubernetesListObject<T> {
  const { kind, items, metadata } = answer;
  // A list's kind is its items' kind + "List" (or "List"); a Status or a single object that
  // happens to carry an items field is not a list.
  const problem = kind !== undefined && (typeof kind !== 'string' || !kind.endsWith('List'))
    ? `expected a list kind, got ${JSON.stringify(kind).slice(0, 64)}`
    : !Array.isArray(items)
      ? 'expected a list with an items array'
      : !items.every(isObject)
        ? 'expected every list item to be an object'
        : metadata !== undefined && !isObject(metadata)
          ? 'expected list metadata to be an object'
          : undefined;
  if (problem !== undefined) throw new UnexpectedResponseError(200, 'application/json', problem, '', where);
  return answer as unknown as KubernetesListObject<T>;
}

/**
 * Lists the collection at `path` page by page through `client` (client-go's page size, each
 * page from the API server's snapshot of the first), with the selectors the informer's watch
 * applies.
 */
export function jsonList<T extends KubernetesObject>(client: Pick<JsonClient, 'request'>, path: string, selectors: ListSelectors = {}, pageSize = LIST_PAGE_SIZE): () => Promise<KubernetesListObject<T>> {
  const where = `leader LIST ${path}`;
  return () => listAllPages(async (page) => checkedList<T>(await client.request('GET', path, {
    query: { limit: page.limit, continue: page.continue, labelSelector: selectors.labelSelector, fieldSelector: selectors.fieldSelector },
  }), where), pageSize);
}
