#!/usr/bin/env node
// clusterset-agent command line. `run` starts the agent; configuration errors exit 2 with
// every problem listed, before anything touches a cluster.
import type winston from 'winston';
import { ConfigError, describeConfig, loadConfig, type AgentConfig } from '../config/config.js';
import { assertMemberCredentials } from '../kube/member-credentials.js';
import { createLogger, errorFields } from '../log/logger.js';
import { runAgentProcess, type RunningProcess } from '../runner.js';
import { runLeaderCommand } from '../leader/member-token.js';
import { runLeaderProcess } from '../leader/process.js';

const USAGE = `Usage: clusterset-agent run [--config FILE] [--namespace NS] [--kubeconfig FILE]
                            [--heartbeat-interval SECONDS] [--failure-threshold N] [--log-level LEVEL]
       clusterset-agent leader create-member-token --member-id ID [--namespace NS] [--kubeconfig FILE]
                            [--service-account NAME] [--duration 8760h|SECONDS] [--secret-name NAME]
                            [--member-namespace NS]
                            (against the leader: prints the member's Secret YAML; 'leader --help' for more)
`;

type ProcessStarter = (config: AgentConfig, logger: winston.Logger) => Promise<RunningProcess>;

async function run(argv: readonly string[], start: ProcessStarter = runAgentProcess, what = 'clusterset-agent'): Promise<number> {
  let config;
  try {
    config = loadConfig({ argv, env: process.env });
    // Missing credentials are configuration too: say which file, instead of 403s for system:anonymous.
    assertMemberCredentials(config.kubeconfig);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  logger.info(`starting ${what}`, { config: describeConfig(config) });
  let running;
  try {
    running = await start(config, logger);
  } catch (err) {
    logger.error('agent failed to start', errorFields(err));
    await new Promise<void>((resolve) => { logger.on('finish', resolve); logger.end(); });
    return 1;
  }
  const agent = running;
  logger.info('agent running', { healthPort: agent.healthPort, metricsPort: agent.metricsPort ?? 'off' });
  const signalled = new Promise<number>((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.info('stopping: heartbeats and watchers end, announces and imports stay', { signal });
        resolve(0);
      });
    }
  });
  const code = await Promise.race([signalled, agent.done]);
  try {
    await agent.stop();
  } catch (err) {
    logger.error('error while stopping', errorFields(err));
  }
  logger.info('stopped', { exitCode: code });
  // winston writes asynchronously; let it drain before exiting.
  await new Promise<void>((resolve) => { logger.on('finish', resolve); logger.end(); });
  return code;
}

async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case 'run':
      return run(rest);
    case 'leader':
      if (rest[0] === 'run') return run(rest.slice(1), runLeaderProcess, 'clusterset-agent leader');
      return runLeaderCommand(rest);
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
      return 2;
  }
}

// Exit explicitly: keep-alive sockets to the API servers would otherwise hold the process
// open after a clean stop, and a stopped agent must not linger.
// A reader that went away (e.g. `| head`, or a parent that exited) must not crash the agent.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}
process.exit(await main(process.argv.slice(2)));
