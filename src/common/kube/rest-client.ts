/**
 * A minimal Kubernetes REST client over undici (HTTP/2 when the server offers it, HTTP/1.1
 * otherwise), for the leader's API server.
 *
 * Why not client-node: its 2.0.1 generated APIs open a new TCP+TLS connection per request (a
 * fresh undici dispatcher each time), and it believes any 2xx answer. An HTTPS endpoint that the
 * CA trusts but that is not the API server (a load balancer's maintenance page, a misrouted
 * ingress) answers `200 text/html`; taken as success it fakes heartbeats, and an HTML "list"
 * with no items makes the importer delete every import. So here:
 *
 * - keep-alive connections, shared with every other client of the same server and CA
 *   ({@link HttpsAgentPool}): over HTTP/2 all of them share one connection for requests and
 *   one for watches; over HTTP/1.1 sequential requests share one connection;
 * - every 2xx answer must be a JSON object (and pass the caller's `expect` check), every error
 *   answer a Kubernetes `Status`; anything else is an {@link UnexpectedResponseError};
 * - `watch` has the contract of client-node's `Watch.watch`, which `ListWatch` relies on.
 *
 * The bearer token only ever goes into the Authorization header: errors carry a redacted
 * snippet of the body (a proxy could echo request headers) and never the request options.
 */
import { STATUS_CODES } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { getHeapStatistics } from 'node:v8';
import { type Dispatcher, request as undiciRequest } from 'undici';
import type { ClientBudget } from './client-budget.js';
import { type HttpsAgentPool, sharedHttpsAgents } from './https-agent-pool.js';
import type { WatchLike } from './informer.js';
import { isRecord, type Json } from './json.js';

export type Query = Record<string, string | number | boolean | undefined>;
/** Says what is wrong with an answer (e.g. `expected kind X, got "Y"`), or `undefined` if it is fine. */
export type Expectation = (obj: Json, watchEventType?: string) => string | undefined;
type WatchCallback = Parameters<WatchLike['watch']>[2];
type WatchDone = Parameters<WatchLike['watch']>[3];

export interface RestClientOptions {
  /** `https://host:port[/prefix]`; a path prefix is kept. */
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
  /** Deadline of a whole request (connect, TLS, answer, body). */
  readonly timeoutMs: number;
  /** Concurrent requests (not watches) to the server, shared by every client of its pool. @default 16 */
  readonly maxSockets?: number;
  /** @default the process-wide {@link sharedHttpsAgents} */
  readonly agentPool?: HttpsAgentPool;
  /** A watch that receives no byte for this long is ended with a TimeoutError (ListWatch reconnects). @default 5 min */
  readonly watchIdleTimeoutMs?: number;
  /** Names the peer in error messages. @default 'server' */
  readonly peer?: string;
  /** Every request and watch start takes a token first. @default no limit */
  readonly budget?: ClientBudget;
  /** The largest 2xx answer read. @default {@link responseCapBytes} */
  readonly maxResponseBytes?: number;
}

export interface RequestOptions {
  readonly query?: Query;
  readonly body?: unknown;
  readonly timeoutMs?: number;
  readonly expect?: Expectation;
}

export interface RestClient {
  readonly server: string;
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** client-node's `Watch.watch` contract; each non-ERROR event object must pass `expectItem`. */
  watch(path: string, query: Query, callback: WatchCallback, done: WatchDone, expectItem?: Expectation): Promise<AbortController>;
  /** Ends this client's requests and watches and drops its claim on the shared connections. */
  close(): void;
}

/** A Kubernetes `Status` answer to a failed request. `code`/`body` match what `kube/errors.ts` reads. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: number;
  constructor(readonly statusCode: number, readonly body: Json) {
    super(`${String(statusCode)} ${str(body.reason) ?? STATUS_CODES[statusCode] ?? ''}: ${str(body.message) ?? ''}`);
    this.code = statusCode;
  }
}

/** An answer that is not what a Kubernetes API server would send: wrong content type, not JSON, wrong kind. */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError';
  constructor(
    readonly statusCode: number,
    readonly contentType: string,
    /** What was wrong, e.g. `expected application/json`. */
    readonly problem: string,
    /** Start of the body, control characters replaced, the token redacted. */
    readonly snippet: string,
    where: string,
  ) {
    super(`${where} answered ${String(statusCode)} with content type ${JSON.stringify(contentType)} (${problem}): ${JSON.stringify(snippet)}`);
  }
}

