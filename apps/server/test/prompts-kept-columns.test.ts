// What the prompts list reads from a prompt's row is kept by the database whoever writes the
// rows it comes from: agent_count (its agents) and tools (its tools' names). A load that adds,
// moves or unassigns agents, or links other tools, changes what the list shows, searches and
// orders by, and so do rows changed by hand (an operator's fix: a renamed or deleted tool, a
// removed link); another organization's agents and tools never count.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ACME_RECORDS, loadRecords } from './fixtures/prompts-records.js';
import { createTenant, type Tenant, type TestApi } from './support/harness.js';
import { usePromptsList, type PromptItem } from './support/prompts-list-fixture.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

usePromptsList((opened) => ({ api, acme, globex } = opened));

/** Acme's `field` by prompt name, as the list shows it, ordered by it. */
async function shownByName<F extends 'agent_count' | 'tools'>(
  field: F,
): Promise<Record<string, PromptItem[F]>> {
  const res = await api.request<{ items: PromptItem[] }>(
    'GET',
    `/api/v1/prompts/?limit=1000&fields=name&fields=${field}&order_by=${field}`,
    { key: acme.key },
  );
  expect(res.status).toBe(200);
  return Object.fromEntries(res.body.items.map((item) => [item.name, item[field]]));
}

/**
 * Acme's kept `column` by prompt name, read from the rows: the list keeps its answers until the
 * API or a load changes records, and a change by hand is neither.
 */
async function keptByName(column: 'agent_count' | 'tool_names') {
  const rows = await queryTestDb<{ name: string; kept: number | string }>(
    api.db,
    sql`SELECT name AS "name", ${sql.identifier(column)} AS "kept" FROM prompts
        WHERE organization_id = ${acme.organizationId}`,
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.kept]));
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
    expect(await shownByName('agent_count')).toMatchObject({
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
    expect(await shownByName('agent_count')).toMatchObject({
      'Order status': 1,
      'Order status (concise)': 2,
      Complaints: 5,
    });
    expect(await shownByName('agent_count')).toEqual(await countedAfresh());
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
    const keptCounts = await keptByName('agent_count');
    expect(keptCounts).toMatchObject({ Complaints: 2 });
    expect(keptCounts).toEqual(await countedAfresh());
  });
});

/** The joined names computed afresh from the links: what every kept one must equal. */
async function joinedAfresh(): Promise<Record<string, string>> {
  const tools = await queryTestDb<{ name: string; promptId: number; organizationId: number }>(
    api.db,
    sql`SELECT t.name AS "name", pt.prompt_id AS "promptId", t.organization_id AS "organizationId"
        FROM prompt_tools pt JOIN tools t ON t.id = pt.tool_id ORDER BY t.id`,
  );
  const prompts = await queryTestDb<{ id: number; name: string; organizationId: number }>(
    api.db,
    sql`SELECT id, name AS "name", organization_id AS "organizationId" FROM prompts
        WHERE organization_id = ${acme.organizationId}`,
  );
  return Object.fromEntries(
    prompts.map((prompt) => [
      prompt.name,
      tools
        .filter((t) => t.promptId === prompt.id && t.organizationId === prompt.organizationId)
        .map((t) => t.name)
        .join(','),
    ]),
  );
}

describe("a prompt's tool names", () => {
  it('follow a load that links other tools', async () => {
    expect(await shownByName('tools')).toMatchObject({
      Transfers: 'transfer_to_human,send_survey',
    });
    const transfers = ACME_RECORDS.prompts!.find((prompt) => prompt.name === 'Transfers')!;
    await loadRecords(api.db, acme.organizationId, {
      prompts: [{ ...transfers, tools: ['send_survey', 'lookup_order'] }],
    });
    const shown = await shownByName('tools');
    expect(shown).toMatchObject({ Transfers: 'lookup_order,send_survey' });
    expect(shown).toEqual(await joinedAfresh());
  });

  it("follow tools renamed, deleted and unlinked by hand, and never another organization's", async () => {
    await queryTestDb(
      api.db,
      sql`UPDATE tools SET name = 'find_order' WHERE organization_id = ${acme.organizationId}
          AND name = 'lookup_order'`,
    );
    await queryTestDb(
      api.db,
      sql`DELETE FROM tools WHERE organization_id = ${acme.organizationId} AND name = 'hang_up'`,
    );
    const [transfers] = await queryTestDb<{ id: number }>(
      api.db,
      sql`SELECT id FROM prompts WHERE organization_id = ${acme.organizationId}
          AND name = 'Transfers'`,
    );
    await queryTestDb(
      api.db,
      sql`DELETE FROM prompt_tools WHERE prompt_id = ${transfers!.id}
          AND tool_id IN (SELECT id FROM tools WHERE name = 'send_survey')`,
    );
    // A link to Globex's tool (the loader never writes one): not among Acme's names.
    await queryTestDb(
      api.db,
      sql`INSERT INTO prompt_tools (prompt_id, tool_id)
          SELECT ${transfers!.id}, id FROM tools WHERE name = 'globex_lookup'`,
    );
    // Every link of one prompt moved to another, in one statement.
    await queryTestDb(
      api.db,
      sql`UPDATE prompt_tools SET prompt_id = (SELECT id FROM prompts WHERE name = 'Blank'
            AND organization_id = ${acme.organizationId})
          WHERE prompt_id = (SELECT id FROM prompts WHERE name = 'Order status (concise)'
            AND organization_id = ${acme.organizationId})`,
    );
    const kept = await keptByName('tool_names');
    expect(kept).toMatchObject({ Transfers: 'find_order', 'Order status (concise)': '' });
    expect(kept['Blank']).not.toBe('');
    expect(Object.values(kept).join(',')).not.toMatch(/hang_up|lookup_order|globex/);
    expect(kept).toEqual(await joinedAfresh());
  });
});

