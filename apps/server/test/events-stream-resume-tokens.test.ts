// The event stream's resume tokens through a real HTTP server on 127.0.0.1: they say nothing of
// event ids (so nothing of other organizations' volume), each resumes exactly after its event,
// the decimal ids sent before still do, and a token the organization was not sent is a 422; the
// secret they are made with is stored once per database and outlives cursor secret rotations.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { ensureResumeTokenSecret } from '../src/db/repositories/resume-tokens.js';
import { newServerSecret } from '../src/domain/server-secrets.js';
import { resumeTokensOf } from '../src/runtime/resume-tokens.js';
import { resumeTokenSecret } from '../src/db/schema/sqlite.js';
import { EventStreams } from '../src/http/event-stream.js';
import { createWorkspace } from './fixtures/cli-harness.js';
import { afterConcurrentInserts } from './support/concurrent-secret-inserts.js';
import { openEventStream, type StreamedEvent } from './support/event-stream.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import {
  createTestDb,
  insertTestEvents,
  onPostgres,
  queryTestDb,
} from './support/test-database.js';

const FROM_THE_START = 'start_datetime=2026-01-01T00:00:00Z';

let counter = 0;

/** One event of the organization, typed `t-<n>` in the order written. */
function event(organizationId: number) {
  counter += 1;
  return { organizationId, timestamp: '2026-06-01T00:00:00.000Z', type: `t-${counter}` };
}

const types = (events: StreamedEvent[]) => events.map((streamed) => streamed.data.type);

/** Bits that differ between two tokens' bytes. */
function bitsApart(a: string, b: string): number {
  const [x, y] = [Buffer.from(a, 'base64url'), Buffer.from(b, 'base64url')];
  let bits = 0;
  for (let i = 0; i < x.length; i += 1) {
    for (let byte = x[i]! ^ y[i]!; byte > 0; byte >>= 1) bits += byte & 1;
  }
  return bits;
}

/** A live server over `db` whose streams poll often. */
async function serve(
  db: Db,
): Promise<{ api: TestApi; server: LiveServer; close(): Promise<void> }> {
  const streams = new EventStreams(db, { perKey: 10, pollMs: 20 });
  const api = await createTestApi(db, { eventStreams: streams });
  const server = await startLiveServer(api.app);
  return {
    api,
    server,
    close: async () => {
      streams.close();
      await server.close();
      await api.close();
    },
  };
}

/** Every event of the organization so far, replayed from the start. */
async function replay(baseUrl: string, tenant: Tenant, count: number): Promise<StreamedEvent[]> {
  const stream = await openEventStream(baseUrl, { key: tenant.key, query: FROM_THE_START });
  expect(stream.status).toBe(200);
  const events = await stream.waitFor(count);
  stream.close();
  return events;
}

async function refusal(baseUrl: string, tenant: Tenant, lastEventId: string) {
  const refused = await openEventStream(baseUrl, { key: tenant.key, lastEventId });
  expect(refused.status, lastEventId).toBe(422);
  return (refused.body as Schemas['HTTPValidationError']).detail[0]!;
}

