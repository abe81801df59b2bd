// Makes one Importer per ClusterSet for its RemoteCommonArea, which drives it; keeps them
// to report their counters and to tell them when a namespace appears.
import { CoreV1Api, type KubeConfig, type V1Namespace } from '@kubernetes/client-node';
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
import { apiClient } from '../common/kube/shared-connections.js';
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
  private readonly importers = new Map<string, Importer>();
  private readonly namespaces: ResilientInformer<V1Namespace>;
  /** Shared by every ClusterSet's importer: a name is taken or free whoever asks. */
  private readonly takenNames: WatchedNames;
  private readonly log: ImportManagerLogger;

  constructor(private readonly options: ImportManagerOptions) {
    const core = apiClient(options.kubeConfig, CoreV1Api);
    this.log = options.logger.child({ component: 'importer' });
    // The firewall needs to know which namespaces exist: the agent never creates one.
    const client = createJsonClient(options.kubeConfig);
    this.namespaces = new ResilientInformer<V1Namespace>({
      name: 'namespaces', path: '/api/v1/namespaces', list: paged((page) => core.listNamespace(page)), watch: client, logger: this.log,
    });
    // Metadata only: a cluster's Endpoints may be many and large, and only their names count here.
    this.takenNames = WatchedNames.watching(createJsonClient(options.kubeConfig, undefined, undefined, 'metadata'), this.log, this.mcs.serviceImport);
  }

  private get mcs(): McsResources {
    return this.options.mcs ?? mcsResources('v1beta1');
  }

  start(): Promise<void> {
    // A refusal for a missing namespace is retried as soon as the namespace exists.
    this.namespaces.on('add', (ns) => {
      const name = ns.metadata?.name;
      if (name) for (const importer of this.importers.values()) importer.namespaceAdded(name);
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

  /** The importer of a ClusterSet's area; the area drives it (resume, pause, stop, leave). */
  create(clusterSet: string, target: LeaderTarget): Importer {
    const previous = this.importers.get(clusterSet);
    if (previous) void previous.stop();
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
      serviceImport: this.mcs.serviceImport,
      // A CRD serving only v1alpha1 is taken for Antrea's (or this chart's before mcs-api v0.5):
      // one `ips`, no `ipFamilies`, which would be pruned and then differ forever.
      oneVIP: this.mcs.version === 'v1alpha1',
    });
    this.importers.set(clusterSet, importer);
    return importer;
  }

  /** Forgets a ClusterSet's importer once its area is gone (the area stopped it). */
  release(clusterSet: string): void {
    this.importers.delete(clusterSet);
  }

  counts(clusterSet: string): ImportCounts | undefined {
    return this.importers.get(clusterSet)?.counts();
  }

  importsSynced(clusterSet: string): ImportsSynced | undefined {
    return this.importers.get(clusterSet)?.importsSynced();
  }

  importerFor(clusterSet: string): Importer | undefined {
    return this.importers.get(clusterSet);
  }

  async stop(): Promise<void> {
    const all = [...this.importers.values()];
    this.importers.clear();
    await Promise.all(all.map((i) => i.stop().catch((err: unknown) => {
      this.log.warn('importer did not stop cleanly', { error: describeError(err) });
    })));
    await Promise.all([this.namespaces.stop(), this.takenNames.stop()]);
  }
}
