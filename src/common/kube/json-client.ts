/**
 * Plain-JSON requests to the cluster of a KubeConfig: every request the agents and the CLI
 * send (typed-api.ts gives them client-node's method names).
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
import { type Dispatcher, getGlobalDispatcher, request as undiciRequest } from 'undici';
import type { WatchLike } from './informer.js';
import { authenticationOf } from './shared-connections.js';
import { answerError, headerText, isJson, parseObject, snippetOf, streamWatch, UnexpectedResponseError, type Query } from './rest-client.js';

type Json = Record<string, unknown>;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  readonly query?: Query;
  /** Sent as JSON; a PATCH's body is a JSON patch (RFC 6902), client-node's default patch type. */
  readonly body?: unknown;
  /** Ends the request early (besides the client's own deadline). */
  readonly signal?: AbortSignal;
  /** What is wrong with a 2xx answer (e.g. `expected kind Secret, got "Status"`), or undefined: it then fails like any answer no API server would send. */
  readonly expect?: (answer: Json) => string | undefined;
}

export interface JsonClient extends WatchLike {
  request<T extends Json>(method: Method, path: string, options?: RequestOptions): Promise<T>;
}

export interface JsonClientOptions {
  /**
   * Whose requests these are, first in every error (`leader GET /apis/…`): the same client
   * serves the member's agent, the leader's and the CLI's commands, whose logs must say which.
   */
  readonly who: string;
  /** How long one request may take, answer included; default 60 s. */
  readonly timeoutMs?: number;
  /** The clock of the deadlines and of the reused authentication (tests). */
  readonly now?: () => number;
  /** Whole objects (the default) or only their metadata. */
  readonly answers?: Answers;
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

/**
 * Deadlines of requests in flight, swept by one timer instead of one `AbortSignal.timeout` per
 * request: in a CPU profile of a 10,000-object import sync, creating those signals and timers
 * was a tenth of the JSON client's own time. A request is aborted (a DOMException named
 * TimeoutError, as `AbortSignal.timeout` gives) at most a sweep period after its deadline.
 */
export class Deadlines {
  readonly #pending = new Map<AbortController, { readonly at: number; readonly what: string }>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly periodMs: number, private readonly now: () => number = () => performance.now()) {}

  get size(): number {
    return this.#pending.size;
  }

  /** A signal aborted once `timeoutMs` passed; {@link done} drops it. */
  start(timeoutMs: number, what: string): AbortController {
    const controller = new AbortController();
    this.#pending.set(controller, { at: this.now() + timeoutMs, what: `${what} did not complete within ${String(timeoutMs)} ms` });
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => { this.sweep(); }, this.periodMs);
      this.#timer.unref();
    }
    return controller;
  }

  done(controller: AbortController): void {
    this.#pending.delete(controller);
  }

  /** Aborts what is past its deadline; the timer stops when nothing is in flight. */
  sweep(): void {
    const now = this.now();
    for (const [controller, { at, what }] of this.#pending) {
      if (at > now) continue;
      this.#pending.delete(controller);
      controller.abort(new DOMException(what, 'TimeoutError'));
    }
    if (this.#pending.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** Where a cluster's requests go: the origin, and the server's path prefix (if any) every path is put under. */
function endpointOf(server: string): { readonly origin: string; readonly prefix: string } {
  const base = new URL(server.replace(/\/+$/, ''));
  return { origin: base.origin, prefix: base.pathname.replace(/\/+$/, '') };
}

/**
 * Requests to `kc`'s current cluster; each waits at most `timeoutMs` for the whole answer
 * (aborted within a second after, {@link Deadlines}).
 */
export function createJsonClient(kc: KubeConfig, options: JsonClientOptions): JsonClient {
  const { who, timeoutMs = 60_000, now = () => performance.now(), answers = 'objects' } = options;
  // A kubeconfig without a cluster is a mistake no retry mends: the agent fails at its start
  // with the reason (exit 1), not with every request it would send.
  if (!kc.getCurrentCluster()) throw new Error(`${who}: the kubeconfig has no current cluster (check its current-context, or --kubeconfig)`);
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
  // The origin and prefix of the last server seen, so that a request parses no URL.
  let endpoint: { readonly server: string; readonly origin: string; readonly prefix: string } | undefined;
  const currentEndpoint = (): { readonly origin: string; readonly prefix: string } => {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    if (endpoint?.server !== cluster.server) endpoint = { server: cluster.server, ...endpointOf(cluster.server) };
    return endpoint;
  };
  const target = (path: string, query: Query): URL => {
    const { origin, prefix } = currentEndpoint();
    return new URL(origin + prefix + path + searchOf(query));
  };
  const deadlines = new Deadlines(Math.min(1_000, Math.max(10, Math.floor(timeoutMs / 4))), now);
  return {
    async watch(path, query, callback, done) {
      const url = target(path, { ...query, watch: true });
      const { headers, dispatcher } = await currentAuth();
      return streamWatch({
        where: `${who} WATCH ${path}`, secret: bearerOf(headers), connectTimeoutMs: WATCH_CONNECT_MS, idleMs: MEMBER_WATCH_IDLE_MS,
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
    async request<T extends Json>(method: Method, path: string, options: RequestOptions = {}): Promise<T> {
      // The dispatcher is given the origin and the path as strings: no URL object is built or
      // parsed per request (a query, such as a list's page, is encoded as URLSearchParams does).
      const { origin, prefix } = currentEndpoint();
      const search = options.query === undefined ? '' : searchOf(options.query);
      const where = `${who} ${method} ${path}`;
      const { headers, dispatcher } = await currentAuth();
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      const deadline = deadlines.start(timeoutMs, where);
      let status: number;
      let contentType: string;
      let text: string;
      try {
        const answer = await (dispatcher ?? getGlobalDispatcher()).request({
          origin, path: prefix + path + search, method,
          headers: { ...headers, Accept: method === 'GET' ? accept.list : 'application/json', 'User-Agent': 'clusterset-agent', ...(payload !== undefined && { 'Content-Type': method === 'PATCH' ? 'application/json-patch+json' : 'application/json' }) },
          ...(payload !== undefined && { body: payload }),
          signal: options.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, options.signal]),
        });
        text = await answer.body.text();
        contentType = headerText(answer.headers['content-type']);
        status = answer.statusCode;
      } finally {
        deadlines.done(deadline);
      }
      if (status === 401) cached = undefined;
      if (status < 200 || status >= 300) throw answerError(where, status, contentType, text, bearerOf(headers));
      const unexpected = (problem: string) => new UnexpectedResponseError(status, contentType, problem, snippetOf(text, bearerOf(headers)), where);
      if (!isJson(contentType)) throw unexpected('expected application/json');
      const body = parseObject(text);
      if (body === undefined) throw unexpected('expected a JSON object');
      const problem = options.expect?.(body);
      if (problem !== undefined) throw unexpected(problem);
      return body as T;
    },
  };
}

/** The bearer token of the headers, redacted from error snippets. */
function bearerOf(headers: Readonly<Record<string, string>>): string | undefined {
  return /^Bearer (.+)$/.exec(headers['Authorization'] ?? headers['authorization'] ?? '')?.[1];
}

/** `?key=value&…` of the defined values, encoded as `URLSearchParams` encodes them; '' when none. */
function searchOf(query: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