/** A request or watch that ran out of time. ListWatch reconnects at once on this name. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
  readonly code = 'ETIMEDOUT';
}

const MIB = 1024 * 1024;

/**
 * The largest 2xx answer read, from the heap limit: reading keeps the bytes, then the string,
 * then the parsed objects (several times the text), all at once, so an answer near the heap
 * limit would get the process killed for memory (the chart's limit is 256Mi). An eighth of
 * the heap, between 8 and 256 MiB: about 19 MiB under the image's settings.
 */
export function responseCapBytes(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.min(256 * MIB, Math.max(8 * MIB, Math.floor(heapLimitBytes / 8)));
}

function capProblem(cap: number, size: number | undefined): string {
  const heap = Math.round(getHeapStatistics().heap_size_limit / MIB);
  const capText = cap >= MIB ? `${(cap / MIB).toFixed(1)} MiB` : `${String(cap)} bytes`;
  return `${size === undefined ? 'answer larger than' : `answer of ${String(size)} bytes, larger than`} ${capText}, the cap derived from the agent's heap limit (${String(heap)} MiB)`;
}
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const MAX_EVENT_CHARS = 16 * 1024 * 1024;
const SNIPPET_CHARS = 120;
const WATCH_CONNECT_MIN_MS = 30_000;
const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);
// Retried once when a kept-alive socket turns out to be closed by the server; a POST is not,
// as it may have been processed.
const RETRY_ON_STALE_SOCKET = new Set(['GET', 'PUT', 'DELETE']);

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}


export function isJson(contentType: string): boolean {
  return /^application\/json\s*(;|$)/i.test(contentType.trim());
}

/** The start of an answer for an error message: control characters replaced, `secret` and bearer tokens redacted. */
export function snippetOf(text: string, secret: string | undefined): string {
  const start = text.slice(0, 4096);
  const clean = (secret ? start.split(secret).join('[REDACTED]') : start)
    .replace(/\b(bearer)\s+\S+/gi, '$1 [REDACTED]')
    .replace(/\p{Cc}+/gu, ' ');
  return clean.length > SNIPPET_CHARS ? `${clean.slice(0, SNIPPET_CHARS)}…` : clean;
}

/** The error for an answer that is not a valid 2xx: the server's Status, or an UnexpectedResponseError. */
export function answerError(where: string, status: number, contentType: string, text: string, secret: string | undefined): Error {
  const body = isJson(contentType) ? parseObject(text) : undefined;
  if (body?.kind === 'Status') return new ApiError(status, body);
  return new UnexpectedResponseError(status, contentType, 'expected a Kubernetes Status', snippetOf(text, secret), where);
}

export function parseObject(text: string): Json | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A header's value as one string ('' when absent). */
export function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : value ?? '';
}

/** A kept-alive connection the server closed under a request that had no answer yet. */
function isStaleConnection(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

/** A body over the cap: its start is kept for the error message. */
class TooLargeError extends Error {
  constructor(readonly start: string) {
    super('answer too large');
  }
}

/** Reads a body; with `truncate`, stops quietly at `limit` bytes instead of failing with a TooLargeError. */
function readBody(body: Dispatcher.ResponseData['body'], limit: number, truncate: boolean): Promise<string> {
  // Events, not `for await`: leaving an async iterator destroys the stream even after its end,
  // and undici then closes a connection it could have kept.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size < limit) return;
      if (truncate) resolve(Buffer.concat(chunks).toString('utf8'));
      else reject(new TooLargeError(Buffer.concat(chunks.slice(0, 1)).subarray(0, 4096).toString('utf8')));
      body.destroy();
    });
    body.on('end', () => { resolve(Buffer.concat(chunks).toString('utf8')); });
    body.on('error', reject);
  });
}

/** How {@link streamWatch} reaches the server, and how it names it. */
export interface WatchTransport {
  /** `<peer> WATCH <path>`, for error messages. */
  readonly where: string;
  /** Redacted from error snippets. */
  readonly secret: string | undefined;
  /** Deadline of the connect phase, up to the answer's headers. */
  readonly connectTimeoutMs: number;
  /** A watch that receives no byte for this long ends with a TimeoutError (ListWatch reconnects at once). */
  readonly idleMs: number;
  /** Sends the watch request (query `watch=true` included). */
  open(signal: AbortSignal): Promise<Dispatcher.ResponseData>;
  track(transport: AbortController): void;
  untrack(transport: AbortController): void;
}

