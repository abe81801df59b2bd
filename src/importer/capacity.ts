// The per-leader cap on imported objects, as a ledger of reservations per admission group (a
// whole exported Service, or one ResourceImport's objects; see groups.ts).
//
// A group reserves all its slots at once, before anything of it is written, and keeps them
// while any holder (an RI admitted into it) or any object of it remains. Admission is one
// synchronous check-and-reserve, so concurrent reconciles cannot both take the last slots:
// the sum of reservations never exceeds the limit through admit(). Only settle() may go over
// it, because objects that already exist (found after a restart) are counted as they are.
import { addTo, removeFrom } from './multimap.js';

export class ImportCapacity {
  /** Group → reserved slots. */
  readonly #reserved = new Map<string, number>();
  #total = 0;
  /** Group → the holders of its reservation (RIs admitted, applying or applied). */
  readonly #holders = new Map<string, Set<string>>();
  /** Group → its objects that exist (or may exist). */
  readonly #objects = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Slots reserved by all groups. */
  get reservedTotal(): number {
    return this.#total;
  }

  /** The group's reservation, undefined when it holds none. */
  reservedFor(group: string): number | undefined {
    return this.#reserved.get(group);
  }

  objectsIn(group: string): number {
    return this.#objects.get(group) ?? 0;
  }

  /**
   * Admits `holder` into `group`, first reserving the group's full `size` if it holds fewer
   * slots. False, and nothing changes, when those slots do not fit within the limit.
   */
  admit(holder: string, group: string, size: number): boolean {
    const have = this.#reserved.get(group);
    if (have === undefined || have < size) {
      const extra = size - (have ?? 0);
      if (this.#total + extra > this.limit) return false;
      this.#reserve(group, size);
    }
    addTo(this.#holders, group, holder);
    return true;
  }

  /** `holder` gives up its hold on `group`. True when that freed the group's slots. */
  unadmit(holder: string, group: string): boolean {
    removeFrom(this.#holders, group, holder);
    return this.releaseIfUnused(group);
  }

  objectAdded(group: string): void {
    this.#objects.set(group, (this.#objects.get(group) ?? 0) + 1);
  }

  /** Frees nothing by itself: an object indexed again must not free its group in between; callers release once it is gone. */
  objectRemoved(group: string): void {
    const left = (this.#objects.get(group) ?? 1) - 1;
    if (left > 0) this.#objects.set(group, left);
    else this.#objects.delete(group);
  }

  /** Frees a group's slots once no holder holds it and none of its objects exists. True when freed. */
  releaseIfUnused(group: string): boolean {
    if (!this.#reserved.has(group) || (this.#holders.get(group)?.size ?? 0) > 0 || this.objectsIn(group) > 0) return false;
    this.#reserve(group, 0);
    this.#reserved.delete(group);
    return true;
  }

  /** Forgets every object count (before they are counted again from what exists); reservations stay. */
  forgetObjects(): void {
    this.#objects.clear();
  }

  /**
   * Reservations follow what exists and who is admitted: frees every unused group, and raises
   * each group with objects to at least `slotsFor(group, objects)`, over the limit if that is
   * what exists. True when some group's slots were freed.
   */
  settle(slotsFor: (group: string, objects: number) => number): boolean {
    let freed = false;
    for (const group of [...this.#reserved.keys()]) freed = this.releaseIfUnused(group) || freed;
    for (const [group, count] of this.#objects) {
      const size = slotsFor(group, count);
      if ((this.#reserved.get(group) ?? 0) < size) this.#reserve(group, size);
    }
    return freed;
  }

  clear(): void {
    this.#reserved.clear();
    this.#total = 0;
    this.#holders.clear();
    this.#objects.clear();
  }

  #reserve(group: string, size: number): void {
    this.#total += size - (this.#reserved.get(group) ?? 0);
    this.#reserved.set(group, size);
  }
}
