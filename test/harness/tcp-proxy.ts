// A plain TCP forwarder for integration tests: TLS and ALPN pass through untouched, so the agent
// speaks HTTP/2 to the real apiserver behind it (the fault proxy terminates TLS and speaks
// HTTP/1.1). `freeze()` makes every open connection go silent, as a NAT or load balancer that
// dropped its state does: bytes are swallowed both ways and nothing is closed, so only the
// client's own liveness checks can notice. New connections are forwarded as usual.
import net from 'node:net';

export interface TcpProxy {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Silences every open connection for good; later connections are forwarded. */
  freeze(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(upstream: string): Promise<TcpProxy> {
  const target = new URL(upstream);
  const sockets = new Set<net.Socket>();
  const frozen = new WeakSet<net.Socket>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted += 1;
    const remote = net.connect(Number(target.port), target.hostname);
    for (const [from, to] of [[client, remote], [remote, client]] as const) {
      sockets.add(from);
      from.on('data', (chunk: Buffer) => { if (!frozen.has(from)) to.write(chunk); });
      from.on('close', () => { sockets.delete(from); if (!frozen.has(from)) to.destroy(); });
      from.on('error', () => { /* the other side is destroyed on close */ });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${String(port)}`,
    connections: () => accepted,
    freeze: () => { for (const socket of sockets) frozen.add(socket); },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
