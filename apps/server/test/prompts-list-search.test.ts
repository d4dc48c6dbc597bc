// GET /api/v1/prompts/: which prompts a page holds and in what order: every search kind,
// ordering by every property, the time window and paging. Records are loaded the way `agentline
// load` loads them, and every response is checked against the spec by the harness.

import { describe, expect, it } from 'vitest';
import type { PromptProperty } from '../src/vocabulary/prompts.js';
import type { Schemas } from './support/harness.js';
import {
  search,
  usePromptsList,
  type PromptItem,
  type PromptsList,
} from './support/prompts-list-fixture.js';

let list: PromptsList['list'];
let idsOf: PromptsList['idsOf'];

usePromptsList((opened) => ({ list, idsOf } = opened));

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

  it('combines several tools searches with AND', async () => {
    const bothTools =
      '?search_fields=tools&search_fields=tools&search_field_values=lookup_order&search_field_values=HANG';
    expect(await idsOf(bothTools)).toEqual([1]);
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
  const SORT_KEYS: Record<PromptProperty, (item: PromptItem) => string | number | null> = {
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
