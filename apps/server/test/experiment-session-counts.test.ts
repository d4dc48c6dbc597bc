// The experiments' quarter-hour session counts (schema: experimentSessionCounts), which the
// results and their timeline add up instead of counting sessions: triggers on sessions keep them
// equal to the sessions, however these are written, changed or deleted, and the migration that
// made the table counted the sessions stored before it.

import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { experimentSessionCounts, sessions } from '../src/db/schema/sqlite.js';
import type { Schemas } from './support/harness.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingTestbed,
} from './support/routing-fixture.js';
import { insertTestSessions, queryTestDb, TEST_BACKEND } from './support/test-database.js';

let bed: RoutingTestbed;

beforeAll(async () => {
  bed = await createRoutingTestbed();
});

afterAll(() => bed.api.close());

/** The counts table as `experiment slot variant -> sessions`, added up over writers. */
async function storedCounts(): Promise<Map<string, number>> {
  const rows = await queryTestDb<{ e: number; slot: string; v: number; n: number }>(
    bed.api.db,
    sql`SELECT ${experimentSessionCounts.experimentId} AS e, ${experimentSessionCounts.slotStart} AS slot,
        ${experimentSessionCounts.variantId} AS v, sum(${experimentSessionCounts.sessionCount}) AS n
      FROM ${experimentSessionCounts}
      GROUP BY ${experimentSessionCounts.experimentId}, ${experimentSessionCounts.slotStart},
        ${experimentSessionCounts.variantId}`,
  );
  return new Map(rows.filter((r) => r.n !== 0).map((r) => [`${r.e} ${r.slot} ${r.v}`, r.n]));
}

