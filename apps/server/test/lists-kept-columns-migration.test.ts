// The migrations that keep list columns on their rows fill them in for the rows stored before
// them: each experiment's control agent (its order by agent_id; nothing for an experiment without
// a control, which the records loader allows) and each prompt's agent count and tool names.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { ACME_RECORDS, loadRecords } from './fixtures/prompts-records.js';
import { createTenant } from './support/harness.js';
import { migrateThrough } from './support/partial-migration.js';
import { loadRoutingFixture, type RoutingFixture } from './support/routing-fixture.js';
import { freshDatabaseUrl, queryTestDb } from './support/test-database.js';

/** The last migration of each database before these columns were kept. */
const BEFORE = { sqlite: '0023_lists_order_indexes', postgres: '0020_lists_order_indexes' };

let db: Db;
let fx: RoutingFixture;
let organizationId: number;

beforeAll(async () => {
  db = createDb(await freshDatabaseUrl({ unmigrated: true }));
  await migrateThrough(db, BEFORE[db.kind]);
  ({ organizationId } = await createTenant(db, 'Acme'));
  fx = await loadRoutingFixture(db, organizationId);
  // Prompts with tools, of an organization of their own.
  await loadRecords(db, (await createTenant(db, 'Globex')).organizationId, ACME_RECORDS);
});

afterAll(async () => {
  await db?.close();
});

/** An experiment as stored before the migration, with a variant per agent; returns its id. */
async function storeExperiment(
  name: string,
  variants: ReadonlyArray<{ agentId: number; isControl: boolean }>,
): Promise<number> {
  const now = '2026-11-01T00:00:00.000Z';
  const [row] = await queryTestDb<{ id: number }>(
    db,
    sql`INSERT INTO experiments (organization_id, name, target_id, created_at, updated_at)
        VALUES (${organizationId}, ${name}, ${fx.targets.main}, ${now}, ${now}) RETURNING id`,
  );
  const truth = (value: boolean) =>
    sql.raw(db.kind === 'sqlite' ? String(Number(value)) : String(value));
  for (const [position, { agentId, isControl }] of variants.entries()) {
    await queryTestDb(
      db,
      sql`INSERT INTO experiment_variants (experiment_id, position, name, weight, is_control, agent_id)
          VALUES (${row!.id}, ${position}, ${`variant ${position}`}, 50, ${truth(isControl)}, ${agentId})`,
    );
  }
  return row!.id;
}

describe('the migrations keeping list columns', () => {
  it("fills in each stored experiment's control agent, and none without a control", async () => {
    const { pinned, alsoPinned } = fx.agents;
    const secondIsControl = await storeExperiment('second is control', [
      { agentId: pinned, isControl: false },
      { agentId: alsoPinned, isControl: true },
    ]);
    const noControl = await storeExperiment('no control', [
      { agentId: pinned, isControl: false },
      { agentId: alsoPinned, isControl: false },
    ]);
    await migrateDb(db);
    const rows = await queryTestDb<{ id: number; controlAgentId: number | null }>(
      db,
      sql`SELECT id, control_agent_id AS "controlAgentId" FROM experiments ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: secondIsControl, controlAgentId: alsoPinned },
      { id: noControl, controlAgentId: null },
    ]);
  });

  it("fills in each prompt's agent count", async () => {
    await migrateDb(db);
    const rows = await queryTestDb<{ kept: number; counted: number | string }>(
      db,
      sql`SELECT p.agent_count AS "kept", (SELECT count(*) FROM agents a
            WHERE a.prompt_id = p.id AND a.organization_id = p.organization_id) AS "counted"
          FROM prompts p ORDER BY p.id`,
    );
    expect(rows.some((row) => row.kept > 0)).toBe(true);
    expect(rows.map((row) => row.kept)).toEqual(rows.map((row) => Number(row.counted)));
  });

  it("fills in each prompt's tool names", async () => {
    await migrateDb(db);
    const rows = await queryTestDb<{ kept: string; joined: string | null }>(
      db,
      sql`SELECT p.tool_names AS "kept", (SELECT ${db.spelling.joined(sql`t.name`, ',', sql`t.id`)}
            FROM prompt_tools pt JOIN tools t ON t.id = pt.tool_id
            WHERE pt.prompt_id = p.id AND t.organization_id = p.organization_id) AS "joined"
          FROM prompts p ORDER BY p.id`,
    );
    expect(rows.some((row) => row.kept !== '')).toBe(true);
    expect(rows.map((row) => row.kept)).toEqual(rows.map((row) => row.joined ?? ''));
  });
});
