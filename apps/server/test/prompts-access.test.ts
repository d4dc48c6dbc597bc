// GET /api/v1/prompts/: who may list, what they see of other organizations, and what a page
// costs in queries. Every response is checked against the spec by the harness.

import type { Statement } from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { agents, prompts, promptTools, tools } from '../src/db/schema/sqlite.js';
import { findPrompts } from '../src/db/repositories/prompts.js';
import { promptErrorIssueIds } from '../src/domain/prompt-validation.js';
import { loadRecords } from './fixtures/prompts-records.js';
import {
  createKey,
  createTenant,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { usePromptsList } from './support/prompts-list-fixture.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

usePromptsList((opened) => ({ api, acme, globex } = opened));

/** `T` is the body expected: the page, or the error envelope of a refusal. */
async function list<T = Schemas['PromptListResponse']>(query: string, key: string) {
  return api.request<T>('GET', `/api/v1/prompts/${query}`, { key });
}

async function idOf(
  table: typeof prompts | typeof tools | typeof agents,
  name: string,
): Promise<number> {
  const [row] = await queryTestDb<{ id: number }>(
    api.db,
    sql`SELECT ${table.id} AS id FROM ${table} WHERE ${table.name} = ${name}`,
  );
  return row!.id;
}

describe('tenancy', () => {
  it("never shows another organization's prompts", async () => {
    const res = await list('?limit=1000', globex.key);
    expect(res.body.total_count).toBe(1);
    expect(res.body.items[0]).toMatchObject({
      name: 'Globex order status',
      tools: 'globex_lookup',
      agent_count: 1,
    });
    const search = await list(
      '?search_fields=name_description&search_field_values=secret',
      acme.key,
    );
    expect(search.body).toMatchObject({ items: [], total_count: 0 });
  });

  describe('with records that wrongly point across organizations', () => {
    beforeAll(async () => {
      // `agentline load` resolves references within one organization only; these rows are
      // written behind its back to prove the list does not rely on that alone.
      await queryTestDb(
        api.db,
        sql`INSERT INTO ${promptTools} (prompt_id, tool_id)
            VALUES (${await idOf(prompts, 'Globex order status')}, ${await idOf(tools, 'lookup_order')})`,
      );
      await queryTestDb(
        api.db,
        sql`INSERT INTO ${agents} (organization_id, name, prompt_id)
            VALUES (${globex.organizationId}, 'Globex agent on an Acme prompt',
              ${await idOf(prompts, 'Order status')})`,
      );
    });

    it("counts, links and names only the organization's own records", async () => {
      const [orderStatus] = (await list('?limit=1', acme.key)).body.items;
      expect(orderStatus?.agent_count).toBe(2);
      const lookup = orderStatus?.tools_full?.[0];
      expect(lookup?.name).toBe('lookup_order');
      expect(lookup?.prompts_info.map((p) => p.name)).toEqual([
        'Order status',
        'Order status (concise)',
      ]);
      expect(lookup?.agents_info.map((a) => a.name)).not.toContain(
        'Globex agent on an Acme prompt',
      );
      const agentSearch = await list('?search_fields=agent_count&search_field_values=3', acme.key);
      expect(agentSearch.body.items.map((p) => p.name)).toEqual(['Complaints']);

      for (const [value, key] of [
        ['globex_lookup', acme.key],
        ['lookup_order', globex.key],
      ] as const) {
        const toolSearch = await list(`?search_fields=tools&search_field_values=${value}`, key);
        expect(toolSearch.body.total_count, `${value} searched across`).toBe(0);
      }

      const [globexPrompt] = (await list('', globex.key)).body.items;
      expect(globexPrompt).toMatchObject({ tools: 'globex_lookup', agent_count: 1 });
      expect(globexPrompt?.tools_full?.map((t) => t.name)).toEqual(['globex_lookup']);
    });
  });
});

describe('error issues for other areas', () => {
  it("gives each of the organization's prompts the error rules it breaks, as the list does", async () => {
    const ids = await Promise.all(
      ['Order status', 'Complaints', 'Transfers', 'Blank', 'Globex order status'].map((name) =>
        idOf(prompts, name),
      ),
    );
    // Another organization's prompt and an unknown id are left out.
    const errorIssueIds = async (promptIds: number[]) => {
      const { rows, tools } = await findPrompts(api.db, acme.organizationId, promptIds);
      return promptErrorIssueIds(rows, tools);
    };
    const issues = await errorIssueIds([...ids, 9999]);
    expect([...issues]).toEqual([
      [ids[0], []],
      [ids[1], ['session-end-tool-missing', 'context-empty', 'tool-has-errors']],
      [ids[2], ['session-end-tool-not-linked', 'tool-has-errors']],
      [ids[3], ['context-empty']],
    ]);
    expect(await errorIssueIds([])).toEqual(new Map());
  });
});

describe('access', () => {
  it('answers 401 without a key, with the decided body and challenge', async () => {
    const res = await api.request<Schemas['ErrorResponse']>('GET', '/api/v1/prompts/');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({
      code: 'UNAUTHENTICATED',
      request_id: res.headers.get('x-request-id'),
    });
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="Service-API-Key"');
  });

  it('answers 401 for an unknown key', async () => {
    const res = await list<Schemas['ErrorResponse']>(
      '',
      'agl_zzzzzzzzzzzz_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    );
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHENTICATED');
  });

  it('answers 403 naming PROMPTS_READ for a key without it, before looking at the input', async () => {
    const key = await createKey(api.db, acme.organizationId, ['EVENTS_READ', 'CHANNELS_READ']);
    const res = await list<Schemas['ErrorResponse']>('?limit=abc', key);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('PERMISSION_DENIED');
    expect(res.body.detail).toContain('PROMPTS_READ');
  });

  it('lets a key with only PROMPTS_READ list prompts', async () => {
    const key = await createKey(api.db, acme.organizationId, ['PROMPTS_READ']);
    const res = await list('', key);
    expect(res.status).toBe(200);
    expect(res.body.total_count).toBe(5);
  });
});

describe('queries per page', () => {
  let busy: Tenant;

  beforeAll(async () => {
    // 60 prompts sharing 12 tools (3 each) and used by 2 agents each.
    busy = await createTenant(api.db, 'Busy');
    const toolNames = Array.from({ length: 12 }, (_, index) => `tool_${index}`);
    await loadRecords(api.db, busy.organizationId, {
      services: [{ name: 'Backend' }],
      tools: toolNames.map((name) => ({
        name,
        service: 'Backend',
        definition: { endpoint: { method: 'get', url: `https://backend.example/${name}` } },
      })),
      prompts: Array.from({ length: 60 }, (_, index) => ({
        name: `Prompt ${index}`,
        context: 'Help.',
        llm_config: { model: 'gpt-4o', provider: 'openai' as const },
        tools: [0, 1, 2].map((offset) => toolNames[(index + offset * 4) % 12]!),
        session_end_enabled: true,
        session_end_tool: toolNames[(index + 5) % 12]!,
      })),
      agents: Array.from({ length: 120 }, (_, index) => ({
        name: `Agent ${index}`,
        prompt: `Prompt ${index % 60}`,
      })),
    });
    // A key's first request also notes when it was used; the counts below are of later ones.
    await list('?limit=0', busy.key);
  });

  /** Spies that see every statement: better-sqlite3's, prepared beforehand or not, or pg's. */
  function spyOnStatements(): Array<{ mock: { calls: unknown[] }; mockRestore(): void }> {
    if (api.db.kind === 'postgres') return [vi.spyOn(pg.Client.prototype, 'query')];
    const statement = Object.getPrototypeOf(api.db.sqlite.prepare('SELECT 1')) as Statement;
    return (['all', 'get', 'run', 'iterate'] as const).map((method) => vi.spyOn(statement, method));
  }

  /**
   * How many SQL statements one request runs, past authentication. Records are loaded first (an
   * empty load still moves the records version), so the page is built, not served from the page
   * cache. The key is authenticated just before, with the clock held, so the process still trusts
   * it and the count never depends on whether its trust ran out in between.
   */
  async function statementsRunBy(query: string, { afterLoad = true } = {}): Promise<number> {
    if (afterLoad) await loadRecords(api.db, busy.organizationId, {});
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const spies: ReturnType<typeof spyOnStatements> = [];
    try {
      expect((await api.request('GET', '/api/v1/agents/?limit=0', { key: busy.key })).status).toBe(
        200,
      );
      spies.push(...spyOnStatements());
      const res = await list(query, busy.key);
      expect(res.status).toBe(200);
      return spies.reduce((total, spy) => total + spy.mock.calls.length, 0);
    } finally {
      for (const spy of spies) spy.mockRestore();
      vi.useRealTimers();
    }
  }

  it('is the same for a page of 1, 10 or 60 prompts', async () => {
    const countOnly = await statementsRunBy('?limit=0');
    for (const limit of [1, 10, 60]) {
      // The page, and its tools with the prompts linking them and the agents using them.
      expect(await statementsRunBy(`?limit=${limit}`), `limit=${limit}`).toBe(countOnly + 2);
      expect(
        await statementsRunBy(`?limit=${limit}&order_by=agent_count&order_by_direction=desc`),
      ).toBe(countOnly + 2);
    }
  });

  it('serves a repeated page from the cache with one statement: the records version', async () => {
    await statementsRunBy('?limit=60');
    expect(await statementsRunBy('?limit=60', { afterLoad: false })).toBe(1);
  });

  it('skips the tools when the fields show none of them', async () => {
    const countOnly = await statementsRunBy('?limit=0');
    expect(await statementsRunBy('?limit=60&fields=name&fields=agent_count')).toBe(countOnly + 1);
  });
});
