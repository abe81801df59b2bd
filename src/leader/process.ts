// `clusterset-agent leader run`: the leader's controllers as a process, with the member
// agent's conventions (JSON logs, health and metrics servers, Lease election, graceful stop).
import type winston from 'winston';
import type { AgentConfig } from '../common/config/config.js';
import { createEventRecorder, flushThenStop } from '../common/events/recorder.js';
import { setWatchTimeout } from '../common/kube/informer.js';
import { runProcess, type ProcessWork, type RunningProcess } from '../common/process.js';
import { LeaderController } from './controller.js';

export function runLeaderProcess(config: AgentConfig, logger: winston.Logger): Promise<RunningProcess> {
  return runProcess(config, logger, async (kubeConfig, metrics): Promise<ProcessWork> => {
    setWatchTimeout(config.apiClient.watchTimeoutSeconds);
    const events = createEventRecorder(kubeConfig, logger, 'clusterset-agent-leader');
    const controller = new LeaderController({
      kubeConfig,
      namespace: config.leader.namespace,
      memberTimeoutMs: config.leader.memberTimeoutSeconds * 1000,
      staleMemberMs: config.leader.staleMemberSeconds * 1000,
      sweepIntervalMs: config.leader.sweepIntervalSeconds * 1000,
      maxExportsPerMember: config.leader.maxExportsPerMember,
      maxImportBytes: config.leader.maxImportBytes,
      maxDuplicateEvents: config.leader.maxDuplicateEvents,
      logger,
      events,
      metrics,
    });
    await controller.start();
    return {
      ready: () => controller.ready(),
      async stop() {
        await controller.stop();
        await flushThenStop(events);
      },
    };
  });
}
