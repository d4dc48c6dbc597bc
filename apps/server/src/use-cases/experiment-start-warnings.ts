// Start warnings need facts from two areas (agents and their prompts' validation issues).

import type { Db } from '../db/engine/client.js';
import { variantAgents } from '../db/repositories/experiment-start-warnings.js';
import { findPrompts } from '../db/repositories/prompts.js';
import { startWarnings } from '../domain/experiments.js';
import { promptErrorIssueIds } from '../domain/prompt-validation.js';

export async function experimentStartWarnings(
  db: Db,
  organizationId: number,
  experimentId: number,
): Promise<string[]> {
  const variants = await variantAgents(db, experimentId);
  const { rows, tools } = await findPrompts(
    db,
    organizationId,
    variants.flatMap((v) => (v.promptId === null ? [] : [v.promptId])),
  );
  const errorIssues = promptErrorIssueIds(rows, tools);
  return startWarnings(
    variants.map((v) => ({
      ...v,
      promptErrorIssueIds: v.promptId === null ? [] : (errorIssues.get(v.promptId) ?? []),
    })),
  );
}
