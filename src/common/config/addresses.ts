// Address syntax the configuration accepts: listen addresses and CIDRs. Kept apart from the
// schema so the schema's checks and the code that uses the values share one parser.
import { bitsOf, formatIp, hostBitsSet, parseCidr, parseIp } from '../net/cidr.js';

/**
 * Splits a bind address into host and port. Returns undefined when it is malformed.
 * An absent host means every interface (pass no host to `server.listen`).
 */
export function parseBindAddress(address: string): { readonly host?: string; readonly port: number } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]*)):([0-9]{1,5})$/.exec(address);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  const host = match[1] ?? match[2] ?? '';
  return host === '' ? { port } : { host, port };
}

/**
 * Why `text` is not a usable CIDR (`must be ...`), or undefined when it is one: an IPv4 or
 * IPv6 address (no zone), `/`, a decimal prefix length in range, and no bits set after the
 * prefix, so that a typo such as 10.96.0.1/12 is caught instead of published. The parser is
 * the one the leader judges the published ClusterInfo with.
 */
export function cidrProblem(text: string): string | undefined {
  const usage = 'must be a CIDR such as 10.96.0.0/12 or fd00:10:96::/108';
  const cidr = parseCidr(text);
  if (cidr === undefined) {
    const match = /^([^/]+)\/(0|[1-9][0-9]{0,2})$/.exec(text);
    const ip = match === null ? undefined : parseIp(match[1] ?? '');
    return ip === undefined ? usage : `must have a prefix length of at most ${String(bitsOf(ip.family))} for an IPv${String(ip.family)} address`;
  }
  if (hostBitsSet(cidr)) return `has bits set after the /${String(cidr.prefix)} prefix; did you mean ${formatIp({ family: cidr.family, value: cidr.first })}/${String(cidr.prefix)}?`;
  return undefined;
}
