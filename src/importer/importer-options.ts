// What an Importer is given: the owner it imports for, the firewall's settings, the member
// store, and the callbacks through which it reports. Apart from importer.ts so that its
// callers (the manager, tests) read the contract without the engine.
import type { ResourceDescriptor } from '../common/api/meta.js';
import type { ImportPolicyConfig } from '../common/config/config.js';
import type { EventRecorder, EventTarget } from '../common/events/recorder.js';
import type { ImportOutcome } from './applier.js';
import type { ImportSources } from './import-board.js';
import type { LocalStore } from './local-store.js';
import type { ImportOwner } from './ownership.js';
import type { TakenNames } from './taken-names.js';

export interface ImporterLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ImporterOptions {
  readonly owner: ImportOwner;
  readonly policy: ImportPolicyConfig;
  readonly store: LocalStore;
  /** Which claimed names are taken, without a GET (taken-names.ts). @default each is read */
  readonly takenNames?: TakenNames;
  readonly namespaceExists: (namespace: string) => boolean;
  /** Whether an existing namespace is being deleted. @default never */
  readonly namespaceTerminating?: (namespace: string) => boolean;
  readonly events: EventRecorder;
  readonly eventTarget: () => EventTarget;
  readonly logger: ImporterLogger;
  /** Called when the counts reported in ClusterSet status change. */
  readonly onCountsChanged: () => void;
  readonly onOutcome?: (kind: string, outcome: ImportOutcome) => void;
  readonly onRejection?: (rule: string) => void;
  /** @default IMPORT_WORKERS */
  readonly concurrency?: number;
  /** The ServiceImport version the member serves (mcs.ts `servedMcsVersion`). @default v1beta1 */
  readonly serviceImport?: ResourceDescriptor;
  /** One VIP and no ipFamilies on ServiceImports (a v1alpha1-only CRD, Antrea's shape). @default false */
  readonly oneVIP?: boolean;
  /** Write `status.endpointSliceObjects: Present` on the ServiceImports (the served CRD has it: v1beta1). @default false */
  readonly endpointSliceObjects?: boolean;
  /** The ClusterSet's other leaders' importers, when it lists several (import-board.ts). */
  readonly sources?: ImportSources;
}

/**
 * Imports reconciled at once. A worker writes its import's objects one after the other (a
 * ServiceImport needs its Service's IP; Endpoints come after their slices), so this is also the
 * writes in flight of an initial sync. The fastest minimal client of bench:imports keeps 16
 * Services in flight, 16 to 32 writes. Syncing 4,000 objects, 8 workers took 1.5-1.7× its
 * time and 24 about as long as it; at 10,000 the agent's CPU limits it more than this
 * (docs/testing.md, "Benchmark: imports").
 */
export const IMPORT_WORKERS = 24;
