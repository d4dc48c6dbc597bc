// An organization and an admin key for a benchmark, made with the server's own repositories the
// way `agentline org create`, `role create --all` and `key create` make them. Benchmarks keep to
// this module rather than borrowing the tests' harness.

import type { Db } from '../../apps/server/src/db/engine/client.js';
import type {
  AgentlineClient,
  Experiment,
  ExperimentCreate,
} from '../../packages/sdk/src/index.js';
import { createKeyWithOwnRole } from '../../apps/server/src/use-cases/api-keys.js';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { PERMISSIONS } from '../../apps/server/src/vocabulary/permissions.js';
import { platformRecordsSchema } from '../../apps/server/src/records/format.js';
import { loadedIds } from '../../apps/server/src/records/load-result.js';
import { loadPlatformRecords } from '../../apps/server/src/records/loader.js';

/** A key holding every permission, in a role of its own, of an existing organization. */
export function benchKey(db: Db, organizationId: number): Promise<string> {
  return createKeyWithOwnRole(db, {
    organizationId,
    roleName: `bench admin ${Date.now()}`,
    keyName: 'bench',
    permissions: PERMISSIONS,
  });
}

/** A new organization and an admin key of it. */
export async function benchTenant(
  db: Db,
  name: string,
): Promise<{ organizationId: number; key: string }> {
  const organization = await createOrganization(db, name);
  return { organizationId: organization.id, key: await benchKey(db, organization.id) };
}

/**
 * A new organization with an admin key, two agents (`a`, `b`) and one web chat target answered by
 * `a`: what an experiment splitting a target's sessions needs. `moreAgents` adds that many agents
 * (`agent 0`...), each with a prompt of its own, for lists with more than a row or two.
 */
export async function benchRoutingTenant(
  db: Db,
  name: string,
  { moreAgents = 0 }: { moreAgents?: number } = {},
): Promise<{
  organizationId: number;
  key: string;
  agentIds: Record<string, number>;
  targetId: number;
}> {
  const tenant = await benchTenant(db, name);
  const llm_config = { model: 'm', provider: 'openai', version: null };
  const more = Array.from({ length: moreAgents }, (_, i) => i);
  const { records } = await loadPlatformRecords(
    db,
    tenant.organizationId,
    platformRecordsSchema.parse({
      prompts: [
        { name: 'p', context: 'Answer.', llm_config },
        ...more.map((i) => ({ name: `prompt ${i}`, context: `Answer as agent ${i}.`, llm_config })),
      ],
      agents: [
        { name: 'a', prompt: 'p', pinned_prompt_version: 1 },
        { name: 'b', prompt: 'p', pinned_prompt_version: 1 },
        ...more.map((i) => ({
          name: `agent ${i}`,
          prompt: `prompt ${i}`,
          pinned_prompt_version: 1,
        })),
      ],
      channels: [{ name: 'web', kind: 'web_chat', targets: [{ target: 'main', agent: 'a' }] }],
    }),
  );
  const targetId = Object.values(loadedIds(records, 'channel_targets'))[0]!;
  return { ...tenant, agentIds: loadedIds(records, 'agents'), targetId };
}

/**
 * Creates and starts, through the SDK as a customer would, a 50/50 experiment between the routing
 * tenant's agents `a` (the control) and `b` on its target, with `plannedEnd` fields if given.
 */
export async function startSplitExperiment(
  client: AgentlineClient,
  { agentIds, targetId }: { agentIds: Record<string, number>; targetId: number },
  name: string,
  plannedEnd: Pick<ExperimentCreate, 'end_at' | 'max_sessions'> = {},
): Promise<Experiment> {
  // The draft as created: its variants' ids are what sessions are counted under.
  const created = await client.experiments.create({
    name,
    target_id: targetId,
    variants: [
      { name: 'a', weight: 50, is_control: true, agent_id: agentIds.a! },
      { name: 'b', weight: 50, agent_id: agentIds.b! },
    ],
    ...plannedEnd,
  });
  await client.experiments.start(created.id);
  return created;
}

/**
 * The load options of a routing request as the SDK sends it: a POST with a JSON body, keyed with a
 * new Idempotency-Key each (the SDK's default) or, to compare, without one. Each names a caller
 * drawn from ten million numbers, as a customer's traffic does: one caller over and over would put
 * every session's user_id index entry on the same page and every session in the same variant.
 */
export function routingRequest(key: string, keyed: boolean) {
  return {
    method: 'POST' as const,
    headers: { 'Service-API-Key': key, 'Content-Type': 'application/json' },
    bodyOf: () =>
      JSON.stringify({
        user_id: randomCaller(),
      }),
    freshIdempotencyKeys: keyed,
  };
}

/** A caller drawn from ten million numbers, as a customer's traffic spreads over its callers. */
export function randomCaller(): string {
  return `+1415${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;
}
