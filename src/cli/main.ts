#!/usr/bin/env node
// clusterset-agent command line. `run` starts the agent; configuration errors exit 2 with
// every problem listed, before anything touches a cluster.
import { ConfigError, describeConfig, loadConfig } from '../config/config.js';
import { createLogger, errorFields } from '../log/logger.js';
import { startAgent } from '../agent.js';

const USAGE = `Usage: clusterset-agent run [--config FILE] [--namespace NS] [--kubeconfig FILE]
                            [--heartbeat-interval SECONDS] [--failure-threshold N] [--log-level LEVEL]
`;

async function run(argv: readonly string[]): Promise<number> {
  let config;
  try {
    config = loadConfig({ argv, env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  logger.info('starting clusterset-agent', { config: describeConfig(config) });
  let agent;
  try {
    agent = await startAgent(config, logger);
  } catch (err) {
    logger.error('agent failed to start', errorFields(err));
    return 1;
  }
  const running = agent;
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info('stopping: heartbeats and watchers end, announces stay on the leaders', { signal });
      void running.stop().then(resolve, (err: unknown) => {
        logger.error('error while stopping', errorFields(err));
        resolve();
      });
    };
    process.once('SIGTERM', () => { shutdown('SIGTERM'); });
    process.once('SIGINT', () => { shutdown('SIGINT'); });
  });
  logger.info('stopped');
  // winston writes asynchronously; let it drain before exiting.
  await new Promise<void>((resolve) => { logger.on('finish', resolve); logger.end(); });
  return 0;
}

async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case 'run':
      return run(rest);
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

process.exitCode = await main(process.argv.slice(2));
