// Makes one Importer per ClusterSet leader for its RemoteCommonArea, which drives it; keeps
// them to report their counters and to tell them when a namespace appears.
import type { KubeConfig, V1Namespace } from '@kubernetes/client-node';
import { createJsonClient } from '../common/kube/json-client.js';
import type { ImportPolicyConfig } from '../common/config/config.js';
import type { LeaderTarget } from '../clusterset/spec.js';
import type { EventRecorder, EventTarget } from '../common/events/recorder.js';
import { ResilientInformer } from '../common/kube/informer.js';
import { describeError } from '../common/kube/errors.js';
import type { ImportCounts, ImportsSynced } from '../conditions/status/compute.js';
import { Importer, type ImporterLogger, type ImportOutcome } from './importer.js';
import type { LocalStore } from './local-store.js';
import type { ImportOwner } from './ownership.js';
import { WatchedNames } from './taken-names.js';
import { boardMemberOf, ImportBoard, type BoardMember } from './import-board.js';
import { coreApi } from '../common/kube/typed-api.js';
import { paged } from '../common/kube/paginate.js';
import { mcsResources, type McsResources } from '../common/api/mcs.js';

export interface ImportManagerLogger extends ImporterLogger {
  child(fields: Record<string, unknown>): ImportManagerLogger;
}

export interface ImportManagerOptions {
  readonly kubeConfig: KubeConfig;
  readonly agentNamespace: string;
  readonly policy: ImportPolicyConfig;
  readonly store: LocalStore;
  readonly events: EventRecorder;
  readonly logger: ImportManagerLogger;
  readonly eventTarget: (clusterSet: string) => EventTarget;
  readonly onCountsChanged: (clusterSet: string) => void;
  readonly onOutcome?: (clusterSet: string, kind: string, outcome: ImportOutcome) => void;
  readonly onRejection?: (clusterSet: string, rule: string) => void;
  /** ServiceImports in the version the member serves (common/kube/mcs-version.ts). @default v1beta1 */
  readonly mcs?: McsResources;
}

export class ImportManager {
  /** Per ClusterSet, its importers by leader cluster ID. */
  private readonly importers = new Map<string, Map<string, Importer>>();
  /** Per ClusterSet, where its leaders' importers decide which leader is an import's source. */
  private readonly boards = new Map<string, ImportBoard>();
  private readonly members = new Map<Importer, BoardMember>();
  private readonly namespaces: ResilientInformer<V1Namespace>;
  /** Shared by every ClusterSet's importer: a name is taken or free whoever asks. */
  private readonly takenNames: WatchedNames;
  private readonly log: ImportManagerLogger;

  constructor(private readonly options: ImportManagerOptions) {
    this.log = options.logger.child({ component: 'importer' });
    // The firewall needs to know which namespaces exist: the agent never creates one.
    const client = createJsonClient(options.kubeConfig, { who: 'member' });
    const core = coreApi(client);
    this.namespaces = new ResilientInformer<V1Namespace>({
      name: 'namespaces', path: '/api/v1/namespaces', list: paged((page) => core.listNamespace(page)), watch: client, logger: this.log,
    });
    // Metadata only: a cluster's Endpoints may be many and large, and only their names count here.
    this.takenNames = WatchedNames.watching(createJsonClient(options.kubeConfig, { who: 'member', answers: 'metadata' }), this.log, this.mcs.serviceImport);
  }

  private get mcs(): McsResources {
    return this.options.mcs ?? mcsResources('v1beta1');
  }

  start(): Promise<void> {
    // A refusal for a missing namespace is retried as soon as the namespace exists.
    this.namespaces.on('add', (ns) => {
      const name = ns.metadata?.name;
      if (name) for (const importer of this.all()) importer.namespaceAdded(name);
    });
    // Not awaited: until they sync, claimed names are read one by one (taken-names.ts).
    this.takenNames.start();
    return this.namespaces.start();
  }

  get synced(): boolean {
    return this.namespaces.hasSynced;
  }

  owner(clusterSet: string, target: LeaderTarget): ImportOwner {
    return {
      clusterSetID: clusterSet, leaderClusterID: target.leaderClusterID, leaderNamespace: target.leaderNamespace,
      agentNamespace: this.options.agentNamespace, localClusterID: target.localClusterID,
    };
  }

  private all(): Importer[] {
    return [...this.importers.values()].flatMap((byLeader) => [...byLeader.values()]);
  }

  /** The ClusterSet's leaders, in spec.leaders order: the first connected one holding an import is its source. */
  setLeaders(clusterSet: string, leaderClusterIDs: readonly string[]): void {
    this.board(clusterSet).setLeaders(leaderClusterIDs);
  }

  private board(clusterSet: string): ImportBoard {
    let board = this.boards.get(clusterSet);
    if (board === undefined) {
      board = new ImportBoard();
      this.boards.set(clusterSet, board);
    }
    return board;
  }

