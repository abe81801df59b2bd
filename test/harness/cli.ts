// The clusterset-agent CLI's commands run in process, as `main` runs them (commander, the
// command's exit status), with stdout and stderr collected: the integration tests of join,
// leave and status read what an operator would.
import { Command } from 'commander';
import { runCommand, type CommandIO, type ExitStatus } from '../../src/cli/command.js';
import { joinCommand, leaveCommand } from '../../src/cli/join-command.js';
import { statusCommand } from '../../src/cli/status-command.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const COMMANDS: Readonly<Record<'join' | 'leave' | 'status', (io: CommandIO, exit: ExitStatus) => Command>> = { join: joinCommand, leave: leaveCommand, status: statusCommand };

/** `clusterset-agent <command> <args…>`: its exit code and what it wrote. */
export async function runCli(command: keyof typeof COMMANDS, args: readonly string[]): Promise<CliResult> {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: { write: (t: string) => { out.stdout += t; } }, stderr: { write: (t: string) => { out.stderr += t; } } };
  const exit: ExitStatus = { code: 0 };
  const code = await runCommand(new Command('clusterset-agent').addCommand(COMMANDS[command](io, exit)), [command, ...args], io, exit);
  return { code, ...out };
}
