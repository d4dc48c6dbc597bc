// agentline events export: an organization's events before a date-time as a gzip-compressed NDJSON
// archive in the line format `agentline events import` reads, so events kept elsewhere can be
// brought back exactly as they were.

import { existsSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import {
  eventBatchesBefore,
  eventsBefore,
  type StoredEvent,
} from '../../db/repositories/event-export.js';
import { normalizeDateTime } from '../../domain/timestamps.js';
import { CliError, UsageError } from '../cli-error.js';
import { orgOption, stringOption, type Command, type OptionValues } from '../command.js';
import { formatCount, formatDuration, Progress } from '../progress.js';

/** Events per SELECT: big enough that statements cost little, small enough for flat memory. */
const EXPORT_BATCH_SIZE = 1_000;

function beforeFrom(values: OptionValues): string {
  const raw = stringOption(values, 'before');
  const before = normalizeDateTime(raw);
  if (before === null) {
    throw new UsageError(
      `--before "${raw}" is not an ISO 8601 date-time with a time zone`,
      'send one with Z or an offset, e.g. --before 2026-01-01T00:00:00Z or --before 2026-01-01T00:00:00+02:00',
    );
  }
  return before;
}

/** One archive line: every field of event-import.ts's line format, none left out. */
function archiveLine(event: StoredEvent): string {
  const line = {
    // The importer takes `id` as the import key: an event the service wrote (it has no key) keeps
    // one identity through export and import, so importing the archive again adds nothing and
    // two events of identical content stay two instead of collapsing into one content hash.
    ...(event.importKey === null ? { id: event.id } : { import_key: event.importKey }),
    timestamp: event.timestamp,
    session_id: event.sessionId,
    conversation_id: event.conversationId,
    source: event.source,
    source_id: event.sourceId,
    category: event.category,
    type: event.type,
    user_id: event.userId,
    description: event.description,
    attributes: event.attributes,
  };
  return `${JSON.stringify(line)}\n`;
}

function isAbort(error: unknown): boolean {
  return (error as Error | undefined)?.name === 'AbortError';
}

/** Opens `<file>.partial`, never one another export is writing or an interrupted one left. */
async function createPartial(partial: string): Promise<FileHandle> {
  try {
    return await open(partial, 'wx');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    if (code === 'EEXIST') {
      throw new CliError(
        `${partial} exists: another export is writing it, or one was interrupted`,
        'remove it if no export is running, then run the command again',
      );
    }
    throw new CliError(
      `cannot create ${partial} (${code})`,
      'check that the directory exists and is writable, or pick another --output',
    );
  }
}

/**
 * Writes the archive to `<path>.partial` and renames it to `path` once complete and on disk, so
 * a crash or Ctrl-C never leaves a truncated archive under the final name; on failure the partial
 * file is removed.
 */
async function writeArchiveFile(
  lines: Readable,
  path: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const partial = `${path}.partial`;
  const handle = await createPartial(partial);
  let complete = false;
  try {
    // Flushed to disk before it closes, so before the rename: after a power cut the archive is
    // whole or has no final name.
    const file = handle.createWriteStream({ flush: true });
    let writeError: unknown;
    file.once('error', (error) => (writeError = error));
    try {
      await pipeline(lines, createGzip(), file, { signal });
    } catch (error) {
      if (isAbort(error)) {
        throw new CliError('interrupted: no archive was written', 'run the command again');
      }
      if (error !== writeError) throw error;
      throw new CliError(
        `cannot write ${partial} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
        'free some space or pick another --output, then run the command again; no archive was written',
      );
    }
    // Checked again: the file may have appeared while the export ran, and rename replaces files.
    if (existsSync(path)) throw existingArchive(path);
    await rename(partial, path);
    complete = true;
  } finally {
    if (!complete) await rm(partial, { force: true });
  }
}

/** Writes the archive to standard output, which this command does not own: it stays open. */
async function writeArchiveOut(
  lines: Readable,
  stdout: Writable,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await pipeline(lines, createGzip(), stdout, { end: false, signal });
    // The pipeline settles once the compressor has handed stdout its last bytes; this empty write
    // calls back after they are written, so the summary never precedes them.
    await new Promise<void>((resolve, reject) =>
      stdout.write('', (error) => (error ? reject(error) : resolve())),
    );
  } catch (error) {
    if (isAbort(error)) {
      throw new CliError(
        'interrupted: the archive on standard output is incomplete',
        'discard it and run the command again',
      );
    }
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') {
      throw new CliError(
        'standard output was closed before the archive was complete',
        'keep the reading end open until the export ends, or pass --output FILE',
      );
    }
    throw error;
  }
}

function existingArchive(path: string): CliError {
  return new CliError(
    `${path} already exists; an archive is never overwritten`,
    'remove it or pick another --output name',
  );
}

export const eventsExportCommand: Command = {
  words: ['events', 'export'],
  summary:
    'Export the events before a date-time as gzip-compressed NDJSON that "events import" reads.',
  options: [
    orgOption('the organization whose events are exported'),
    [
      '--before <date-time>',
      'only events whose timestamp is before it (ISO 8601 with Z or an offset)',
      { required: true },
    ],
    ['--output <file>', 'a new file for the archive (default: standard output)'],
  ],
  details: [
    'Writes one line per event, in the order they were stored, with every field as stored. An event',
    'keeps its import_key, or gets its id as one ("id"), so importing the archive brings each event',
    'back once: importing it again skips them all. --output never replaces a file: the archive is',
    'written to <file>.partial and takes its name only when complete. Progress goes to standard',
    'error; the summary to standard output, or to standard error when the archive goes there.',
    'Examples:',
    '  agentline events export --org "Acme Support" --before 2026-01-01T00:00:00Z --output acme-2025.ndjson.gz',
    '  agentline events import acme-2025.ndjson.gz --org "Acme Support"',
  ],
  async run(context, values) {
    const before = beforeFrom(values);
    const output = values['output'];
    const path = typeof output === 'string' ? context.resolvePath(output) : undefined;
    if (path === undefined && (context.io.stdout as { isTTY?: boolean }).isTTY) {
      throw new UsageError(
        'the archive is gzip data, not for a terminal',
        'pass --output FILE, or redirect standard output: ... > events.ndjson.gz',
      );
    }
    if (path !== undefined && existsSync(path)) throw existingArchive(path);
    const organization = await context.organization(stringOption(values, 'org'));
    const db = await context.db();
    const range = await eventsBefore(db, organization.id, before);
    let exported = 0;
    const progress = new Progress({
      stream: context.io.stderr,
      unit: 'events',
      size: range.count,
      position: () => exported,
    });
    async function* archiveLines(): AsyncGenerator<string> {
      for await (const batch of eventBatchesBefore(
        db,
        organization.id,
        before,
        range,
        EXPORT_BATCH_SIZE,
      )) {
        exported += batch.length;
        progress.update({ lines: exported, done: exported });
        yield batch.map(archiveLine).join('');
      }
    }
    // One batch at a time: the next is read only when the compressor and the output have taken
    // the previous one (the pipeline waits for 'drain'), so memory stays flat whatever the count.
    const lines = Readable.from(archiveLines(), { highWaterMark: 1 });
    try {
      if (path === undefined) await writeArchiveOut(lines, context.io.stdout, context.io.signal);
      else await writeArchiveFile(lines, path, context.io.signal);
    } finally {
      progress.finish();
    }
    const summary = `exported ${formatCount(exported)} events before ${before} to ${
      typeof output === 'string' ? output : 'standard output'
    } in ${formatDuration(progress.elapsedSeconds())}`;
    if (path === undefined) context.note(summary);
    else context.out(summary);
  },
};
