// Address syntax the configuration accepts: listen addresses and CIDRs. Kept apart from the
// schema so the schema's checks and the code that uses the values share one parser.
import { isIP } from 'node:net';

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
 * prefix, so that a typo such as 10.96.0.1/12 is caught instead of published.
 */
export function cidrProblem(text: string): string | undefined {
  const usage = 'must be a CIDR such as 10.96.0.0/12 or fd00:10:96::/108';
  const match = /^([^/]+)\/(0|[1-9][0-9]{0,2})$/.exec(text);
  if (match === null) return usage;
  const [, address = '', prefixText = ''] = match;
  const family = isIP(address);
  if (family === 0 || address.includes('%')) return usage;
  const bits = family === 4 ? 32 : 128;
  const prefix = Number(prefixText);
  if (prefix > bits) return `must have a prefix length of at most ${bits} for an IPv${family} address`;
  const value = family === 4 ? ipv4ToBigInt(address) : ipv6ToBigInt(address);
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  if ((value & hostMask) !== 0n) {
    const network = value & ~hostMask;
    const shown = family === 4 ? bigIntToIPv4(network) : bigIntToIPv6(network);
    return `has bits set after the /${prefix} prefix; did you mean ${shown}/${prefix}?`;
  }
  return undefined;
}

function ipv4ToBigInt(address: string): bigint {
  return address.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

function bigIntToIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

// Only called on addresses net.isIP() accepted as IPv6.
function ipv6ToBigInt(address: string): bigint {
  let text = address;
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two 16-bit groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1] !== undefined) {
    const n = ipv4ToBigInt(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function bigIntToIPv6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt((7 - i) * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (at least two) of zero groups, the first on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
