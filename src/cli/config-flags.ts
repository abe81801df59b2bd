// The configuration flags of `run` and `leader run`, declared once (src/common/config/schema.ts)
// and split by commander: the command line and the tests that build a configuration from
// flags go through this one parser, and loadConfig only ranks the flags it returns.
import { Command, CommanderError, Option } from 'commander';
import { CONFIG_SETTINGS, ConfigError } from '../common/config/config.js';
import { describeOption, valueNotAFlag } from './command.js';

/** Flags by name without `--`: the value as typed, true for a bare boolean flag, false for `--no-<name>`. */
export type ConfigFlags = Record<string, string | boolean>;

/**
 * Adds every configuration flag to `command`, each described with its environment variable and
 * default; returns what reads, after parsing, the flags the command line gave (not defaults).
 */
export function addConfigOptions(command: Command): (parsed: Command) => ConfigFlags {
  const flagNames = new Map<string, string>(); // commander's attribute name -> flag name
  for (const setting of CONFIG_SETTINGS) {
    if (setting.flag === undefined) continue;
    const env = setting.fallbackEnv === undefined ? setting.env : `${setting.env}, or ${setting.fallbackEnv} ranked below the config file`;
    const text = describeOption(setting.description, { env, ...(setting.defaultText === undefined ? {} : { default: setting.defaultText }) });
    const option = setting.boolean ? new Option(`--${setting.flag} [${setting.flagValue}]`, text) : new Option(`--${setting.flag} <${setting.flagValue}>`, text);
    if (!setting.boolean) option.argParser(valueNotAFlag(command, option));
    command.addOption(option);
    if (setting.boolean) command.addOption(new Option(`--no-${setting.flag}`, `same as --${setting.flag}=false`));
    flagNames.set(option.attributeName(), setting.flag);
  }
  return (parsed) => {
    const flags: ConfigFlags = {};
    // Only what the command line said: defaults, the file and the environment are loadConfig's.
    for (const [attribute, flag] of flagNames) {
      if (parsed.getOptionValueSource(attribute) === 'cli') flags[flag] = parsed.getOptionValue(attribute) as string | boolean;
    }
    return flags;
  };
}

/**
 * The configuration flags in `argv` (without the command's name), split as `run` splits them.
 * A command line `run` refuses throws a ConfigError with commander's message.
 */
export function parseConfigFlags(argv: readonly string[]): ConfigFlags {
  const command = new Command('run').exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined }).showSuggestionAfterError(true);
  const read = addConfigOptions(command);
  try {
    command.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new ConfigError([err.message.replace(/^error: /, '')]);
    throw err;
  }
  return read(command);
}
