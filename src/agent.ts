// Wiring of one agent process: the member client, the ClusterSet controller and its
// collaborators. No logic lives here; every piece has its own module.
import { KubeConfig } from '@kubernetes/client-node';
import type winston from 'winston';
import { ClusterSetController } from './clusterset/controller.js';
import { heartbeatCron, type AgentConfig } from './config/config.js';

export interface Agent {
  readonly controller: ClusterSetController;
  stop(): Promise<void>;
}

export function memberKubeConfig(config: AgentConfig): KubeConfig {
  const kc = new KubeConfig();
  // Never loadFromDefault: it silently falls back to http://localhost:8080 when nothing is configured.
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromCluster();
  return kc;
}

export async function startAgent(config: AgentConfig, logger: winston.Logger, kubeConfig = memberKubeConfig(config)): Promise<Agent> {
  const controller = new ClusterSetController({
    kubeConfig,
    namespace: config.namespace,
    heartbeatCron: heartbeatCron(config.heartbeat.intervalSeconds),
    failureThreshold: config.heartbeat.failureThreshold,
    requestTimeoutMs: config.heartbeat.requestTimeoutSeconds * 1000,
    statusMinIntervalMs: config.status.minWriteIntervalMs,
    logger,
  });
  await controller.start();
  return {
    controller,
    stop: () => controller.stop(),
  };
}
