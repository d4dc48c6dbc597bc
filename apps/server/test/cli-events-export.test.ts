// agentline events export: the events before a date-time as a gzip-compressed NDJSON archive that
// `agentline events import` brings back as they were; and the import reading gzip.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVENT_BATCH_SIZE } from '../src/cli/event-import.js';
import { runCli } from '../src/cli/run.js';
import { createDb } from '../src/db/engine/client.js';
import { parsedJson } from '../src/db/engine/portable-sql.js';
import { setOrganizationRetention } from '../src/db/repositories/event-retention.js';
import { sweepExpiredEvents } from '../src/use-cases/event-retention.js';
import { EventProperties } from '../src/generated/enum-values.js';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';
import {
  checkDescriptionIndex,
  insertTestEvents,
  onSqlite,
  queryTestDb,
  type TestEvent,
} from './support/test-database.js';

let workspace: TempWorkspace;

const BEFORE = '2026-01-01T00:00:00.000Z';

async function query<T = Record<string, unknown>>(statement: SQL): Promise<T[]> {
  const db = createDb(workspace.databaseUrl);
  try {
    return await queryTestDb<T>(db, statement);
  } finally {
    await db.close();
  }
}

async function insertServiceEvents(rows: readonly TestEvent[]): Promise<void> {
  const db = createDb(workspace.databaseUrl);
  try {
    await insertTestEvents(db, rows);
  } finally {
    await db.close();
  }
}

/** Stdout as bytes: the harness's capture decodes it as text, which would corrupt gzip. */
class ByteCapture extends Writable {
  isTTY = false;
  private chunks: Buffer[] = [];
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(Buffer.from(chunk));
    done();
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Runs the CLI in-process as the harness does, with binary standard input and output. */
async function runBinary(
  argv: string[],
  { stdin, terminal = false }: { stdin?: Buffer; terminal?: boolean } = {},
): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const stdout = new ByteCapture();
  stdout.isTTY = terminal;
  const stderr = new ByteCapture();
  const code = await runCli(argv, {
    stdout,
    stderr,
    stdin: stdin === undefined ? undefined : Readable.from([stdin]),
    env: { DATABASE_URL: workspace.databaseUrl },
    cwd: workspace.dir,
  });
  return { code, stdout: stdout.bytes, stderr: stderr.bytes.toString() };
}

