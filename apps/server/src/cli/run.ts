// `agentline`: the operator's command-line tool. `runCli` does all the work and returns the exit
// code (0 ok, 1 failure, 2 usage error), so tests run it in-process; main.ts only wires it to
// the real process.

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { driverMessage } from '../db/engine/errors.js';
import { CliError, UsageError } from './cli-error.js';
import {
  optionName,
  parseArgsOptions,
  type Command,
  type CommandOption,
  type OptionValues,
} from './command.js';
import { cursorSecretRotateCommand } from './commands/cursor-secret.js';
import { demoCommand } from './commands/demo.js';
import { listCommand } from './commands/directory.js';
import { eventsExportCommand } from './commands/events-export.js';
import { eventsImportCommand } from './commands/events-import.js';
import { experimentsShowCommand } from './commands/experiments.js';
import { eventsTailCommand } from './commands/events-tail.js';
import { keyCreateCommand, keyListCommand, keyRevokeCommand } from './commands/key.js';
import { loadCommand } from './commands/load.js';
import { migrateCommand } from './commands/migrate.js';
import { orgCreateCommand, orgSetCommand } from './commands/org.js';
import { roleCreateCommand } from './commands/role.js';
import {
  webhooksDeliveriesCommand,
  webhooksListCommand,
  webhooksReplayCommand,
} from './commands/webhooks.js';
import { CommandContext, type CliIo } from './context.js';

export type { CliIo } from './context.js';

const COMMANDS: readonly Command[] = [
  migrateCommand,
  orgCreateCommand,
  orgSetCommand,
  roleCreateCommand,
  keyCreateCommand,
  keyRevokeCommand,
  keyListCommand,
  loadCommand,
  listCommand,
  experimentsShowCommand,
  eventsImportCommand,
  eventsExportCommand,
  eventsTailCommand,
  webhooksListCommand,
  webhooksDeliveriesCommand,
  webhooksReplayCommand,
  cursorSecretRotateCommand,
  demoCommand,
];

const GLOBAL_OPTIONS = {
  database: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const GLOBAL_OPTION_HELP = [
  [
    '--database <url>',
    'SQLite file path, :memory:, or postgres://user:password@host:port/database; overrides DATABASE_URL (default data/agentline.db)',
  ],
  ['-h, --help', 'show help'],
] as const;

function optionLines(options: readonly CommandOption[]): string[] {
  const width = Math.max(...options.map(([flag]) => flag.length));
  return options.map(([flag, description]) => `  ${flag.padEnd(width)}   ${description}`);
}

function commandLine(command: Command): string {
  return ['agentline', ...command.words, ...(command.positionals ?? [])].join(' ');
}

function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => commandLine(command).length)) - 9;
  return [
    'agentline: operate an Agentline service: organizations, roles, API keys, platform records, events.',
    '',
    'Usage: agentline <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map(
      (command) => `  ${commandLine(command).slice(10).padEnd(width)}  ${command.summary}`,
    ),
    '',
    'Options for every command:',
    ...optionLines(GLOBAL_OPTION_HELP),
    '',
    'Run "agentline <command> --help" for a command\'s options.',
    'Relative paths start from the directory the command is run in. Exit codes: 0 ok, 1 failure,',
    '2 usage error. DEBUG=1 adds stack traces to unexpected errors.',
    '',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return [
    `Usage: ${commandLine(command)}${command.options ? ' [options]' : ''}`,
    '',
    command.summary,
    '',
    'Options:',
    ...optionLines([...(command.options ?? []), ...GLOBAL_OPTION_HELP]),
    ...(command.details ? ['', ...command.details] : []),
    '',
  ].join('\n');
}

function isGlobalFlag(token: string): boolean {
  return token === '--help' || token === '-h' || token.startsWith('--database=');
}

/**
 * Splits argv into the command's words and everything else. Words come first; only the global
 * options may appear before or between them.
 */
