// ClusterInfo exports checked before every member imports them: a member may only publish
// well-formed CIDRs and gateway IPs, and none that another member already holds (a member
// claiming another's Pod or Service CIDR, or its gateway, would draw that member's traffic).
// The first holder (oldest export, then name) keeps what it claimed; a later claimant is
// refused on its export's status with the reason, and its ClusterInfo is not imported. Pure.
import { isIP } from 'node:net';
import type { KubeObject } from '../../common/api/meta.js';
import { RESOURCE_EXPORT_KIND, type ResourceExport } from '../../common/api/antrea.js';
import { parseTimestamp } from '../../common/kube/time.js';
import { isDeleting, type ExportVerdict } from './aggregate.js';

export const REASON_INVALID_CLUSTER_INFO = 'InvalidClusterInfo';
export const REASON_CIDR_CONFLICT = 'CIDRConflict';

interface Cidr {
  readonly text: string;
  readonly v6: boolean;
  readonly address: bigint;
  readonly prefix: number;
}

function ipToBigInt(ip: string): bigint | undefined {
  const family = isIP(ip);
  if (family === 4) return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  if (family !== 6 || ip.includes('.') || ip.includes('%')) return undefined; // no embedded IPv4, no zone
  const [head = '', tail] = ip.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headParts : [...headParts, ...Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts];
  if (groups.length !== 8) return undefined;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** A CIDR (`10.96.0.0/12`, `fd00::/64`), or undefined when it is not one. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const v6 = isIP(ip) === 6;
  const address = ipToBigInt(ip);
  if (address === undefined || prefix > (v6 ? 128 : 32)) return undefined;
  return { text, v6, address, prefix };
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  if (a.v6 !== b.v6) return false;
  const bits = BigInt(a.v6 ? 128 : 32);
  const common = BigInt(Math.min(a.prefix, b.prefix));
  return a.address >> (bits - common) === b.address >> (bits - common);
}

interface Claim {
  readonly cidrs: readonly Cidr[];
  readonly gateways: readonly string[];
}

function clusterOf(re: ResourceExport): string {
  return re.spec?.clusterID ?? '';
}

/** The export's CIDRs and gateway IPs, or the reason they are malformed. */
function claimOf(re: ResourceExport): Claim | string {
  const info = re.spec?.clusterInfo ?? {};
  const problems: string[] = [];
  const cidrs: Cidr[] = [];
  const fields: [string, unknown][] = [['serviceCIDR', info.serviceCIDR], ...(info.podCIDRs ?? []).map((c, i): [string, unknown] => [`podCIDRs[${String(i)}]`, c])];
  for (const [field, value] of fields) {
    if (value === undefined || value === '') continue;
    const cidr = typeof value === 'string' ? parseCidr(value) : undefined;
    if (cidr === undefined) problems.push(`${field} ${JSON.stringify(value)} is not a CIDR`);
    else cidrs.push(cidr);
  }
  const gateways: string[] = [];
  for (const [i, g] of (info.gatewayInfos ?? []).entries()) {
    const ip = g.gatewayIP;
    if (typeof ip !== 'string' || isIP(ip) === 0) problems.push(`gatewayInfos[${String(i)}].gatewayIP ${JSON.stringify(ip)} is not an IP address`);
    else gateways.push(ip);
  }
  return problems.length > 0 ? problems.join('; ') : { cidrs, gateways };
}

/** When `obj` was created (ms since epoch); 0, the oldest, when unknown. */
function timeOf(obj: KubeObject): number {
  return parseTimestamp(obj.metadata?.creationTimestamp) ?? 0;
}

function firstHolderFirst(a: ResourceExport, b: ResourceExport): number {
  return timeOf(a) - timeOf(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

/**
 * Verdicts for the ClusterInfo exports among `mine`, judged against every live ClusterInfo
 * export in `all` (the leader namespace). Other kinds get no verdict here.
 */
export function clusterInfoVerdicts(mine: readonly ResourceExport[], all: readonly ResourceExport[]): Map<string, ExportVerdict> {
  const verdicts = new Map<string, ExportVerdict>();
  const wanted = new Set(mine.filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo && !isDeleting(re)).map((re) => re.metadata?.name ?? ''));
  if (wanted.size === 0) return verdicts;
  const live = all.filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo && !isDeleting(re)).sort(firstHolderFirst);
  const held: { re: ResourceExport; claim: Claim }[] = [];
  for (const re of live) {
    const name = re.metadata?.name ?? '';
    const claim = claimOf(re);
    let verdict: ExportVerdict = { ok: true };
    if (typeof claim === 'string') {
      verdict = { ok: false, reason: REASON_INVALID_CLUSTER_INFO, message: `ClusterInfo of cluster ${clusterOf(re)} is not imported: ${claim}` };
    } else {
      const conflict = conflictWith(claim, held.filter((h) => clusterOf(h.re) !== clusterOf(re)));
      if (conflict !== undefined) {
        verdict = {
          ok: false, reason: REASON_CIDR_CONFLICT,
          message: `ClusterInfo of cluster ${clusterOf(re)} is not imported: ${conflict}; the first holder keeps it: fix this cluster's ${conflict.startsWith('gateway') ? 'gateway IP' : 'CIDRs'}`,
        };
      } else {
        held.push({ re, claim });
      }
    }
    if (wanted.has(name)) verdicts.set(name, verdict);
  }
  return verdicts;
}

function conflictWith(claim: Claim, held: readonly { re: ResourceExport; claim: Claim }[]): string | undefined {
  for (const h of held) {
    for (const mine of claim.cidrs) {
      const theirs = h.claim.cidrs.find((c) => cidrsOverlap(mine, c));
      if (theirs !== undefined) return `${mine.text} overlaps ${theirs.text} of cluster ${clusterOf(h.re)} (${h.re.metadata?.name ?? ''})`;
    }
    const gateway = claim.gateways.find((g) => h.claim.gateways.includes(g));
    if (gateway !== undefined) return `gateway IP ${gateway} is the gateway of cluster ${clusterOf(h.re)} (${h.re.metadata?.name ?? ''})`;
  }
  return undefined;
}
