// A routed session on PostgreSQL costs the server and the database a round trip per statement,
// more than most of those statements cost to run: the routing transaction stores an
// Idempotency-Key answer in the sessions' own insert (db/repositories/sessions.ts), so a session
// sends four (BEGIN with its turns taken, its read, its insert, COMMIT), keyed or not. A session
// whose organization's write turn another writer holds waits for it before its read, and so is
// not read and written twice.

import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IdempotencyKeyTakenError,
  type IdempotentWrite,
} from '../src/db/repositories/idempotency.js';
import { routeSession } from '../src/use-cases/routing/session-routing.js';
import { sessions } from '../src/db/schema/sqlite.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingTestbed,
} from './support/routing-fixture.js';
import { recordStatements } from './support/sent-statements.js';
import { onPostgres, queryTestDb } from './support/test-database.js';

let bed: RoutingTestbed;
/** Statements the database was sent, one round trip each, since the test began recording. */
let sent: string[] = [];

beforeAll(async () => {
  bed = await createRoutingTestbed();
  if (bed.api.db.kind === 'postgres') sent = recordStatements(bed.api.db.pool);
});

afterAll(() => bed.api.close());

const TIMES = { retentionMs: 86_400_000, leaseMs: 60_000 };

function answerFor(key: string) {
  const write: IdempotentWrite = {
    apiKeyId: 'round-trips',
    key,
    requestHash: 'the same request',
    times: TIMES,
    stored: false,
  };
  return { write, render: (session: { sessionId: string }) => JSON.stringify(session) };
}

/** Statements sent to route one session to `targetId`, with an answer for `key` if given. */
async function statementsOfOneSession(targetId: number, key?: string) {
  const before = sent.length;
  const routed = routeSession(
    bed.api.db,
    bed.acme.organizationId,
    targetId,
    { userId: randomUUID(), conversationId: null },
    Math.random,
    key === undefined ? undefined : answerFor(key),
  ).then(
    (session) => ({ session, error: undefined }),
    (error: unknown) => ({ session: undefined, error }),
  );
  return { ...(await routed), sent: sent.length - before };
}

async function storedSessions(): Promise<number> {
  const [row] = await queryTestDb<{ n: number }>(
    bed.api.db,
    sql`SELECT count(*) AS n FROM ${sessions}`,
  );
  return Number(row!.n);
}

describe.skipIf(!onPostgres)('a routed session on PostgreSQL', () => {
  it('sends BEGIN, its read, its answer with its insert, then COMMIT', async () => {
    const { api, acme, fx } = bed;
    const created = await api.request<{ id: number }>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
    });
    await api.request('POST', `/api/v1/experiments/${created.body.id}/start`, { key: acme.key });
    for (const targetId of [fx.targets.main, fx.targets.second]) {
      expect((await statementsOfOneSession(targetId)).sent).toBe(4);
      expect((await statementsOfOneSession(targetId, randomUUID())).sent).toBe(4);
    }
  });

  it('routes no session whose key an earlier one took, in as many statements', async () => {
    const key = randomUUID();
    const first = await statementsOfOneSession(bed.fx.targets.second, key);
    expect(first.session).toBeDefined();
    const before = await storedSessions();
    const retry = await statementsOfOneSession(bed.fx.targets.second, key);
    expect(retry.error).toBeInstanceOf(IdempotencyKeyTakenError);
    expect(retry.sent).toBe(4);
    expect(await storedSessions()).toBe(before);
  });

  it('waits for a writer holding its organization’s turn before its read, not after', async () => {
    const { pool } = bed.api.db as Extract<typeof bed.api.db, { kind: 'postgres' }>;
    // Another writer of the organization's events, as an import's batch is, on a connection of
    // its own: its event's trigger takes the turn, and its counts are written when it commits.
    const holder = new pg.Client(pool.options);
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('INSERT INTO events (organization_id, timestamp) VALUES ($1, $2)', [
        bed.acme.organizationId,
        new Date().toISOString(),
      ]);
      const before = sent.length;
      const routing = statementsOfOneSession(bed.fx.targets.second);
      const waiting = () =>
        sent.slice(before).some((text) => text.includes('pg_advisory_xact_lock('));
      await expect.poll(waiting).toBe(true);
      await holder.query('COMMIT');
      const routed = await routing;
      expect(routed.session).toBeDefined();
      // Tried the turn, rolled back, waited, and then the four statements of any session.
      expect(routed.sent).toBe(7);
      const reads = sent.slice(before).filter((text) => text.includes('channel_targets'));
      expect(reads).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });
});