describe('resume tokens', () => {
  let live: Awaited<ReturnType<typeof serve>>;
  let acme: Tenant;
  let globex: Tenant;
  let acmeEvents: StreamedEvent[];
  let globexEvents: StreamedEvent[];

  /** The highest event id when the secret was stored: decimal ids resume up to it. */
  let upgradedAt: number;

  beforeAll(async () => {
    const db = await createTestDb();
    acme = await createTenant(db, 'Acme');
    globex = await createTenant(db, 'Globex');
    // As a database that held events when it was upgraded: the secret is stored after the first
    // half of them. Interleaved, so each organization's consecutive events are two ids apart.
    await queryTestDb(db, sql`DELETE FROM ${resumeTokenSecret} RETURNING id`);
    for (let i = 0; i < 12; i += 1) {
      if (i === 6) await ensureResumeTokenSecret(db, newServerSecret());
      await insertTestEvents(db, [event(acme.organizationId)]);
      await insertTestEvents(db, [event(globex.organizationId)]);
    }
    const [stored] = await queryTestDb<{ through: number }>(
      db,
      sql`SELECT decimal_through AS "through" FROM ${resumeTokenSecret}`,
    );
    upgradedAt = Number(stored!.through);
    live = await serve(db);
    acmeEvents = await replay(live.server.baseUrl, acme, 12);
    globexEvents = await replay(live.server.baseUrl, globex, 12);
  });

  /** The ids of the organization's events, in commit order. */
  async function eventIds(tenant: Tenant): Promise<number[]> {
    const rows = await queryTestDb<{ id: number }>(
      live.api.db,
      sql`SELECT id FROM events WHERE organization_id = ${tenant.organizationId} ORDER BY id`,
    );
    return rows.map((row) => Number(row.id));
  }

  afterAll(() => live.close());

  it('are not event ids and say nothing of them', async () => {
    const all = [...acmeEvents, ...globexEvents].map((streamed) => streamed.id);
    for (const token of all) expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new Set(all).size).toBe(24);
    expect(all.filter((token) => /^\d+$/.test(token))).toEqual([]);
    // Consecutive events, of one organization and of the two in turn: about half the 128 bits
    // differ, as between random blocks (32 or fewer, or 96 or more: under one in 10^7 a pair).
    const pairs = acmeEvents.flatMap((streamed, i) => [
      [streamed.id, globexEvents[i]!.id],
      ...(i > 0 ? [[acmeEvents[i - 1]!.id, streamed.id]] : []),
    ]);
    for (const [a, b] of pairs) {
      const apart = bitsApart(a!, b!);
      expect(apart, `${a} ${b}`).toBeGreaterThan(32);
      expect(apart, `${a} ${b}`).toBeLessThan(96);
    }
  });

  it('are the same for an event on every connection', async () => {
    const again = await replay(live.server.baseUrl, acme, 12);
    expect(again.map((streamed) => streamed.id)).toEqual(acmeEvents.map((streamed) => streamed.id));
  });

  it('resume right after their event, and so does an old decimal id', async () => {
    const resumed = await openEventStream(live.server.baseUrl, {
      key: acme.key,
      lastEventId: acmeEvents[4]!.id,
    });
    expect(types(await resumed.waitFor(7))).toEqual(types(acmeEvents.slice(5)));
    resumed.close();
    const ids = await eventIds(acme);
    // The fifth event came before the upgrade.
    expect(ids[4]).toBeLessThanOrEqual(upgradedAt);
    const decimal = await openEventStream(live.server.baseUrl, {
      key: acme.key,
      lastEventId: String(ids[4]),
    });
    const fromDecimal = await decimal.waitFor(7);
    expect(types(fromDecimal)).toEqual(types(acmeEvents.slice(5)));
    // It goes on with the new tokens.
    expect(fromDecimal.map((streamed) => streamed.id)).toEqual(
      acmeEvents.slice(5).map((streamed) => streamed.id),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(decimal.events).toHaveLength(7);
    decimal.close();
  });

  it("refuse another organization's token, a garbled one and a truncated one with a 422", async () => {
    const token = acmeEvents[3]!.id;
    const flipped = (at: number) =>
      token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    // The last character's four low bits are not part of the 16 bytes: another spelling of them.
    const lastBits = Buffer.from(token, 'base64url').toString('base64url').at(-1)!;
    const respelled = token.slice(0, 21) + String.fromCharCode(lastBits.charCodeAt(0) + 1);
    for (const bad of [
      globexEvents[3]!.id,
      token.slice(0, 21),
      token.slice(1),
      `${token}A`,
      flipped(0),
      flipped(10),
      respelled,
      '-'.repeat(22),
      'x1',
    ]) {
      const problem = await refusal(live.server.baseUrl, acme, bad);
      expect(problem.loc).toEqual(['header', 'Last-Event-ID']);
      expect(problem.msg).toContain('is not an id this stream sent');
    }
    // Globex's own token resumes its stream.
    const resumed = await openEventStream(live.server.baseUrl, {
      key: globex.key,
      lastEventId: globexEvents[3]!.id,
    });
    expect(types(await resumed.waitFor(8))).toEqual(types(globexEvents.slice(4)));
    resumed.close();
  });

  it('refuse a decimal id of an event after the upgrade, or past the last event, with a 422', async () => {
    // Decimal ids were never sent for events after the upgrade: accepting them would let a
    // tenant find the id of its newest event by bisection.
    const afterUpgrade = (await eventIds(acme))[8]!;
    expect(afterUpgrade).toBeGreaterThan(upgradedAt);
    for (const id of [afterUpgrade, upgradedAt + 1, 2 ** 53]) {
      const problem = await refusal(live.server.baseUrl, acme, String(id));
      expect(problem.loc).toEqual(['header', 'Last-Event-ID']);
      expect(problem.msg).toContain('is not an id this stream sent');
    }
    // An organization with no events yet, sent an id from before the upgrade: on PostgreSQL it
    // is past the organization's last event; SQLite's one writer makes the table's last id the
    // bound of every organization (repositories/events.ts, highestEventId).
    const quiet = await createTenant(live.api.db, 'Quiet');
    const resumed = await openEventStream(live.server.baseUrl, {
      key: quiet.key,
      lastEventId: String(upgradedAt),
    });
    if (onPostgres) {
      expect(resumed.status).toBe(422);
      const problem = (resumed.body as Schemas['HTTPValidationError']).detail[0]!;
      expect(problem.loc).toEqual(['header', 'Last-Event-ID']);
      expect(problem.msg).toContain('past the last event of this organization');
    } else {
      expect(resumed.status).toBe(200);
      resumed.close();
    }
  });
});