function archiveLines(gzipped: Buffer): Array<Record<string, unknown>> {
  const text = gunzipSync(gzipped).toString();
  expect(text.endsWith('\n') || text === '').toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const IMPORT_SUMMARY = /^imported (\d+) events, skipped (\d+) duplicates, in /;

function importCounts(stdout: string): { imported: number; skipped: number } {
  const match = IMPORT_SUMMARY.exec(stdout);
  expect(match, stdout).not.toBeNull();
  return { imported: Number(match![1]), skipped: Number(match![2]) };
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function exportedCount(summary: string, destination: string): number {
  const match = new RegExp(
    `^exported ([\\d,]+) events before ${escaped(BEFORE)} to ${escaped(destination)} in [\\d.]+ s\\n$`,
  ).exec(summary);
  expect(match, summary).not.toBeNull();
  return Number(match![1]!.replaceAll(',', ''));
}

/** A row of the events table, every column but the organization. */
type EventRow = { id: number; import_key: string | null; attributes: unknown } & Record<
  (typeof EventProperties)[number],
  unknown
>;

function exporting(org: string, before: string, output?: string): string[] {
  const to = output === undefined ? [] : ['--output', output];
  return ['events', 'export', '--org', org, '--before', before, ...to];
}

/** The organization's events before BEFORE as stored, attributes parsed, in id order. */
async function storedEventsBefore(organizationId: number): Promise<EventRow[]> {
  const rows = await query<EventRow>(
    sql`SELECT id, import_key, timestamp, session_id, conversation_id, source, source_id,
          category, type, user_id, description, attributes
        FROM events WHERE organization_id = ${organizationId} AND timestamp < ${BEFORE}
        ORDER BY id`,
  );
  return rows.map((row) => ({
    ...row,
    attributes: row.attributes === null ? null : parsedJson(row.attributes),
  }));
}

/** Removes the events before BEFORE with retention's own sweep: a 1-day window ending a day later. */
async function sweepEventsBefore(organizationId: number): Promise<void> {
  const db = createDb(workspace.databaseUrl);
  try {
    await setOrganizationRetention(db, organizationId, 1);
    await sweepExpiredEvents(db, { defaultDays: 0, now: Date.parse(BEFORE) + 86_400_000 });
    await setOrganizationRetention(db, organizationId, null);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  workspace = await createWorkspace();
  for (const name of ['Acme', 'Globex', 'Initech']) {
    expect((await workspace.run(['org', 'create', name])).code).toBe(0);
  }
});

afterAll(() => workspace.remove());

describe('an archive and its import', () => {
  const ACME = 1;
  const archive = 'archive.ndjson.gz';
  let originals: EventRow[];
  let fileBytes: Buffer;

  beforeAll(async () => {
    const imported = [
      {
        import_key: 'evt-1',
        timestamp: '2025-03-17T09:22:20.252+02:00',
        session_id: 's-1',
        conversation_id: 'c-1',
        source: 'tool',
        source_id: '12',
        category: 'tool',
        type: 'tool-call',
        user_id: '+14155550100',
        description: 'Called lookup_order: "quotes", \\ backslash, newline\n, émoji 🎧',
        attributes: { latency_ms: 120, nested: { list: [1, 'two', null, true], empty: {} } },
      },
      { id: 'ext-7', timestamp: '2025-06-01T00:00:00Z', category: 'session' },
      // Keyless: identified by a hash of their content.
      { timestamp: '2025-07-01T00:00:00Z', type: 'no-key', attributes: { b: 1, a: 2 } },
      { timestamp: '2025-07-01T00:00:00Z', type: 'no-key', attributes: { b: 1, a: 3 } },
      // At and after the boundary: not in the archive.
      { import_key: 'at-boundary', timestamp: BEFORE },
      { import_key: 'after', timestamp: '2026-02-01T00:00:00Z' },
    ];
    writeFileSync(
      join(workspace.dir, 'acme.ndjson'),
      imported.map((line) => JSON.stringify(line)).join('\n'),
    );
    const result = await workspace.run(['events', 'import', 'acme.ndjson', '--org', 'Acme']);
    expect(importCounts(result.stdout)).toEqual({ imported: 6, skipped: 0 });

    // As the service writes them: no import key, so two of identical content are two events.
    const twin: TestEvent = {
      organizationId: ACME,
      timestamp: '2025-08-01T10:00:00.000Z',
      sessionId: 's-2',
      category: 'message',
      type: 'message-received',
      description: 'hello',
      attributes: { channel: 'sms', segments: 1 },
    };
    await insertServiceEvents([
      twin,
      { organizationId: 2, timestamp: '2025-08-01T10:00:00.000Z', description: 'Globex' },
      twin,
      { organizationId: ACME, timestamp: '2025-12-31T23:59:59.999Z', attributes: null },
      { organizationId: ACME, timestamp: '2026-01-01T00:00:00.001Z', description: 'later' },
      // Older than the events imported above, though written after them.
      { organizationId: ACME, timestamp: '2024-01-01T00:00:00.000Z', userId: 'u-1' },
    ]);
    originals = await storedEventsBefore(ACME);
  });

  it('holds every event before --before, in id order, in the import line format', async () => {
    expect(originals).toHaveLength(8);
    const result = await workspace.run(exporting('Acme', '2026-01-01T01:00:00+01:00', archive));
    expect(result.code, result.stderr).toBe(0);
    expect(exportedCount(result.stdout, archive)).toBe(8);
    expect(readdirSync(workspace.dir).filter((name) => name.endsWith('.partial'))).toEqual([]);

    fileBytes = readFileSync(join(workspace.dir, archive));
    expect([...fileBytes.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    const lines = archiveLines(fileBytes);
    expect(lines).toEqual(
      originals.map(({ id, import_key, ...fields }) => ({
        ...(import_key === null ? { id } : { import_key }),
        ...fields,
      })),
    );
    expect(Object.keys(lines[0]!)).toEqual(['import_key', ...EventProperties]);
    // The service's identical twins are told apart by their ids.
    const twins = lines.filter((line) => line['description'] === 'hello');
    expect(twins.map((line) => line['id'])).toEqual([expect.any(Number), expect.any(Number)]);
    expect(twins[0]!['id']).not.toBe(twins[1]!['id']);
  });

  it('writes the same archive to standard output, with the summary on standard error', async () => {
    const result = await runBinary(exporting('1', BEFORE));
    expect(result.code, result.stderr).toBe(0);
    expect(exportedCount(result.stderr, 'standard output')).toBe(8);
    expect(gunzipSync(result.stdout).toString()).toBe(gunzipSync(fileBytes).toString());
  });

  it('brings the events back as they were once retention removed them', async () => {
    await sweepEventsBefore(ACME);
    expect(await storedEventsBefore(ACME)).toEqual([]);

    const result = await workspace.run(['events', 'import', archive, '--org', 'Acme']);
    expect(result.code, result.stderr).toBe(0);
    expect(importCounts(result.stdout)).toEqual({ imported: 8, skipped: 0 });

    const restored = await storedEventsBefore(ACME);
    expect(restored).toHaveLength(originals.length);
    restored.forEach((event, index) => {
      const original = originals[index]!;
      const { id: _newId, import_key, ...fields } = event;
      const { id, import_key: originalKey, ...originalFields } = original;
      expect(fields).toEqual(originalFields);
      // An event the service wrote comes back keyed by its old id, so a later export keeps it.
      expect(import_key).toBe(originalKey ?? String(id));
    });
    const [others] = await query<{ n: number }>(
      sql`SELECT count(*) AS n FROM events WHERE organization_id = ${ACME}`,
    );
    expect(others!.n).toBe(8 + 3);
  });

  it.runIf(onSqlite)('indexes the restored descriptions for search', async () => {
    const db = createDb(workspace.databaseUrl);
    assert(db.kind === 'sqlite');
    try {
      expect(() => checkDescriptionIndex(db)).not.toThrow();
    } finally {
      await db.close();
    }
  });

  it('adds nothing when the archive is imported again', async () => {
    const again = await workspace.run(['events', 'import', archive, '--org', 'Acme']);
    expect(importCounts(again.stdout)).toEqual({ imported: 0, skipped: 8 });
    const fromStdin = await runBinary(['events', 'import', '-', '--org', 'Acme'], {
      stdin: fileBytes,
    });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(importCounts(fromStdin.stdout.toString())).toEqual({ imported: 0, skipped: 8 });
    expect(await storedEventsBefore(ACME)).toHaveLength(8);
  });
});

describe('many events', () => {
  it('pages through them all, whatever the order of their timestamps and other organizations', async () => {
    const INITECH = 3;
    const rows: TestEvent[] = [];
    for (let i = 0; i < 2_600; i += 1) {
      // Before and after the boundary alternate in id order, among another organization's events.
      const year = i % 3 === 0 ? 2026 : 2025;
      const timestamp = `${year}-0${1 + (i % 9)}-01T00:00:00.000Z`;
      rows.push({ organizationId: i % 4 === 0 ? 2 : INITECH, timestamp, sourceId: String(i) });
    }
    await insertServiceEvents(rows);
    const expected = rows.filter(
      (row) => row.organizationId === INITECH && row.timestamp < BEFORE,
    ).length;
    expect(expected).toBeGreaterThan(1_000);

    const result = await runBinary(exporting('Initech', BEFORE));
    expect(result.code, result.stderr).toBe(0);
    expect(exportedCount(result.stderr, 'standard output')).toBe(expected);
    const lines = archiveLines(result.stdout);
    const ids = lines.map((line) => line['id'] as number);
    expect(ids).toEqual((await storedEventsBefore(INITECH)).map((event) => event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(expected);
  });

  it('writes an empty archive when nothing is that old', async () => {
    const result = await workspace.run(
      exporting('Initech', '2000-01-01T00:00:00Z', 'empty.ndjson.gz'),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^exported 0 events before 2000-01-01T00:00:00\.000Z /);
    expect(archiveLines(readFileSync(join(workspace.dir, 'empty.ndjson.gz')))).toEqual([]);
  });
});

describe('refusals', () => {
  it('never overwrites an existing file', async () => {
    writeFileSync(join(workspace.dir, 'kept.ndjson.gz'), 'an older archive');
    const result = await workspace.run(exporting('Acme', BEFORE, 'kept.ndjson.gz'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^agentline: \S+kept\.ndjson\.gz already exists; an archive is never overwritten — remove it or pick another --output name\n$/,
    );
    expect(readFileSync(join(workspace.dir, 'kept.ndjson.gz'), 'utf8')).toBe('an older archive');
    expect(existsSync(join(workspace.dir, 'kept.ndjson.gz.partial'))).toBe(false);
  });

  it('leaves alone the partial file of another or an interrupted export', async () => {
    writeFileSync(join(workspace.dir, 'busy.ndjson.gz.partial'), 'being written');
    const result = await workspace.run(exporting('Acme', BEFORE, 'busy.ndjson.gz'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/busy\.ndjson\.gz\.partial exists: .* — remove it if no export/);
    expect(readFileSync(join(workspace.dir, 'busy.ndjson.gz.partial'), 'utf8')).toBe(
      'being written',
    );
    expect(existsSync(join(workspace.dir, 'busy.ndjson.gz'))).toBe(false);
  });

  it('removes the partial file when interrupted, leaving no archive', async () => {
    const interrupted = new AbortController();
    interrupted.abort();
    const result = await workspace.run(exporting('Acme', BEFORE, 'interrupted.ndjson.gz'), {
      signal: interrupted.signal,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('agentline: interrupted: no archive was written');
    expect(readdirSync(workspace.dir).filter((name) => name.startsWith('interrupted'))).toEqual([]);
  });

  it.each(['2026-01-01', '2026-01-01T00:00:00', 'yesterday', '2026-13-01T00:00:00Z'])(
    'explains a --before of %s',
    async (before) => {
      const result = await workspace.run(exporting('Acme', before, 'bad-before.ndjson.gz'));
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `agentline: --before "${before}" is not an ISO 8601 date-time with a time zone — send one with Z or an offset, e.g. --before 2026-01-01T00:00:00Z or --before 2026-01-01T00:00:00+02:00\n`,
      );
      expect(existsSync(join(workspace.dir, 'bad-before.ndjson.gz'))).toBe(false);
    },
  );

  it('keeps gzip data off a terminal', async () => {
    const result = await runBinary(exporting('Acme', BEFORE), {
      terminal: true,
    });
    expect(result.code).toBe(2);
    expect(result.stdout.length).toBe(0);
    expect(result.stderr).toMatch(
      /^agentline: the archive is gzip data, not for a terminal — pass --output FILE/,
    );
  });

  it('needs --org and --before', async () => {
    const result = await workspace.run(['events', 'export', '--org', 'Acme']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/missing --before/);
  });

  it('names an unknown organization and writes nothing', async () => {
    const result = await workspace.run(exporting('Umbrella', BEFORE, 'umbrella.ndjson.gz'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^agentline: no organization "Umbrella" in .* — use an id or name/,
    );
    expect(readdirSync(workspace.dir).filter((name) => name.startsWith('umbrella'))).toEqual([]);
  });
});

describe('a gzip-compressed import', () => {
  const lines = [
    { import_key: 'gz-1', timestamp: '2026-05-01T00:00:00Z', description: 'ünïcödé 🎧' },
    { import_key: 'gz-2', timestamp: '2026-05-01T00:00:01Z' },
  ];
  const ndjson = lines.map((line) => JSON.stringify(line)).join('\n') + '\n';

  it('is recognised by its content, whatever the file is called', async () => {
    writeFileSync(join(workspace.dir, 'plain-name.ndjson'), gzipSync(ndjson));
    const result = await workspace.run(['events', 'import', 'plain-name.ndjson', '--org', '2']);
    expect(result.code, result.stderr).toBe(0);
    expect(importCounts(result.stdout)).toEqual({ imported: 2, skipped: 0 });
    expect(
      await query(sql`SELECT description FROM events WHERE import_key LIKE 'gz-%' ORDER BY id`),
    ).toEqual([{ description: 'ünïcödé 🎧' }, { description: null }]);
  });

  it('is read from standard input too', async () => {
    const result = await runBinary(['events', 'import', '-', '--org', 'Initech'], {
      stdin: gzipSync(ndjson),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(importCounts(result.stdout.toString())).toEqual({ imported: 2, skipped: 0 });
  });

  it('reports a file cut short, keeping what was read before it', async () => {
    const many = Array.from({ length: 3_000 }, (_, i) =>
      JSON.stringify({ import_key: `cut-${i}`, timestamp: '2026-05-02T00:00:00Z' }),
    ).join('\n');
    const gzipped = gzipSync(many);
    writeFileSync(join(workspace.dir, 'cut.ndjson.gz'), gzipped.subarray(0, gzipped.length - 20));
    const result = await workspace.run(['events', 'import', 'cut.ndjson.gz', '--org', 'Globex']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^agentline: cut\.ndjson\.gz line \d+: the gzip data is damaged or cut short \(unexpected end of file\) — fix it and run the same command again: /m,
    );
    const [row] = await query<{ n: number }>(
      sql`SELECT count(*) AS n FROM events WHERE import_key LIKE 'cut-%'`,
    );
    expect(row!.n).toBeGreaterThan(0);
    // Whole batches only: the batch that met the damage was rolled back.
    expect(row!.n % DEFAULT_EVENT_BATCH_SIZE).toBe(0);
  });
});
