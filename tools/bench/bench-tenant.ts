// The organizations of the benchmarks, made with the server's own repositories the way
// `agentline org create`, `role create --all`, `key create` and `records load` make them.

import type { Db } from '../../apps/server/src/db/engine/client.js';
import type {
  AgentlineClient,
  Experiment,
  ExperimentCreate,
} from '../../packages/sdk/src/index.js';
import { createKeyWithOwnRole } from '../../apps/server/src/use-cases/api-keys.js';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { PERMISSIONS, type Permission } from '../../apps/server/src/vocabulary/permissions.js';
import { platformRecordsSchema } from '../../apps/server/src/records/format.js';
import { loadedIds } from '../../apps/server/src/records/load-result.js';
import { loadPlatformRecords } from '../../apps/server/src/records/loader.js';

/** A new key of the organization holding `permissions`, in a role of its own named as the key. */
export const newKey = (db: Db, organizationId: number, name: string, permissions: Permission[]) =>
  createKeyWithOwnRole(db, { organizationId, roleName: name, keyName: name, permissions });

/** A new organization and a key of it holding every permission, in a role of its own. */
export async function benchTenant(db: Db, name: string) {
  const { id: organizationId } = await createOrganization(db, name);
  return { organizationId, key: await newKey(db, organizationId, 'bench', [...PERMISSIONS]) };
}

/**
 * A new organization with an admin key, two agents (`a`, `b`) and one web chat target answered by
 * `a`, loaded as `agentline records load` loads them: what an experiment splitting a target's
 * sessions needs. `moreAgents` adds that many agents (`agent 0`...), each with a prompt of its
 * own, for lists with more than a row or two; `targets` makes that many targets, `main` the
 * first. With the ids of its agents by name and of its targets, in their order.
 */
export async function benchRoutingTenant(
  db: Db,
  name: string,
  { moreAgents = 0, targets = 1 }: { moreAgents?: number; targets?: number } = {},
) {
  const llm_config = { model: 'm', provider: 'openai', version: null };
  const more = Array.from({ length: moreAgents }, (_, i) => i);
  const tenant = await benchTenant(db, name);
  const records = platformRecordsSchema.parse({
    prompts: [
      { name: 'p', context: 'Answer.', llm_config },
      ...more.map((i) => ({ name: `prompt ${i}`, context: `Answer as agent ${i}.`, llm_config })),
    ],
    agents: [
      { name: 'a', prompt: 'p', pinned_prompt_version: 1 },
      { name: 'b', prompt: 'p', pinned_prompt_version: 1 },
      ...more.map((i) => ({ name: `agent ${i}`, prompt: `prompt ${i}`, pinned_prompt_version: 1 })),
    ],
    channels: [
      {
        name: 'web',
        kind: 'web_chat',
        targets: Array.from({ length: targets }, (_, i) => ({
          target: i === 0 ? 'main' : `t${i}`,
          agent: 'a',
        })),
      },
    ],
  });
  const loaded = await loadPlatformRecords(db, tenant.organizationId, records);
  const targetIds = Object.values(loadedIds(loaded.records, 'channel_targets'));
  return {
    ...tenant,
    agentIds: loadedIds(loaded.records, 'agents'),
    targetIds,
    targetId: targetIds[0]!,
  };
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
 * A caller drawn from ten million numbers, as a customer's traffic spreads over its callers: one
 * caller over and over would put every session's user_id index entry on the same page and every
 * session in the same variant.
 */
export function randomCaller(): string {
  return `+1415${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;
}
