// An experiment's history: the entry each change writes inside its own transaction (the change
// and its entry commit together or not at all), and the pages the API and the CLI read.

import type { Db } from '../db/engine/client.js';
import type { Steps } from '../db/engine/portable-sql.js';
import {
  appendChange,
  readHistoryPage,
  type ExperimentChangeRecord,
} from '../db/repositories/experiment-history.js';
import { RecordNotFoundError } from '../domain/errors.js';
import type { ChangeAction, ExperimentChangeProperty } from '../vocabulary/experiments.js';
import type { ListPosition, ListQuery } from '../vocabulary/list-query.js';
import {
  fieldChanges,
  type ChangeAuthor,
  type ExperimentState,
} from '../domain/experiment-history.js';

/** Writes the history entry of a change from the experiment's state before and after it. */
export function recordChange(
  organizationId: number,
  experimentId: number,
  occurredAt: string,
  action: ChangeAction,
  author: ChangeAuthor,
  before: ExperimentState | null,
  after: ExperimentState | null,
): Steps<void> {
  return appendChange(organizationId, {
    experimentId,
    occurredAt,
    action,
    actor: author.actor,
    requestId: author.requestId,
    changes: fieldChanges(before, after),
  });
}

/**
 * One page of an experiment's history, newest first. The experiment may be deleted; an id that
 * never named an experiment of the organization (no record, no history) is not found.
 */
export async function experimentHistoryPage(
  db: Db,
  organizationId: number,
  experimentId: number,
  query: ListQuery<ExperimentChangeProperty>,
): Promise<{ records: ExperimentChangeRecord[]; totalCount: number; next: ListPosition | null }> {
  const page = await readHistoryPage(db, organizationId, experimentId, query);
  if (!page) {
    throw new RecordNotFoundError(`There is no experiment ${experimentId} in this organization.`);
  }
  return page;
}
