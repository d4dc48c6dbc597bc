// The `agentline events import` pipeline, shared with `agentline demo`: NDJSON lines in, batches
// of validated events out, each batch one transaction. Memory stays flat whatever the input size:
// lines are read as a stream and at most one batch is held.

import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { Db } from '../db/engine/client.js';
import { driverMessage } from '../db/engine/errors.js';
import { formatJsonPath } from '../records/format.js';
import { insertEventBatch, type EventToImport } from '../db/repositories/event-import.js';
import { canonicalJson } from '../domain/canonical-json.js';
import { EventProperties } from '../generated/enum-values.js';
import type { EventProperty } from '../vocabulary/events.js';
import { jsonText } from '../vocabulary/json-text.js';
import { normalizeDateTime } from '../domain/timestamps.js';
import { describeIssues } from './input-issues.js';
import { locateJsonSyntaxError } from './json-syntax.js';

/**
 * Events per transaction. Each batch holds SQLite's write lock, which the servers writing at the
 * same time wait out (db/engine/sqlite-write-lock.ts): about 50 µs an event alone (500 hold it
 * for about 25 milliseconds, 20,000 for about half a second), longer beside a busy server, and a
 * routed session may wait out one. A bulk load with no server writing is faster in larger
 * batches (`--batch-size 20000`). docs/benchmarks.md ("Figures behind the code") has the
 * measurements.
 */
export const DEFAULT_EVENT_BATCH_SIZE = 100;

export interface EventEntry {
  lineNumber: number;
  value: unknown;
}

export class EventLineError extends Error {
  override name = 'EventLineError';
  constructor(
    readonly lineNumber: number,
    readonly reason: string,
  ) {
    super(`line ${lineNumber}: ${reason}`);
  }
}

export interface EventImportCounts {
  /** The line of the last event read, so it doubles as a position in the file. */
  lines: number;
  imported: number;
  skipped: number;
}

/** The import stopped at `lineNumber`: lines through `committed.lines` are saved, later ones not. */
export class EventImportAborted extends Error {
  override name = 'EventImportAborted';
  constructor(
    readonly reason: string,
    readonly lineNumber: number | null,
    readonly committed: EventImportCounts,
    cause?: unknown,
  ) {
    super(reason, { cause });
  }
}

const optionalText = z.string().nullable().optional();