  /** The importer of a ClusterSet leader's area; the area drives it (resume, pause, stop, leave). */
  create(clusterSet: string, target: LeaderTarget): Importer {
    const byLeader = this.importers.get(clusterSet) ?? new Map<string, Importer>();
    this.importers.set(clusterSet, byLeader);
    const previous = byLeader.get(target.leaderClusterID);
    if (previous) {
      this.leaveBoard(clusterSet, target.leaderClusterID, previous);
      void previous.stop();
    }
    const board = this.board(clusterSet);
    const importer = new Importer({
      owner: this.owner(clusterSet, target),
      policy: this.options.policy,
      store: this.options.store,
      takenNames: this.takenNames,
      namespaceExists: (ns) => this.namespaces.get(ns) !== undefined,
      namespaceTerminating: (ns) => this.namespaces.get(ns)?.status?.phase === 'Terminating',
      events: this.options.events,
      eventTarget: () => this.options.eventTarget(clusterSet),
      logger: this.log.child({ clusterSet, leader: target.leaderClusterID }),
      onCountsChanged: () => { this.options.onCountsChanged(clusterSet); },
      onOutcome: (kind, outcome) => this.options.onOutcome?.(clusterSet, kind, outcome),
      onRejection: (rule) => this.options.onRejection?.(clusterSet, rule),
      sources: board.handle(target.leaderClusterID),
      serviceImport: this.mcs.serviceImport,
      // A CRD serving only v1alpha1 is taken for Antrea's (or this chart's before mcs-api v0.5):
      // one `ips`, no `ipFamilies`, which would be pruned and then differ forever.
      oneVIP: this.mcs.version === 'v1alpha1',
      // mcs-api v0.5's status.endpointSliceObjects (KEP-1645 beta: implementations publish it).
      endpointSliceObjects: this.mcs.version === 'v1beta1',
    });
    const member = boardMemberOf(importer);
    this.members.set(importer, member);
    board.join(target.leaderClusterID, member);
    byLeader.set(target.leaderClusterID, importer);
    return importer;
  }

  /** Forgets a ClusterSet leader's importer once its area is gone (the area stopped it). */
  release(clusterSet: string, leaderClusterID: string): void {
    const byLeader = this.importers.get(clusterSet);
    const importer = byLeader?.get(leaderClusterID);
    if (importer) this.leaveBoard(clusterSet, leaderClusterID, importer);
    byLeader?.delete(leaderClusterID);
    if (byLeader?.size === 0) {
      this.importers.delete(clusterSet);
      this.boards.delete(clusterSet);
    }
  }

  private leaveBoard(clusterSet: string, leaderClusterID: string, importer: Importer): void {
    const member = this.members.get(importer);
    this.members.delete(importer);
    if (member) this.boards.get(clusterSet)?.leave(leaderClusterID, member);
  }

  /** The ClusterSet's counts: the sum over its leaders' importers. */
  counts(clusterSet: string): ImportCounts | undefined {
    const all = [...(this.importers.get(clusterSet)?.values() ?? [])].map((i) => i.counts());
    if (all.length <= 1) return all[0];
    return all.reduce((sum, c) => ({
      total: sum.total + c.total, rejected: sum.rejected + c.rejected, conflicts: sum.conflicts + c.conflicts, divergent: (sum.divergent ?? 0) + (c.divergent ?? 0),
    }));
  }

  /** The watchers' health: one leader's as it is; several leaders', the worst, naming whose. */
  importsSynced(clusterSet: string): ImportsSynced | undefined {
    const byLeader = this.importers.get(clusterSet);
    if (byLeader === undefined || byLeader.size <= 1) return byLeader?.values().next().value?.importsSynced();
    return worstSynced([...byLeader].map(([leader, importer]) => [leader, importer.importsSynced()] as const));
  }

  /** A ClusterSet leader's importer (by default its first leader's). */
  importerFor(clusterSet: string, leaderClusterID?: string): Importer | undefined {
    const byLeader = this.importers.get(clusterSet);
    return leaderClusterID !== undefined ? byLeader?.get(leaderClusterID) : byLeader?.values().next().value;
  }

  async stop(): Promise<void> {
    const all = this.all();
    this.importers.clear();
    await Promise.all(all.map((i) => i.stop().catch((err: unknown) => {
      this.log.warn('importer did not stop cleanly', { error: describeError(err) });
    })));
    await Promise.all([this.namespaces.stop(), this.takenNames.stop()]);
  }
}

/** False before Unknown before True; the leaders not watching (undefined) do not count. Pure. */
export function worstSynced(entries: readonly (readonly [string, ImportsSynced | undefined])[]): ImportsSynced | undefined {
  const rank = { False: 0, Unknown: 1, True: 2 } as const;
  const watching = entries.filter((e): e is readonly [string, ImportsSynced] => e[1] !== undefined);
  const worst = watching.reduce<readonly [string, ImportsSynced] | undefined>((w, e) => (w === undefined || rank[e[1].status] < rank[w[1].status] ? e : w), undefined);
  if (worst === undefined) return undefined;
  const [leader, synced] = worst;
  if (synced.status === 'True') return { status: 'True', reason: 'Synced', message: `ResourceImports listed and watched from ${String(watching.length)} leaders` };
  const named = { ...synced, message: `leader ${leader}: ${synced.message}` };
  // Several leaders failing: the earliest start tells how long imports have been degraded.
  const since = watching.filter(([, s]) => s.status === synced.status).map(([, s]) => s.sinceMs).filter((t): t is number => t !== undefined);
  return since.length > 0 ? { ...named, sinceMs: Math.min(...since) } : named;
}
