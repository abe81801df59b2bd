// What the importer remembers about each ResourceImport between reconciles: the admission
// group it was last seen in, its last verdict, refusal or conflict, and what a refused one
// waits for (a namespace to appear, slots to be freed). Short strings only, never RI payloads
// (those live in the informer cache).
import { RESOURCE_IMPORT_KIND } from '../common/api/antrea.js';
import type { Verdict } from './groups.js';
import { addTo, removeFrom } from './multimap.js';
import type { Rejection } from './policy.js';

export interface RiInfo {
  readonly group: string;
  readonly kind: string;
}

export interface RiStateHooks {
  /** Reconcile `riName` again, soon: what it waits on has just changed. */
  requeue(riName: string): void;
  /** `riName` left `group`: it gives up its hold on the group's reservation. */
  leftGroup(riName: string, group: string): void;
}

export class RiState {
  readonly #rejections = new Map<string, Rejection>();
  readonly #conflicts = new Map<string, string>();
  readonly #verdicts = new Map<string, Verdict>();
  readonly #info = new Map<string, RiInfo>();
  /** Group → the RIs last seen in it (a service's ServiceImport and Endpoints RIs). */
  readonly #members = new Map<string, Set<string>>();
  readonly #waitingForNamespace = new Map<string, Set<string>>();
  readonly #namespacesAwaited = new Map<string, readonly string[]>();
  readonly #waitingForCapacity = new Set<string>();

  constructor(private readonly hooks: RiStateHooks) {}

  get rejectedCount(): number {
    return this.#rejections.size;
  }

  get conflictCount(): number {
    return this.#conflicts.size;
  }

  verdict(riName: string): Verdict | undefined {
    return this.#verdicts.get(riName);
  }

  rejection(riName: string): Rejection | undefined {
    return this.#rejections.get(riName);
  }

  /** The RIs last seen in `group`. */
  members(group: string): Iterable<string> {
    return this.#members.get(group) ?? [];
  }

  /** Every RI something is remembered of, so that it is forgotten once the leader withdrew it. */
  known(): string[] {
    return [...this.#info.keys(), ...this.#rejections.keys()];
  }

  /** The RIs refused because `namespace` did not exist. */
  waitingFor(namespace: string): Iterable<string> {
    return this.#waitingForNamespace.get(namespace) ?? [];
  }

  /** The RIs refused for the cap. */
  get waitingForCapacity(): ReadonlySet<string> {
    return this.#waitingForCapacity;
  }

  /** Records which group `riName` is in now; leaving a group gives up its hold there. */
  joinGroup(riName: string, info: RiInfo): void {
    const previous = this.#info.get(riName);
    if (previous && previous.group !== info.group) {
      removeFrom(this.#members, previous.group, riName);
      this.hooks.leftGroup(riName, previous.group);
    }
    this.#info.set(riName, info);
    addTo(this.#members, info.group, riName);
  }

  /** The RI is gone: forgets everything about it (its objects were removed). */
  forget(riName: string): void {
    const info = this.#info.get(riName);
    this.setVerdict(riName, undefined);
    this.#conflicts.delete(riName);
    this.#info.delete(riName);
    if (info) {
      removeFrom(this.#members, info.group, riName);
      this.hooks.leftGroup(riName, info.group);
    }
  }

  /**
   * Sets the verdict (and with it, clears the rejection unless rejected); a ServiceImport RI
   * whose verdict or refusal changed requeues its group's Endpoints RIs.
   */
  setVerdict(riName: string, verdict: Verdict | undefined, rejection?: Rejection): void {
    const previous = this.#verdicts.get(riName);
    const previousMessage = this.#rejections.get(riName)?.message;
    if (verdict === undefined) this.#verdicts.delete(riName);
    else this.#verdicts.set(riName, verdict);
    if (rejection) {
      this.#rejections.set(riName, rejection);
    } else {
      this.#rejections.delete(riName);
      this.#awaitNamespaces(riName, []);
      this.#waitingForCapacity.delete(riName);
    }
    if (verdict !== 'conflict') this.#conflicts.delete(riName);
    const info = this.#info.get(riName);
    if (info?.kind === RESOURCE_IMPORT_KIND.ServiceImport && (previous !== verdict || previousMessage !== rejection?.message)) {
      for (const member of this.#members.get(info.group) ?? []) if (member !== riName) this.hooks.requeue(member);
    }
  }

  /**
   * Records a refusal, and what it waits for: `missingNamespaces` to appear, or free slots for
   * TooManyObjects. Returns the refusal it replaces, if any.
   */
  reject(riName: string, rejection: Rejection, missingNamespaces: readonly string[]): Rejection | undefined {
    const previous = this.#rejections.get(riName);
    this.setVerdict(riName, 'rejected', rejection);
    this.#awaitNamespaces(riName, missingNamespaces);
    if (rejection.rule === 'TooManyObjects') this.#waitingForCapacity.add(riName);
    else this.#waitingForCapacity.delete(riName);
    return previous;
  }

  /** Records why `riName` conflicts with an existing object; true when that is news. */
  conflict(riName: string, message: string): boolean {
    const news = this.#conflicts.get(riName) !== message;
    this.#conflicts.set(riName, message);
    return news;
  }

  clear(): void {
    this.#rejections.clear();
    this.#conflicts.clear();
    this.#verdicts.clear();
    this.#info.clear();
    this.#members.clear();
    this.#waitingForNamespace.clear();
    this.#namespacesAwaited.clear();
    this.#waitingForCapacity.clear();
  }

  #awaitNamespaces(riName: string, namespaces: readonly string[]): void {
    for (const ns of this.#namespacesAwaited.get(riName) ?? []) removeFrom(this.#waitingForNamespace, ns, riName);
    if (namespaces.length === 0) {
      this.#namespacesAwaited.delete(riName);
      return;
    }
    this.#namespacesAwaited.set(riName, namespaces);
    for (const ns of namespaces) addTo(this.#waitingForNamespace, ns, riName);
  }
}
