// ClusterInfo exports checked before every member imports them: a member may only publish
// well-formed CIDRs and gateway IPs, and none that another member already holds (a member
// claiming another's Pod or Service CIDR, or its gateway, would draw that member's traffic).
// The first holder (oldest export, then name) keeps what it claimed; a later claimant is
// refused on its export's status with the reason, and its ClusterInfo is not imported. Pure,
// apart from the memo of ClusterInfoJudge.
//
// Cost: one member may send tens of thousands of CIDRs, and any ClusterInfo change re-judges
// every member's. So claims are parsed once per resourceVersion, the verdicts of one state of
// the ClusterInfo exports are computed once (every import key of that state reads them), and
// overlaps are found by one sweep over the sorted CIDR blocks, not by comparing all pairs.
import type { KubeObject } from '../../common/api/meta.js';
import { RESOURCE_EXPORT_KIND, type ResourceExport } from '../../common/api/antrea.js';
import { cidrList, parseCidr, parseIp, type Cidr } from '../../common/net/cidr.js';
import { parseTimestamp } from '../../common/kube/time.js';
import { isDeleting, type ExportVerdict } from './aggregate.js';
import { compareNames } from '../../common/text/order.js';

export const REASON_INVALID_CLUSTER_INFO = 'InvalidClusterInfo';
export const REASON_CIDR_CONFLICT = 'CIDRConflict';
/** Problems named in one InvalidClusterInfo message at most: the rest are counted. */
const PROBLEMS_NAMED = 5;

interface Claim {
  /** In field order: serviceCIDR (each of a dual-stack pair), then podCIDRs. */
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
  const serviceCIDRs: [string, unknown][] = typeof info.serviceCIDR === 'string' && info.serviceCIDR !== ''
    ? cidrList(info.serviceCIDR).map((c, i, all) => [all.length > 1 ? `serviceCIDR[${String(i)}]` : 'serviceCIDR', c])
    : [['serviceCIDR', info.serviceCIDR]];
  const fields: [string, unknown][] = [...serviceCIDRs, ...(info.podCIDRs ?? []).map((c, i): [string, unknown] => [`podCIDRs[${String(i)}]`, c])];
  for (const [field, value] of fields) {
    if (value === undefined || value === '') continue;
    const cidr = typeof value === 'string' ? parseCidr(value) : undefined;
    if (cidr === undefined) problems.push(`${field} ${JSON.stringify(value).slice(0, 64)} is not a CIDR`);
    else cidrs.push(cidr);
  }
  const gateways: string[] = [];
  for (const [i, g] of (info.gatewayInfos ?? []).entries()) {
    const ip = typeof g.gatewayIP === 'string' ? parseIp(g.gatewayIP) : undefined;
    if (ip === undefined) problems.push(`gatewayInfos[${String(i)}].gatewayIP ${(JSON.stringify(g.gatewayIP) as string | undefined ?? "undefined").slice(0, 64)} is not an IP address`);
    else gateways.push(g.gatewayIP ?? '');
  }
  if (problems.length === 0) return { cidrs, gateways };
  return problems.slice(0, PROBLEMS_NAMED).join('; ') + (problems.length > PROBLEMS_NAMED ? `; and ${String(problems.length - PROBLEMS_NAMED)} more` : '');
}

/** When `obj` was created (ms since epoch); 0, the oldest, when unknown. */
function timeOf(obj: KubeObject): number {
  return parseTimestamp(obj.metadata?.creationTimestamp) ?? 0;
}

function firstHolderFirst(a: ResourceExport, b: ResourceExport): number {
  return timeOf(a) - timeOf(b) || compareNames(a.metadata?.name ?? '', b.metadata?.name ?? '');
}

/** One claim's first clash with another claim: indexes into both claims' lists. */
interface Clash {
  readonly mine: number;
  readonly theirs: number;
}

/** For each claim (by index), the claims it clashes with and the first clash of each pair. */
type ClashTable = Map<number, Map<number, Clash>>;

function noteClash(table: ClashTable, a: number, b: number, clash: Clash): void {
  let row = table.get(a);
  if (row === undefined) table.set(a, (row = new Map<number, Clash>()));
  const known = row.get(b);
  if (known === undefined || clash.mine < known.mine || (clash.mine === known.mine && clash.theirs < known.theirs)) row.set(b, clash);
}

interface Block {
  readonly cidr: Cidr;
  /** Claim index → the first index of this block in that claim's CIDRs. */
  readonly owners: Map<number, number>;
}

