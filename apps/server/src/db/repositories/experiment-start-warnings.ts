// What an experiment's start warnings read of its variants' agents.

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { idEquals, runSteps, selectList, selectRows } from '../engine/portable-sql.js';
import { agents, experimentVariants } from '../schema/sqlite.js';

export interface VariantAgent {
  variantName: string;
  agentId: number;
  agentName: string;
  pinnedPromptVersion: number | null;
  promptId: number | null;
}

/** Each variant's agent, in variant order. */
export async function variantAgents(db: Db, experimentId: number): Promise<VariantAgent[]> {
  return runSteps(db, () =>
    selectRows<VariantAgent>(
      sql`SELECT ${selectList({
        variantName: experimentVariants.name,
        agentId: agents.id,
        agentName: agents.name,
        pinnedPromptVersion: agents.pinnedPromptVersion,
        promptId: agents.promptId,
      })} FROM ${experimentVariants}
        INNER JOIN ${agents} ON ${agents.id} = ${experimentVariants.agentId}
        WHERE ${idEquals(experimentVariants.experimentId, experimentId)}
        ORDER BY ${experimentVariants.position}`,
    ),
  );
}
