// The importers of one ClusterSet's leaders, side by side: each asks here which leader is
// the source of an import (import-sources.ts decides), and tells the others when what it
// holds or its connection changed, so that they look at the affected imports again.
import type { ResourceImport } from '../common/api/antrea.js';
import type { KindRef, ObjectRef } from './local-store.js';
import type { Owned } from './owned-index.js';
import { keyOf } from './targets.js';
import { decideSource, differingSources, heldElsewhere, type SourceDecision, type SourceView } from './import-sources.js';

/** What the board needs of one leader's importer. */
export interface BoardMember {
  view(riName: string): { readonly state: SourceView['state']; readonly ri: ResourceImport | undefined };
  /** Look at this import again (its source may have changed). */
  recheck(riName: string): void;
  /** Look at every import again (another leader connected or disconnected). */
  recheckAll(): void;
  /**
   * Another leader's importer went (removed from spec.leaders, or replaced): what it imported
   * and left behind for the others is in nobody's index now. Find it again (a labelled list)
   * and look at every import: objects of its import that this leader does not want (e.g. an
   * EndpointSlice named otherwise) are then deleted, after what this leader wants is written.
   * @default recheckAll
   */
  takeOver?(): void;
  /**
   * Another leader is now the source of `riName`: give up (drop from this importer's index and
   * return) what this leader wrote for it, so that the source writes into those very objects.
   * @default nothing to give
   */
  surrender?(riName: string): readonly Owned[];
}

/** What of one leader's importer the board calls (importer.ts). */
export interface BoardImporter {
  sourceView(riName: string): ReturnType<BoardMember['view']>;
  recheck(riName: string): void;
  recheckAll(): void;
  takeOver(): void;
  handOver(riName: string): readonly Owned[];
}

/** The board's member for one leader's importer: how the ImportManager (and the tests) join it. */
export function boardMemberOf(importer: BoardImporter): BoardMember {
  return {
    view: (riName) => importer.sourceView(riName),
    recheck: (riName) => { importer.recheck(riName); },
    recheckAll: () => { importer.recheckAll(); },
    takeOver: () => { importer.takeOver(); },
    surrender: (riName) => importer.handOver(riName),
  };
}

/** One importer's handle on its ClusterSet's board. */
export interface ImportSources {
  /** The ClusterSet lists several leaders: imports are shared between them. */
  several(): boolean;
  decide(riName: string): SourceDecision;
  /** Another leader holds the import, or may: what this one imported for it must stay. */
  heldElsewhere(riName: string): boolean;
  /** The connected leaders whose copy of the import differs from the source's. */
  differing(riName: string): string[];
  /** This leader's copy of the import changed (or appeared, or went). */
  changed(riName: string): void;
  /** This leader connected, disconnected or stopped. */
  sourceChanged(): void;
  /** The other leaders that still have an importer here (listed, connected or not). */
  others(): string[];
  /**
   * This leader is the source of `riName`: what other leaders' importers wrote for it (their
   * index entries, or what a leader that went left here), to write into rather than beside.
   * An EndpointSlice named otherwise by another kind of leader is then updated, not replaced.
   */
  adopt(riName: string): Owned[];
  /** This leader's importer goes: what it wrote for imports another leader holds, for the next source to adopt. */
  leaveBehind(entries: readonly Owned[]): void;
  /**
   * This leader's importer rebuilt its index from a list of the ClusterSet's objects: the kinds
   * it listed, what it found, and whether an object (by key) is in its index now.
   */
  rebuilt(listing: IndexListing): void;
}

export interface IndexListing {
  readonly kinds: readonly KindRef[];
  readonly found: readonly { readonly ref: ObjectRef }[];
  readonly indexed: (key: string) => boolean;
}

/** A left-behind entry, with the board's count of leaveBehind calls when it was left. */
interface LeftBehind {
  readonly entry: Owned;
  readonly seq: number;
}

export class ImportBoard {
  #order: readonly string[] = [];
  readonly #members = new Map<string, BoardMember>();
  /** What importers that went left for the next source of each import, by import. */
  readonly #leftBehind = new Map<string, LeftBehind[]>();
  /** leaveBehind calls so far: orders what was left against the importers' index rebuilds. */
  #seq = 0;
  /** Per leader, #seq when its importer last rebuilt its index. */
  readonly #rebuilt = new Map<string, number>();

