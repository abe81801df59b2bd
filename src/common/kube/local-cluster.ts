// The agent's own cluster (the member, or the leader in `leader run`): its KubeConfig and client budget.
import { KubeConfig } from '@kubernetes/client-node';
import type winston from 'winston';
import type { AgentConfig } from '../config/config.js';
import { ClientBudget } from './client-budget.js';
import { assertMemberCredentials, inClusterFiles } from './member-credentials.js';

/**
 * The member cluster's KubeConfig. Missing or empty credential files are a {@link ConfigError}
 * here, not anonymous requests retried forever. `serviceAccountPathPrefix` is client-node's
 * `loadFromCluster` prefix (tests).
 */
export function memberKubeConfig(config: AgentConfig, serviceAccountPathPrefix = ''): KubeConfig {
  assertMemberCredentials(config.kubeconfig, inClusterFiles(serviceAccountPathPrefix));
  const kc = new KubeConfig();
  // Never loadFromDefault: it silently falls back to http://localhost:8080 when nothing is configured.
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromCluster(serviceAccountPathPrefix);
  return kc;
}

/** The client budget of the agent's own API server, from apiClient.qps/burst; long waits are logged. */
export function apiServerBudget(config: AgentConfig, logger: winston.Logger): ClientBudget {
  const { qps, burst } = config.apiClient;
  return new ClientBudget({ qps, burst }, (waits) => {
    logger.warn('requests to the API server waited for the client-side budget (apiClient.qps, apiClient.burst)', { ...waits, qps, burst });
  });
}