/** The same, counted here from the sessions themselves. */
async function countedFromSessions(): Promise<Map<string, number>> {
  const rows = await queryTestDb<{ e: number | null; v: number | null; at: string }>(
    bed.api.db,
    sql`SELECT ${sessions.experimentId} AS e, ${sessions.variantId} AS v, ${sessions.createdAt} AS at
      FROM ${sessions}`,
  );
  const counts = new Map<string, number>();
  for (const { e, v, at } of rows) {
    if (e === null || v === null) continue;
    const instant = Date.parse(at);
    const slot = new Date(instant - (instant % (15 * 60_000))).toISOString();
    const key = `${e} ${slot} ${v}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

const session = (
  id: string,
  experimentId: number | null,
  variantId: number | null,
  at: string,
) => ({
  id,
  organizationId: bed.acme.organizationId,
  targetId: bed.fx.targets.main,
  agentId: bed.fx.agents.pinned,
  experimentId,
  variantId,
  userId: null,
  createdAt: at,
});

describe('the quarter-hour session counts', () => {
  it('count routed sessions, and sessions written, changed or deleted any other way', async () => {
    const { api, acme, fx } = bed;
    const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
    });
    const experiment = created.body;
    expect(
      (await api.request('POST', `/api/v1/experiments/${experiment.id}/start`, { key: acme.key }))
        .status,
    ).toBe(200);
    for (let i = 0; i < 30; i += 1) {
      const routed = await api.request(
        'POST',
        `/api/v1/channels/targets/${fx.targets.main}/sessions`,
        {
          key: acme.key,
          body: { user_id: `counted-${i}` },
        },
      );
      expect(routed.status).toBe(200);
    }
    expect(await storedCounts()).toEqual(await countedFromSessions());

    // Each quarter hour's edges, a session outside any experiment, one of a variant-less row.
    const [first, second] = experiment.variants.map((v) => v.id) as [number, number];
    await insertTestSessions(api.db, [
      session('edge-1', experiment.id, first, '2026-05-01T10:14:59.999Z'),
      session('edge-2', experiment.id, first, '2026-05-01T10:15:00.000Z'),
      session('edge-3', experiment.id, second, '2026-05-01T23:59:59.999Z'),
      session('edge-4', experiment.id, second, '2026-05-02T00:00:00.000Z'),
      session('edge-5', experiment.id, first, '2026-05-01T10:44:00.000Z'),
      session('plain', null, null, '2026-05-01T10:00:00.000Z'),
    ]);
    const counts = await storedCounts();
    expect(counts.get(`${experiment.id} 2026-05-01T10:00:00.000Z ${first}`)).toBe(1);
    expect(counts.get(`${experiment.id} 2026-05-01T10:15:00.000Z ${first}`)).toBe(1);
    expect(counts.get(`${experiment.id} 2026-05-01T10:30:00.000Z ${first}`)).toBe(1);
    expect(counts.get(`${experiment.id} 2026-05-01T23:45:00.000Z ${second}`)).toBe(1);
    expect(counts.get(`${experiment.id} 2026-05-02T00:00:00.000Z ${second}`)).toBe(1);
    expect(counts).toEqual(await countedFromSessions());

    // Moved to another quarter hour and variant, taken out of the experiment, deleted.
    const update = (id: string, set: ReturnType<typeof sql>) =>
      queryTestDb(api.db, sql`UPDATE ${sessions} SET ${set} WHERE ${sessions.id} = ${id}`);
    await update(
      'edge-1',
      sql`${sql.identifier('created_at')} = '2026-05-01T11:01:00.000Z', ${sql.identifier('variant_id')} = ${second}`,
    );
    await update('edge-2', sql`${sql.identifier('experiment_id')} = NULL`);
    await update(
      'plain',
      sql`${sql.identifier('experiment_id')} = ${experiment.id}, ${sql.identifier('variant_id')} = ${first}`,
    );
    await queryTestDb(api.db, sql`DELETE FROM ${sessions} WHERE ${sessions.id} = 'edge-3'`);
    expect(await storedCounts()).toEqual(await countedFromSessions());

    // And the results, read from the counts, agree with the sessions.
    const results = await api.request<Schemas['ExperimentResults']>(
      'GET',
      `/api/v1/experiments/${experiment.id}/results`,
      { key: acme.key },
    );
    const bySessions = await queryTestDb<{ v: number; n: number }>(
      api.db,
      sql`SELECT ${sessions.variantId} AS v, count(*) AS n FROM ${sessions}
        WHERE ${sessions.experimentId} = ${experiment.id} GROUP BY ${sessions.variantId}`,
    );
    expect(new Map(results.body.variants.map((v) => [v.variant_id, v.session_count]))).toEqual(
      new Map(bySessions.map((r) => [r.v, r.n])),
    );
    expect(results.body.total_sessions).toBe(bySessions.reduce((sum, r) => sum + r.n, 0));
  });

  it("are filled by the migration's last statement from the sessions stored before it", async () => {
    const migration = readFileSync(
      new URL(
        TEST_BACKEND === 'sqlite'
          ? '../drizzle/sqlite/0012_experiment_session_counts.sql'
          : '../drizzle/postgres/0008_experiment_session_counts.sql',
        import.meta.url,
      ),
      'utf8',
    );
    const backfill = migration.split('--> statement-breakpoint').at(-1)!;
    expect(backfill).toContain('FROM');
    const before = await countedFromSessions();
    expect(before.size).toBeGreaterThan(0);
    await queryTestDb(bed.api.db, sql`DELETE FROM ${experimentSessionCounts}`);
    expect(await storedCounts()).toEqual(new Map());
    await queryTestDb(bed.api.db, sql.raw(backfill));
    expect(await storedCounts()).toEqual(before);
  });

  // Written in SQL, the function a routed session's trigger calls is parsed and planned at every
  // call, which took a third of the session's insert on PostgreSQL; PL/pgSQL plans it once per
  // connection (migration 0018).
  it.runIf(TEST_BACKEND === 'postgres')(
    'are counted by a function planned once per connection',
    async () => {
      const [fn] = await queryTestDb<{ language: string }>(
        bed.api.db,
        sql`SELECT l.lanname AS language FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE p.proname = 'experiment_session_count_add'`,
      );
      expect(fn?.language).toBe('plpgsql');
    },
  );
});