// The seed's Event fields, plus the identity that makes re-imports skip what is already there.
const eventLineSchema = z.strictObject({
  import_key: z.string().min(1).optional(),
  id: z.union([z.string().min(1), z.int()]).optional(),
  timestamp: z.string(),
  session_id: optionalText,
  conversation_id: optionalText,
  source: optionalText,
  source_id: optionalText,
  category: optionalText,
  type: optionalText,
  user_id: optionalText,
  description: optionalText,
  attributes: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** The text fields of a line, each checked for U+0000. */
const TEXT_FIELDS = [
  'import_key',
  'id',
  ...EventProperties.filter(
    (name): name is Exclude<EventProperty, 'timestamp' | 'attributes'> =>
      name !== 'timestamp' && name !== 'attributes',
  ),
] as const;

/** JSON text spells U+0000 as the escape \u0000; an escaped backslash before "u0000" is not one. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

/**
 * The field holding U+0000, if any. PostgreSQL's text cannot store it and SQLite's could: it is
 * refused on both backends, as the API does, so an import stores the same events on either.
 */
function fieldWithNul(
  line: z.infer<typeof eventLineSchema>,
  attributes: string | null,
): string | undefined {
  const field = TEXT_FIELDS.find((name) => {
    const value = line[name];
    return typeof value === 'string' && value.includes('\u0000');
  });
  return field ?? (attributes !== null && NUL_ESCAPE.test(attributes) ? 'attributes' : undefined);
}

/**
 * The identity of an event that brings none: a hash of its content, so the same event from any
 * file or position gets the same key. 128 bits of SHA-256 make a collision practically impossible
 * and keep the unique index, which every insert touches, a third of the size of a full hex hash.
 */
function contentKey(content: readonly unknown[]): string {
  const digest = createHash('sha256').update(canonicalJson(content)).digest();
  return `h:${digest.subarray(0, 16).toString('base64url')}`;
}

export function eventFromEntry({ lineNumber, value }: EventEntry): EventToImport {
  const parsed = eventLineSchema.safeParse(value);
  if (!parsed.success) {
    // Parsed again to quote the offending value: reporting inputs on every line costs speed.
    const issues = eventLineSchema.safeParse(value, { reportInput: true }).error?.issues ?? [];
    const [issue] = describeIssues(issues);
    const where = issue && issue.path.length > 0 ? `${formatJsonPath(issue.path)}: ` : '';
    throw new EventLineError(lineNumber, `${where}${issue?.message ?? 'not an event object'}`);
  }
  const line = parsed.data;
  const attributes = line.attributes ? jsonText(line.attributes) : null;
  const withNul = fieldWithNul(line, attributes);
  if (withNul !== undefined) {
    throw new EventLineError(
      lineNumber,
      `${withNul}: must not contain the NUL character (U+0000); remove it (PostgreSQL cannot store it, so neither backend accepts it)`,
    );
  }
  const timestamp = normalizeDateTime(line.timestamp);
  if (timestamp === null) {
    throw new EventLineError(
      lineNumber,
      `timestamp "${line.timestamp}" must be an ISO 8601 date-time with Z or an offset, e.g. 2026-03-17T07:22:20.252Z`,
    );
  }
  const fields = {
    timestamp,
    sessionId: line.session_id ?? null,
    conversationId: line.conversation_id ?? null,
    source: line.source ?? null,
    sourceId: line.source_id ?? null,
    category: line.category ?? null,
    type: line.type ?? null,
    userId: line.user_id ?? null,
    description: line.description ?? null,
  };
  // Without a key of its own, an event is identified by its content (not by file or position),
  // so importing the same data again from any file never duplicates it. The order of this list
  // is part of every derived key already stored: never change it.
  const importKey =
    line.import_key ??
    (line.id !== undefined
      ? String(line.id)
      : contentKey([
          fields.timestamp,
          fields.sessionId,
          fields.conversationId,
          fields.source,
          fields.sourceId,
          fields.category,
          fields.type,
          fields.userId,
          fields.description,
          line.attributes ?? null,
        ]));
  return { importKey, ...fields, attributes };
}

/** One entry per non-blank NDJSON line; a line that is not JSON stops the reading with its number. */
export async function* ndjsonEntries(input: Readable): AsyncGenerator<EventEntry> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const rawLine of lines) {
      lineNumber += 1;
      const line = lineNumber === 1 ? rawLine.replace(/^\uFEFF/, '') : rawLine;
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        const { column, reason } = locateJsonSyntaxError(line, error);
        throw new EventLineError(
          lineNumber,
          `not valid JSON at column ${column} (${reason}); each line must be one JSON object`,
        );
      }
      yield { lineNumber, value };
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

export interface ImportEventsOptions {
  batchSize?: number;
  /** Called after each committed batch. */
  onBatch?: (counts: EventImportCounts) => void;
}

export async function importEvents(
  db: Db,
  organizationId: number,
  entries: AsyncIterable<EventEntry> | Iterable<EventEntry>,
  { batchSize = DEFAULT_EVENT_BATCH_SIZE, onBatch }: ImportEventsOptions = {},
): Promise<EventImportCounts> {
  const counts: EventImportCounts = { lines: 0, imported: 0, skipped: 0 };
  let committed: EventImportCounts = { ...counts };
  let batch: EventToImport[] = [];
  let lineNumber: number | null = null;
  const commitBatch = async () => {
    const inserted = await insertEventBatch(db, organizationId, batch);
    counts.imported += inserted;
    counts.skipped += batch.length - inserted;
    batch = [];
    committed = { ...counts };
    onBatch?.(committed);
  };
  try {
    for await (const entry of entries) {
      lineNumber = entry.lineNumber;
      counts.lines = entry.lineNumber;
      batch.push(eventFromEntry(entry));
      if (batch.length >= batchSize) await commitBatch();
    }
    if (batch.length > 0) await commitBatch();
  } catch (error) {
    if (error instanceof EventLineError) {
      throw new EventImportAborted(error.reason, error.lineNumber, committed);
    }
    throw new EventImportAborted(driverMessage(error), lineNumber, committed, error);
  }
  return counts;
}
