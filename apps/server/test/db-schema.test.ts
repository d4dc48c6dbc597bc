// The database layer on its own: connection settings, migrations, and the rules the schema holds
// by itself (they must hold for every writer, including several server processes), on the
// backend under test.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, describeDatabaseUrl, type Db } from '../src/db/engine/client.js';
import { MIGRATION_LOCK_KEY, migrateDb } from '../src/db/migrate.js';
import { isForeignKeyViolation, isUniqueViolation } from '../src/db/engine/errors.js';
import {
  execute,
  prepared,
  runSteps,
  runStepsInTransaction,
  selectRows,
} from '../src/db/engine/portable-sql.js';
import { createOrganization, findOrganization } from '../src/db/repositories/organizations.js';
import { organizations } from '../src/db/schema/sqlite.js';
import { recordStatements } from './support/sent-statements.js';
import {
  createTestDb,
  freshDatabaseUrl,
  onPostgres,
  onSqlite,
  queryTestDb,
} from './support/test-database.js';

let db: Db;
let acme: number;
let globex: number;

beforeAll(async () => {
  db = await createTestDb();
  acme = (await createOrganization(db, 'Acme')).id;
  globex = (await createOrganization(db, 'Globex')).id;
});

afterAll(() => db.close());

async function captureError(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected the statement to fail');
}

/** The driver's error code (SQLite result code or PostgreSQL SQLSTATE) under drizzle's wrapper. */
function driverCode(error: unknown): unknown {
  const cause = (error as { cause?: unknown }).cause;
  return (cause as { code?: unknown } | undefined)?.code ?? (error as { code?: unknown }).code;
}

/** The id of the row an `INSERT ... RETURNING id` created. */
async function insertedId(query: SQL): Promise<number> {
  const [row] = await queryTestDb<{ id: number }>(db, sql`${query} RETURNING id`);
  return row!.id;
}

async function migrationsApplied(target: Db): Promise<number> {
  const table = onSqlite ? sql`__drizzle_migrations` : sql`drizzle.__drizzle_migrations`;
  const [row] = await queryTestDb<{ n: number }>(target, sql`SELECT count(*) AS n FROM ${table}`);
  return Number(row!.n);
}

function journalLength(backend: 'sqlite' | 'postgres'): number {
  const journal = JSON.parse(
    readFileSync(new URL(`../drizzle/${backend}/meta/_journal.json`, import.meta.url), 'utf8'),
  ) as { entries: unknown[] };
  return journal.entries.length;
}

