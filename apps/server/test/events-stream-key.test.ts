// An open events stream answers to its API key: a real server process holds the streams while
// another process (the CLI, or this test process through the repositories) revokes the key or
// takes EVENTS_READ from its role, on the same database; the stream ends with `event: error`
// within one second of that commit. Every message is checked against the spec.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { activeKeyPermissions } from '../src/db/repositories/api-keys.js';
import { parseApiKey } from '../src/domain/api-keys.js';
import { createKey, createTenant, type Tenant } from './support/harness.js';
import { openEventStream, type EventStreamReader } from './support/event-stream.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import {
  freshDatabaseUrl,
  insertTestEvents,
  onSqlite,
  queryTestDb,
} from './support/test-database.js';

const KEY_CHANGE_BOUND_MS = 1_000;

let databaseUrl: string;
let db: Db;
let acme: Tenant;
let server: ServerProcess;

class Discard extends Writable {
  isTTY = false;
  override _write(_chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    done();
  }
}

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  server = await startServerProcess({ DATABASE_URL: databaseUrl });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await db.close();
  // A PostgreSQL test database is dropped by the project's global teardown.
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

const keyIdOf = (key: string) => parseApiKey(key)!.keyId;

/** A stream of a new key of its own role, once the server has set it up (its first keep-alive). */
async function openStreamOfNewKey(): Promise<{ key: string; stream: EventStreamReader }> {
  const key = await createKey(db, acme.organizationId, ['EVENTS_READ', 'PROMPTS_READ']);
  const stream = await openEventStream(server.baseUrl, { key });
  expect(stream.status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { key, stream };
}

/**
 * Expects the stream to end with `event: error` of `code`, whose detail names `why`, within
 * KEY_CHANGE_BOUND_MS of `committed` (when the change committed), and then nothing more.
 */
async function expectEndedWith(
  stream: EventStreamReader,
  committed: number,
  code: string,
  why: string,
): Promise<void> {
  await stream.ended;
  expect(performance.now() - committed).toBeLessThan(KEY_CHANGE_BOUND_MS);
  expect(stream.error?.code).toBe(code);
  expect(stream.error?.detail).toContain(why);
  expect(stream.failure).toBeUndefined();
}

describe('an open events stream whose key changes', () => {
  it('ends with UNAUTHENTICATED within a second of a revocation through the CLI', async () => {
    const { key, stream } = await openStreamOfNewKey();
    const code = await runCli(['key', 'revoke', keyIdOf(key)], {
      stdout: new Discard(),
      stderr: new Discard(),
      env: { DATABASE_URL: databaseUrl },
    });
    // The CLI returns once the revocation has committed.
    const committed = performance.now();
    expect(code).toBe(0);
    await expectEndedWith(stream, committed, 'UNAUTHENTICATED', 'revoked');
    const again = await openEventStream(server.baseUrl, { key });
    expect(again.status).toBe(401);
  });

  it('ends with PERMISSION_DENIED within a second of its role losing EVENTS_READ', async () => {
    const { key, stream } = await openStreamOfNewKey();
    const [row] = await queryTestDb<{ roleId: number }>(
      db,
      sql`SELECT role_id AS "roleId" FROM api_keys WHERE key_id = ${keyIdOf(key)}`,
    );
    // No command changes a role yet: the operator's SQL, from this process.
    await queryTestDb(
      db,
      sql`UPDATE roles SET permissions = ${JSON.stringify(['PROMPTS_READ'])} WHERE id = ${row!.roleId}`,
    );
    const committed = performance.now();
    await expectEndedWith(stream, committed, 'PERMISSION_DENIED', 'EVENTS_READ');
    const again = await openEventStream(server.baseUrl, { key });
    expect(again.status).toBe(403);
  });

  it('ends every stream of a deleted key, and none of another key', async () => {
    const [gone, kept] = await Promise.all([openStreamOfNewKey(), openStreamOfNewKey()]);
    const second = await openEventStream(server.baseUrl, { key: gone.key });
    await queryTestDb(db, sql`DELETE FROM api_keys WHERE key_id = ${keyIdOf(gone.key)}`);
    const committed = performance.now();
    for (const stream of [gone.stream, second]) {
      await expectEndedWith(stream, committed, 'UNAUTHENTICATED', 'no longer exists');
    }
    // The other key's stream outlives several checks and still delivers.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await insertTestEvents(db, [
      { organizationId: acme.organizationId, timestamp: '2026-05-01T00:00:00.000Z', type: 'kept' },
    ]);
    const [event] = await kept.stream.waitFor(1, 3_000);
    expect(event!.data.type).toBe('kept');
    expect(kept.stream.error).toBeUndefined();
    kept.stream.close();
  });
});

describe('activeKeyPermissions', () => {
  it('reads any number of keys, leaving out the revoked and unknown ones', async () => {
    const valid = keyIdOf(await createKey(db, acme.organizationId, ['EVENTS_READ']));
    const unknown = Array.from({ length: 1_200 }, (_, i) => `unknown${String(i).padStart(5, '0')}`);
    const active = await activeKeyPermissions(db, [...unknown, valid, keyIdOf(acme.key)]);
    expect([...active.keys()].sort()).toEqual([valid, keyIdOf(acme.key)].sort());
    expect(active.get(valid)).toEqual(['EVENTS_READ']);
  });
});
