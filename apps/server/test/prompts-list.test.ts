// GET /api/v1/prompts/: every item field, every search kind, ordering by every property,
// projections, the time window and paging. Records are loaded the way `agentline load` loads
// them, and every response is checked against the spec by the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PromptProperty } from '../src/domain/prompts.js';
import { ACME_RECORDS, GLOBEX_RECORDS, loadRecords } from './fixtures/prompts-records.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { anyString } from './support/matchers.js';

let api: TestApi;
let acme: Tenant;

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  const globex = await createTenant(api.db, 'Globex');
  await loadRecords(api.db, acme.organizationId, ACME_RECORDS);
  await loadRecords(api.db, globex.organizationId, GLOBEX_RECORDS);
});

afterAll(() => api.close());

/** A prompt listed without `fields`: every property is there. */
type Item = Required<Schemas['Prompt']>;

/** A page of prompts listed without `fields`. */
type ItemPage = Omit<Schemas['PromptListResponse'], 'items'> & { items: Item[] };

/**
 * `T` is the body expected: by default a page of whole prompts; `Schemas['PromptListResponse']`
 * for a page narrowed by `fields`, or the errors of a 422.
 */
async function list<T = ItemPage>(query: string) {
  return api.request<T>('GET', `/api/v1/prompts/${query}`, { key: acme.key });
}

async function idsOf(query: string): Promise<number[]> {
  const res = await list(query);
  expect(res.status).toBe(200);
  return res.body.items.map((item) => item.id);
}

function search(field: string, value: string): string {
  return `?search_fields=${field}&search_field_values=${encodeURIComponent(value)}`;
}

const LOOKUP_ORDER = {
  id: 1,
  name: 'lookup_order',
  service_id: 1,
  service_name: 'Orders API',
  version_number: 2,
  last_updated: '2026-03-01T09:30:00.000Z',
  last_updated_by: 'dana@acme.example',
  last_updated_comments: 'Added the email fallback.',
  prompts_info: [
    { id: 1, name: 'Order status' },
    { id: 2, name: 'Order status (concise)' },
  ],
  agents_info: [
    { id: 1, name: 'Order agent' },
    { id: 2, name: 'Order agent B' },
    { id: 3, name: 'Concise agent' },
  ],
  validation_issues: [],
  definition: {
    type: 'endpoint',
    endpoint: {
      argument_location: 'query',
      method: 'get',
      url: 'https://orders.acme.example/v2/orders',
    },
    static_parameters: [
      { name: 'region', type: 'string', description: 'Store region', required: true },
    ],
    tool: {
      type: 'function',
      function: {
        name: 'lookup_order',
        description: 'Calls lookup_order.',
        parameters: {
          type: 'object',
          properties: {
            order_number: { type: 'string', description: 'e.g. A-10042' },
            email: { type: 'string' },
          },
          required: ['order_number'],
        },
      },
    },
  },
};

const HANG_UP = {
  id: 3,
  name: 'hang_up',
  service_id: 2,
  service_name: 'Helpdesk',
  version_number: 1,
  last_updated: '2026-03-03T11:00:00.000Z',
  last_updated_by: 'sam@acme.example',
  last_updated_comments: null,
  // Prompts 2 and 4 name it as their session end tool without linking it: not listed.
  prompts_info: [{ id: 1, name: 'Order status' }],
  agents_info: [
    { id: 1, name: 'Order agent' },
    { id: 2, name: 'Order agent B' },
  ],
  validation_issues: [],
  definition: {
    type: 'endpoint',
    endpoint: {
      argument_location: 'body',
      method: 'post',
      url: 'https://helpdesk.acme.example/calls/end',
    },
    static_parameters: [],
    tool: {
      type: 'function',
      function: {
        name: 'hang_up',
        description: 'Calls hang_up.',
        parameters: { type: 'object', properties: {}, required: [] },
      },
    },
  },
};

const issue = (id: string, severity: string, path: string, value: string | null) => ({
  id,
  severity,
  path,
  value,
  message: anyString(),
});