/**
 * A watch with client-node's `Watch.watch` contract, which ListWatch relies on, over any
 * transport: every line must be a watch event, each non-ERROR object must pass `expectItem`.
 */
export function streamWatch(t: WatchTransport, callback: WatchCallback, done: WatchDone, expectItem?: Expectation): Promise<AbortController> {
  const controller = new AbortController();
  const transport = new AbortController();
  t.track(transport);
  return new Promise((resolve) => {
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = (ms: number, what: string): void => {
      clearTimeout(timer);
      timer = setTimeout(() => { finish(new TimeoutError(`${t.where}: ${what} for ${String(ms)} ms`)); }, ms);
      timer.unref();
    };
    // Like client-node: `done` exactly once, after which the request is gone. `done` runs
    // before the promise resolves, so a caller sees a refused watch as ended when it returns.
    const finish = (err: unknown): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      t.untrack(transport);
      transport.abort();
      controller.abort();
      done(err);
      resolve(controller);
    };
    // An abort by the caller reports an AbortError, as client-node's does (ListWatch.stop()
    // surfaces it as an 'error' the informer ignores once stopped).
    controller.signal.addEventListener('abort', () => {
      const reason: unknown = controller.signal.reason;
      finish(reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError'));
    }, { once: true });

    const onLine = (contentType: string, line: string): void => {
      if (finished || line.trim() === '') return;
      const bad = (problem: string): void => { finish(new UnexpectedResponseError(200, contentType, problem, snippetOf(line, t.secret), t.where)); };
      const event = parseObject(line);
      if (event === undefined) { bad('expected a JSON watch event'); return; }
      const { type, object } = event;
      if (typeof type !== 'string' || !EVENT_TYPES.has(type) || !isRecord(object)) {
        bad('expected a watch event {type: ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, object}');
        return;
      }
      const problem = type === 'ERROR' ? undefined : expectItem?.(object, type);
      if (problem !== undefined) { bad(problem); return; }
      try {
        callback(type, object, event);
      } catch (err) {
        finish(err);
      }
    };

    // The connect phase has a deadline; once streaming, only silence ends the watch (the
    // server's own timeout ends it cleanly).
    arm(t.connectTimeoutMs, 'no answer');
    t.open(transport.signal).then((res) => {
      const contentType = headerText(res.headers['content-type']);
      if (finished) {
        res.body.destroy();
        return;
      }
      if (res.statusCode !== 200 || !isJson(contentType)) {
        // Reported before watch() resolves, so the watch never counts as established.
        readBody(res.body, MAX_ERROR_BODY_BYTES, true).then((text) => {
          finish(res.statusCode === 200
            ? new UnexpectedResponseError(200, contentType, 'expected application/json', snippetOf(text, t.secret), t.where)
            : answerError(t.where, res.statusCode, contentType, text, t.secret));
        }, finish);
        return;
      }
      resolve(controller);
      arm(t.idleMs, 'no data');
      const decoder = new StringDecoder('utf8');
      let pending = '';
      res.body.on('data', (chunk: Buffer) => {
        arm(t.idleMs, 'no data');
        pending += decoder.write(chunk);
        for (let nl = pending.indexOf('\n'); nl >= 0 && !finished; nl = pending.indexOf('\n')) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          onLine(contentType, line);
        }
        if (pending.length > MAX_EVENT_CHARS) {
          finish(new UnexpectedResponseError(200, contentType, `expected watch events under ${String(MAX_EVENT_CHARS)} characters`, snippetOf(pending, t.secret), t.where));
        }
      });
      res.body.on('end', () => {
        onLine(contentType, pending + decoder.end());
        finish(null);
      });
      res.body.on('error', finish);
    }, finish);
  });
}

