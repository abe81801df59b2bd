// The agent's HTTP endpoints: /healthz (liveness), /readyz (readiness) and, when given
// metrics, /metrics (Prometheus). Plain node:http, GET and HEAD only, text bodies.
//
// A check answers 200 with `ok` (or its detail) when healthy and 503 with its detail (which
// should name the failing checks) when not; a check that throws answers 503 with the error
// message, because a probe that cannot be evaluated must not pass.
//
// The health and metrics endpoints can share one server or run on two (call this twice), as
// the config's `health.bindAddress` and `metrics.bindAddress` decide.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseBindAddress } from '../config/config.js';
import type { AgentMetrics } from '../metrics/metrics.js';

export interface CheckResult {
  readonly ok: boolean;
  /** Short text: what is failing (or, when ok, an optional summary). One line per check is best. */
  readonly detail: string;
}

export type Check = () => CheckResult | Promise<CheckResult>;

export interface HttpServerOptions {
  /** `[host]:port`; an empty host listens on every interface, port 0 picks a free port (`:0`). */
  readonly bindAddress: string;
  readonly metrics?: AgentMetrics;
  /** Serve /readyz and /healthz. Leave both out for a metrics-only server. */
  readonly readyz?: Check;
  /** Default: always ok (the process answers, so it is alive). */
  readonly healthz?: Check;
}

export interface HttpServer {
  readonly port: number;
  /** Stops listening and closes open (keep-alive) connections. */
  close(): Promise<void>;
}

const TEXT = 'text/plain; charset=utf-8';
const alive: Check = () => ({ ok: true, detail: 'ok' });

async function runCheck(check: Check): Promise<CheckResult> {
  try {
    return await check();
  } catch (err) {
    return { ok: false, detail: `check failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: string, contentType = TEXT): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': bytes.length, 'Cache-Control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const bind = parseBindAddress(options.bindAddress);
  if (bind === undefined) throw new Error(`invalid bind address ${JSON.stringify(options.bindAddress)}: use [host]:port, e.g. :8080 or 127.0.0.1:0`);
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>();
  const probe = (check: Check) => async (req: IncomingMessage, res: ServerResponse) => {
    const result = await runCheck(check);
    const detail = result.detail.trim();
    send(req, res, result.ok ? 200 : 503, `${detail === '' ? (result.ok ? 'ok' : 'not ok') : detail}\n`);
  };
  if (options.readyz !== undefined) {
    routes.set('/readyz', probe(options.readyz));
    routes.set('/healthz', probe(options.healthz ?? alive));
  } else if (options.healthz !== undefined) {
    routes.set('/healthz', probe(options.healthz));
  }
  const metrics = options.metrics;
  if (metrics !== undefined) {
    routes.set('/metrics', async (req, res) => {
      send(req, res, 200, await metrics.metrics(), metrics.contentType);
    });
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = routes.get(path);
    if (route === undefined) {
      send(req, res, 404, `not found; try ${[...routes.keys()].join(', ')}\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(req, res, 405, 'method not allowed\n');
      return;
    }
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(req, res, 500, `error: ${err instanceof Error ? err.message : String(err)}\n`);
      else res.destroy();
    });
  });
  // Probes and scrapes are tiny; a client that trickles its request must not hold a socket forever.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (bind.host === undefined) server.listen(bind.port, done);
    else server.listen(bind.port, bind.host, done);
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => {
          if (err) reject(err);
          else resolve();
        });
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
