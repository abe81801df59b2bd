// Whether the leader URL join took from the leader kubeconfig can be the one members use.
// The kubeconfig's server is where the workstation reaches the leader; on kind, k3d or
// minikube that is a port forwarded to 127.0.0.1, which inside a member's Pod is the Pod
// itself. Only what is certainly wrong is refused (loopback and unspecified addresses): a name
// or a private address may well be reachable from the members, and join cannot tell from here.
// An explicit --leader-server is the user's word and is never refused by this.
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('0.0.0.0', 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** True for localhost names, 127.0.0.0/8, ::1, 0.0.0.0 and :: (also IPv4-mapped). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Why the leader URL taken from the leader kubeconfig (no --leader-server) cannot be what the
 * members use, or undefined. `leaderContext` names the context in the advice.
 */
export function defaultedLeaderServerProblem(server: string, leaderContext: string): string | undefined {
  let hostname: string;
  try {
    hostname = new URL(server).hostname;
  } catch {
    return undefined; // a malformed URL is the spec check's to report
  }
  if (!isLoopbackHost(hostname)) return undefined;
  return `the leader kubeconfig's server ${server} is a loopback address: it works from this machine, but in a member's ` +
    "Pod it is the Pod itself, so the agent could never connect. Pass --leader-server with the URL the members reach the " +
    "leader's API server at: on kind, https://<IP>:6443 with the IP from " +
    `docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' <leader cluster>-control-plane ` +
    "(k3d: k3d-<leader cluster>-server-0); elsewhere the API server's own address, from " +
    `kubectl --context ${leaderContext} get endpoints kubernetes. ` +
    '(An explicit --leader-server https://127.0.0.1:... is accepted, for a member that really reaches the leader there.)';
}
