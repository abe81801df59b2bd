/**
 * Plain-JSON requests to the cluster of a KubeConfig, for the importer's hot path.
 *
 * client-node's generated APIs turn every answer into model classes (ObjectSerializer) through
 * WHATWG fetch and streams, which the importer then had to turn back into plain JSON: in a
 * profile of an initial sync, that was most of the agent's own CPU per object, on a machine
 * whose cores the API server needs. This sends the same requests with undici's `request`, with
 * the KubeConfig's own authentication (every kind of user client-node supports: tokens, files
 * that rotate, exec plugins, client certificates) and its shared, budgeted dispatcher
 * (shared-connections.ts).
 *
 * Answers are checked like the leader client's (rest-client.ts): a 2xx must be a JSON object,
 * anything else a Kubernetes Status ({@link ApiError}), or it is an UnexpectedResponseError.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { type Dispatcher, request as undiciRequest } from 'undici';
import type { WatchLike } from './informer.js';
import { authenticationOf } from './shared-connections.js';
import { answerError, headerText, isJson, parseObject, snippetOf, streamWatch, UnexpectedResponseError, type Query } from './rest-client.js';

type Json = Record<string, unknown>;

export interface JsonClient extends WatchLike {
  request<T extends Json>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options?: { readonly query?: Query; readonly body?: unknown }): Promise<T>;
}

/**
 * A member watch that receives no byte for this long is ended (ListWatch reopens it at once).
 * Not client-node's 30 s: with bookmarks (informer.ts) the API server sends something about
 * once a minute, and a quiet watch cut every 30 s cost two requests a minute per watch.
 */
export const MEMBER_WATCH_IDLE_MS = 300_000;
const WATCH_CONNECT_MS = 30_000;

/** What client-node's `applySecurityAuthentication` writes into a request context. */
interface Authorization {
  headers: Record<string, string>;
  dispatcher: Dispatcher | undefined;
}

async function authorize(kc: KubeConfig): Promise<Authorization> {
  const auth: Authorization = { headers: {}, dispatcher: undefined };
  // The two methods of a generated RequestContext that authentication calls.
  const context = {
    setHeaderParam: (name: string, value: string) => { auth.headers[name] = value; },
    setDispatcher: (dispatcher: Dispatcher) => { auth.dispatcher = dispatcher; },
  };
  // Shared keep-alive connections and the client budget once the agent shared them (shared-connections.ts).
  await authenticationOf(kc).applySecurityAuthentication(context as unknown as Parameters<KubeConfig['applySecurityAuthentication']>[0]);
  return auth;
}

/**
 * How long one authentication is reused. client-node re-reads the token, CA and certificate
 * files on every request (three file reads per object in a profile of a 10,000-object sync);
 * client-go re-reads a token file at most once a minute. A 401 drops it at once, so a rotated
 * token is picked up by the next request.
 */
export const AUTH_REUSE_MS = 10_000;

/**
 * What the answers carry: whole objects, or only their metadata (the API server's
 * PartialObjectMetadata, as client-go's metadata informers ask for it). A cache that needs only
 * names then neither receives nor parses the objects' content. `metadata` is for LIST and
 * WATCH requests of a collection only.
 */
export type Answers = 'objects' | 'metadata';

const ACCEPT: Readonly<Record<Answers, { readonly list: string; readonly watch: string }>> = {
  objects: { list: 'application/json', watch: 'application/json' },
  metadata: {
    list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    watch: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
  },
};

/** Requests to `kc`'s current cluster; each waits at most `timeoutMs` for the whole answer. */
export function createJsonClient(kc: KubeConfig, timeoutMs = 60_000, now: () => number = () => performance.now(), answers: Answers = 'objects'): JsonClient {
  const accept = ACCEPT[answers];
  let cached: { readonly auth: Promise<Authorization>; readonly at: number } | undefined;
  const currentAuth = (): Promise<Authorization> => {
    if (cached === undefined || now() - cached.at >= AUTH_REUSE_MS) {
      const auth = authorize(kc);
      const entry = { auth, at: now() };
      cached = entry;
      // A failure is not reused: the next request tries again.
      auth.catch(() => { if (cached === entry) cached = undefined; });
    }
    return cached.auth;
  };
  const target = (path: string, query: Query | undefined): URL => {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  };
  return {
    async watch(path, query, callback, done) {
      const url = target(path, { ...query, watch: true });
      const { headers, dispatcher } = await currentAuth();
      const secret = /^Bearer (.+)$/.exec(headers['Authorization'] ?? headers['authorization'] ?? '')?.[1];
      return streamWatch({
        where: `member WATCH ${path}`, secret, connectTimeoutMs: WATCH_CONNECT_MS, idleMs: MEMBER_WATCH_IDLE_MS,
        open: async (signal) => {
          const answer = await undiciRequest(url, {
            method: 'GET', headers: { ...headers, Accept: accept.watch, 'User-Agent': 'clusterset-agent' },
            ...(dispatcher !== undefined && { dispatcher }), signal, headersTimeout: 0, bodyTimeout: 0,
          });
          if (answer.statusCode === 401) cached = undefined;
          return answer;
        },
        track: () => undefined,
        untrack: () => undefined,
      }, callback, done);
    },
    async request<T extends Json>(method: string, path: string, options: { readonly query?: Query; readonly body?: unknown } = {}): Promise<T> {
      const url = target(path, options.query);
      const where = `member ${method} ${path}`;
      const { headers, dispatcher } = await currentAuth();
      const secret = /^Bearer (.+)$/.exec(headers['Authorization'] ?? headers['authorization'] ?? '')?.[1];
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      const answer = await undiciRequest(url, {
        method,
        headers: { ...headers, Accept: method === 'GET' ? accept.list : 'application/json', 'User-Agent': 'clusterset-agent', ...(payload !== undefined && { 'Content-Type': 'application/json' }) },
        ...(payload !== undefined && { body: payload }),
        ...(dispatcher !== undefined && { dispatcher }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await answer.body.text();
      const contentType = headerText(answer.headers['content-type']);
      const status = answer.statusCode;
      if (status === 401) cached = undefined;
      if (status < 200 || status >= 300) throw answerError(where, status, contentType, text, secret);
      if (!isJson(contentType)) throw new UnexpectedResponseError(status, contentType, 'expected application/json', snippetOf(text, secret), where);
      const body = parseObject(text);
      if (body === undefined) throw new UnexpectedResponseError(status, contentType, 'expected a JSON object', snippetOf(text, secret), where);
      return body as T;
    },
  };
}
