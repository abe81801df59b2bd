/**
 * Keep-alive connections shared by every client of one server that trusts the same CA.
 *
 * Many ClusterSets may name the same leader. Each used to have its own pool, so N ClusterSets
 * meant N pools of TLS connections to one server. A connection here is authenticated only on
 * the server side (the CA); the bearer token travels in each request's Authorization header,
 * so clients with different tokens can share it safely. client-go does the same: its transport
 * cache is keyed by the TLS configuration, never by the bearer token.
 *
 * HTTP/2 is used when the server offers it (kube-apiserver does), HTTP/1.1 otherwise. Two
 * dispatchers per key, because an HTTP/1.1 watch holds its connection for minutes:
 * - `requests`: short requests, at most `maxSockets` connections per server;
 * - `watches`: no limit, so a hundred watches never starve the heartbeats. Over HTTP/2 they
 *   share one connection (up to 100 streams each, then another).
 */
import { createHash } from 'node:crypto';
import { Agent } from 'undici';

export interface SharedAgents {
  readonly requests: Agent;
  readonly watches: Agent;
  /** Drops this client's claim; the last one out closes the connections. */
  release(): void;
}

interface Entry {
  readonly requests: Agent;
  readonly watches: Agent;
  claims: number;
}

// Longer than a heartbeat interval (at most 60 s), so a beat reuses the connection of the last
// one instead of paying a new TCP+TLS handshake; undici's default is 4 s.
const KEEP_ALIVE_MS = 120_000;

/**
 * HTTP/2 liveness: a PING this often, and a connection whose last PING is still unanswered at
 * the next one is dropped. Over HTTP/2 a timed-out request only resets its own stream, so a
 * connection that died silently (a NAT or load balancer that lost its state) would otherwise
 * be used until undici's 60 s default noticed, up to two minutes with every beat failing.
 * client-go does the same with a 30 s read-idle check and a 15 s PING timeout.
 */
export const H2_PING_INTERVAL_MS = 15_000;

export class HttpsAgentPool {
  private readonly entries = new Map<string, Entry>();

  /** Dispatchers for `origin` (`https://host:port`) verified against `caPem`. */
  acquire(origin: string, caPem: string, maxSockets: number): SharedAgents {
    const key = `${origin}\n${createHash('sha256').update(caPem).digest('hex')}`;
    let entry = this.entries.get(key);
    if (!entry) {
      const options = {
        connect: { ca: caPem, rejectUnauthorized: true },
        allowH2: true,
        h2Options: { pingInterval: H2_PING_INTERVAL_MS },
        keepAliveTimeout: KEEP_ALIVE_MS,
        keepAliveMaxTimeout: KEEP_ALIVE_MS,
      } as const;
      entry = { requests: new Agent({ ...options, connections: maxSockets }), watches: new Agent(options), claims: 0 };
      this.entries.set(key, entry);
    }
    entry.claims += 1;
    const claimed = entry;
    let released = false;
    return {
      requests: claimed.requests,
      watches: claimed.watches,
      release: () => {
        if (released) return;
        released = true;
        claimed.claims -= 1;
        if (claimed.claims > 0) return;
        if (this.entries.get(key) === claimed) this.entries.delete(key);
        // Requests still in flight fail; the clients that sent them have been closed.
        for (const agent of [claimed.requests, claimed.watches]) agent.destroy().catch(() => undefined);
      },
    };
  }

  /** Servers with live dispatchers (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }
}

/** The process-wide pool every leader client uses unless given its own. */
export const sharedHttpsAgents = new HttpsAgentPool();
