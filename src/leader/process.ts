// `clusterset-agent leader run`: the leader's controllers as a process, with the same
// conventions as the member agent (health and metrics servers, optional Lease election).
import type winston from 'winston';
import type { AgentConfig } from '../config/config.js';
import type { RunningProcess } from '../runner.js';

export function runLeaderProcess(config: AgentConfig, logger: winston.Logger): Promise<RunningProcess> {
  logger.error('leader run is not implemented yet', { namespace: config.leader.namespace ?? config.namespace });
  return Promise.reject(new Error('leader run is not implemented yet'));
}