describe.runIf(onSqlite)('createDb and migrateDb on SQLite', () => {
  let dir: string;
  let file: Db;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentline-db-'));
    file = createDb(join(dir, 'nested', 'folder', 'agentline.db'));
    await migrateDb(file);
  });

  afterAll(async () => {
    await file.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the parent folder and sets the connection up for a server', () => {
    expect(existsSync(join(dir, 'nested', 'folder', 'agentline.db'))).toBe(true);
    if (file.kind !== 'sqlite') throw new Error('expected SQLite');
    expect(file.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(file.sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(file.sqlite.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(file.sqlite.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('migrates again without effect, also on a second connection', async () => {
    if (file.kind !== 'sqlite') throw new Error('expected SQLite');
    await migrateDb(file);
    const other = createDb(file.sqlite.name);
    await migrateDb(other);
    await other.close();
    expect(await migrationsApplied(file)).toBe(journalLength('sqlite'));
  });
});

describe.runIf(onPostgres)('createDb and migrateDb on PostgreSQL', () => {
  it('migrates again without effect, also from several connections at once', async () => {
    const url = await freshDatabaseUrl({ unmigrated: true });
    const processes = [createDb(url), createDb(url), createDb(url)];
    // Three "processes" starting together: the advisory lock lets one migrate at a time.
    await Promise.all(processes.map((each) => migrateDb(each)));
    await Promise.all(processes.map((each) => migrateDb(each)));
    expect(await migrationsApplied(processes[0]!)).toBe(journalLength('postgres'));
    await Promise.all(processes.map((each) => each.close()));
  });

  it('waits for the migration turn only where a migration is missing', async () => {
    const [migrated, fresh] = [
      await freshDatabaseUrl(),
      await freshDatabaseUrl({ unmigrated: true }),
    ];
    // Another process's turn on each database (advisory locks are per database), held until
    // released below.
    const others = [
      new pg.Client({ connectionString: migrated }),
      new pg.Client({ connectionString: fresh }),
    ];
    for (const other of others) {
      await other.connect();
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    }
    const [starting, migrating] = [createDb(migrated), createDb(fresh)];
    if (starting.kind !== 'postgres') throw new Error(`${migrated} opened as SQLite`);
    try {
      // Whether `work` ends within `ms`; the timer goes either way, so none outlives the test.
      const ended = async (work: Promise<void>, ms: number) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          return await Promise.race([
            work.then(() => 'ended'),
            new Promise((resolve) => (timer = setTimeout(resolve, ms, 'waiting'))),
          ]);
        } finally {
          clearTimeout(timer);
        }
      };
      // The migrated database is ready as it is: no turn to wait for, and its resume token
      // secret is read, not written again (planning that insert cost more than the rest).
      const sent = recordStatements(starting.pool);
      expect(await ended(migrateDb(starting), 10_000)).toBe('ended');
      expect(sent.some((text) => text.startsWith('SELECT'))).toBe(true);
      expect(sent.filter((text) => /INSERT INTO "resume_token_secret"/.test(text))).toEqual([]);
      const migration = migrateDb(migrating);
      expect(await ended(migration, 1_000)).toBe('waiting');
      await others[1]!.query('ROLLBACK');
      await migration;
      expect(await migrationsApplied(migrating)).toBe(journalLength('postgres'));
    } finally {
      await Promise.all(others.map((other) => other.end()));
      await Promise.all([starting.close(), migrating.close()]);
    }
  });

  it('never shows the password of a database URL', () => {
    expect(describeDatabaseUrl('postgres://agentline:s3cret@db.internal:5432/agentline')).toBe(
      'postgres://agentline:***@db.internal:5432/agentline',
    );
    expect(describeDatabaseUrl('data/agentline.db')).toBe('data/agentline.db');
  });

  it('reports an unreachable server as a failed migration, not a hang', async () => {
    const nowhere = createDb('postgres://agentline:agentline@127.0.0.1:1/agentline');
    await expect(migrateDb(nowhere)).rejects.toThrow(/ECONNREFUSED/);
    await nowhere.close();
  });

  it('runs a transaction again when PostgreSQL aborts it for a concurrent one', async () => {
    const name = 'Counter';
    await queryTestDb(
      db,
      sql`INSERT INTO organizations (name, records_version) VALUES (${name}, 0)`,
    );
    // Ten read-then-write increments at once: at SERIALIZABLE all but one of each colliding pair
    // fail with 40001 and are retried, so no increment is lost.
    await Promise.all(
      Array.from({ length: 10 }, () =>
        runStepsInTransaction(db, function* () {
          const [row] = yield* selectRows<{ v: number }>(
            sql`SELECT records_version AS v FROM organizations WHERE name = ${name}`,
          );
          yield* execute(
            sql`UPDATE organizations SET records_version = ${row!.v + 1} WHERE name = ${name}`,
          );
        }),
      ),
    );
    const [row] = await queryTestDb<{ v: number }>(
      db,
      sql`SELECT records_version AS v FROM organizations WHERE name = ${name}`,
    );
    expect(row!.v).toBe(10);
  });
});

it('finds an organization by id, by name, or by a name of digits beyond any id', async () => {
  expect((await findOrganization(db, String(acme)))?.name).toBe('Acme');
  expect((await findOrganization(db, 'Acme'))?.id).toBe(acme);
  expect(await findOrganization(db, 'Nobody')).toBeNull();
  const digits = await createOrganization(db, '99999999999');
  expect(await findOrganization(db, '99999999999')).toEqual(digits);
  expect(await findOrganization(db, '424242')).toBeNull();
});

it('stamps rows with fixed-width ISO UTC timestamps', async () => {
  const [row] = await queryTestDb<{ createdAt: string }>(
    db,
    sql`SELECT ${organizations.createdAt} AS "createdAt" FROM ${organizations} WHERE id = ${acme}`,
  );
  expect(row?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

describe('rules the schema enforces', () => {
  let targetId: number;

  beforeAll(async () => {
    const channel = await insertedId(
      sql`INSERT INTO channels (organization_id, name, kind, provider) VALUES (${acme}, 'Phone', 'telephony', 'records')`,
    );
    targetId = await insertedId(
      sql`INSERT INTO channel_targets (organization_id, channel_id, target, target_mode) VALUES (${acme}, ${channel}, '+15550100001', 'inbound')`,
    );
  });

  it('lets only one experiment run per target', async () => {
    const experiment = (status: 'draft' | 'running' | 'stopped', name: string) =>
      insertedId(
        sql`INSERT INTO experiments (organization_id, name, target_id, status) VALUES (${acme}, ${name}, ${targetId}, ${status})`,
      );
    await experiment('draft', 'draft one');
    await experiment('draft', 'draft two');
    await experiment('stopped', 'old one');
    const running = await experiment('running', 'live one');
    expect(isUniqueViolation(await captureError(() => experiment('running', 'second')))).toBe(true);

    const draft = await experiment('draft', 'next one');
    const setStatus = (id: number, status: string) =>
      queryTestDb(db, sql`UPDATE experiments SET status = ${status} WHERE id = ${id}`);
    expect(isUniqueViolation(await captureError(() => setStatus(draft, 'running')))).toBe(true);
    await setStatus(running, 'stopped');
    await setStatus(draft, 'running');
    const runningNow = await queryTestDb<{ id: number }>(
      db,
      sql`SELECT id FROM experiments WHERE target_id = ${targetId} AND status = 'running'`,
    );
    expect(runningNow).toEqual([{ id: draft }]);
  });

  it('keeps a phone number in at most one messaging service per organization', async () => {
    const service = (organizationId: number, sid: string) =>
      insertedId(
        sql`INSERT INTO messaging_services (organization_id, sid, name) VALUES (${organizationId}, ${sid}, ${sid})`,
      );
    const first = await service(acme, 'MG1');
    const second = await service(acme, 'MG2');
    const other = await service(globex, 'MG1');
    const addNumber = (messagingServiceId: number, organizationId: number, phoneNumber: string) =>
      queryTestDb(
        db,
        sql`INSERT INTO messaging_service_numbers (messaging_service_id, organization_id, phone_number) VALUES (${messagingServiceId}, ${organizationId}, ${phoneNumber})`,
      );
    await addNumber(first, acme, '+15550100001');
    expect(
      isUniqueViolation(await captureError(() => addNumber(second, acme, '+15550100001'))),
    ).toBe(true);
    await addNumber(other, globex, '+15550100001');
    // The number's organization must be its service's organization.
    const mismatch = await captureError(() => addNumber(second, globex, '+15550100002'));
    expect(isForeignKeyViolation(mismatch)).toBe(true);
  });

  it('accepts only known channel kinds, and providers only on telephony channels', async () => {
    const insert = (kind: string, provider: string | null) => () =>
      insertedId(
        sql`INSERT INTO channels (organization_id, name, kind, provider) VALUES (${acme}, 'c', ${kind}, ${provider})`,
      );
    const checkFailure = onSqlite ? 'SQLITE_CONSTRAINT_CHECK' : '23514';
    expect(driverCode(await captureError(insert('fax', null)))).toBe(checkFailure);
    expect(driverCode(await captureError(insert('sms', 'twilio')))).toBe(checkFailure);
    expect(driverCode(await captureError(insert('telephony', 'carrier-pigeon')))).toBe(
      checkFailure,
    );
    expect(await insert('telephony', 'twilio')()).toBeGreaterThan(0);
  });

  it('keeps import keys unique per organization but never deduplicates events without one', async () => {
    const event = (organizationId: number, importKey: string | null) =>
      queryTestDb(
        db,
        sql`INSERT INTO events (organization_id, import_key, timestamp) VALUES (${organizationId}, ${importKey}, '2026-01-01T00:00:00.000Z')`,
      );
    await event(acme, 'k-1');
    await event(globex, 'k-1');
    expect(isUniqueViolation(await captureError(() => event(acme, 'k-1')))).toBe(true);
    await event(acme, null);
    await event(acme, null);
    const [nullKeys] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM events WHERE import_key IS NULL`,
    );
    expect(Number(nullKeys!.n)).toBe(2);
  });

  it('refuses rows that point at nothing', async () => {
    const error = await captureError(() =>
      queryTestDb(db, sql`INSERT INTO agents (organization_id, name) VALUES (999, 'ghost')`),
    );
    expect(isForeignKeyViolation(error)).toBe(true);
  });
});

describe('transactions', () => {
  it('commit the work, or nothing of it when it throws', async () => {
    const insert = (name: string) =>
      execute(sql`INSERT INTO organizations (name) VALUES (${name})`);
    await runStepsInTransaction(db, function* () {
      yield* insert('Initech');
    });
    await expect(
      runStepsInTransaction(db, function* () {
        yield* insert('Umbrella');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const names = await queryTestDb<{ name: string }>(
      db,
      sql`SELECT name FROM organizations WHERE name IN ('Initech', 'Umbrella') ORDER BY id`,
    );
    expect(names).toEqual([{ name: 'Initech' }]);
  });
});

describe('prepared statements', () => {
  const byName = prepared<{ name: string }>(
    sql`SELECT name FROM organizations WHERE name = ${sql.placeholder('name')}`,
  );

  it('run with each call’s values, many times, also concurrently and inside transactions', async () => {
    await queryTestDb(db, sql`INSERT INTO organizations (name) VALUES ('Hooli'), ('Pied Piper')`);
    const found = await Promise.all(
      ['Hooli', 'Pied Piper', 'Nobody', 'Hooli'].map((name) =>
        runSteps(db, () => byName({ name })),
      ),
    );
    expect(found).toEqual([[{ name: 'Hooli' }], [{ name: 'Pied Piper' }], [], [{ name: 'Hooli' }]]);
    const inTransaction = await runStepsInTransaction(db, function* () {
      const [first] = yield* byName({ name: 'Hooli' });
      const [second] = yield* byName({ name: 'Pied Piper' });
      return [first?.name, second?.name];
    });
    expect(inTransaction).toEqual(['Hooli', 'Pied Piper']);
  });
});
