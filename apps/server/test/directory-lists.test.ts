// GET /api/v1/agents/ and GET /api/v1/channels/targets/: the ids an experiment and session
// routing need, with the shared list semantics (search, order, fields, pages and cursors), one
// organization's records only. Runs on both databases.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { anyNumber, anyString } from './support/matchers.js';
import { createRoutingTestbed, type RoutingFixture } from './support/routing-fixture.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let globexFx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, globex, fx, globexFx } = await createRoutingTestbed());
});

afterAll(() => api.close());

/** `T` is the body expected: a page of agents or of targets, or a 422's errors. */
const get = <T>(path: string, key = acme.key) => api.request<T>('GET', path, { key });

describe('GET /api/v1/agents/', () => {
  it("lists the organization's agents by id, with their prompt and pinned version", async () => {
    const res = await get<Schemas['AgentListResponse']>('/api/v1/agents/');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 0, page_size: 25, total_count: 4, next_cursor: null });
    expect(res.body.items.map((agent) => agent.id)).toEqual(
      [fx.agents.pinned, fx.agents.unpinned, fx.agents.alsoPinned, fx.agents.flawed].sort(
        (a, b) => a - b,
      ),
    );
    const unpinned = res.body.items.find(
      (agent: { id: number }) => agent.id === fx.agents.unpinned,
    );
    expect(unpinned).toEqual({
      id: fx.agents.unpinned,
      name: 'Unpinned',
      prompt_id: anyNumber(),
      pinned_prompt_version: null,
    });
  });

  it('never shows another organization its agents', async () => {
    const res = await get<Schemas['AgentListResponse']>('/api/v1/agents/', globex.key);
    const ids = res.body.items.map((agent) => agent.id);
    expect(ids).toContain(globexFx.agents.pinned);
    expect(ids).not.toContain(fx.agents.pinned);
  });

  it('searches, orders and narrows like the other lists', async () => {
    const pinned = await get<Schemas['AgentListResponse']>(
      '/api/v1/agents/?search_fields=name&search_field_values=PINNED&order_by=name&order_by_direction=desc',
    );
    expect(pinned.body.items.map((agent) => agent.name)).toEqual([
      'Unpinned',
      'Pinned',
      'Also pinned',
    ]);
    const exact = await get<Schemas['AgentListResponse']>(
      '/api/v1/agents/?search_fields=name_exact&search_field_values=Pinned',
    );
    expect(exact.body.items.map((agent) => agent.id)).toEqual([fx.agents.pinned]);
    const narrowed = await get<Schemas['AgentListResponse']>('/api/v1/agents/?fields=name&limit=1');
    expect(narrowed.body.items).toEqual([{ id: anyNumber(), name: anyString() }]);
  });

  it('walks every agent by cursor, one per page, as the single page lists them', async () => {
    const all = (await get<Schemas['AgentListResponse']>('/api/v1/agents/?order_by=name')).body
      .items;
    const walked = [];
    let page = (await get<Schemas['AgentListResponse']>('/api/v1/agents/?order_by=name&limit=1'))
      .body;
    for (;;) {
      walked.push(...page.items);
      if (!page.next_cursor) break;
      page = (
        await get<Schemas['AgentListResponse']>(
          `/api/v1/agents/?order_by=name&limit=1&cursor=${encodeURIComponent(page.next_cursor)}`,
        )
      ).body;
    }
    expect(walked).toEqual(all);
    expect(walked).toHaveLength(4);
  });

  it('refuses what does not fit the list with a 422 naming the parameter', async () => {
    const unknown = await get<Schemas['HTTPValidationError']>('/api/v1/agents/?order_by=colour');
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]?.loc).toEqual(['query', 'order_by']);
    const notANumber = await get('/api/v1/agents/?search_fields=prompt_id&search_field_values=x');
    expect(notANumber.status).toBe(422);
    // The agents list has no time to filter on.
    const window = await get<Schemas['AgentListResponse']>(
      '/api/v1/agents/?start_datetime=2026-01-01T00:00:00Z',
    );
    expect(window.status).toBe(200);
    expect(window.body.total_count).toBe(4);
  });
});

describe('GET /api/v1/channels/targets/', () => {
  it("lists the organization's targets with their channel and default agent", async () => {
    const res = await get<Schemas['ChannelTargetListResponse']>('/api/v1/channels/targets/');
    expect(res.status).toBe(200);
    expect(res.body.total_count).toBe(4);
    const main = res.body.items.find((target) => target.id === fx.targets.main);
    expect(main).toEqual({
      id: fx.targets.main,
      channel_id: anyNumber(),
      channel_name: 'Web chat',
      target: 'main',
      target_mode: anyString(),
      agent_id: fx.agents.pinned,
      is_agent_test: false,
    });
    const orphan = res.body.items.find((target) => target.id === fx.targets.orphan);
    expect(orphan?.agent_id).toBeNull();
  });

  it('finds the agent-test target by its flag, and no other organization sees it', async () => {
    const res = await get<Schemas['ChannelTargetListResponse']>(
      '/api/v1/channels/targets/?search_fields=is_agent_test&search_field_values=true',
    );
    expect(res.body.items.map((target) => target.id)).toEqual([fx.targets.agentTest]);
    const foreign = await get<Schemas['ChannelTargetListResponse']>(
      '/api/v1/channels/targets/?search_fields=is_agent_test&search_field_values=true',
      globex.key,
    );
    expect(foreign.body.items.map((target) => target.id)).toEqual([globexFx.targets.agentTest]);
  });

  it('searches and orders by the channel name and the target', async () => {
    const res = await get<Schemas['ChannelTargetListResponse']>(
      '/api/v1/channels/targets/?search_fields=channel_name&search_field_values=web&order_by=target',
    );
    expect(res.body.items.map((target) => target.target)).toEqual([
      'agent-test',
      'main',
      'orphan',
      'second',
    ]);
    const bad = await get(
      '/api/v1/channels/targets/?search_fields=is_agent_test&search_field_values=yes',
    );
    expect(bad.status).toBe(422);
  });
});
