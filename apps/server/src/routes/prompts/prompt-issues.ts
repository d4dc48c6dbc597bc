// What other areas need to know about prompts' validation issues, computed exactly as the prompts
// list shows them (experiment start warnings name prompts with error issues, api-decisions.md
// section 6).

import type { Db } from '../../db/client.js';
import { findPrompts } from '../../db/repositories/prompts.js';
import { toWirePrompt, toWireTools } from './prompts.wire.js';

/**
 * The ids of the rules a prompt breaks with severity error, once each in rule order, for each of
 * these prompts of the organization (prompts without such issues map to `[]`; ids of other
 * organizations' prompts are left out).
 */
export async function promptErrorIssueIds(
  db: Db,
  organizationId: number,
  promptIds: readonly number[],
): Promise<Map<number, string[]>> {
  const { rows, tools } = await findPrompts(db, organizationId, promptIds);
  const wireTools = toWireTools(tools);
  return new Map(
    rows.map((row) => {
      const issues = toWirePrompt(row, wireTools).validation_issues;
      const errors = issues.filter((issue) => issue.severity === 'error');
      return [row.id, [...new Set(errors.map((issue) => issue.id))]];
    }),
  );
}
