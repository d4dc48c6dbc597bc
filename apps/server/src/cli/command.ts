import type { ParseArgsConfig } from 'node:util';
import type { CommandContext } from './context.js';

export type OptionValues = Record<string, string | boolean | undefined>;

export interface Command {
  /** The words that name it: `['key', 'create']`. */
  words: readonly string[];
  /** Arguments after the words, as shown in help: `<name>`. */
  positionals: readonly string[];
  summary: string;
  /** `--help` lines: `['--org <id|name>', 'the organization']`. */
  optionHelp: ReadonlyArray<readonly [flag: string, description: string]>;
  /** Further help text: examples, file formats. */
  details?: string;
  options: NonNullable<ParseArgsConfig['options']>;
  requiredOptions?: readonly string[];
  run(context: CommandContext, values: OptionValues, positionals: string[]): Promise<void>;
}

/** The value of a string option that parseArgs already checked is present. */
export function stringOption(values: OptionValues, name: string): string {
  const value = values[name];
  if (typeof value !== 'string') throw new TypeError(`option --${name} was not parsed`);
  return value;
}
