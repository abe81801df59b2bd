// How many exports of one member the leader takes in: the first `limit` of each member, oldest
// first (creation time, then name), and none beyond. Deterministic and stable: a member's new
// export lands beyond the cap (never pushing an older one out), and which ones are beyond
// depends on the exports alone, so it does not flap between reconciles or across restarts.
// LabelIdentity exports count too: the leader does not aggregate them, but holds them. Pure.
import type { ResourceExport } from '../../common/api/antrea.js';
import { RE_LABEL_SOURCE_CLUSTER_ID } from '../../common/api/names.js';
import { parseTimestamp } from '../../common/kube/time.js';
import type { ExportVerdict } from './aggregate.js';

export const REASON_TOO_MANY_EXPORTS = 'TooManyExports';

interface Entry {
  readonly at: number;
  readonly name: string;
}

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.name < b.name);
}

function createdAt(re: ResourceExport): number {
  return parseTimestamp(re.metadata?.creationTimestamp) ?? 0;
}

export function memberOf(re: ResourceExport): string {
  return re.metadata?.labels?.[RE_LABEL_SOURCE_CLUSTER_ID] ?? re.spec?.clusterID ?? '';
}

export class ExportCap {
  readonly limit: number;
  /** Member → its exports, oldest first. */
  readonly #byMember = new Map<string, Entry[]>();
  /** Export name → its member and entry. */
  readonly #entries = new Map<string, { member: string; entry: Entry }>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /**
   * Records `re` (or its deletion). Returns the names of OTHER exports that crossed the cap:
   * one beyond it that is within now (an older export went), or one within that is beyond now
   * (an export older than it arrived late, e.g. after a restart's list).
   */
  update(re: ResourceExport, deleted: boolean): string[] {
    const name = re.metadata?.name ?? '';
    const known = this.#entries.get(name);
    if (!deleted && known !== undefined) return [];
    if (deleted) {
      if (known === undefined) return [];
      this.#entries.delete(name);
      const list = this.#byMember.get(known.member) ?? [];
      const at = this.#indexOf(list, known.entry);
      list.splice(at, 1);
      if (list.length === 0) this.#byMember.delete(known.member);
      // The first one beyond moved within.
      return at < this.limit && list.length >= this.limit ? [list[this.limit - 1]?.name ?? ''] : [];
    }
    const member = memberOf(re);
    const entry = { at: createdAt(re), name };
    let list = this.#byMember.get(member);
    if (list === undefined) this.#byMember.set(member, (list = []));
    const at = this.#indexOf(list, entry);
    list.splice(at, 0, entry);
    this.#entries.set(name, { member, entry });
    // The last one within moved beyond.
    return at < this.limit && list.length > this.limit ? [list[this.limit]?.name ?? ''] : [];
  }

  /** Whether export `name` is beyond its member's cap (unknown exports are not). */
  beyond(name: string): boolean {
    const known = this.#entries.get(name);
    if (known === undefined) return false;
    const list = this.#byMember.get(known.member) ?? [];
    return list.length > this.limit && this.#indexOf(list, known.entry) >= this.limit;
  }

  /** The verdict on an export beyond the cap. */
  verdict(re: ResourceExport): ExportVerdict {
    const member = memberOf(re);
    const count = this.#byMember.get(member)?.length ?? 0;
    return {
      ok: false, reason: REASON_TOO_MANY_EXPORTS,
      message: `cluster ${member} has ${String(count)} exports; the leader takes in its ${String(this.limit)} oldest (leader.maxExportsPerMember) and not this one: ` +
        'withdraw exports this cluster does not need, or raise the limit on the leader',
    };
  }

  /** Position of `entry` in `list` (where it is, or where it goes): binary search. */
  #indexOf(list: readonly Entry[], entry: Entry): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const probe = list[mid];
      if (probe !== undefined && before(probe, entry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
