import type { ParseArgsConfig } from 'node:util';
import { UsageError } from './cli-error.js';
import type { CommandContext } from './context.js';

export type OptionValues = Record<string, string | boolean | undefined>;

/**
 * An option as `--help` shows it: `['--org <id|name>', 'the organization']`. A flag that names a
 * value (`<...>`) takes a string, any other is a switch; `multiple` keeps every use of it, and a
 * `required` one must be given.
 */
export type CommandOption = readonly [
  flag: string,
  description: string,
  settings?: { multiple?: true; required?: true },
];

/** The option's name: `org` for `--org <id|name>`. */
export function optionName([flag]: CommandOption): string {
  return /^--([\w-]+)/.exec(flag)![1]!;
}

/** What parseArgs is told of the options: each one's type, read from how `--help` shows it. */
export function parseArgsOptions(
  options: readonly CommandOption[],
): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    options.map((option) => [
      optionName(option),
      {
        type: option[0].includes(' <') ? 'string' : 'boolean',
        ...(option[2]?.multiple && { multiple: true }),
      },
    ]),
  );
}

/**
 * `--org`: the organization the command works in, by id or name, found by
 * `context.organization`.
 */
export function orgOption(description = 'the organization'): CommandOption {
  return ['--org <id|name>', description, { required: true }];
}

export interface Command {
  /** The words that name it: `['key', 'create']`. */
  words: readonly string[];
  /** Arguments after the words, as shown in help: `<name>`; none when left out. */
  positionals?: readonly string[];
  summary: string;
  /** Its options, as `--help` lists them; none when left out. */
  options?: readonly CommandOption[];
  /** Further help lines: examples, file formats. */
  details?: readonly string[];
  run(context: CommandContext, values: OptionValues, positionals: string[]): Promise<void>;
}

/** The value of a string option that parseArgs already checked is present. */
export function stringOption(values: OptionValues, name: string): string {
  const value = values[name];
  if (typeof value !== 'string') throw new TypeError(`option --${name} was not parsed`);
  return value;
}

/** Whether an argument is a record id as the database gives them: a whole number from 1. */
export function isRecordId(raw: unknown): raw is string {
  return typeof raw === 'string' && /^[1-9]\d*$/.test(raw) && Number.isSafeInteger(Number(raw));
}

/** The `<id>` argument naming a record of kind `what`; a usage error with `fix` otherwise. */
export function idArgument(raw: string | undefined, what: string, fix: string): number {
  if (!isRecordId(raw)) {
    throw new UsageError(`the ${what} id must be a whole number from 1, got "${String(raw)}"`, fix);
  }
  return Number(raw);
}
