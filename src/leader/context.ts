// What every leader reconciler shares: the leader namespace, its API clients, the informer
// caches, and how writes are counted and logged. One place, so each reconciler module holds
// only its own concern's logic.
import type { CoreV1Event, V1ConfigMap, V1ServiceAccount } from '@kubernetes/client-node';
import type { CoreApi, CustomApi } from '../common/kube/typed-api.js';
import type winston from 'winston';
import type { KubeObject } from '../common/api/meta.js';
import type { ClusterSet, MemberClusterAnnounce, ResourceExport, ResourceImport } from '../common/api/antrea.js';
import type { EventRecorder, EventTarget } from '../common/events/recorder.js';
import type { ResilientInformer } from '../common/kube/informer.js';
import type { AgentMetrics } from '../common/metrics/metrics.js';

export type LeaderMetrics = Pick<AgentMetrics, 'setLeaderMembers' | 'setLeaderDuplicates' | 'recordLeaderWrite' | 'recordAggregationError' | 'leaderExportsFrom'>;

export interface LeaderInformers {
  readonly announces: ResilientInformer<MemberClusterAnnounce>;
  readonly exports: ResilientInformer<ResourceExport>;
  readonly imports: ResilientInformer<ResourceImport>;
  readonly clusterSets: ResilientInformer<ClusterSet>;
  readonly serviceAccounts: ResilientInformer<V1ServiceAccount>;
  readonly configMaps: ResilientInformer<V1ConfigMap>;
  /** Members' `DuplicateClusterID` Events in the leader namespace (field selector: that reason only). */
  readonly duplicateEvents: ResilientInformer<CoreV1Event>;
}

export interface LeaderContext extends LeaderInformers {
  /** The leader namespace (common area). */
  readonly ns: string;
  readonly log: winston.Logger;
  readonly objects: CustomApi;
  readonly core: CoreApi;
  readonly events: EventRecorder | undefined;
  readonly metrics: LeaderMetrics | undefined;
  readonly now: () => number;
}

export type Ref = { group: string; version: string; plural: string };

export function refOf(d: Ref): Ref {
  return { group: d.group, version: d.version, plural: d.plural };
}

export function nameOf(obj: { metadata?: { name?: string } }): string {
  return obj.metadata?.name ?? '';
}

/** An object of the leader namespace as the target of an Event. */
export function eventTarget(kind: { apiVersion: string; kind: string }, obj: KubeObject, namespace: string): EventTarget {
  return { apiVersion: kind.apiVersion, kind: kind.kind, name: nameOf(obj), namespace, ...(obj.metadata?.uid ? { uid: obj.metadata.uid } : {}) };
}