/**
 * Every pair of claims (of different clusters) whose CIDRs overlap, with the first overlap of
 * each pair. CIDR blocks are nested or disjoint, so after sorting the distinct blocks by start
 * (the wider first on a tie) the blocks containing the current one form a stack at most 129
 * deep: one sweep, O(n log n) for n CIDRs, instead of comparing every pair of claims' CIDRs.
 */
function cidrClashes(claims: readonly Claim[], clusters: readonly string[]): ClashTable {
  const blocks = new Map<string, Block>();
  claims.forEach((claim, c) => {
    claim.cidrs.forEach((cidr, i) => {
      const key = `${String(cidr.family)}/${cidr.first.toString(16)}/${String(cidr.prefix)}`;
      let block = blocks.get(key);
      if (block === undefined) blocks.set(key, (block = { cidr, owners: new Map<number, number>() }));
      if (!block.owners.has(c)) block.owners.set(c, i);
    });
  });
  const sorted = [...blocks.values()].sort((x, y) => x.cidr.family - y.cidr.family || (x.cidr.first < y.cidr.first ? -1 : x.cidr.first > y.cidr.first ? 1 : x.cidr.prefix - y.cidr.prefix));
  const table: ClashTable = new Map();
  const pair = (inner: Block, outer: Block) => {
    for (const [a, i] of inner.owners) {
      for (const [b, j] of outer.owners) {
        if (clusters[a] === clusters[b]) continue;
        noteClash(table, a, b, { mine: i, theirs: j });
        noteClash(table, b, a, { mine: j, theirs: i });
      }
    }
  };
  const open: Block[] = [];
  for (const block of sorted) {
    while (open.length > 0) {
      const top = open[open.length - 1];
      if (top !== undefined && top.cidr.family === block.cidr.family && top.cidr.last >= block.cidr.first) break;
      open.pop();
    }
    // Claims sharing this very block, then every block that contains it.
    pair(block, block);
    for (const outer of open) pair(block, outer);
    open.push(block);
  }
  return table;
}

/** Pairs of claims (of different clusters) naming one gateway IP, with the first such IP of each pair. */
function gatewayClashes(claims: readonly Claim[], clusters: readonly string[]): ClashTable {
  const owners = new Map<string, Map<number, number>>();
  claims.forEach((claim, c) => {
    claim.gateways.forEach((gateway, i) => {
      const ip = parseIp(gateway);
      const key = ip === undefined ? gateway : `${String(ip.family)}/${ip.value.toString(16)}`;
      let byClaim = owners.get(key);
      if (byClaim === undefined) owners.set(key, (byClaim = new Map<number, number>()));
      if (!byClaim.has(c)) byClaim.set(c, i);
    });
  });
  const table: ClashTable = new Map();
  for (const byClaim of owners.values()) {
    for (const [a, i] of byClaim) {
      for (const [b, j] of byClaim) {
        if (a !== b && clusters[a] !== clusters[b]) noteClash(table, a, b, { mine: i, theirs: j });
      }
    }
  }
  return table;
}

/** Verdicts of every live ClusterInfo export in `all`, by name. */
function judgeAll(all: readonly ResourceExport[], claimOfExport: (re: ResourceExport) => Claim | string): Map<string, ExportVerdict> {
  const live = all.filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo && !isDeleting(re)).sort(firstHolderFirst);
  const claims = live.map(claimOfExport);
  const valid: Claim[] = claims.map((c) => (typeof c === 'string' ? { cidrs: [], gateways: [] } : c));
  const clusters = live.map(clusterOf);
  const cidrTable = cidrClashes(valid, clusters);
  const gatewayTable = gatewayClashes(valid, clusters);
  const verdicts = new Map<string, ExportVerdict>();
  const held: number[] = [];
  live.forEach((re, c) => {
    const claim = claims[c] ?? 'no claim';
    const name = re.metadata?.name ?? '';
    if (typeof claim === 'string') {
      verdicts.set(name, { ok: false, reason: REASON_INVALID_CLUSTER_INFO, message: `ClusterInfo of cluster ${clusterOf(re)} is not imported: ${claim}` });
      return;
    }
    const conflict = conflictWith(c, claim, held, live, valid, cidrTable, gatewayTable);
    if (conflict === undefined) {
      held.push(c);
      verdicts.set(name, { ok: true });
      return;
    }
    verdicts.set(name, {
      ok: false, reason: REASON_CIDR_CONFLICT,
      message: `ClusterInfo of cluster ${clusterOf(re)} is not imported: ${conflict}; the first holder keeps it: fix this cluster's ${conflict.startsWith('gateway') ? 'gateway IP' : 'CIDRs'}`,
    });
  });
  return verdicts;
}

