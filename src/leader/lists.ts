// The LISTs of the leader's informers, through the project's plain-JSON client (the one their
// watches already use) rather than client-node's generated APIs: a restart waits for these
// lists before /readyz (issue 31: restart → ready), and client-node's path (WHATWG fetch and
// streams, then ObjectSerializer walking every typed object into model classes with Date
// fields the watch path never produces) is the heavier of the two. A listed object is now what
// a watched one already was: plain JSON.
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { JsonClient } from '../common/kube/json-client.js';
import { LIST_PAGE_SIZE, listAllPages } from '../common/kube/paginate.js';
import { listProblem } from '../common/kube/typed-api.js';

export interface ListSelectors {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/**
 * Lists the collection at `path` page by page through `client` (client-go's page size, each
 * page from the API server's snapshot of the first), with the selectors the informer's watch
 * applies.
 */
export function jsonList<T extends KubernetesObject>(client: Pick<JsonClient, 'request'>, path: string, selectors: ListSelectors = {}, pageSize = LIST_PAGE_SIZE): () => Promise<KubernetesListObject<T>> {
  // A page that is not a list fails in the JSON client, with its status and a snippet: the informer lists again later.
  return () => listAllPages(async (page) => (await client.request('GET', path, {
    query: { limit: page.limit, continue: page.continue, labelSelector: selectors.labelSelector, fieldSelector: selectors.fieldSelector },
    expect: listProblem,
  })) as unknown as KubernetesListObject<T>, pageSize);
}