describe('items', () => {
  it("lists the organization's prompts by id with the envelope", async () => {
    const res = await list('');
    expect(res.body).toMatchObject({ page: 0, page_size: 25, total_count: 5, total_pages: 1 });
    expect(res.body.items.map((item) => item.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it('carries every field of a prompt, its tools in full and its session end tool', async () => {
    const res = await list('?limit=1');
    expect(res.body.items[0]).toEqual({
      id: 1,
      name: 'Order status',
      type: 'prompt_v1',
      description: 'Tells customers where their order is.',
      context: 'You help Acme customers track orders.',
      llm_config: { model: 'gpt-4o', provider: 'openai', version: '2024-08-06' },
      tools: 'lookup_order,hang_up',
      session_end_enabled: true,
      session_end_tool_id: 3,
      session_end_tool: HANG_UP,
      tools_full: [LOOKUP_ORDER, HANG_UP],
      agent_count: 2,
      version_number: 4,
      edit_comments: 'Shorter greeting.',
      last_updated: '2026-03-10T14:05:00.000Z',
      last_updated_by: 'dana@acme.example',
      validation_issues: [],
    });
  });

  it('shows nulls, empty tools and zero agents for a bare prompt', async () => {
    const res = await list(search('id', '5'));
    expect(res.body.items).toEqual([
      {
        id: 5,
        name: 'Blank',
        type: 'prompt_v1',
        description: 'Nothing yet',
        context: null,
        llm_config: { model: 'gpt-4o', provider: 'openai', version: null },
        tools: '',
        session_end_enabled: false,
        session_end_tool_id: null,
        session_end_tool: null,
        tools_full: [],
        agent_count: 0,
        version_number: 1,
        edit_comments: null,
        last_updated: '2026-05-01T00:00:00.000Z',
        last_updated_by: null,
        validation_issues: [issue('context-empty', 'error', '$.context', null)],
      },
    ]);
  });

  it('shows a session end tool that is set while session end is off, without an issue', async () => {
    const [concise] = (await list(search('id', '2'))).body.items;
    expect(concise).toMatchObject({
      session_end_enabled: false,
      session_end_tool_id: 3,
      session_end_tool: HANG_UP,
      tools: 'lookup_order',
      agent_count: 1,
      validation_issues: [],
    });
  });

  it("reports the prompt's issues and each tool's own, with paths into their objects", async () => {
    const [complaints] = (await list(search('id', '3'))).body.items;
    expect(complaints!.validation_issues).toEqual([
      issue('session-end-tool-missing', 'error', '$.session_end_tool', null),
      issue('context-empty', 'error', '$.context', ''),
      issue('tool-has-errors', 'error', '$.tools_full[0]', 'open_ticket'),
    ]);
    expect(complaints!.tools_full[0]?.validation_issues).toEqual([
      issue('endpoint-url-invalid', 'error', '$.definition.endpoint.url', 'tickets/new'),
      issue(
        'required-parameter-undefined',
        'error',
        '$.definition.tool.function.parameters.required[1]',
        'priority',
      ),
    ]);
  });

  it('reports tools with errors by position and leaves tools with only warnings out', async () => {
    const [transfers] = (await list(search('id', '4'))).body.items;
    expect(transfers!.tools).toBe('transfer_to_human,send_survey');
    expect(transfers!.validation_issues).toEqual([
      issue('session-end-tool-not-linked', 'error', '$.session_end_tool', 'hang_up'),
      issue('tool-has-errors', 'error', '$.tools_full[0]', 'transfer_to_human'),
    ]);
    const [transfer, survey] = transfers!.tools_full;
    expect(transfer?.validation_issues).toEqual([
      issue('service-missing', 'error', '$.service_id', null),
      issue('endpoint-method-invalid', 'error', '$.definition.endpoint.method', 'POST'),
      issue('function-name-mismatch', 'warning', '$.definition.tool.function.name', 'transfer'),
      issue(
        'static-parameter-shadows-function-parameter',
        'warning',
        '$.definition.static_parameters[1].name',
        'queue',
      ),
    ]);
    expect(transfer).toMatchObject({ service_id: null, service_name: null, agents_info: [] });
    expect(survey?.validation_issues).toEqual([
      issue('function-name-mismatch', 'warning', '$.definition.tool.function.name', 'survey'),
    ]);
    expect(transfers!.session_end_tool?.validation_issues).toEqual([]);
  });

  it('fills in the parts a stored definition lacks, so every tool has the whole shape', async () => {
    const [complaints] = (await list(search('id', '3'))).body.items;
    expect(complaints!.tools_full[0]?.definition).toEqual({
      type: 'endpoint',
      endpoint: { argument_location: 'body', method: 'post', url: 'tickets/new' },
      static_parameters: [],
      tool: {
        type: 'function',
        function: {
          name: 'open_ticket',
          description: 'Calls open_ticket.',
          parameters: {
            type: 'object',
            properties: { subject: { type: 'string' } },
            required: ['subject', 'priority'],
          },
        },
      },
    });
  });

  it('gives the same items on every request', async () => {
    expect((await list('')).body).toEqual((await list('')).body);
  });
});

describe('search', () => {
  it.each<[string, string, number[]]>([
    ['name', 'ORDER STATUS', [1, 2]],
    ['name', '(concise)', [2]],
    ['name_exact', 'Order status', [1]],
    ['name_exact', 'order status', []],
    ['name_exact', 'Order', []],
    ['description', 'TICKETS', [3]],
    ['name_description', 'shorter', [2]],
    ['name_description', 'complaints', [3]],
    ['name_description', 'order', [1, 2]],
    ['context', 'one SENTENCE', [2]],
    ['tools', 'HANG', [1]],
    ['tools', 'lookup_order', [1, 2]],
    ['tools', 'transfer_to_human,send', [4]],
    ['llm_config', '"provider":"ANTHROPIC"', [2]],
    ['llm_config', '2024-07-18', [4]],
    ['last_updated', '2026-04', [2, 3]],
    ['last_updated', '2026-05-01T00:00:00.000Z', [4, 5]],
    ['last_updated_by', 'DANA@', [1, 3]],
    ['agent_count', '0', [4, 5]],
    ['agent_count', '3', [3]],
    ['session_end_enabled', 'true', [1, 3, 4]],
    ['session_end_enabled', 'false', [2, 5]],
    ['id', '4', [4]],
    // Beyond a database integer (PostgreSQL's integer ends at 2^31 - 1): no match, not an error.
    ['id', '3000000000', []],
    ['agent_count', '9007199254740991', []],
  ])('%s matches "%s"', async (field, value, expected) => {
    const res = await list(search(field, value));
    expect(res.body.items.map((item) => item.id)).toEqual(expected);
    expect(res.body.total_count).toBe(expected.length);
  });

  it('treats LIKE wildcards in a value as literal characters', async () => {
    expect(await idsOf(search('context', '100% polite_'))).toEqual([4]);
    expect(await idsOf(search('context', '100_'))).toEqual([]);
  });

  it('combines several pairs with AND', async () => {
    expect(
      await idsOf(
        '?search_fields=session_end_enabled&search_fields=name_description&search_field_values=true&search_field_values=order',
      ),
    ).toEqual([1]);
  });

  it.each([
    ['agent_count', 'many', 'int_parsing'],
    ['id', '1.5', 'int_parsing'],
    ['session_end_enabled', 'yes', 'bool_parsing'],
  ])('rejects %s=%s', async (field, value, type) => {
    const res = await list<Schemas['HTTPValidationError']>(search(field, value));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      detail: [{ loc: ['query', 'search_field_values', 0], type }],
    });
  });

  it('rejects an unknown property and lists the allowed ones', async () => {
    const res = await list<Schemas['HTTPValidationError']>(search('tools_full', 'x'));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ detail: [{ loc: ['query', 'search_fields', 0] }] });
    expect(JSON.stringify(res.body)).toContain('name_description');
  });
});