/** The first holder (in holder order) this claim clashes with, in words: a CIDR overlap before a shared gateway. */
function conflictWith(c: number, claim: Claim, held: readonly number[], live: readonly ResourceExport[], claims: readonly Claim[], cidrTable: ClashTable, gatewayTable: ClashTable): string | undefined {
  const cidrRow = cidrTable.get(c);
  const gatewayRow = gatewayTable.get(c);
  if (cidrRow === undefined && gatewayRow === undefined) return undefined;
  for (const h of held) {
    const holder = live[h];
    const where = `of cluster ${holder === undefined ? '' : clusterOf(holder)} (${holder?.metadata?.name ?? ''})`;
    const overlap = cidrRow?.get(h);
    if (overlap !== undefined) return `${claim.cidrs[overlap.mine]?.text ?? ''} overlaps ${claims[h]?.cidrs[overlap.theirs]?.text ?? ''} ${where}`;
    const gateway = gatewayRow?.get(h);
    if (gateway !== undefined) return `gateway IP ${claim.gateways[gateway.mine] ?? ''} is the gateway ${where}`;
  }
  return undefined;
}

/**
 * Verdicts for the ClusterInfo exports among `mine`, judged against every live ClusterInfo
 * export in `all` (the leader namespace). Other kinds get no verdict here.
 */
export function clusterInfoVerdicts(mine: readonly ResourceExport[], all: readonly ResourceExport[]): Map<string, ExportVerdict> {
  return pick(mine, () => judgeAll(all, claimOf));
}

function pick(mine: readonly ResourceExport[], verdictsOfAll: () => ReadonlyMap<string, ExportVerdict>): Map<string, ExportVerdict> {
  const verdicts = new Map<string, ExportVerdict>();
  const wanted = mine.filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo && !isDeleting(re)).map((re) => re.metadata?.name ?? '');
  if (wanted.length === 0) return verdicts;
  const all = verdictsOfAll();
  for (const name of wanted) {
    const verdict = all.get(name);
    if (verdict !== undefined) verdicts.set(name, verdict);
  }
  return verdicts;
}

/**
 * {@link clusterInfoVerdicts} with memory: each export's claim is parsed once per
 * resourceVersion, and the verdicts of one state of the ClusterInfo exports (their names and
 * resourceVersions) are computed once, however many import keys ask. One per leader.
 */
export class ClusterInfoJudge {
  readonly #claims = new Map<string, { readonly version: string; readonly claim: Claim | string }>();
  #state = '';
  #verdicts: ReadonlyMap<string, ExportVerdict> = new Map();
  /** How often the verdicts of all were computed (tests: once per state). */
  judged = 0;

  verdicts(mine: readonly ResourceExport[], all: readonly ResourceExport[]): Map<string, ExportVerdict> {
    return pick(mine, () => this.#verdictsOf(all));
  }

  #verdictsOf(all: readonly ResourceExport[]): ReadonlyMap<string, ExportVerdict> {
    const infos = all.filter((re) => re.spec?.kind === RESOURCE_EXPORT_KIND.ClusterInfo);
    // Without a resourceVersion (objects not from the API server) nothing can be remembered.
    const versioned = infos.every((re) => (re.metadata?.resourceVersion ?? '') !== '');
    const state = infos.map((re) => `${re.metadata?.name ?? ''}@${re.metadata?.resourceVersion ?? ''}${isDeleting(re) ? '-' : ''}`).sort().join(',');
    if (versioned && state === this.#state) return this.#verdicts;
    const seen = new Set<string>();
    this.#verdicts = judgeAll(infos, (re) => {
      const name = re.metadata?.name ?? '';
      const version = re.metadata?.resourceVersion ?? '';
      seen.add(name);
      const known = this.#claims.get(name);
      if (known !== undefined && version !== '' && known.version === version) return known.claim;
      const claim = claimOf(re);
      this.#claims.set(name, { version, claim });
      return claim;
    });
    for (const name of this.#claims.keys()) if (!seen.has(name)) this.#claims.delete(name);
    this.#state = versioned ? state : '';
    this.judged += 1;
    return this.#verdicts;
  }
}
