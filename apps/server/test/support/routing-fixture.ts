// A small organization for experiment and routing tests, loaded through the real `load` path:
// agents that do and do not pin a prompt version, one whose prompt has an error-level issue,
// targets with and without an agent of their own, and a built-in agent-test target.

import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../src/db/engine/client.js';
import { loadPlatformRecords } from '../../src/records/loader.js';
import { agents, channelTargets } from '../../src/db/schema/sqlite.js';
import { platformRecordsSchema } from '../../src/records/format.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './harness.js';
import { queryTestDb } from './test-database.js';

const LLM = { model: 'gpt-4o', provider: 'openai', version: null } as const;

export const ROUTING_RECORDS = platformRecordsSchema.parse({
  prompts: [
    { name: 'Helpful', context: 'You answer questions about orders.', llm_config: LLM },
    // An empty context is an error-level validation issue (context-empty).
    { name: 'Unfinished', context: '', llm_config: LLM },
  ],
  agents: [
    { name: 'Pinned', prompt: 'Helpful', pinned_prompt_version: 1 },
    { name: 'Unpinned', prompt: 'Helpful', pinned_prompt_version: null },
    { name: 'Also pinned', prompt: 'Helpful', pinned_prompt_version: 1 },
    { name: 'Flawed', prompt: 'Unfinished', pinned_prompt_version: 1 },
  ],
  channels: [
    {
      name: 'Web chat',
      kind: 'web_chat',
      targets: [
        { target: 'main', agent: 'Pinned' },
        { target: 'second', agent: 'Pinned' },
        { target: 'orphan', agent: null },
        { target: 'agent-test', target_mode: 'test', agent: 'Pinned', is_agent_test: true },
      ],
    },
  ],
});

export interface RoutingFixture {
  targets: { main: number; second: number; orphan: number; agentTest: number };
  agents: { pinned: number; unpinned: number; alsoPinned: number; flawed: number };
}

/** The rows of `SELECT name, id ...` as a map. */
async function idsByName(db: Db, query: SQL): Promise<Map<string, number>> {
  const rows = await queryTestDb<{ name: string; id: number }>(db, query);
  return new Map(rows.map((row) => [row.name, row.id]));
}

export async function loadRoutingFixture(db: Db, organizationId: number): Promise<RoutingFixture> {
  await loadPlatformRecords(db, organizationId, ROUTING_RECORDS);
  const agentIds = await idsByName(
    db,
    sql`SELECT ${agents.name} AS name, ${agents.id} AS id FROM ${agents}
      WHERE ${agents.organizationId} = ${organizationId}`,
  );
  const targetIds = await idsByName(
    db,
    sql`SELECT ${channelTargets.target} AS name, ${channelTargets.id} AS id FROM ${channelTargets}
      WHERE ${channelTargets.organizationId} = ${organizationId}`,
  );
  const agentId = (name: string) => agentIds.get(name)!;
  const targetId = (target: string) => targetIds.get(target)!;
  return {
    targets: {
      main: targetId('main'),
      second: targetId('second'),
      orphan: targetId('orphan'),
      agentTest: targetId('agent-test'),
    },
    agents: {
      pinned: agentId('Pinned'),
      unpinned: agentId('Unpinned'),
      alsoPinned: agentId('Also pinned'),
      flawed: agentId('Flawed'),
    },
  };
}

/** A valid create body: a 70/30 split between two agents, the first the control. */
export function experimentBody(
  targetId: number,
  agentIds: readonly [number, number],
  overrides: Record<string, unknown> = {},
) {
  return {
    name: 'Shorter answers',
    description: 'Do shorter answers end sessions sooner?',
    target_id: targetId,
    variants: [
      { name: 'control', weight: 70, is_control: true, agent_id: agentIds[0] },
      { name: 'candidate', weight: 30, agent_id: agentIds[1] },
    ],
    ...overrides,
  };
}

export interface RoutingTestbed {
  api: TestApi;
  acme: Tenant;
  globex: Tenant;
  fx: RoutingFixture;
  globexFx: RoutingFixture;
}

/** A fresh app with two organizations, Acme and Globex, each with the routing fixture loaded. */
export async function createRoutingTestbed(): Promise<RoutingTestbed> {
  const api = await createTestApi();
  const acme = await createTenant(api.db, 'Acme');
  const globex = await createTenant(api.db, 'Globex');
  const fx = await loadRoutingFixture(api.db, acme.organizationId);
  const globexFx = await loadRoutingFixture(api.db, globex.organizationId);
  return { api, acme, globex, fx, globexFx };
}