describe('order', () => {
  // How the database orders each property: NULL first, text by code point, then the id.
  const SORT_KEYS: Record<PromptProperty, (item: Item) => string | number | null> = {
    id: (item) => item.id,
    name: (item) => item.name,
    name_exact: (item) => item.name,
    name_description: (item) => item.name,
    description: (item) => item.description,
    context: (item) => item.context,
    tools: (item) => item.tools,
    llm_config: (item) => JSON.stringify(item.llm_config),
    last_updated: (item) => item.last_updated,
    last_updated_by: (item) => item.last_updated_by,
    agent_count: (item) => item.agent_count,
    session_end_enabled: (item) => Number(item.session_end_enabled),
  };

  function compare(left: string | number | null, right: string | number | null): number {
    if (left === right) return 0;
    if (left === null) return -1;
    if (right === null) return 1;
    return left < right ? -1 : 1;
  }

  it.each(Object.keys(SORT_KEYS) as PromptProperty[])(
    'orders by %s both ways, the id breaking ties',
    async (property) => {
      const all = (await list('')).body.items;
      const key = SORT_KEYS[property];
      const expected = [...all]
        .sort((a, b) => compare(key(a), key(b)) || a.id - b.id)
        .map((item) => item.id);
      expect(await idsOf(`?order_by=${property}`)).toEqual(expected);
      expect(await idsOf(`?order_by=${property}&order_by_direction=desc`)).toEqual(
        [...expected].reverse(),
      );
    },
  );

  it('orders by the computed agent count', async () => {
    expect(await idsOf('?order_by=agent_count&order_by_direction=desc')).toEqual([3, 1, 2, 5, 4]);
  });

  it('never repeats or skips a prompt across pages of tied values', async () => {
    const paged: number[] = [];
    for (let page = 0; page < 5; page += 1) {
      paged.push(...(await idsOf(`?order_by=session_end_enabled&limit=2&page=${page}`)));
    }
    expect(paged).toEqual(await idsOf('?order_by=session_end_enabled'));
  });

  it('defaults to id ascending, and to asc when only order_by is given', async () => {
    expect(await idsOf('?order_by_direction=desc')).toEqual([5, 4, 3, 2, 1]);
    expect(await idsOf('?order_by=last_updated_by')).toEqual([4, 5, 1, 3, 2]);
  });
});

