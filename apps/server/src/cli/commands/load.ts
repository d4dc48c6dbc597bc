import { readFileSync } from 'node:fs';
import {
  formatJsonPath,
  platformRecordsSchema,
  type PlatformRecords,
} from '../../records/format.js';
import {
  LOAD_SECTIONS,
  PlatformRecordsError,
  summarizeLoad,
  type LoadedRecord,
  type LoadSummary,
} from '../../records/load-result.js';
import { loadPlatformRecords } from '../../records/loader.js';
import { CliError } from '../cli-error.js';
import { orgOption, stringOption, type Command } from '../command.js';
import { describeIssues, type InputIssue } from '../input-issues.js';
import { locateJsonSyntaxError } from '../json-syntax.js';
import { formatTable } from '../table.js';
import { LIST_NAMES } from './directory.js';

const FORMAT_HINT = 'the format is apps/server/schemas/platform-records.schema.json';
const MOST_PROBLEMS_SHOWN = 50;

function notLoaded(file: string, issues: readonly InputIssue[]): CliError {
  const lines = issues
    .slice(0, MOST_PROBLEMS_SHOWN)
    .map((issue) => `${file}: ${formatJsonPath(issue.path) || '(top level)'}: ${issue.message}`);
  if (issues.length > MOST_PROBLEMS_SHOWN) {
    lines.push(`${file}: ... and ${issues.length - MOST_PROBLEMS_SHOWN} more problems`);
  }
  return new CliError(
    `${file} was not loaded: ${issues.length} problem${issues.length === 1 ? '' : 's'}`,
    `fix ${issues.length === 1 ? 'it' : 'them'} and run the command again; nothing was written (${FORMAT_HINT})`,
    1,
    lines,
  );
}

/** Reads and validates a records file; nothing is written unless all of it is valid. */
function readRecordsFile(file: string, path: string): PlatformRecords {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(
      `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      'check the file name; relative paths start from the directory you ran the command in',
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    const { line, column, reason } = locateJsonSyntaxError(text.replace(/^\uFEFF/, ''), error);
    throw new CliError(
      `${file} is not valid JSON: line ${line}, column ${column}: ${reason}`,
      'fix the JSON there (a trailing comma, a missing comma or quote, and comments are the usual causes) and run the command again; nothing was written',
    );
  }
  const parsed = platformRecordsSchema.safeParse(json, { reportInput: true });
  if (!parsed.success) throw notLoaded(file, describeIssues(parsed.error.issues));
  return parsed.data;
}

export function describeLoadSummary(summary: LoadSummary): string {
  const parts = LOAD_SECTIONS.flatMap((section) => {
    const { created, updated } = summary[section];
    if (created + updated === 0) return [];
    const counts = [created > 0 ? `${created} new` : '', updated > 0 ? `${updated} updated` : '']
      .filter(Boolean)
      .join(', ');
    return [`${section.replaceAll('_', ' ')} ${counts}`];
  });
  return parts.length > 0 ? parts.join('; ') : 'the file lists no records';
}

function loadedTable(records: readonly LoadedRecord[]): string[] {
  return formatTable([
    ['SECTION', 'KEY', 'ID', 'ACTION'],
    ...records.map(({ section, key, id, action }) => [
      section,
      key,
      id === null ? '-' : String(id),
      action,
    ]),
  ]);
}

export const loadCommand: Command = {
  words: ['load'],
  positionals: ['<file.json>'],
  summary:
    'Load platform records (services, tools, prompts, agents, channels, provider records, draft experiments) into an organization, all or nothing.',
  options: [
    orgOption('the organization the records belong to'),
    ['--json', 'print one JSON document (organization, records, summary) instead of a table'],
  ],
  details: [
    `Records refer to each other by name (provider records by sid), never by database id; ${FORMAT_HINT},`,
    'with an example in apps/server/test/fixtures/records.example.json. Loading the file again updates the',
    'records it names. Prints the id of every record the file named (channel targets and numbers',
    'included) and whether it was created or updated, then the counts. Example:',
    '  agentline load records.json --org "Acme Support"',
  ],
  async run(context, values, [file]) {
    const records = readRecordsFile(file!, context.resolvePath(file!));
    const organization = await context.organization(stringOption(values, 'org'));
    let loaded: LoadedRecord[];
    try {
      loaded = (await loadPlatformRecords(await context.db(), organization.id, records)).records;
    } catch (error) {
      if (error instanceof PlatformRecordsError) throw notLoaded(file!, error.problems);
      throw error;
    }
    const summary = summarizeLoad(loaded);
    if (values.json) {
      const { id, name } = organization;
      context.out(
        JSON.stringify({ organization: { id, name }, records: loaded, summary }, null, 2),
      );
      return;
    }
    if (loaded.length > 0) for (const line of loadedTable(loaded)) context.out(line);
    context.out(
      `loaded ${file} into organization "${organization.name}" (id ${organization.id}): ${describeLoadSummary(summary)}`,
    );
    context.note(
      `to list the ids again: agentline list ${LIST_NAMES.join('|')} --org ${organization.id}`,
    );
  },
};
