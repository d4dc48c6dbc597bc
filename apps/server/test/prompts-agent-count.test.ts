// A prompt's agent_count is kept by the database whoever writes its agents: a load that adds,
// moves or unassigns agents changes the counts the list shows, searches and orders by, and so
// do rows changed by hand (an operator's fix); an agent of another organization never counts.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME_RECORDS, loadRecords } from './fixtures/prompts-records.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './support/harness.js';
import type { PromptItem } from './support/prompts-list-fixture.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  await loadRecords(api.db, acme.organizationId, ACME_RECORDS);
});

afterAll(() => api.close());

/** Acme's agent counts by prompt name, as the list shows them. */
async function shownCounts(): Promise<Record<string, number>> {
  const res = await api.request<{ items: PromptItem[] }>(
    'GET',
    '/api/v1/prompts/?limit=1000&fields=name&fields=agent_count',
    { key: acme.key },
  );
  expect(res.status).toBe(200);
  return Object.fromEntries(res.body.items.map((item) => [item.name, item.agent_count]));
}

/** What the agents table says, counted afresh: what every shown count must equal. */
async function countedAfresh(): Promise<Record<string, number>> {
  const rows = await queryTestDb<{ name: string; n: number | string }>(
    api.db,
    sql`SELECT p.name AS "name", (SELECT count(*) FROM agents a
          WHERE a.prompt_id = p.id AND a.organization_id = p.organization_id) AS "n"
        FROM prompts p WHERE p.organization_id = ${acme.organizationId}`,
  );
  return Object.fromEntries(rows.map((row) => [row.name, Number(row.n)]));
}

describe("a prompt's agent count", () => {
  it('follows a load that moves, adds and unassigns agents', async () => {
    expect(await shownCounts()).toMatchObject({
      'Order status': 2,
      'Order status (concise)': 1,
      Complaints: 3,
    });
    await loadRecords(api.db, acme.organizationId, {
      agents: [
        { name: 'Order agent B', prompt: 'Complaints' },
        { name: 'New agent', prompt: 'Order status (concise)' },
        { name: 'Idle agent', prompt: 'Complaints' },
      ],
    });
    expect(await shownCounts()).toMatchObject({
      'Order status': 1,
      'Order status (concise)': 2,
      Complaints: 5,
    });
    expect(await shownCounts()).toEqual(await countedAfresh());
  });

  it('follows agents changed by hand, and counts none of another organization', async () => {
    const [complaints] = await queryTestDb<{ id: number }>(
      api.db,
      sql`SELECT id FROM prompts WHERE organization_id = ${acme.organizationId}
          AND name = 'Complaints'`,
    );
    await queryTestDb(api.db, sql`DELETE FROM agents WHERE name = 'Complaints 1'`);
    await queryTestDb(api.db, sql`UPDATE agents SET prompt_id = NULL WHERE name = 'Complaints 2'`);
    // Another organization's agent naming Acme's prompt (the API never writes one): not Acme's.
    await queryTestDb(
      api.db,
      sql`INSERT INTO agents (organization_id, name, prompt_id)
          VALUES (${globex.organizationId}, 'Stray', ${complaints!.id})`,
    );
    await queryTestDb(
      api.db,
      sql`UPDATE agents SET organization_id = ${globex.organizationId} WHERE name = 'Complaints 3'`,
    );
    // Read from the rows: the list keeps its answers until the API or a load changes records.
    const kept = await queryTestDb<{ name: string; n: number }>(
      api.db,
      sql`SELECT name AS "name", agent_count AS "n" FROM prompts
          WHERE organization_id = ${acme.organizationId}`,
    );
    const keptCounts = Object.fromEntries(kept.map((row) => [row.name, row.n]));
    expect(keptCounts).toMatchObject({ Complaints: 2 });
    expect(keptCounts).toEqual(await countedAfresh());
  });
});
