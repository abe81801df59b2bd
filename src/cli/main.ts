#!/usr/bin/env node
// clusterset-agent command line, on commander:
//   run                          the member agent
//   leader run                   the leader's controllers, with the same flags and conventions
//   leader create-member-token   let a member in (against the leader cluster)
//   join / leave                 a member in or out of a ClusterSet, over both kubeconfigs
//   status                       every ClusterSet of a cluster at a glance (also `kubectl clusterset status`)
//   version                      print the version (also --version)
// `--help` on every command, and `help <command>`. Configuration errors exit 2 with every
// problem listed, before anything touches a cluster; an unknown command or flag exits 2.
// The flags are a thin layer: commander splits them, and loadConfig ranks them above the
// config file and the environment (src/common/config/schema.ts declares them).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type winston from 'winston';
import { CONFIG_SETTINGS, ConfigError, describeConfig, loadConfig, type AgentConfig } from '../common/config/config.js';
import { assertMemberCredentials } from '../common/kube/member-credentials.js';
import { runLeaderProcess } from '../leader/process.js';
import { createLogger, errorFields } from '../common/log/logger.js';
import type { RunningProcess } from '../common/process.js';
import { runAgentProcess } from '../agent.js';
import { joinCommand, leaveCommand } from './join-command.js';
import { leaderCommand } from './leader-command.js';
import { statusCommand } from './status-command.js';
import { commandPath, EXIT_USAGE, runCommand, withHelpCommand, type CommandIO, type ExitStatus } from './command.js';
import { addConfigOptions } from './config-flags.js';

// package.json sits two levels up both from src/cli (tsx) and from dist/cli (the image).
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

type ProcessStarter = (config: AgentConfig, logger: winston.Logger) => Promise<RunningProcess>;

async function run(command: Command, flags: Readonly<Record<string, string | boolean>>, start: ProcessStarter, what: string): Promise<number> {
  let config;
  try {
    config = loadConfig({ flags, env: process.env });
    // Missing credentials are configuration too: say which file, instead of 403s for system:anonymous.
    assertMemberCredentials(config.kubeconfig);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n\n(see '${commandPath(command)} --help' for the flags and their environment variables)\n`);
      return EXIT_USAGE;
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

/**
 * A command taking every configuration flag (declared in src/common/config/schema.ts), each described
 * with its environment variable and default, and the settings that have no flag listed after.
 */
function configCommand(name: string, summary: string, start: ProcessStarter, what: string, status: ExitStatus): Command {
  const command = new Command(name).summary(summary).description(`${summary[0]?.toUpperCase() ?? ''}${summary.slice(1)}.`);
  const configFlags = addConfigOptions(command);
  const withoutFlag = CONFIG_SETTINGS.filter((s) => s.flag === undefined && s.path !== undefined);
  const width = Math.max(...withoutFlag.map((s) => (s.path ?? '').length));
  command.addHelpText(
    'after',
    [
      '',
      'Settings without a flag, by config file key and environment variable (an empty variable counts as unset; lists are comma-separated):',
      ...withoutFlag.map((s) => `  ${(s.path ?? '').padEnd(width)}  ${s.env}${s.fallbackEnv === undefined ? '' : ` (or ${s.fallbackEnv})`} (default: ${s.defaultText ?? 'unset'})`),
      '',
      'Precedence: defaults < config file (--config / CSA_CONFIG) < environment < flags. A configuration problem exits 2, listing every problem and where its value came from.',
      '',
    ].join('\n'),
  );
  return command.action(async (_options: unknown, self: Command) => {
    status.code = await run(self, configFlags(self), start, what);
  });
}

function program(io: CommandIO, status: ExitStatus): Command {
  const root = new Command('clusterset-agent')
    .description('Kubernetes multi-cluster membership agent, wire-compatible with Antrea Multi-cluster.')
    .version(VERSION, '-V, --version', 'print the version')
    .addCommand(configCommand('run', 'run the member agent', runAgentProcess, 'clusterset-agent', status))
    .addCommand(leaderCommand(io, status, configCommand('run', 'run the leader controllers (same flags as run)', runLeaderProcess, 'clusterset-agent leader', status)))
    .addCommand(joinCommand(io, status))
    .addCommand(leaveCommand(io, status))
    .addCommand(statusCommand(io, status))
    .addCommand(
      new Command('version').summary('print the version').description('Prints the version.').action(() => {
        io.stdout.write(`${VERSION}\n`);
      }),
    );
  return withHelpCommand(root);
}

// A reader that went away (e.g. `| head`, or a parent that exited) must not crash the agent.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}
const io: CommandIO = { stdout: process.stdout, stderr: process.stderr };
const status: ExitStatus = { code: 0 };
// Exit explicitly: keep-alive sockets to the API servers would otherwise hold the process
// open after a clean stop, and a stopped agent must not linger.
process.exit(await runCommand(program(io, status), process.argv.slice(2), io, status));
