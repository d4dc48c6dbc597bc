import { createReadStream, statSync } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import {
  finishImportConnection,
  prepareImportConnection,
} from '../../db/repositories/event-import.js';
import { CliError, UsageError } from '../cli-error.js';
import { orgOption, stringOption, type Command, type OptionValues } from '../command.js';
import type { CommandContext } from '../context.js';
import {
  DEFAULT_EVENT_BATCH_SIZE,
  EventImportAborted,
  importEvents,
  ndjsonEntries,
  type EventEntry,
  type EventImportCounts,
} from '../event-import.js';
import { formatCount, formatDuration, Progress } from '../progress.js';

function batchSizeFrom(values: OptionValues): number {
  const raw = values['batch-size'];
  if (raw === undefined) return DEFAULT_EVENT_BATCH_SIZE;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 100_000) {
    throw new UsageError(
      `--batch-size must be a whole number from 1 to 100000, got "${String(raw)}"`,
      `leave it out to use ${DEFAULT_EVENT_BATCH_SIZE}`,
    );
  }
  return Number(raw);
}

export interface EventStream {
  /** How the input is named in messages: a file name or "stdin". */
  name: string;
  entries: AsyncIterable<EventEntry> | Iterable<EventEntry>;
  /** For percentage and ETA: see ProgressOptions. */
  size?: number;
  position?: () => number;
}

/**
 * Imports with progress on stderr and returns the counts; an aborted import becomes a CliError
 * that says which line failed, what is saved and that re-running resumes.
 */
export async function importEventStream(
  context: CommandContext,
  organizationId: number,
  stream: EventStream,
  batchSize = DEFAULT_EVENT_BATCH_SIZE,
): Promise<EventImportCounts & { seconds: number }> {
  const db = await context.db();
  prepareImportConnection(db);
  const progress = new Progress({
    stream: context.io.stderr,
    unit: 'events',
    size: stream.size,
    position: stream.position,
  });
  try {
    const counts = await importEvents(db, organizationId, stream.entries, {
      batchSize,
      onBatch: ({ lines, imported, skipped }) =>
        progress.update({ lines, done: imported + skipped }),
    });
    return { ...counts, seconds: progress.elapsedSeconds() };
  } catch (error) {
    if (!(error instanceof EventImportAborted)) throw error;
    const { committed } = error;
    const where =
      error.lineNumber === null ? stream.name : `${stream.name} line ${error.lineNumber}`;
    const saved =
      committed.imported + committed.skipped === 0
        ? 'nothing was saved'
        : `the ${formatCount(committed.imported + committed.skipped)} events of lines 1-${committed.lines} are saved (${formatCount(committed.imported)} new) and are skipped on the re-run`;
    const lost =
      error.lineNumber === null
        ? 'the batch in progress was rolled back'
        : `lines ${committed.lines + 1}-${error.lineNumber} were rolled back as one batch`;
    throw new CliError(
      `${where}: ${error.reason}`,
      `fix it and run the same command again: ${saved}; ${lost}`,
    );
  } finally {
    progress.finish();
    finishImportConnection(db);
  }
}

export function describeImport(counts: EventImportCounts & { seconds: number }): string {
  const rate = (counts.imported + counts.skipped) / Math.max(counts.seconds, 1e-3);
  return `imported ${formatCount(counts.imported)} events, skipped ${formatCount(counts.skipped)} duplicates, in ${formatDuration(counts.seconds)} (${formatCount(rate)} events/s)`;
}

/** gzip's first two bytes (RFC 1952). */
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** A damaged or cut-off gzip stream, as zlib reports it (Z_DATA_ERROR, Z_BUF_ERROR, ...). */
function isZlibError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

/**
 * The input's bytes, decompressed when they start as gzip does: recognised by content rather than
 * by name, so an archive of `agentline events export` imports as it is, from a file or a pipe.
 */
async function* decompressedIfGzip(input: Readable): AsyncGenerator<Buffer> {
  async function* bytes(): AsyncGenerator<Buffer> {
    // A stream with an encoding set, or one made of strings, yields text.
    for await (const chunk of input as AsyncIterable<Buffer | string>) {
      yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    }
  }
  const chunks = bytes();
  let head: Buffer = Buffer.alloc(0);
  while (head.length < GZIP_MAGIC.length) {
    const next = await chunks.next();
    if (next.done) break;
    head = head.length === 0 ? next.value : Buffer.concat([head, next.value]);
  }
  async function* all(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    yield* chunks;
  }
  if (!head.subarray(0, GZIP_MAGIC.length).equals(GZIP_MAGIC)) {
    yield* all();
    return;
  }
  try {
    yield* pipeline(all(), createGunzip(), () => {}) as AsyncIterable<Buffer>;
  } catch (error) {
    // Reworded in place: the import reports the message of the error that carries a code.
    if (isZlibError(error)) {
      const zlibError = error as Error;
      zlibError.message = `the gzip data is damaged or cut short (${zlibError.message})`;
    }
    throw error;
  }
}

function openInput(context: CommandContext, file: string): EventStream {
  if (file === '-') {
    if (!context.io.stdin) {
      throw new UsageError('no standard input to read', 'pass a file name instead of "-"');
    }
    return {
      name: 'stdin',
      entries: ndjsonEntries(Readable.from(decompressedIfGzip(context.io.stdin))),
    };
  }
  const path = context.resolvePath(file);
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    throw new CliError(
      `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      'check the file name, or pass "-" to read standard input',
    );
  }
  const input: Readable & { bytesRead: number } = createReadStream(path, {
    highWaterMark: 1 << 20,
  });
  return {
    name: file,
    entries: ndjsonEntries(Readable.from(decompressedIfGzip(input))),
    // Bytes of the file as read, compressed or not, against its size on disk.
    size,
    position: () => input.bytesRead,
  };
}

export const eventsImportCommand: Command = {
  words: ['events', 'import'],
  positionals: ['<file.ndjson|->'],
  summary:
    'Import events from NDJSON (one event per line); re-running skips what is already there.',
  options: [
    orgOption('the organization the events belong to'),
    ['--batch-size <n>', `events per transaction (default ${DEFAULT_EVENT_BATCH_SIZE})`],
  ],
  details: [
    'Each line is one JSON object with the event fields: timestamp (required, ISO 8601 with Z or an',
    'offset), session_id, conversation_id, source, source_id, category, type, user_id, description,',
    'attributes (an object). An optional import_key (or id) identifies the event; without one it is',
    'identified by a hash of its content. Events already imported are skipped, so after a failure',
    'fix the reported line and run the same command again. "-" reads standard input. The input',
    'may be gzip-compressed, as the archives of "agentline events export" are: gzip is recognised',
    'by its first bytes, whatever the file is called.',
    'Example:',
    '  agentline events import events.ndjson --org "Acme Support"',
    '  {"timestamp":"2026-03-17T07:22:20.252Z","session_id":"s-1","category":"session","type":"session-started"}',
  ],
  async run(context, values, [file]) {
    const batchSize = batchSizeFrom(values);
    const organization = await context.organization(stringOption(values, 'org'));
    const input = openInput(context, file!);
    const counts = await importEventStream(context, organization.id, input, batchSize);
    context.out(describeImport(counts));
  },
};