const byTools = (direction: 'asc' | 'desc') =>
  `/api/v1/prompts/?order_by=tools&order_by_direction=${direction}&fields=name&fields=tools`;

/** The organization's prompts' tools, ordered by them in `direction`: one whole page. */
async function wholeByTools(key: string, direction: 'asc' | 'desc'): Promise<string[]> {
  const whole = await api.request<{ items: PromptItem[] }>(
    'GET',
    `${byTools(direction)}&limit=1000`,
    { key },
  );
  expect(whole.status).toBe(200);
  return whole.body.items.map((item) => item.tools);
}

/** The same, walked one item a page, each page after the last one's cursor. */
async function walkedByTools(key: string, direction: 'asc' | 'desc'): Promise<string[]> {
  const walked: string[] = [];
  let cursor: string | null = null;
  do {
    const after: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await api.request<{ items: PromptItem[]; next_cursor: string | null }>(
      'GET',
      `${byTools(direction)}&limit=1${after}`,
      { key },
    );
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    walked.push(...page.body.items.map((item) => item.tools));
    cursor = page.body.next_cursor;
  } while (cursor);
  return walked;
}

/** `names`, each once, sorted as text by code point, both databases' order. */
const byCodePoint = (names: string[], direction: 'asc' | 'desc') => {
  const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return direction === 'asc' ? sorted : sorted.reverse();
};

const promptLinking = (name: string, tools: string[]) => ({
  name,
  llm_config: { model: 'gpt-4o', provider: 'openai' as const },
  tools,
});

describe('the orders by a long text', () => {
  it('loads and orders names longer than an index entry holds', async () => {
    const tenant = await createTenant(api.db, 'Initech');
    // 20 names of 200 characters: joined, 4 kB, past PostgreSQL's B-tree entry.
    const names = Array.from({ length: 20 }, (_, i) => String(i).padStart(2, '0').repeat(100));
    await loadRecords(api.db, tenant.organizationId, {
      tools: names.map((name) => ({ name, definition: { type: 'endpoint' } })),
      prompts: [
        promptLinking('All twenty', names),
        promptLinking('The last', [names[19]!]),
        promptLinking('None', []),
      ],
    });
    for (const direction of ['asc', 'desc'] as const) {
      expect(await wholeByTools(tenant.key, direction)).toEqual(
        byCodePoint([names.join(','), names[19]!, ''], direction),
      );
    }
  });

  it('loads and orders descriptions and contexts longer than an index entry holds', async () => {
    const tenant = await createTenant(api.db, 'Hooli');
    // 8,000 letters that do not compress, past PostgreSQL's B-tree entry even compressed; the
    // first two tie on their first 200 and more.
    const noise = (length: number, seed: number) => {
      let state = seed;
      return Array.from({ length }, () => {
        state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
        return String.fromCharCode(97 + (state % 26));
      }).join('');
    };
    const shared = noise(7_999, 1);
    const texts = [`${shared}a`, `${shared}b`, `z${noise(7_999, 2)}`];
    await loadRecords(api.db, tenant.organizationId, {
      prompts: texts.map((text, i) => ({
        ...promptLinking(`long ${i}`, []),
        description: text,
        context: text,
      })),
    });
    for (const property of ['description', 'context'] as const) {
      const res = await api.request<{ items: PromptItem[] }>(
        'GET',
        `/api/v1/prompts/?order_by=${property}&order_by_direction=desc&fields=name`,
        { key: tenant.key },
      );
      expect(res.body.items.map((item) => item.name)).toEqual(['long 2', 'long 1', 'long 0']);
    }
  });

  it('walks with cursors in the order of the whole page, ties on the indexed prefix included', async () => {
    const tenant = await createTenant(api.db, 'Umbrella');
    // Joined, the first three share their first 200 characters.
    const [a, b, c] = ['a', 'b', 'c'].map((letter) => letter.repeat(120)) as [
      string,
      string,
      string,
    ];
    await loadRecords(api.db, tenant.organizationId, {
      tools: [a, b, c].map((name) => ({ name, definition: { type: 'endpoint' } })),
      prompts: [
        promptLinking('a and c', [a, c]),
        promptLinking('a and b', [a, b]),
        promptLinking('a, b and c', [a, b, c]),
        promptLinking('b', [b]),
        promptLinking('a', [a]),
      ],
    });
    const joined = [`${a},${c}`, `${a},${b}`, `${a},${b},${c}`, b, a];
    for (const direction of ['asc', 'desc'] as const) {
      const whole = await wholeByTools(tenant.key, direction);
      expect(whole).toEqual(byCodePoint(joined, direction));
      expect(await walkedByTools(tenant.key, direction)).toEqual(whole);
    }
  });
});
