// agentline events import: NDJSON in, idempotent by import key, batches that commit as they go.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/engine/client.js';
import { SQLITE_BUSY_TIMEOUT_MS } from '../src/db/engine/sqlite-open.js';
import { CLI_APPLICATION_NAME, CommandContext } from '../src/cli/context.js';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';
import { onSqlite, queryTestDb } from './support/test-database.js';

let workspace: TempWorkspace;

async function query<T = Record<string, unknown>>(statement: SQL): Promise<T[]> {
  const db = createDb(workspace.databaseUrl);
  try {
    return await queryTestDb<T>(db, statement);
  } finally {
    await db.close();
  }
}

async function eventCount(organizationId: number): Promise<number> {
  const [row] = await query<{ n: number }>(
    sql`SELECT count(*) AS n FROM events WHERE organization_id = ${organizationId}`,
  );
  return row!.n;
}

function writeLines(name: string, lines: Array<string | object>): string {
  writeFileSync(
    join(workspace.dir, name),
    lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n',
  );
  return name;
}

/** The error lines, without progress lines a slow machine may print first. */
function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('agentline: '));
}

const SUMMARY =
  /^imported (\d+) events, skipped (\d+) duplicates, in [\d.]+ s \([\d,]+ events\/s\)\n$/;

function summary(stdout: string): { imported: number; skipped: number } {
  const match = SUMMARY.exec(stdout);
  expect(match, stdout).not.toBeNull();
  return { imported: Number(match![1]), skipped: Number(match![2]) };
}

beforeAll(async () => {
  workspace = await createWorkspace();
  expect((await workspace.run(['org', 'create', 'Acme'])).code).toBe(0);
  expect((await workspace.run(['org', 'create', 'Globex'])).code).toBe(0);
});

afterAll(() => workspace.remove());

describe('a clean file', () => {
  const file = 'events.ndjson';

  beforeAll(() => {
    writeLines(file, [
      {
        import_key: 'evt-1',
        timestamp: '2026-03-17T07:22:20.252Z',
        session_id: 's-1',
        conversation_id: 'c-1',
        source: 'tool',
        source_id: '12',
        category: 'tool',
        type: 'tool-call',
        user_id: '+14155550100',
        description: 'Called lookup_order',
        attributes: { latency_ms: 120 },
      },
      { id: 42, timestamp: '2026-03-17T09:22:20+02:00', category: 'session' },
      '',
      {
        timestamp: '2026-03-18T00:00:00Z',
        type: 'no-key',
        attributes: { b: 1, a: [1, { d: 2, c: 3 }] },
      },
      { timestamp: '2026-03-18T00:00:01.5-05:30', session_id: null, attributes: null },
    ]);
  });

  it('imports every event with normalised timestamps and stable keys', async () => {
    const result = await workspace.run(['events', 'import', file, '--org', 'Acme']);
    expect(result.code).toBe(0);
    expect(summary(result.stdout)).toEqual({ imported: 4, skipped: 0 });
    const rows = await query(
      sql`SELECT import_key, timestamp, session_id, source_id, user_id,
          CAST(attributes AS TEXT) AS attributes
          FROM events WHERE organization_id = 1 ORDER BY id`,
    );
    expect(rows.map((row) => row.timestamp)).toEqual([
      '2026-03-17T07:22:20.252Z',
      '2026-03-17T07:22:20.000Z',
      '2026-03-18T00:00:00.000Z',
      '2026-03-18T05:30:01.500Z',
    ]);
    expect(rows[0]).toEqual({
      import_key: 'evt-1',
      timestamp: '2026-03-17T07:22:20.252Z',
      session_id: 's-1',
      source_id: '12',
      user_id: '+14155550100',
      attributes: '{"latency_ms":120}',
    });
    expect(rows[1]!.import_key).toBe('42');
    expect(rows[2]!.import_key).toMatch(/^h:[A-Za-z0-9_-]{22}$/);
  });

  it('imports nothing new when run again', async () => {
    const result = await workspace.run(['events', 'import', file, '--org', 'Acme']);
    expect(result.code).toBe(0);
    expect(summary(result.stdout)).toEqual({ imported: 0, skipped: 4 });
    expect(await eventCount(1)).toBe(4);
  });

  it('recognises a keyless event by its content, whatever the key order, spacing or offset', async () => {
    const reordered = writeLines('reordered.ndjson', [
      '{ "attributes": {"a": [1, {"c": 3, "d": 2}], "b": 1}, "type": "no-key", "timestamp": "2026-03-18T01:00:00+01:00" }',
    ]);
    const result = await workspace.run(['events', 'import', reordered, '--org', 'Acme']);
    expect(summary(result.stdout)).toEqual({ imported: 0, skipped: 1 });
  });

  it('counts new and known events exactly when they mix within one multi-row insert', async () => {
    const event = (i: number) => ({ import_key: `mix-${i}`, timestamp: '2026-03-18T00:00:00Z' });
    const known = writeLines(
      'known.ndjson',
      Array.from({ length: 250 }, (_, i) => i)
        .filter((i) => i % 3 === 0)
        .map(event),
    );
    const all = writeLines(
      'all.ndjson',
      Array.from({ length: 250 }, (_, i) => event(i)),
    );
    expect(
      summary((await workspace.run(['events', 'import', known, '--org', 'Acme'])).stdout),
    ).toEqual({ imported: 84, skipped: 0 });
    expect(
      summary((await workspace.run(['events', 'import', all, '--org', 'Acme'])).stdout),
    ).toEqual({
      imported: 166,
      skipped: 84,
    });
    const [row] = await query(
      sql`SELECT count(*) AS n, count(DISTINCT import_key) AS keys FROM events
          WHERE import_key LIKE 'mix-%'`,
    );
    expect(row).toEqual({ n: 250, keys: 250 });
  });

  it('keeps organizations apart: the same keys import again for another organization', async () => {
    const result = await workspace.run(['events', 'import', file, '--org', 'Globex']);
    expect(summary(result.stdout)).toEqual({ imported: 4, skipped: 0 });
    expect(await eventCount(2)).toBe(4);
  });
});

