// agentline demo: a ready-to-try organization in one command.

import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { authenticateApiKey } from '../src/use-cases/authentication.js';
import { PERMISSIONS } from '../src/vocabulary/permissions.js';
import { createWorkspace, type CliResult, type TempWorkspace } from './fixtures/cli-harness.js';
import { onSqlite, queryTestDb } from './support/test-database.js';

let workspace: TempWorkspace;
let first: CliResult;
let db: Db;

beforeAll(async () => {
  workspace = await createWorkspace();
  first = await workspace.run(['demo', '--events', '2500'], { env: { PORT: '9123' } });
  db = createDb(workspace.databaseUrl);
});

afterAll(async () => {
  await db.close();
  workspace.remove();
});

async function count(query: string | SQL): Promise<number> {
  const [row] = await queryTestDb<{ n: number }>(
    db,
    typeof query === 'string' ? sql.raw(query) : query,
  );
  return Number(row!.n);
}

// The one JSON lookup of these checks, in each backend's syntax.
const TOOL_URL = onSqlite
  ? sql.raw(`json_extract(definition, '$.endpoint.url')`)
  : sql.raw(`definition->'endpoint'->>'url'`);

describe('demo', () => {
  it('prints the admin key and three curl lines, and nothing else, on stdout', async () => {
    expect(first.code).toBe(0);
    const [key, ...curls] = first.stdout.trimEnd().split('\n');
    expect(key).toMatch(/^agl_[a-z0-9]{12}_[A-Za-z0-9]{32}$/);
    expect(curls).toEqual(
      ['events', 'prompts', 'experiments'].map(
        (list) =>
          `curl -s -H 'Service-API-Key: ${key}' 'http://127.0.0.1:9123/api/v1/${list}/?limit=5'`,
      ),
    );
    const principal = await authenticateApiKey(db, key!);
    expect(principal).toMatchObject({ organizationId: 1, permissions: [...PERMISSIONS] });
    expect(first.stderr).toContain('created organization "Demo Org" (id 1)');
    expect(first.stderr).toContain('imported 2,500 events');
  });

  it('creates the records the API reads, flaws included', async () => {
    expect(await count('SELECT count(*) AS n FROM services')).toBe(3);
    expect(await count('SELECT count(*) AS n FROM tools')).toBe(5);
    expect(
      await count(sql`SELECT count(*) AS n FROM tools WHERE ${TOOL_URL} NOT LIKE 'http%'`),
    ).toBe(1);
    expect(
      await count(
        'SELECT count(*) AS n FROM prompts WHERE session_end_enabled = TRUE AND session_end_tool_id IS NULL',
      ),
    ).toBe(1);
    expect(
      await count('SELECT count(*) AS n FROM agents WHERE pinned_prompt_version IS NOT NULL'),
    ).toBe(3);
    expect(
      await count('SELECT count(*) AS n FROM agents WHERE pinned_prompt_version IS NULL'),
    ).toBe(2);
    expect(
      await count(
        "SELECT count(*) AS n FROM channels WHERE kind = 'telephony' AND provider = 'records'",
      ),
    ).toBe(1);
    expect(
      await count('SELECT count(*) AS n FROM channel_targets WHERE is_agent_test = TRUE'),
    ).toBe(1);
    expect(await count('SELECT count(*) AS n FROM telephony_numbers')).toBe(4);
  });

  it('gives some numbers an approved A2P path and others not', async () => {
    const approved = await queryTestDb<{ phone_number: string }>(
      db,
      sql`SELECT n.phone_number FROM messaging_service_numbers n
          JOIN a2p_campaigns c ON c.messaging_service_id = n.messaging_service_id
          JOIN a2p_brands b ON b.id = c.brand_id
          WHERE c.campaign_status = 'VERIFIED' AND b.status = 'APPROVED' ORDER BY n.phone_number`,
    );
    expect(approved.map((row) => row.phone_number)).toEqual(['+14155550100', '+14155550101']);
  });

  it('adds a draft experiment with two variants', async () => {
    const variants = await queryTestDb<{ status: string; weight: number; is_control: unknown }>(
      db,
      sql`SELECT e.status, v.weight, v.is_control FROM experiments e
          JOIN experiment_variants v ON v.experiment_id = e.id ORDER BY v.position`,
    );
    expect(variants.map((row) => ({ ...row, is_control: Boolean(row.is_control) }))).toEqual([
      { status: 'draft', weight: 50, is_control: true },
      { status: 'draft', weight: 50, is_control: false },
    ]);
  });

  it('spreads the events over the last 30 days, in sessions', async () => {
    expect(await count('SELECT count(*) AS n FROM events')).toBe(2500);
    const [range] = await queryTestDb<{ first: string; last: string }>(
      db,
      sql`SELECT min(timestamp) AS first, max(timestamp) AS last FROM events`,
    );
    if (!range) throw new Error('no events');
    const day = 24 * 60 * 60 * 1000;
    expect(Date.now() - Date.parse(range.first)).toBeLessThanOrEqual(30 * day);
    expect(Date.now() - Date.parse(range.first)).toBeGreaterThan(20 * day);
    expect(Date.parse(range.last)).toBeLessThanOrEqual(Date.now());
    expect(await count('SELECT count(DISTINCT session_id) AS n FROM events')).toBeGreaterThan(150);
    expect(
      await count(`SELECT count(*) AS n FROM events WHERE source = 'prompt'
             AND source_id NOT IN (SELECT CAST(id AS TEXT) FROM prompts)`),
    ).toBe(0);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'session-started'")).toBe(
      await count('SELECT count(DISTINCT session_id) AS n FROM events'),
    );
  });

  it('makes a fresh organization each time it runs', async () => {
    const second = await workspace.run(['demo', '--events', '10']);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('created organization "Demo Org 2" (id 2)');
    expect(await count('SELECT count(*) AS n FROM events WHERE organization_id = 2')).toBe(10);
  });

  it('rejects a bad event count as a usage error', async () => {
    const result = await workspace.run(['demo', '--events', 'lots']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^agentline: --events must be a whole number/);
  });
});