export function createRestClient(options: RestClientOptions): RestClient {
  const base = new URL(options.server);
  if (base.protocol !== 'https:') throw new TypeError('the server URL must use https://');
  const prefix = base.pathname.replace(/\/+$/, '');
  const peer = options.peer ?? 'server';
  const idleMs = options.watchIdleTimeoutMs ?? 300_000;
  const maxResponseBytes = options.maxResponseBytes ?? responseCapBytes();
  const agents = (options.agentPool ?? sharedHttpsAgents).acquire(base.origin, options.caPem, options.maxSockets ?? 16);
  // This client's requests and watches in flight: close() ends them, not other clients' ones.
  const live = new Set<AbortController>();
  let closed = false;
  const headers = (payload: string | undefined): Record<string, string> => ({
    Accept: 'application/json',
    'User-Agent': 'clusterset-agent',
    Authorization: `Bearer ${options.token}`,
    ...(payload !== undefined && { 'Content-Type': 'application/json' }),
  });

  const url = (path: string, query: Query | undefined): URL => {
    const target = new URL(prefix + path, base.origin);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) target.searchParams.set(key, String(value));
    }
    return target;
  };

  const snippet = (text: string): string => snippetOf(text, options.token);

  // Our own deadlines (timers below) bound every request and watch; undici's would cut a
  // quiet watch or a large list on their own clock.
  const send = (dispatcher: Dispatcher, method: Dispatcher.HttpMethod, target: URL, payload: string | undefined, signal: AbortSignal) => undiciRequest(target, {
    method, headers: headers(payload), dispatcher, signal, headersTimeout: 0, bodyTimeout: 0,
    ...(payload !== undefined && { body: payload }),
  });

  async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const where = `${peer} ${method} ${path}`;
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const timeoutMs = opts.timeoutMs ?? options.timeoutMs;
    await options.budget?.take();
    if (closed) throw new Error(`${where}: the client is closed`);
    const transport = new AbortController();
    live.add(transport);
    // Aborting also closes an HTTP/1.1 connection, so a hung server cannot hold it in the pool.
    const timer = setTimeout(() => { transport.abort(new TimeoutError(`${where} did not complete within ${String(timeoutMs)} ms`)); }, timeoutMs);
    let status: number | undefined;
    let contentType: string | undefined;
    let text: string;
    try {
      const target = url(path, opts.query);
      let answer: Dispatcher.ResponseData;
      try {
        answer = await send(agents.requests, method, target, payload, transport.signal);
      } catch (err) {
        // The server closed an idle kept-alive connection as we sent; a POST is not retried,
        // as it may have been processed.
        if (transport.signal.aborted || !isStaleConnection(err) || !RETRY_ON_STALE_SOCKET.has(method)) throw err;
        answer = await send(agents.requests, method, target, payload, transport.signal);
      }
      status = answer.statusCode;
      contentType = headerText(answer.headers['content-type']);
      const ok = status >= 200 && status < 300;
      const declared = Number(headerText(answer.headers['content-length']) || NaN);
      if (ok && declared > maxResponseBytes) {
        answer.body.destroy();
        throw new UnexpectedResponseError(status, contentType, capProblem(maxResponseBytes, declared), '', where);
      }
      text = await readBody(answer.body, ok ? maxResponseBytes : MAX_ERROR_BODY_BYTES, !ok);
    } catch (err) {
      const reason: unknown = transport.signal.reason;
      if (err instanceof TooLargeError) throw new UnexpectedResponseError(status ?? 0, contentType ?? '', capProblem(maxResponseBytes, undefined), snippet(err.start), where);
      throw reason instanceof TimeoutError ? reason : err;
    } finally {
      clearTimeout(timer);
      live.delete(transport);
    }

    if (status < 200 || status >= 300) throw answerError(where, status, contentType, text, options.token);
    if (!isJson(contentType)) throw new UnexpectedResponseError(status, contentType, 'expected application/json', snippet(text), where);
    const body = parseObject(text);
    if (body === undefined) throw new UnexpectedResponseError(status, contentType, 'expected a JSON object', snippet(text), where);
    const problem = opts.expect?.(body);
    if (problem !== undefined) throw new UnexpectedResponseError(status, contentType, problem, snippet(text), where);
    return body as T;
  }

  async function watch(path: string, query: Query, callback: WatchCallback, done: WatchDone, expectItem?: Expectation): Promise<AbortController> {
    await options.budget?.take();
    const where = `${peer} WATCH ${path}`;
    if (closed) throw new Error(`${where}: the client is closed`);
    return streamWatch({
      where, secret: options.token, connectTimeoutMs: Math.max(options.timeoutMs, WATCH_CONNECT_MIN_MS), idleMs,
      open: (signal) => send(agents.watches, 'GET', url(path, { ...query, watch: true }), undefined, signal),
      track: (transport) => { live.add(transport); },
      untrack: (transport) => { live.delete(transport); },
    }, callback, done, expectItem);
  }

  return {
    server: options.server,
    request,
    watch,
    close: () => {
      if (closed) return;
      closed = true;
      for (const transport of live) transport.abort();
      live.clear();
      agents.release();
    },
  };
}