describe('a bad line', () => {
  const good = (n: number) => ({
    import_key: `batch-${n}`,
    timestamp: `2026-04-01T00:00:${String(n).padStart(2, '0')}Z`,
  });

  it('stops at the line, keeps the batches before it and rolls back its own batch', async () => {
    const lines: Array<string | object> = [];
    for (let n = 1; n <= 12; n += 1) lines.push(good(n));
    lines[6] = { import_key: 'bad', timestamp: '2026-04-01 00:00:07' };
    const file = writeLines('bad-line.ndjson', lines);
    const result = await workspace.run([
      'events',
      'import',
      file,
      '--org',
      'Acme',
      '--batch-size',
      '5',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(errorLines(result.stderr)).toEqual([
      'agentline: bad-line.ndjson line 7: timestamp "2026-04-01 00:00:07" must be an ISO 8601 date-time with Z or an offset, e.g. 2026-03-17T07:22:20.252Z — fix it and run the same command again: the 5 events of lines 1-5 are saved (5 new) and are skipped on the re-run; lines 6-7 were rolled back as one batch',
    ]);
    expect(
      await query(sql`SELECT import_key FROM events WHERE import_key LIKE 'batch-%' ORDER BY id`),
    ).toEqual([1, 2, 3, 4, 5].map((n) => ({ import_key: `batch-${n}` })));

    lines[6] = good(7);
    writeLines('bad-line.ndjson', lines);
    const rerun = await workspace.run([
      'events',
      'import',
      file,
      '--org',
      'Acme',
      '--batch-size',
      '5',
    ]);
    expect(rerun.code).toBe(0);
    expect(summary(rerun.stdout)).toEqual({ imported: 7, skipped: 5 });
  });

  it.each([
    [
      '{"timestamp": "2026-04-01T00:00:00Z",}',
      /line 2: not valid JSON at column 38 \(Expected double-quoted property name\); each line must be one JSON object/,
    ],
    ['{"session_id": "s-1"}', /line 2: timestamp: is required \(text\); add it/],
    [
      '{"timestamp": "2026-04-01T00:00:00Z", "colour": "red"}',
      /line 2: colour: unknown field; check its spelling or remove it/,
    ],
    [
      '{"timestamp": "2026-04-01T00:00:00Z", "attributes": [1, 2]}',
      /line 2: attributes: must be an object, not a list/,
    ],
    [
      '{"timestamp": "2026-04-01T00:00:00Z", "user_id": 4155550100}',
      /line 2: user_id: must be text, not 4155550100/,
    ],
    ['[1]', /line 2: must be an object, not a list/],
    [
      '{"timestamp": "2026-04-01T00:00:00Z", "description": "a\\u0000b"}',
      /line 2: description: must not contain the NUL character \(U\+0000\)/,
    ],
    [
      '{"timestamp": "2026-04-01T00:00:00Z", "attributes": {"a": ["\\\\", "\\u0000"]}}',
      /line 2: attributes: must not contain the NUL character \(U\+0000\)/,
    ],
    [
      '{"timestamp": "2026-02-30T00:00:00"}',
      /line 2: timestamp "2026-02-30T00:00:00" must be an ISO 8601 date-time with Z or an offset/,
    ],
  ])('explains %s', async (badLine, message) => {
    const file = writeLines('one-bad.ndjson', [
      { import_key: 'fine', timestamp: '2026-04-01T00:00:00Z' },
      badLine,
    ]);
    const result = await workspace.run(['events', 'import', file, '--org', 'Acme']);
    expect(result.code).toBe(1);
    const [line, ...more] = errorLines(result.stderr);
    expect(more).toEqual([]);
    expect(line).toMatch(new RegExp(`^agentline: one-bad\\.ndjson ${message.source}`));
    expect(line).toContain('nothing was saved; lines 1-2 were rolled back as one batch');
  });
});

describe('standard input', () => {
  it('reads events from "-"', async () => {
    const stdin = [
      JSON.stringify({ import_key: 'stdin-1', timestamp: '2026-05-01T00:00:00Z' }),
      JSON.stringify({ import_key: 'stdin-2', timestamp: '2026-05-01T00:00:01Z' }),
    ].join('\n');
    const result = await workspace.run(['events', 'import', '-', '--org', 'Acme'], { stdin });
    expect(result.code).toBe(0);
    expect(summary(result.stdout)).toEqual({ imported: 2, skipped: 0 });
    expect(
      await query(sql`SELECT count(*) AS n FROM events WHERE import_key LIKE 'stdin-%'`),
    ).toEqual([{ n: 2 }]);
  });
});

// SQLite only: the import's last checkpoint copies the log back as far as a live server's reads
// allow, and never waits for them; PostgreSQL manages its log itself.
describe.runIf(onSqlite)('next to a server reading the database', () => {
  it("ends without waiting for the server's reads, which would hold its writes", async () => {
    const server = createDb(workspace.databaseUrl);
    assert(server.kind === 'sqlite');
    try {
      // A read in progress, as a live server always has one: a checkpoint that waits for it
      // (FULL, TRUNCATE) holds off every writer until the busy timeout.
      server.sqlite.exec('BEGIN');
      server.sqlite.prepare('SELECT count(*) FROM events').get();
      const lines = Array.from({ length: 900 }, (_, i) => ({
        import_key: `wal-${i}`,
        timestamp: '2026-05-02T00:00:00Z',
        description: `event ${i} with some text to fill pages`,
      }));
      const started = performance.now();
      const result = await workspace.run([
        'events',
        'import',
        writeLines('wal.ndjson', lines),
        '--org',
        'Acme',
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(summary(result.stdout)).toEqual({ imported: 900, skipped: 0 });
      expect(performance.now() - started).toBeLessThan(SQLITE_BUSY_TIMEOUT_MS);
      server.sqlite.exec('COMMIT');
    } finally {
      await server.close();
    }
  });
});

describe('usage', () => {
  it('needs an organization, a readable file and a sane batch size', async () => {
    expect((await workspace.run(['events', 'import', 'x.ndjson'])).code).toBe(2);
    const missing = await workspace.run(['events', 'import', 'missing.ndjson', '--org', 'Acme']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*missing\.ndjson \(ENOENT\)/);
    const batch = await workspace.run([
      'events',
      'import',
      'x.ndjson',
      '--org',
      'Acme',
      '--batch-size',
      '0',
    ]);
    expect(batch.code).toBe(2);
  });
});

describe.runIf(!onSqlite)('on the PostgreSQL server', () => {
  it("names the CLI's connections apart from the servers'", async () => {
    const context = new CommandContext(
      {
        stdout: process.stdout,
        stderr: process.stderr,
        env: { DATABASE_URL: workspace.databaseUrl },
      },
      undefined,
    );
    const db = await context.db();
    try {
      const [row] = await queryTestDb<{ name: string }>(
        db,
        sql`SELECT current_setting('application_name') AS name`,
      );
      expect(row!.name).toBe(CLI_APPLICATION_NAME);
      expect(CLI_APPLICATION_NAME).not.toBe('agentline');
    } finally {
      await db.close();
    }
  });
});