  /** The ClusterSet's leaders in spec.leaders order: the order decides the source. */
  setLeaders(order: readonly string[]): void {
    const before = this.#order;
    this.#order = [...order];
    if (before.join('\u0000') !== this.#order.join('\u0000')) for (const member of this.#members.values()) member.recheckAll();
  }

  get several(): boolean {
    return this.#order.length > 1 || this.#members.size > 1;
  }

  get empty(): boolean {
    return this.#members.size === 0;
  }

  join(leaderClusterID: string, member: BoardMember): void {
    this.#members.set(leaderClusterID, member);
  }

  /** How many left-behind entries wait for a source to adopt them (what the bound keeps small). */
  get leftBehindCount(): number {
    let count = 0;
    for (const list of this.#leftBehind.values()) count += list.length;
    return count;
  }

  /** A leader's importer is gone: the others take over what it was the source of. */
  leave(leaderClusterID: string, member: BoardMember): void {
    if (this.#members.get(leaderClusterID) !== member) return;
    this.#members.delete(leaderClusterID);
    this.#rebuilt.delete(leaderClusterID);
    for (const other of this.#members.values()) {
      if (other.takeOver) other.takeOver();
      else other.recheckAll();
    }
  }

  handle(self: string): ImportSources {
    return {
      several: () => this.several,
      decide: (riName) => decideSource(self, this.views(riName)),
      heldElsewhere: (riName) => heldElsewhere(self, this.views(riName)),
      differing: (riName) => differingSources(this.views(riName)),
      changed: (riName) => { this.notify(self, (m) => { m.recheck(riName); }); },
      sourceChanged: () => { this.notify(self, (m) => { m.recheckAll(); }); },
      others: () => [...this.#members.keys()].filter((id) => id !== self),
      adopt: (riName) => this.adopt(self, riName),
      leaveBehind: (entries) => {
        this.#seq += 1;
        for (const entry of entries) {
          const list = this.#leftBehind.get(entry.riName) ?? [];
          list.push({ entry, seq: this.#seq });
          this.#leftBehind.set(entry.riName, list);
        }
      },
      rebuilt: (listing) => { this.rebuilt(self, listing); },
    };
  }

  private adopt(self: string, riName: string): Owned[] {
    const out = (this.#leftBehind.get(riName) ?? []).map((left) => left.entry);
    this.#leftBehind.delete(riName);
    for (const [id, member] of this.#members) if (id !== self && member.surrender) out.push(...member.surrender(riName));
    return out;
  }

  /**
   * What was left behind is dropped once an index rebuild covers it, so that entries no source
   * ever adopts (an import the source refuses, or that every leader withdrew) do not pile up
   * until the board goes. Covered: left before `self`'s previous rebuild ended, so before this
   * rebuild's list began, and now in `self`'s index (the next source gets it from there through
   * `surrender`), or of a kind the list covered and not found (gone: adopting it would only
   * re-read it and create it anyway). Found and not indexed (`self` leaves that import to
   * another source) is not covered: it stays for that source to adopt.
   */
  private rebuilt(self: string, listing: IndexListing): void {
    // An importer that left the board (a late rebuild) or cannot surrender: its index hands nothing over.
    if (this.#members.get(self)?.surrender === undefined) return;
    const before = this.#rebuilt.get(self);
    this.#rebuilt.set(self, this.#seq);
    if (before === undefined) return;
    const found = new Set(listing.found.map((f) => keyOf(f.ref)));
    const listed = (ref: ObjectRef) => listing.kinds.some((k) => k.group === ref.group && k.plural === ref.plural);
    const covered = ({ ref }: Owned) => listing.indexed(keyOf(ref)) || (listed(ref) && !found.has(keyOf(ref)));
    for (const [riName, list] of this.#leftBehind) {
      const kept = list.filter((left) => left.seq > before || !covered(left.entry));
      if (kept.length === 0) this.#leftBehind.delete(riName);
      else if (kept.length < list.length) this.#leftBehind.set(riName, kept);
    }
  }

  /** Every leader's view, in spec order; an importer of a leader no longer listed comes last. */
  private views(riName: string): SourceView[] {
    const ids = [...this.#order, ...[...this.#members.keys()].filter((id) => !this.#order.includes(id))];
    return ids.map((id) => {
      const member = this.#members.get(id);
      return { leaderClusterID: id, ...(member ? member.view(riName) : { state: 'absent' as const, ri: undefined }) };
    });
  }

  private notify(self: string, action: (member: BoardMember) => void): void {
    if (this.#members.size <= 1) return;
    for (const [id, member] of this.#members) if (id !== self) action(member);
  }
}
