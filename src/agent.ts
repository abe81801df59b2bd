// Wiring of one agent process: the member client, the ClusterSet controller, the importer
// and their collaborators. No logic lives here; every piece has its own module.
import type winston from 'winston';
import { ClusterSetController } from './clusterset/controller.js';
import { clusterIdentity, readNamespaceUid } from './announce/cluster-identity.js';
import type { AgentConfig } from './common/config/config.js';
import { heartbeatCron, heartbeatOffsetSeconds } from './common/config/heartbeat-schedule.js';
import { createEventRecorder, flushThenStop, type BufferedEventRecorder } from './common/events/recorder.js';
import { createLocalStore } from './importer/local-store.js';
import { ExportManager } from './exporter/manager.js';
import { ImportManager } from './importer/manager.js';
import { apiServerBudget, memberKubeConfig } from './common/kube/local-cluster.js';
import { runProcess, type RunningProcess } from './common/process.js';
import type { AgentMetrics } from './common/metrics/metrics.js';
import { shareConnections } from './common/kube/shared-connections.js';
import { setWatchTimeout } from './common/kube/informer.js';
import { createJsonClient } from './common/kube/json-client.js';
import { discoverMcsVersion } from './common/kube/mcs-version.js';
import { mcsResources } from './common/api/mcs.js';

export interface Agent {
  readonly controller: ClusterSetController;
  readonly imports: ImportManager;
  readonly exports: ExportManager;
  /** Events on ClusterSets, correlated and rate-limited; `flush()` waits until they are sent. */
  readonly events: BufferedEventRecorder;
  /** Caches synced: what /readyz reports. */
  readonly ready: () => boolean;
  stop(): Promise<void>;
}

/**
 * client-node leaves TLS verification to Node's default, which this variable turns off for
 * every connection: a leader's identity would no longer be checked. Refuse to run with it.
 */
export function assertTlsVerificationEnabled(env: Readonly<Record<string, string | undefined>>): void {
  if (env['NODE_TLS_REJECT_UNAUTHORIZED'] === '0') {
    throw new Error('NODE_TLS_REJECT_UNAUTHORIZED=0 would disable TLS verification of leader API servers; unset it');
  }
}

export async function startAgent(config: AgentConfig, logger: winston.Logger, kubeConfig = memberKubeConfig(config), metrics?: AgentMetrics): Promise<Agent> {
  assertTlsVerificationEnabled(process.env);
  // Before any informer opens a watch, to the member or to a leader.
  setWatchTimeout(config.apiClient.watchTimeoutSeconds);
  // Before any client is made from it: every request and watch to the member reuses connections.
  const connections = shareConnections(kubeConfig, apiServerBudget(config, logger));
  metrics?.observeConnections(connections);
  const events = createEventRecorder(kubeConfig, logger);
  // Before the importer and exporter address a ServiceImport or ServiceExport.
  const { version: mcsVersion, served } = await discoverMcsVersion(createJsonClient(kubeConfig, { who: 'member' }));
  const mcs = mcsResources(mcsVersion);
  logger.info('MCS API version', { version: mcsVersion, served });
  if (served.length === 0) logger.warn('the member serves no multicluster.x-k8s.io API: install the chart\'s CRDs; ServiceImports and ServiceExports are addressed as v1alpha1 meanwhile');
  // Assigned right below; the import manager's callbacks only run after start().
  let controller: ClusterSetController | undefined = undefined;
  const imports = new ImportManager({
    kubeConfig,
    agentNamespace: config.namespace,
    policy: config.imports,
    store: createLocalStore(kubeConfig),
    events,
    logger,
    eventTarget: (name) => {
      if (!controller) throw new Error('controller not started');
      return controller.eventTarget(name);
    },
    onCountsChanged: (name) => controller?.requestStatus(name),
    onOutcome: (name, kind, outcome) => metrics?.recordImport(name, kind, outcome),
    onRejection: (name, rule) => metrics?.recordRejection(name, rule),
    mcs,
  });
  const exports = new ExportManager({ kubeConfig, agentNamespace: config.namespace, policy: config.exports, events, logger, mcs });
  controller = new ClusterSetController({
    kubeConfig,
    namespace: config.namespace,
    heartbeatCron: (clusterID) => heartbeatCron(config.heartbeat.intervalSeconds, heartbeatOffsetSeconds(clusterID, config.heartbeat.intervalSeconds)),
    heartbeatIntervalMs: config.heartbeat.intervalSeconds * 1000,
    failureThreshold: config.heartbeat.failureThreshold,
    requestTimeoutMs: config.heartbeat.requestTimeoutSeconds * 1000,
    leaderBudget: { qps: config.apiClient.leaderQPS, burst: config.apiClient.leaderBurst },
    statusMinIntervalMs: config.status.minWriteIntervalMs,
    logger,
    events,
    importers: imports,
    exporters: exports,
    onAreaEvent: (name, target, event) => {
      if (event.type === 'beat') metrics?.observeBeat(name, target.leaderClusterID, event.seconds, event.ok, event.reason);
      else if (event.type === 'conditions') metrics?.setConnected(name, target.leaderClusterID, event.status.ready.status === 'True');
    },
    onClusterSetGone: (name) => metrics?.forget(name),
    onTokenExpiry: (name, leader, expiresAtMs) => metrics?.setTokenExpiry(name, leader, expiresAtMs),
    clusterUid: clusterIdentity(readNamespaceUid(kubeConfig), logger),
  });
  await imports.start();
  await exports.start();
  await controller.start();
  const started = controller;
  return {
    controller: started,
    imports,
    exports,
    events,
    ready: () => started.synced && imports.synced && exports.synced,
    async stop() {
      await started.stop();
      await imports.stop();
      await exports.stop();
      await flushThenStop(events);
    },
  };
}

/** `clusterset-agent run`: the member agent inside the shared process (health, metrics, election). */
export function runAgentProcess(config: AgentConfig, logger: winston.Logger): Promise<RunningProcess> {
  return runProcess(config, logger, (kubeConfig, metrics): Promise<Agent> => startAgent(config, logger, kubeConfig, metrics));
}