describe('the resume token secret', () => {
  it('is stored once however many processes insert it at the same time', async () => {
    await afterConcurrentInserts(
      resumeTokenSecret,
      (db) => ensureResumeTokenSecret(db, newServerSecret()),
      async (handles) => {
        const rows = await queryTestDb<{ id: number; secret: string }>(
          handles[0]!,
          sql`SELECT id, secret FROM ${resumeTokenSecret}`,
        );
        expect(rows.map((row) => Number(row.id))).toEqual([1]);
        expect(rows[0]!.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
        // Every handle makes the same tokens.
        const tokens = await Promise.all(
          handles.map(async (db) => {
            const made = resumeTokensOf(db);
            await made.ready();
            return made.make(7, [1, 2, 2 ** 40]).join();
          }),
        );
        expect(new Set(tokens).size).toBe(1);
      },
    );
  });

  it('outlives two cursor secret rotations: tokens sent before still resume exactly', async () => {
    const workspace = await createWorkspace();
    const before = createDb(workspace.databaseUrl);
    await migrateDb(before);
    const first = await serve(before);
    let second: Awaited<ReturnType<typeof serve>> | undefined;
    try {
      const tenant = await createTenant(before, 'Rotated');
      await insertTestEvents(
        before,
        Array.from({ length: 5 }, () => event(tenant.organizationId)),
      );
      const sent = await replay(first.server.baseUrl, tenant, 5);
      for (let rotation = 0; rotation < 2; rotation += 1) {
        const rotated = await workspace.run(['cursor-secret', 'rotate']);
        expect(rotated.code, rotated.stderr).toBe(0);
      }
      // A server process that starts after the rotations, on the same database.
      const after = createDb(workspace.databaseUrl);
      await migrateDb(after);
      second = await serve(after);
      const resumed = await openEventStream(second.server.baseUrl, {
        key: tenant.key,
        lastEventId: sent[1]!.id,
      });
      expect(resumed.status).toBe(200);
      const rest = await resumed.waitFor(3);
      expect(types(rest)).toEqual(types(sent.slice(2)));
      expect(rest.map((streamed) => streamed.id)).toEqual(sent.slice(2).map((s) => s.id));
      resumed.close();
    } finally {
      await second?.close();
      await first.close();
      workspace.remove();
    }
  });
});
