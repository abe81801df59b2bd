// Connection reuse and the client budget for the agents' requests, through client-node's
// public API only. @kubernetes/client-node 2.0.1 authenticates each request with
// `KubeConfig.applySecurityAuthentication`, which builds a new undici Agent every time, so every
// request and every watch to the member API server paid a TCP and TLS handshake: 6,049
// connections for 7,616 requests in one measured initial sync. Instead, a KubeConfig given to
// {@link shareConnections} authenticates through {@link SharedConnections}: it reads the
// kubeconfig's headers and TLS material with the public `applyToHTTPSOptions`, maps them to
// undici connect options with the public `createDispatcherOptions`, and gives the request the
// one keep-alive Agent of that server and TLS identity, counting the connections it opens. Every
// request and watch start through it takes a token of the client budget (client-budget.ts)
// before it is sent. The project's JSON client (json-client.ts, and typed-api.ts over it)
// authenticates this way; nothing of client-node is patched.
import type https from 'node:https';
import type { KubeConfig, RequestContext, SecurityAuthentication } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';
import type { ClientBudget } from './client-budget.js';
import { H2_PING_INTERVAL_MS } from './https-agent-pool.js';

export interface ConnectionStats {
  /** TCP (+TLS) connections opened to API servers through the shared agents. */
  opened: number;
  /** The budget requests take tokens from, if any. */
  readonly budget?: ClientBudget;
}

/** Starts each request once the budget allows. An aborted fetch that was waiting aborts when dispatched. */
function throttled(agent: Agent, budget: ClientBudget): Dispatcher {
  return agent.compose((dispatch) => (options, handler) => {
    const waitMs = budget.reserve();
    if (waitMs <= 0) return dispatch(options, handler);
    setTimeout(() => { dispatch(options, handler); }, waitMs);
    return true;
  });
}

/** A stable text for TLS material, or undefined for forms it cannot name (left to client-node). */
function keyPart(value: unknown): string | undefined {
  if (value === undefined) return '';
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (Array.isArray(value)) {
    const parts = value.map(keyPart);
    return parts.includes(undefined) ? undefined : parts.join('|');
  }
  return undefined;
}

/**
 * The authentication of a shared KubeConfig: client-node's own headers and TLS material, and
 * one keep-alive Agent per server and TLS identity. Proxies keep client-node's own behaviour.
 */
export class SharedConnections implements SecurityAuthentication {
  readonly stats: ConnectionStats;
  readonly #dispatchers = new Map<string, Dispatcher>();

  constructor(private readonly kc: KubeConfig, private readonly budget?: ClientBudget) {
    this.stats = { opened: 0, ...(budget !== undefined && { budget }) };
  }

  getName(): string {
    return 'kubeconfig authentication, shared connections';
  }

  async applySecurityAuthentication(context: RequestContext): Promise<void> {
    const cluster = this.kc.getCurrentCluster();
    const opts: https.RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const dispatcher = this.dispatcherFor(cluster, opts);
    if (dispatcher === undefined) {
      await this.kc.applySecurityAuthentication(context);
      return;
    }
    // As client-node: basic auth first, then the headers its authenticators set (a token).
    if (typeof opts.auth === 'string') context.setHeaderParam('Authorization', `Basic ${Buffer.from(opts.auth).toString('base64')}`);
    if (opts.headers !== undefined && !Array.isArray(opts.headers)) {
      for (const [name, value] of Object.entries(opts.headers)) {
        if (value !== undefined) context.setHeaderParam(name, Array.isArray(value) ? value.join(', ') : String(value));
      }
    }
    context.setDispatcher(dispatcher);
  }

  /** The shared Agent for this server and TLS material; undefined for a proxy or material it cannot name. */
  private dispatcherFor(cluster: ReturnType<KubeConfig['getCurrentCluster']>, opts: https.RequestOptions): Dispatcher | undefined {
    const agentOptions: https.AgentOptions = {
      ca: opts.ca, cert: opts.cert, key: opts.key, pfx: opts.pfx, passphrase: opts.passphrase,
      ...(opts.rejectUnauthorized !== undefined && { rejectUnauthorized: opts.rejectUnauthorized }),
      ...(opts.servername !== undefined && { servername: opts.servername }),
    };
    const options = this.kc.createDispatcherOptions(cluster, agentOptions);
    if (options.type !== 'agent') return undefined;
    const c = options.connect as Record<string, unknown>;
    const parts = [cluster?.server ?? '', ...['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized'].map((k) => keyPart(c[k]))];
    if (parts.includes(undefined)) return undefined;
    const key = parts.join('\n');
    let dispatcher = this.#dispatchers.get(key);
    if (dispatcher === undefined) {
      const agent = new Agent({ connect: options.connect as NonNullable<Agent.Options['connect']>, h2Options: { pingInterval: H2_PING_INTERVAL_MS } });
      agent.on('connect', () => { this.stats.opened += 1; });
      dispatcher = this.budget?.enabled ? throttled(agent, this.budget) : agent;
      this.#dispatchers.set(key, dispatcher);
    }
    return dispatcher;
  }
}

const shared = new WeakMap<KubeConfig, SharedConnections>();

/**
 * Makes requests through `kc` reuse connections: the JSON client's share one keep-alive undici Agent per server and TLS material, and take tokens from
 * `budget`. Idempotent: later calls return the first call's stats and keep its budget.
 */
export function shareConnections(kc: KubeConfig, budget?: ClientBudget): ConnectionStats {
  let connections = shared.get(kc);
  if (connections === undefined) {
    connections = new SharedConnections(kc, budget);
    shared.set(kc, connections);
  }
  return connections.stats;
}

/** How requests to `kc`'s cluster authenticate: with shared connections once {@link shareConnections} was called, else as client-node does. */
export function authenticationOf(kc: KubeConfig): SecurityAuthentication {
  return shared.get(kc) ?? kc;
}
