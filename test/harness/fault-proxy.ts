// A fault-injecting TLS proxy for integration tests, between the agent (member) and a real
// leader kube-apiserver. It serves its own certificate for 127.0.0.1/localhost, signed by a CA
// it generates (`caPem`, what the leader Secret's ca.crt must hold), and forwards HTTP/1.1 to
// the upstream over TLS, verifying it against `upstreamCaPem`. Faults: injected 503 Status
// answers or connection resets at a seeded rate, latency, a network partition, and a canned
// non-Kubernetes responder (a load balancer's maintenance page). The Authorization header is
// forwarded but never logged or stored.
import { randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream';
import type tls from 'node:tls';
import { createCa, issueCert } from './pki.js';
import { HARNESS_ROOT } from './processes.js';

export type FailureKind = '503' | 'reset' | 'mixed';

/** What a fault `match` predicate sees of a request (never its headers). */
export interface FaultRequestInfo {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** `watch=true` (or `1`) in the query. */
  readonly watch: boolean;
}

export interface FaultSettings {
  /** Probability (0..1) that a matching request gets an injected failure; default 0. */
  readonly failureRate?: number;
  /** Default '503'. 'mixed' picks 503 or reset with equal odds (seeded). */
  readonly failure?: FailureKind;
  /** Delay before a matching request is acted on (forwarded, failed or answered); default 0. */
  readonly latencyMs?: number;
  /** Which requests the failures and the latency apply to; default all. */
  readonly match?: (req: FaultRequestInfo) => boolean;
}

/** A canned answer for every request instead of proxying (`respondWith`). */
export interface CannedResponse {
  readonly status: number;
  readonly contentType?: string;
  readonly body: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * 'reset': new connections are accepted and reset at once.
 * 'blackhole': new connections are accepted and then never answered (no TLS handshake) until
 * the partition heals or the proxy closes, when they are destroyed.
 * Both modes cut every existing connection and in-flight stream when the partition starts.
 */
export type PartitionMode = 'reset' | 'blackhole';

export type RequestOutcome =
  | 'pending' | 'forwarded' | 'injected-503' | 'injected-reset' | 'responded' | 'upstream-error' | 'partitioned' | 'client-gone';

export interface ProxyRequestRecord {
  readonly seq: number;
  /** Date.now() at arrival. */
  readonly at: number;
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  /** '' or '?…'. */
  readonly query: string;
  readonly watch: boolean;
  /** The status sent to the client (upstream's, 503, 502 or the canned one); undefined if none was sent. */
  readonly status: number | undefined;
  readonly outcome: RequestOutcome;
  readonly injected: boolean;
}

export interface FaultProxyStats {
  /** HTTP requests received. */
  readonly requests: number;
  /** Requests sent upstream. */
  readonly forwarded: number;
  /** injected503 + injectedResets. */
  readonly injectedFailures: number;
  readonly injected503: number;
  readonly injectedResets: number;
  /** Requests answered by `respondWith`. */
  readonly responded: number;
  /** Forwarded requests that failed upstream (answered 502, or the stream cut if already started). */
  readonly upstreamErrors: number;
  /** TCP connections accepted, including those dropped by a partition. */
  readonly connections: number;
  /** Connections reset or held at accept because of a partition. */
  readonly droppedConnections: number;
  /** Gauge: client connections open now (not reset by resetStats). */
  readonly openConnections: number;
  /** Gauge: forwarded requests whose response has not finished (open watches included). */
  readonly inFlight: number;
  /** Requests by `"<METHOD> <path>"`, with `" (watch)"` appended for watches. */
  readonly byMethodPath: Readonly<Record<string, number>>;
}

export interface FaultProxyOptions {
  /** https://host:port of the real apiserver. */
  readonly upstream: string;
  /** CA PEM that verifies the upstream's serving certificate. */
  readonly upstreamCaPem: string;
  /** TLS SNI/identity name for the upstream, when it differs from the URL's host (an IP gets no SNI). */
  readonly upstreamServername?: string;
  /** Seed of the failure-decision PRNG; default random (see `FaultProxy.seed`). */
  readonly seed?: number;
  /** Recent requests kept for `requests()`; default 2000. */
  readonly logLimit?: number;
}

export interface FaultProxy {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** PEM of the CA that signed the proxy's serving certificate (127.0.0.1, localhost). */
  readonly caPem: string;
  /** The seed in use, for reproducing a failure. */
  readonly seed: number;
  /** Temp dir with the proxy's PKI; removed by close(). */
  readonly dir: string;
  /** Replaces the whole fault configuration; `setFaults({})` clears it. */
  setFaults(faults: FaultSettings): void;
  partition(on: boolean, mode?: PartitionMode): void;
  /** Answer every request with this instead of proxying; undefined restores proxying. */
  respondWith(response: CannedResponse | undefined): void;
  stats(): FaultProxyStats;
  /** Zeroes the counters and byMethodPath (the gauges stay); the request log is kept. */
  resetStats(): void;
  /** Clears the request log. */
  resetRequests(): void;
  /** Recent requests, oldest first. */
  requests(): ProxyRequestRecord[];
  /** Destroys every socket and stream, resolves once the listener is closed and the temp dir removed. */
  close(): Promise<void>;
}

export interface LoopbackPki {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** A fresh CA and a serving certificate for 127.0.0.1/localhost signed by it, written to `dir`. */
export function generateLoopbackPki(dir: string): LoopbackPki {
  const caPem = createCa(dir, 'fault-proxy-ca');
  const serving = issueCert(dir, 'serving', '/CN=127.0.0.1', 'IP:127.0.0.1,DNS:localhost');
  return { caPem, certPem: serving.certPem, keyPem: serving.keyPem };
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'upgrade', 'expect', 'host']);

/**
 * Flat [name, value, …] headers without the hop-by-hop ones (and those the Connection header
 * names). `transfer-encoding: chunked` is kept so Node re-chunks the body on the other side.
 */
function endToEndHeaders(rawHeaders: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === 'connection') {
      for (const token of (rawHeaders[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    const value = rawHeaders[i + 1] ?? '';
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    if (lower === 'transfer-encoding' && value.trim().toLowerCase() !== 'chunked') continue;
    out.push(name, value);
  }
  return out;
}

function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

type MutableRecord = { -readonly [K in keyof ProxyRequestRecord]: ProxyRequestRecord[K] };

const noop = () => { /* errors of sockets we cut on purpose */ };

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== 'https:') throw new Error(`fault proxy: upstream must be https, got ${options.upstream}`);
  const upstreamHost = upstream.hostname.replace(/^\[(.*)\]$/, '$1');
  const upstreamPort = upstream.port === '' ? 443 : Number(upstream.port);
  const upstreamPrefix = upstream.pathname.replace(/\/+$/, '');
  const seed = options.seed ?? randomInt(2 ** 32 - 1);
  const random = mulberry32(seed);
  const logLimit = options.logLimit ?? 2000;

  mkdirSync(HARNESS_ROOT, { recursive: true });
  const dir = mkdtempSync(path.join(HARNESS_ROOT, `fault-proxy-${String(process.pid)}-`));
  let pki: LoopbackPki;
  try {
    pki = generateLoopbackPki(dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  let faults: FaultSettings = {};
  let canned: CannedResponse | undefined;
  let partitioned: PartitionMode | undefined;
  let closed = false;

  const zero = () => ({ requests: 0, forwarded: 0, injected503: 0, injectedResets: 0, responded: 0, upstreamErrors: 0,
    connections: 0, droppedConnections: 0 });
  let counters = zero();
  let byMethodPath = new Map<string, number>();
  let log: MutableRecord[] = [];
  let seq = 0;

  const rawSockets = new Set<net.Socket>();
  const rawByPort = new Map<number, net.Socket>();
  const tlsSockets = new Set<tls.TLSSocket>();
  const held = new Set<net.Socket>();
  const inFlight = new Set<http.ClientRequest>();
  const timers = new Set<NodeJS.Timeout>();

  const upstreamAgent = new https.Agent({
    keepAlive: true,
    ca: options.upstreamCaPem,
    rejectUnauthorized: true,
    // Idle pooled sockets are dropped before the apiserver's own idle timeout can race a reuse.
    timeout: 30_000,
    ...(options.upstreamServername === undefined ? {} : { servername: options.upstreamServername }),
  });

  /** Resets the TCP connection under a client TLS socket (the client sees ECONNRESET). */
  const resetConnection = (socket: net.Socket) => {
    const raw = socket.remotePort === undefined ? undefined : rawByPort.get(socket.remotePort);
    socket.destroy();
    if (raw === undefined) return;
    try {
      raw.resetAndDestroy();
    } catch {
      raw.destroy();
    }
  };

  const cutEverything = () => {
    for (const request of inFlight) request.destroy();
    inFlight.clear();
    for (const socket of tlsSockets) socket.destroy();
    for (const raw of rawSockets) raw.destroy();
  };

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, record: MutableRecord, clientGone: () => boolean) => {
    counters.forwarded += 1;
    record.outcome = 'forwarded';
    const headers = endToEndHeaders(req.rawHeaders);
    headers.push('Host', upstream.host);
    const upstreamRequest = https.request({
      agent: upstreamAgent,
      host: upstreamHost,
      port: upstreamPort,
      method: req.method ?? 'GET',
      path: `${upstreamPrefix}${req.url ?? '/'}`,
      headers,
      ca: options.upstreamCaPem,
      rejectUnauthorized: true,
      ...(options.upstreamServername === undefined ? {} : { servername: options.upstreamServername }),
    });
    inFlight.add(upstreamRequest);
    let failed = false;
    const fail = () => {
      inFlight.delete(upstreamRequest);
      if (failed || clientGone() || closed || req.socket.destroyed) return;
      failed = true;
      counters.upstreamErrors += 1;
      record.outcome = 'upstream-error';
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const body = statusBody(502, 'InternalError', 'fault proxy: upstream request failed');
      record.status = 502;
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    upstreamRequest.on('error', fail);
    upstreamRequest.on('response', (upstreamResponse) => {
      if (clientGone() || closed) {
        upstreamResponse.destroy();
        inFlight.delete(upstreamRequest);
        return;
      }
      const status = upstreamResponse.statusCode ?? 502;
      record.status = status;
      res.writeHead(status, upstreamResponse.statusMessage, endToEndHeaders(upstreamResponse.rawHeaders));
      // A watch's first event may be long in coming; the client waits on the headers.
      res.flushHeaders();
      pipeline(upstreamResponse, res, (err) => {
        inFlight.delete(upstreamRequest);
        if (err && !clientGone()) fail();
      });
    });
    res.once('close', () => {
      if (!res.writableFinished) upstreamRequest.destroy();
      inFlight.delete(upstreamRequest);
    });
    req.pipe(upstreamRequest);
  };

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.on('error', noop);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const info: FaultRequestInfo = (() => {
      const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
      const watch = query.get('watch');
      return { method: req.method ?? 'GET', path: q === -1 ? url : url.slice(0, q), query, watch: watch === 'true' || watch === '1' };
    })();
    counters.requests += 1;
    const key = `${info.method} ${info.path}${info.watch ? ' (watch)' : ''}`;
    byMethodPath.set(key, (byMethodPath.get(key) ?? 0) + 1);
    const record: MutableRecord = {
      seq: ++seq, at: Date.now(), method: info.method, path: info.path, query: q === -1 ? '' : url.slice(q), watch: info.watch,
      status: undefined, outcome: 'pending', injected: false,
    };
    log.push(record);
    if (log.length > logLimit) log = log.slice(-logLimit);

    let gone = false;
    const clientGone = () => gone;
    res.once('close', () => {
      gone = true;
      if (record.outcome === 'pending') record.outcome = 'client-gone';
    });

    if (partitioned !== undefined || closed) {
      record.outcome = 'partitioned';
      resetConnection(req.socket);
      return;
    }

    // Decided at arrival, in arrival order, so a seed reproduces the same sequence.
    const settings = faults;
    const matches = settings.match === undefined || settings.match(info);
    let injection: '503' | 'reset' | undefined;
    const rate = settings.failureRate ?? 0;
    if (matches && rate > 0 && random() < rate) {
      const kind = settings.failure ?? '503';
      injection = kind === 'mixed' ? (random() < 0.5 ? '503' : 'reset') : kind;
    }

    const act = () => {
      if (gone || closed) return;
      if (partitioned !== undefined) {
        record.outcome = 'partitioned';
        resetConnection(req.socket);
        return;
      }
      if (injection === 'reset') {
        counters.injectedResets += 1;
        record.injected = true;
        record.outcome = 'injected-reset';
        resetConnection(req.socket);
        return;
      }
      if (injection === '503') {
        counters.injected503 += 1;
        record.injected = true;
        record.outcome = 'injected-503';
        record.status = 503;
        const body = statusBody(503, 'ServiceUnavailable', 'injected');
        res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      if (canned !== undefined) {
        counters.responded += 1;
        record.outcome = 'responded';
        record.status = canned.status;
        const body = typeof canned.body === 'string' ? Buffer.from(canned.body) : canned.body;
        res.writeHead(canned.status, {
          ...canned.headers,
          ...(canned.contentType === undefined ? {} : { 'content-type': canned.contentType }),
          'content-length': body.length,
        });
        res.end(body);
        return;
      }
      forward(req, res, record, clientGone);
    };

    const latency = matches ? settings.latencyMs ?? 0 : 0;
    if (latency > 0) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        act();
      }, latency);
      timers.add(timer);
    } else {
      act();
    }
  };

  const httpsServer = https.createServer({
    key: pki.keyPem,
    cert: pki.certPem,
    ALPNProtocols: ['http/1.1'],
    // Longer than any client's idle timeout, so an idle keep-alive connection is never closed
    // under a request the client is just sending on it.
    keepAliveTimeout: 120_000,
    requestTimeout: 0,
  }, onRequest);
  httpsServer.on('secureConnection', (socket: tls.TLSSocket) => {
    tlsSockets.add(socket);
    socket.once('close', () => tlsSockets.delete(socket));
  });
  httpsServer.on('tlsClientError', noop);

  // A plain TCP listener in front, so a partition can act before TLS (reset or hold) and
  // every connection is counted; the rest is handed to the HTTPS server.
  const listener = net.createServer({ noDelay: true }, (raw) => {
    raw.on('error', noop);
    counters.connections += 1;
    if (closed) {
      raw.destroy();
      return;
    }
    if (partitioned !== undefined) {
      counters.droppedConnections += 1;
      if (partitioned === 'blackhole') {
        raw.pause();
        held.add(raw);
        raw.once('close', () => held.delete(raw));
      } else {
        raw.resetAndDestroy();
      }
      return;
    }
    const port = raw.remotePort;
    rawSockets.add(raw);
    if (port !== undefined) rawByPort.set(port, raw);
    raw.once('close', () => {
      rawSockets.delete(raw);
      if (port !== undefined && rawByPort.get(port) === raw) rawByPort.delete(port);
    });
    httpsServer.emit('connection', raw);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', () => {
        listener.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    upstreamAgent.destroy();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const address = listener.address();
  if (address === null || typeof address === 'string') throw new Error('fault proxy: no port');
  const port = address.port;

  let closing: Promise<void> | undefined;
  return {
    url: `https://127.0.0.1:${String(port)}`,
    port,
    caPem: pki.caPem,
    seed,
    dir,
    setFaults(next) {
      const rate = next.failureRate ?? 0;
      if (!(rate >= 0 && rate <= 1)) throw new RangeError(`failureRate must be within 0..1, got ${String(rate)}`);
      const latency = next.latencyMs ?? 0;
      if (!(latency >= 0 && Number.isFinite(latency))) throw new RangeError(`latencyMs must be >= 0, got ${String(latency)}`);
      faults = { ...next };
    },
    partition(on, mode = 'reset') {
      if (!on) {
        partitioned = undefined;
        for (const raw of held) raw.destroy();
        return;
      }
      partitioned = mode;
      cutEverything();
    },
    respondWith(response) {
      canned = response;
    },
    stats() {
      return {
        ...counters,
        injectedFailures: counters.injected503 + counters.injectedResets,
        openConnections: rawSockets.size + held.size,
        inFlight: inFlight.size,
        byMethodPath: Object.fromEntries(byMethodPath),
      };
    },
    resetStats() {
      counters = zero();
      byMethodPath = new Map();
    },
    resetRequests() {
      log = [];
    },
    requests() {
      return log.map((record) => ({ ...record }));
    },
    close() {
      closing ??= (async () => {
        closed = true;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        const listenerClosed = new Promise<void>((resolve) => {
          listener.close(() => { resolve(); });
        });
        cutEverything();
        for (const raw of held) raw.destroy();
        upstreamAgent.destroy();
        await listenerClosed;
        rmSync(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