describe('fields', () => {
  it('keeps only the listed properties, and always the id', async () => {
    const res = await list<Schemas['PromptListResponse']>(
      '?fields=name&fields=agent_count&limit=2',
    );
    expect(res.body.items).toEqual([
      { id: 1, name: 'Order status', agent_count: 2 },
      { id: 2, name: 'Order status (concise)', agent_count: 1 },
    ]);
  });

  it('reads name_exact as name and name_description as name and description', async () => {
    expect(
      (await list<Schemas['PromptListResponse']>('?fields=name_exact&limit=1')).body.items,
    ).toEqual([{ id: 1, name: 'Order status' }]);
    expect(
      (await list<Schemas['PromptListResponse']>('?fields=name_description&limit=1')).body.items,
    ).toEqual([
      { id: 1, name: 'Order status', description: 'Tells customers where their order is.' },
    ]);
  });

  it('brings nested objects whole: llm_config, and the full tools with tools', async () => {
    const res = await list<Schemas['PromptListResponse']>(
      '?fields=llm_config&fields=tools&limit=1',
    );
    expect(res.body.items).toEqual([
      {
        id: 1,
        llm_config: { model: 'gpt-4o', provider: 'openai', version: '2024-08-06' },
        tools: 'lookup_order,hang_up',
        tools_full: [LOOKUP_ORDER, HANG_UP],
      },
    ]);
  });

  it('brings the session end tool with session_end_enabled', async () => {
    const res = await list<Schemas['PromptListResponse']>('?fields=session_end_enabled&limit=1');
    expect(res.body.items).toEqual([
      { id: 1, session_end_enabled: true, session_end_tool_id: 3, session_end_tool: HANG_UP },
    ]);
  });

  it('rejects an unknown field name', async () => {
    const res = await list<Schemas['HTTPValidationError']>('?fields=validation_issues');
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['query', 'fields', 0]);
  });
});

describe('time window on last_updated', () => {
  it('includes the start and excludes the end', async () => {
    expect(
      await idsOf('?start_datetime=2026-04-15T12:00:00Z&end_datetime=2026-05-01T00:00:00Z'),
    ).toEqual([3]);
    expect(await idsOf('?start_datetime=2026-05-01T00:00:00Z')).toEqual([4, 5]);
  });

  it('understands offsets', async () => {
    expect(await idsOf('?end_datetime=2026-03-10T16:05:00.001%2B02:00')).toEqual([1]);
  });

  it('rejects a start after the end', async () => {
    const res = await list<Schemas['HTTPValidationError']>(
      '?start_datetime=2026-06-01T00:00:00Z&end_datetime=2026-05-01T00:00:00Z',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['query', 'start_datetime']);
  });
});

describe('paging', () => {
  it('pages with limit and page and reports the totals', async () => {
    const res = await list('?limit=2&page=1');
    expect(res.body).toMatchObject({ page: 1, page_size: 2, total_count: 5, total_pages: 3 });
    expect(res.body.items.map((item) => item.id)).toEqual([3, 4]);
  });

  it('answers a page past the end with no items, and limit 0 with counts only', async () => {
    expect((await list('?limit=2&page=9')).body).toMatchObject({ items: [], total_count: 5 });
    expect((await list('?limit=0')).body).toEqual({
      items: [],
      page: 0,
      page_size: 0,
      total_count: 5,
      total_pages: null,
      next_cursor: null,
    });
  });

  it('counts all matches of a search, not only the page', async () => {
    const res = await list(`${search('name', 'order')}&limit=1`);
    expect(res.body).toMatchObject({ total_count: 2, total_pages: 2 });
  });
});