function findCommand(argv: readonly string[]): {
  command?: Command;
  words: string[];
  rest: string[];
} {
  const words: string[] = [];
  const rest: string[] = [];
  let index = 0;
  while (index < argv.length) {
    const token = argv[index]!;
    if (token === '--database') {
      rest.push(token, ...argv.slice(index + 1, index + 2));
      index += 2;
      continue;
    }
    if (isGlobalFlag(token)) {
      rest.push(token);
      index += 1;
      continue;
    }
    if (token.startsWith('-')) break;
    words.push(token);
    index += 1;
    const command = COMMANDS.find((candidate) => candidate.words.join(' ') === words.join(' '));
    if (command) return { command, words, rest: [...rest, ...argv.slice(index)] };
    if (
      !COMMANDS.some((candidate) => candidate.words.join(' ').startsWith(`${words.join(' ')} `))
    ) {
      throw new UsageError(
        `unknown command "${words.join(' ')}"`,
        'run "agentline --help" for the list of commands',
      );
    }
  }
  return { words, rest: [...rest, ...argv.slice(index)] };
}

/**
 * `--name value` as `--name=value` for each option that takes a value, so that the next argument
 * is its value whatever it starts with, as getopt has it: parseArgs refuses a value that starts
 * with a dash as ambiguous, and a webhook position token (base64url) can start with one.
 */
function joinOptionValues(
  options: NonNullable<ParseArgsConfig['options']>,
  args: string[],
): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === '--') {
      joined.push(...args.slice(index));
      break;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    const next = args[index + 1];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

function parseCommandArgs(command: Command, args: string[]) {
  const options = { ...parseArgsOptions(command.options ?? []), ...GLOBAL_OPTIONS };
  let parsed;
  try {
    parsed = parseArgs({
      args: joinOptionValues(options, args),
      options,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unknownOption = /^Unknown option '([^']+)'/.exec(message)?.[1];
    throw new UsageError(
      unknownOption ? `unknown option ${unknownOption}` : message.replace(/\.$/, ''),
      `run "${commandLine(command)} --help" for its options`,
    );
  }
  const values = parsed.values as OptionValues;
  const { positionals } = parsed;
  if (values.help) return { values, positionals };
  const expected = command.positionals ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(
      positionals.length < expected.length
        ? `missing ${expected.slice(positionals.length).join(' ')}`
        : `unexpected argument "${positionals[expected.length]}"`,
      `usage: ${commandLine(command)}`,
    );
  }
  const missing = (command.options ?? [])
    .filter(([, , settings]) => settings?.required)
    .map(optionName)
    .filter((name) => values[name] === undefined);
  if (missing.length > 0) {
    throw new UsageError(
      `missing ${missing.map((name) => `--${name}`).join(', ')}`,
      `run "${commandLine(command)} --help" for its options`,
    );
  }
  return { values, positionals };
}

function reportError(io: CliIo, error: unknown): number {
  const write = (line: string) => io.stderr.write(`agentline: ${line}\n`);
  if (error instanceof CliError) {
    for (const problem of error.problems) write(problem);
    write(`${error.what} — ${error.fix}`);
    if (io.env.DEBUG === '1' && error.cause)
      io.stderr.write(`${String((error.cause as Error).stack)}\n`);
    return error.exitCode;
  }
  write(
    `unexpected failure: ${driverMessage(error)} — run again with DEBUG=1 for details, and report it if it persists`,
  );
  if (io.env.DEBUG === '1') io.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  return 1;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let context: CommandContext | undefined;
  try {
    const { command, words, rest } = findCommand(argv);
    if (!command) {
      const wantsHelp = rest.some((token) => token === '--help' || token === '-h');
      if (wantsHelp || words.length === 0) {
        (wantsHelp ? io.stdout : io.stderr).write(generalHelp());
        return wantsHelp ? 0 : 2;
      }
      const subcommands = COMMANDS.filter((candidate) => candidate.words[0] === words[0]).map(
        (candidate) => candidate.words.slice(1).join(' '),
      );
      throw new UsageError(
        `"agentline ${words.join(' ')}" needs one of: ${subcommands.join(', ')}`,
        `for example: agentline ${words.join(' ')} ${subcommands[0]} --help`,
      );
    }
    const { values, positionals } = parseCommandArgs(command, rest);
    if (values.help) {
      io.stdout.write(commandHelp(command));
      return 0;
    }
    context = new CommandContext(io, values.database as string | undefined);
    await command.run(context, values, positionals);
    return 0;
  } catch (error) {
    return reportError(io, error);
  } finally {
    await context?.close();
  }
}
