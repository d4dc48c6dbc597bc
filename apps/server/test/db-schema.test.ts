// The database layer on its own: connection settings, migrations, and the rules the schema holds
// by itself (they must hold for every writer, including several server processes).

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateDb, withTransaction, type Db } from '../src/db/client.js';
import { isForeignKeyViolation, isUniqueViolation } from '../src/db/errors.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import {
  agents,
  channels,
  channelTargets,
  events,
  experiments,
  messagingServiceNumbers,
  messagingServices,
  organizations,
} from '../src/db/schema.js';

let dir: string;
let db: Db;
let acme: number;
let globex: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentline-db-'));
  db = createDb(join(dir, 'nested', 'folder', 'agentline.db'));
  await migrateDb(db);
  acme = (await createOrganization(db, 'Acme')).id;
  globex = (await createOrganization(db, 'Globex')).id;
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function captureError(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected the statement to fail');
}

describe('createDb and migrateDb', () => {
  it('creates the parent folder and sets the connection up for a server', () => {
    expect(existsSync(join(dir, 'nested', 'folder', 'agentline.db'))).toBe(true);
    expect(db.kind).toBe('sqlite');
    expect(db.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.sqlite.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.sqlite.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('migrates again without effect, also on a second connection', async () => {
    await migrateDb(db);
    const other = createDb(db.sqlite.name);
    await migrateDb(other);
    other.close();
    const applied = db.sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get();
    const journal = JSON.parse(
      readFileSync(new URL('../drizzle/sqlite/meta/_journal.json', import.meta.url), 'utf8'),
    ) as { entries: unknown[] };
    expect(applied).toEqual({ n: journal.entries.length });
  });

  it('works in memory for tests', async () => {
    const memory = createDb(':memory:');
    await migrateDb(memory);
    expect((await createOrganization(memory, 'Solo')).id).toBe(1);
    memory.close();
  });

  it('refuses PostgreSQL URLs for now', () => {
    expect(() => createDb('postgres://localhost/agentline')).toThrow(
      /PostgreSQL is not supported yet/,
    );
  });

  it('stamps rows with fixed-width ISO UTC timestamps', () => {
    const row = db.orm.select().from(organizations).get();
    expect(row?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});

describe('rules the schema enforces', () => {
  let targetId: number;

  beforeAll(() => {
    const channel = db.orm
      .insert(channels)
      .values({ organizationId: acme, name: 'Phone', kind: 'telephony', provider: 'records' })
      .returning()
      .get();
    targetId = db.orm
      .insert(channelTargets)
      .values({
        organizationId: acme,
        channelId: channel.id,
        target: '+15550100001',
        targetMode: 'inbound',
      })
      .returning()
      .get().id;
  });

  it('lets only one experiment run per target', () => {
    const experiment = (status: 'draft' | 'running' | 'stopped', name: string) =>
      db.orm
        .insert(experiments)
        .values({ organizationId: acme, name, targetId, status })
        .returning()
        .get();
    experiment('draft', 'draft one');
    experiment('draft', 'draft two');
    experiment('stopped', 'old one');
    const running = experiment('running', 'live one');
    const error = captureError(() => experiment('running', 'second live one'));
    expect(isUniqueViolation(error)).toBe(true);

    const draft = experiment('draft', 'next one');
    const startDraft = () =>
      db.sqlite.prepare("UPDATE experiments SET status = 'running' WHERE id = ?").run(draft.id);
    expect(isUniqueViolation(captureError(startDraft))).toBe(true);
    db.sqlite.prepare("UPDATE experiments SET status = 'stopped' WHERE id = ?").run(running.id);
    expect(startDraft().changes).toBe(1);
  });

  it('keeps a phone number in at most one messaging service per organization', () => {
    const service = (organizationId: number, sid: string) =>
      db.orm.insert(messagingServices).values({ organizationId, sid, name: sid }).returning().get()
        .id;
    const first = service(acme, 'MG1');
    const second = service(acme, 'MG2');
    const other = service(globex, 'MG1');
    const addNumber = (messagingServiceId: number, organizationId: number, phoneNumber: string) =>
      db.orm
        .insert(messagingServiceNumbers)
        .values({ messagingServiceId, organizationId, phoneNumber })
        .run();
    addNumber(first, acme, '+15550100001');
    expect(isUniqueViolation(captureError(() => addNumber(second, acme, '+15550100001')))).toBe(
      true,
    );
    addNumber(other, globex, '+15550100001');
    // The number's organization must be its service's organization.
    const mismatch = captureError(() => addNumber(second, globex, '+15550100002'));
    expect(isForeignKeyViolation(mismatch)).toBe(true);
  });

  it('accepts only known channel kinds, and providers only on telephony channels', () => {
    const insert = (kind: string, provider: string | null) => () =>
      db.sqlite
        .prepare('INSERT INTO channels (organization_id, name, kind, provider) VALUES (?, ?, ?, ?)')
        .run(acme, 'c', kind, provider);
    expect(captureError(insert('fax', null))).toMatchObject({ code: 'SQLITE_CONSTRAINT_CHECK' });
    expect(captureError(insert('sms', 'twilio'))).toMatchObject({
      code: 'SQLITE_CONSTRAINT_CHECK',
    });
    expect(captureError(insert('telephony', 'carrier-pigeon'))).toMatchObject({
      code: 'SQLITE_CONSTRAINT_CHECK',
    });
    expect(insert('telephony', 'twilio')().changes).toBe(1);
  });

  it('keeps import keys unique per organization but never deduplicates events without one', () => {
    const event = (organizationId: number, importKey: string | null) =>
      db.orm
        .insert(events)
        .values({ organizationId, importKey, timestamp: '2026-01-01T00:00:00.000Z' })
        .run();
    event(acme, 'k-1');
    event(globex, 'k-1');
    expect(isUniqueViolation(captureError(() => event(acme, 'k-1')))).toBe(true);
    event(acme, null);
    event(acme, null);
    const nullKeys = db.sqlite
      .prepare('SELECT count(*) AS n FROM events WHERE import_key IS NULL')
      .get();
    expect(nullKeys).toEqual({ n: 2 });
  });

  it('refuses rows that point at nothing', () => {
    const error = captureError(() =>
      db.orm.insert(agents).values({ organizationId: 999, name: 'ghost' }).run(),
    );
    expect(isForeignKeyViolation(error)).toBe(true);
  });
});

describe('withTransaction', () => {
  it('commits the work, or nothing of it when it throws', async () => {
    const id = await withTransaction(
      db,
      (tx) => tx.insert(organizations).values({ name: 'Initech' }).returning().get().id,
    );
    expect(id).toBeGreaterThan(0);
    await expect(
      withTransaction(db, (tx) => {
        tx.insert(organizations).values({ name: 'Umbrella' }).run();
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const names = db.sqlite.prepare('SELECT name FROM organizations ORDER BY id').pluck().all();
    expect(names).toEqual(['Acme', 'Globex', 'Initech']);
  });

  it('refuses asynchronous work, which would let other statements into the transaction', async () => {
    // @ts-expect-error: the type already forbids returning a promise
    await expect(withTransaction(db, async () => 1)).rejects.toThrow(/must be synchronous/);
  });
});
