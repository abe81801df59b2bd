// What every clusterset-agent command line shares, on top of commander: exit codes (0 done,
// help or version; 2 a bad command line; otherwise what the command reports), output to the
// given streams, and option descriptions that name their environment variable and default.
import { Command, CommanderError, InvalidArgumentError, type Option } from 'commander';

export interface CommandIO {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** Where a command's action leaves its exit code. */
export interface ExitStatus {
  code: number;
}

export const EXIT_USAGE = 2;

function forEachCommand(command: Command, visit: (command: Command) => void): void {
  visit(command);
  for (const sub of command.commands) forEachCommand(sub, visit);
}

/** `clusterset-agent leader run`, for messages. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Parses `argv` (without node and the script) with `program` and runs the chosen command's
 * action. Returns 0 after help or the version, 2 (EXIT_USAGE) for an unknown command or flag,
 * a missing value or a stray argument (commander's message, with a "Did you mean" where it has
 * one), and otherwise the code the action left in `status`.
 */
export async function runCommand(program: Command, argv: readonly string[], io: CommandIO, status: ExitStatus): Promise<number> {
  forEachCommand(program, (command) => {
    command
      .exitOverride()
      .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
      .showSuggestionAfterError(true)
      .showHelpAfterError(`(see '${commandPath(command)} --help')`);
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_USAGE;
    throw err;
  }
  return status.code;
}

/**
 * Replaces commander's `help [command]`, which only looks one level down, with one that also
 * reaches nested commands: `help leader run` is `leader run --help`.
 */
export function withHelpCommand(program: Command): Command {
  const help = new Command('help')
    .argument('[command...]', 'the command, e.g. leader run')
    .summary('display help for a command')
    .description('Display help for a command.')
    .action((names: string[]) => {
      let target = program;
      for (const name of names) {
        const next = target.commands.find((c) => c.name() === name);
        if (next === undefined) {
          const known = target.commands.map((c) => c.name()).join(', ');
          target.error(`error: unknown command '${name}' (commands of '${commandPath(target)}': ${known})`, { code: 'commander.unknownCommand' });
          return;
        }
        target = next;
      }
      target.help();
    });
  return program.helpCommand(false).addCommand(help);
}

/** `text (env: X; default: Y)`, the form every flag's --help line takes. */
export function describeOption(text: string, extras: { readonly env?: string; readonly default?: string }): string {
  const parts = [
    ...(extras.env === undefined ? [] : [`env: ${extras.env}`]),
    ...(extras.default === undefined ? [] : [`default: ${extras.default}`]),
  ];
  return parts.length === 0 ? text : `${text} (${parts.join('; ')})`;
}

/**
 * An argument parser for a flag that takes a value: commander takes the next word as the value
 * even when it is another flag (`--namespace --kubeconfig x`), which would silently turn a
 * forgotten value into a wrong one.
 */
export function valueNotAFlag(command: Command, option: Option): (value: string) => string {
  return (value) => {
    const name = value.split('=')[0] ?? value;
    if (command.options.some((o) => o.long === name || o.short === name) || name === '--help' || name === '-h') {
      throw new InvalidArgumentError(`that is the flag ${name}: ${option.long ?? option.flags} needs a value before it`);
    }
    return value;
  };
}
