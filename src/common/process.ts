// The agent as a process: health and metrics servers, optional leader election, and the
// agent itself, started only on the elected replica. `clusterset-agent run` is this.
import type { KubeConfig } from '@kubernetes/client-node';
import type winston from 'winston';
import type { AgentConfig } from './config/config.js';
import { kubeLeaseClient, LeaseElector } from './election/lease-elector.js';
import { startHttpServer, type HttpServer } from './health/server.js';
import { errorFields } from './log/logger.js';
import { AgentMetrics } from './metrics/metrics.js';
import { shareConnections } from './kube/shared-connections.js';
import { apiServerBudget, memberKubeConfig } from './kube/local-cluster.js';

export interface RunningProcess {
  readonly metrics: AgentMetrics;
  readonly healthPort: number;
  readonly metricsPort: number | undefined;
  /** Resolves when the process should exit (with this code): a signal, or lost leadership. */
  readonly done: Promise<number>;
  /** Whether this replica runs the agent (always, without leader election). */
  leading(): boolean;
  /**
   * Stops the agent, then hands the Lease back so a standby takes over at once.
   * `releaseLease: false` leaves the Lease to expire, as a crashed replica would.
   */
  stop(options?: { releaseLease?: boolean }): Promise<void>;
}

/** What runs on the elected replica: the member agent, or the leader's controllers. */
export interface ProcessWork {
  /** Caches synced: what /readyz reports. */
  ready(): boolean;
  stop(): Promise<void>;
}

export type WorkStarter = (kubeConfig: KubeConfig, metrics: AgentMetrics) => Promise<ProcessWork>;

/** Health and metrics servers, optional Lease election, and `start` on the elected replica. */
export async function runProcess(config: AgentConfig, logger: winston.Logger, start: WorkStarter): Promise<RunningProcess> {
  const kubeConfig = memberKubeConfig(config);
  const metrics = new AgentMetrics();
  // Before any client is made from it: the Lease client, and every request and watch of the work, reuse connections.
  metrics.observeConnections(shareConnections(kubeConfig, apiServerBudget(config, logger)));
  let agent: ProcessWork | undefined;
  let starting: Promise<void> | undefined;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => { finish = resolve; });

  const startWork = async () => {
    agent = await start(kubeConfig, metrics);
  };
  const elector = config.leaderElection.enabled
    ? new LeaseElector({
      lease: kubeLeaseClient(kubeConfig, config.namespace, config.leaderElection.leaseName),
      leaseDurationSeconds: config.leaderElection.leaseDurationSeconds,
      renewDeadlineSeconds: config.leaderElection.renewDeadlineSeconds,
      retryPeriodSeconds: config.leaderElection.retryPeriodSeconds,
      logger,
      onStartedLeading: () => {
        metrics.setElected(true);
        logger.info('elected: starting work');
        starting = startWork().catch((err: unknown) => {
          logger.error('agent failed to start', errorFields(err));
          finish(1);
        });
      },
      onStoppedLeading: (reason) => {
        // Another replica may already be writing: stop at once and let Kubernetes restart us.
        metrics.setElected(false);
        logger.error('lost leadership: exiting', { reason });
        finish(1);
      },
    })
    : undefined;

  const servers: HttpServer[] = [];
  const health = await startHttpServer({
    bindAddress: config.health.bindAddress,
    readyz: () => {
      if (elector && !elector.isLeader) return { ok: true, detail: `standby (leader: ${elector.leader ?? 'none yet'})` };
      return agent?.ready() ? { ok: true, detail: 'caches synced' } : { ok: false, detail: 'caches not synced yet' };
    },
  });
  servers.push(health);
  let metricsServer: HttpServer | undefined;
  if (config.metrics.bindAddress !== '0') {
    metricsServer = await startHttpServer({ bindAddress: config.metrics.bindAddress, metrics });
    servers.push(metricsServer);
  }

  if (elector) elector.start();
  else {
    metrics.setElected(true);
    await startWork();
  }

  let stopped: Promise<void> | undefined;
  return {
    metrics,
    healthPort: health.port,
    metricsPort: metricsServer?.port,
    done,
    leading: () => agent !== undefined && (elector === undefined || elector.isLeader),
    stop(options = {}) {
      stopped ??= (async () => {
        await starting;
        await agent?.stop();
        // Hand the lease back only after the work it guards has stopped.
        if (elector && options.releaseLease !== false) await elector.release();
        else await elector?.stop();
        await Promise.all(servers.map((s) => s.close()));
      })();
      return stopped;
    },
  };
}
