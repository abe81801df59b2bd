/**
 * Keep-alive HTTPS connections shared by every client of one server that trusts the same CA.
 *
 * Many ClusterSets usually name the same leader. Each used to have its own pool, so N
 * ClusterSets meant N pools of idle TLS connections to one server. A connection here is
 * authenticated only on the server side (the CA); the bearer token travels in each request's
 * Authorization header, so clients with different tokens can share it safely. client-go does
 * the same: its transport cache is keyed by the TLS configuration, never by the bearer token.
 *
 * Two agents per key, because an HTTP/1.1 watch holds its socket for minutes:
 * - `requests`: short requests, at most `maxSockets` at a time per server;
 * - `watches`: one socket per watch with no limit, so a hundred watches never starve the
 *   heartbeats (and a socket freed by a watch the server ended serves the next watch).
 */
import { createHash } from 'node:crypto';
import https from 'node:https';

export interface SharedAgents {
  readonly requests: https.Agent;
  readonly watches: https.Agent;
  /** Drops this client's claim; the last one out destroys the agents and their sockets. */
  release(): void;
}

interface Entry {
  readonly requests: https.Agent;
  readonly watches: https.Agent;
  claims: number;
}

// Idle sockets kept per server beyond which freed ones are closed.
const MAX_FREE_SOCKETS = 16;

export class HttpsAgentPool {
  private readonly entries = new Map<string, Entry>();

  /** Agents for `origin` (`https://host:port`) verified against `caPem`. */
  acquire(origin: string, caPem: string, maxSockets: number): SharedAgents {
    const key = `${origin}\n${createHash('sha256').update(caPem).digest('hex')}`;
    let entry = this.entries.get(key);
    if (!entry) {
      const tls = { ca: caPem, rejectUnauthorized: true } as const;
      entry = {
        requests: new https.Agent({ ...tls, keepAlive: true, maxSockets, maxFreeSockets: MAX_FREE_SOCKETS }),
        watches: new https.Agent({ ...tls, keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS }),
        claims: 0,
      };
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
        claimed.requests.destroy();
        claimed.watches.destroy();
      },
    };
  }

  /** Servers with live agents (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }
}

/** The process-wide pool every leader client uses unless given its own. */
export const sharedHttpsAgents = new HttpsAgentPool();
