// Connection reuse for client-node. @kubernetes/client-node 2.0.1 builds a new undici Agent
// for every request (`KubeConfig.createDispatcher`, called from applySecurityAuthentication),
// so every request and every watch to the member API server paid a TCP and TLS handshake:
// 6,049 connections for 7,616 requests in one measured initial sync. This keeps one keep-alive
// Agent per API server and TLS identity for the life of the KubeConfig, and counts the
// connections it opens. Every request and watch start through it also takes a token of the
// KubeConfig's client budget (client-budget.ts) before it is sent.
import type { KubeConfig } from '@kubernetes/client-node';
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

type DispatcherOptions = ReturnType<KubeConfig['createDispatcherOptions']>;
type CreateDispatcher = (cluster: Parameters<KubeConfig['createDispatcherOptions']>[0], agentOptions: Parameters<KubeConfig['createDispatcherOptions']>[1]) => unknown;

const SHARED = Symbol('clusterset-agent.sharedConnections');

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
 * Makes `kc` reuse connections: requests to the same server with the same TLS material share
 * one keep-alive undici Agent, and take tokens from `budget`. Proxies keep client-node's own
 * behaviour. Idempotent: later calls return the first call's stats and keep its budget.
 */
export function shareConnections(kc: KubeConfig, budget?: ClientBudget): ConnectionStats {
  const marked = kc as unknown as { [SHARED]?: ConnectionStats; createDispatcher: CreateDispatcher };
  const existing = marked[SHARED];
  if (existing !== undefined) return existing;
  const stats: ConnectionStats = { opened: 0, ...(budget !== undefined && { budget }) };
  const original = marked.createDispatcher.bind(kc);
  const dispatchers = new Map<string, Dispatcher>();
  marked.createDispatcher = (cluster, agentOptions) => {
    const options: DispatcherOptions = kc.createDispatcherOptions(cluster, agentOptions);
    if (options.type !== 'agent') return original(cluster, agentOptions);
    const c = options.connect as Record<string, unknown>;
    const parts = [cluster?.server ?? '', ...['ca', 'cert', 'key', 'servername', 'rejectUnauthorized'].map((k) => keyPart(c[k]))];
    if (parts.includes(undefined)) return original(cluster, agentOptions);
    const key = parts.join('\n');
    let dispatcher = dispatchers.get(key);
    if (dispatcher === undefined) {
      const agent = new Agent({ connect: options.connect as NonNullable<Agent.Options['connect']>, h2Options: { pingInterval: H2_PING_INTERVAL_MS } });
      agent.on('connect', () => { stats.opened += 1; });
      dispatcher = budget?.enabled ? throttled(agent, budget) : agent;
      dispatchers.set(key, dispatcher);
    }
    return dispatcher;
  };
  marked[SHARED] = stats;
  return stats;
}
