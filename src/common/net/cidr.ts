// IP addresses and CIDRs as one parser reads them on both sides of the wire: the member's
// configuration (what it exports in its ClusterInfo), the member's import firewall, and the
// leader's ClusterInfo checks. Before this module each had its own, and they disagreed (the
// leader refused an IPv6 address with an IPv4 tail the member accepted, and a dual-stack
// `serviceCIDR` the member imports). Pure.
import { isIP } from 'node:net';

export interface IpAddress {
  readonly family: 4 | 6;
  /** The address as a 32- or 128-bit number. */
  readonly value: bigint;
}

export interface Cidr extends IpAddress {
  /** As written. */
  readonly text: string;
  readonly prefix: number;
  /** The first and last address of the block (host bits, if any were written, ignored). */
  readonly first: bigint;
  readonly last: bigint;
}

export function bitsOf(family: 4 | 6): number {
  return family === 4 ? 32 : 128;
}

function v4Value(text: string): bigint {
  return text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

/** An IPv4 or IPv6 address (an IPv4 tail in IPv6 included, no zone), or undefined. */
export function parseIp(text: string): IpAddress | undefined {
  const family = isIP(text);
  if (family === 4) return { family, value: v4Value(text) };
  if (family !== 6 || text.includes('%')) return undefined;
  let hex = text.toLowerCase();
  // An IPv4 tail (::ffff:1.2.3.4) counts as two 16-bit groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(hex)?.[1];
  if (dotted !== undefined) {
    const v4 = v4Value(dotted);
    hex = `${hex.slice(0, -dotted.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = hex.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return { family, value: groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n) };
}

/**
 * A CIDR (`10.96.0.0/12`, `fd00::/64`): an address as {@link parseIp} reads it, `/`, a decimal
 * prefix length without leading zeros and in range; or undefined. Host bits are allowed (Go's
 * net.ParseCIDR, which Antrea uses, allows them too); {@link hostBitsSet} tells.
 */
export function parseCidr(text: string): Cidr | undefined {
  const match = /^([^/]+)\/(0|[1-9][0-9]{0,2})$/.exec(text);
  if (match === null) return undefined;
  const ip = parseIp(match[1] ?? '');
  const prefix = Number(match[2]);
  if (ip === undefined || prefix > bitsOf(ip.family)) return undefined;
  const hostMask = (1n << BigInt(bitsOf(ip.family) - prefix)) - 1n;
  return { text, family: ip.family, value: ip.value, prefix, first: ip.value & ~hostMask, last: ip.value | hostMask };
}

export function hostBitsSet(cidr: Cidr): boolean {
  return cidr.value !== cidr.first;
}

/** Whether two blocks share an address. CIDR blocks are nested or disjoint, never partly overlapping. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.first <= b.last && b.first <= a.last;
}

/** The CIDRs of a field that may list several: a dual-stack cluster's `serviceCIDR` is `v4cidr,v6cidr`. */
export function cidrList(text: string): string[] {
  return text.split(',').map((part) => part.trim());
}

/** An address in its canonical text (RFC 5952 for IPv6). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt((7 - i) * 16)) & 0xffffn));
  // Compress the longest run (at least two) of zero groups, the first on a tie.
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
