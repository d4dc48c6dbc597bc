// The prompts and experiments the shapes benchmark reads: `count` of them in one organization,
// with what their computed properties read; docs/benchmarks.md says how they are spread.

import type { Db } from '../../apps/server/src/db/engine/client.js';
import { runStepsInTransaction } from '../../apps/server/src/db/engine/portable-sql.js';
import { insertExperimentRow } from '../../apps/server/src/db/repositories/experiments.js';
import { platformRecordsSchema } from '../../apps/server/src/records/format.js';
import { loadPlatformRecords } from '../../apps/server/src/records/loader.js';
import { TOPICS } from './bench-events.js';
import { benchRoutingTenant } from './bench-tenant.js';
import { seeded, vacuumWhenSettled, type BenchDatabase } from './harness.js';

export const AGENTS = 20;
const TARGETS = 10;
const BLOCK = 1000;

/** The i-th of `count` instants over 2026, shuffled so that no order by time is the id's. */
const instant = (i: number, count: number, plusMs = 0) =>
  new Date(
    Date.parse('2026-01-01T00:00:00Z') + ((i * 7919) % count) * (31_536_000_000 / count) + plusMs,
  ).toISOString();

/** The item at `i`, counting round the list again past its end. */
export const nth = <T>(list: readonly T[], i: number): T => list[i % list.length]!;
const range = (length: number) => Array.from({ length }, (_, i) => i);

/** How many tools `count` prompts link: each linked by about six prompts, as tools are shared. */
export const toolsFor = (count: number) => Math.max(40, Math.floor(count / 4));

/** `count` prompts linking 0 to 3 tools each, loaded as `records load` loads them. */
async function seedPrompts(db: Db, organizationId: number, count: number): Promise<void> {
  const tools = toolsFor(count);
  const tool = (t: number) => `${nth(TOPICS, t)}_tool_${t}`;
  const name = (i: number) => `${nth(TOPICS, i * 3)} assistant ${i}`;
  const records = {
    tools: range(tools).map((t) => ({ name: tool(t), definition: { type: 'endpoint' } })),
    prompts: range(count).map((i) => ({
      name: name(i),
      description:
        i % 7 === 0 ? null : `Helps callers with ${nth(TOPICS, i)} #${(i * 4111) % 100_000}`,
      context: `You answer questions about ${nth(TOPICS, i * 5)}. Case ${(i * 613) % 100_000}.`,
      llm_config: { model: nth(['small', 'large', 'fast'], i), provider: 'openai' },
      tools: range(i % 4).map((k) => tool((i + k * 7919) % tools)),
      session_end_enabled: i % 5 === 0,
      last_updated: instant(i, count),
      last_updated_by: `editor${i % 50}@example.com`,
    })),
    // One prompt in ten has one to three agents.
    agents: range(count / 10).flatMap((p) =>
      range((p % 3) + 1).map((k) => ({ name: `agent ${p}-${k}`, prompt: name(p * 10) })),
    ),
  };
  await loadPlatformRecords(db, organizationId, platformRecordsSchema.parse(records));
}

/** `count` experiments: drafts, stopped ones and one running per target but the routed one. */
async function seedExperiments(
  db: Db,
  tenant: { organizationId: number; targetIds: number[]; agentIds: Record<string, number> },
  count: number,
): Promise<void> {
  const agentIds = Object.values(tenant.agentIds);
  for (let at = 0; at < count; at += BLOCK) {
    await runStepsInTransaction(db, function* () {
      for (let i = at; i < Math.min(count, at + BLOCK); i += 1) {
        const status = i > 0 && i < TARGETS ? 'running' : i % 3 === 0 ? 'draft' : 'stopped';
        yield* insertExperimentRow(
          {
            organizationId: tenant.organizationId,
            name: `${nth(TOPICS, i * 3)} test ${i}`,
            description:
              i % 7 === 0 ? null : `Tries a ${nth(TOPICS, i)} flow #${(i * 4111) % 100_000}`,
            targetId: tenant.targetIds[i % TARGETS]!,
            status,
            createdAt: instant(i, count),
            updatedAt: instant(i, count, 3_600_000),
            startedAt: status === 'draft' ? null : instant(i, count, 7_200_000),
            stoppedAt: status === 'stopped' ? instant(i, count, 86_400_000) : null,
            lastUpdatedBy: 'bench',
          },
          ['a', 'b'].map((name, position) => ({
            name,
            weight: 50,
            isControl: position === 0,
            agentId: agentIds[(i + position * 7) % agentIds.length]!,
          })),
        );
      }
    });
  }
}

/**
 * A new routing organization (bench-tenant.ts) with AGENTS agents and TARGETS targets, and `count`
 * prompts or experiments; on PostgreSQL vacuumed, as autovacuum soon would after a bulk load.
 */
export async function organizationWithList(
  database: BenchDatabase,
  resource: 'prompts' | 'experiments',
  count: number,
) {
  const started = performance.now();
  const tenant = await seeded(database.url, async (db) => {
    const made = await benchRoutingTenant(db, 'Bench', {
      moreAgents: AGENTS - 2,
      targets: TARGETS,
    });
    if (resource === 'prompts') await seedPrompts(db, made.organizationId, count);
    else await seedExperiments(db, made, count);
    await vacuumWhenSettled(db);
    return made;
  });
  console.log(
    `built ${count} ${resource} on ${database.kind} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return tenant;
}
