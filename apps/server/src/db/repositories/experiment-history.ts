// An experiment's change history as stored: one row per change, written inside the change's own
// transaction (use-cases/experiment-changes.ts `recordChange`), and read in pages newest first.
// What an entry records is domain/experiments.ts's.

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import type {
  ChangeAction,
  ChangeActor,
  ExperimentChangeProperty,
  FieldChanges,
} from '../../vocabulary/experiments.js';
import type { ListedPage, ListQuery } from '../../vocabulary/list-query.js';
import { selectListPage, type ListTable } from '../engine/list-table.js';
import {
  execute,
  idEquals,
  insertValues,
  jsonText,
  parsedJson,
  runListRead,
  selectRows,
  type Steps,
} from '../engine/portable-sql.js';
import { experimentChanges, experiments } from '../schema/sqlite.js';

export interface ExperimentChangeRecord {
  id: number;
  experimentId: number;
  occurredAt: string;
  action: ChangeAction;
  actor: ChangeActor;
  requestId: string | null;
  changes: FieldChanges;
}

/** Appends one entry to the history. */
export function appendChange(
  organizationId: number,
  change: Omit<ExperimentChangeRecord, 'id'>,
): Steps<void> {
  const { actor } = change;
  return execute(
    sql`INSERT INTO ${experimentChanges} ${insertValues(experimentChanges, [
      {
        organizationId,
        experimentId: change.experimentId,
        occurredAt: change.occurredAt,
        action: change.action,
        actorType: actor.type,
        actorKeyId: actor.type === 'api_key' ? actor.keyId : null,
        actorKeyName: actor.type === 'api_key' ? actor.keyName : null,
        requestId: change.requestId,
        changes: jsonText(change.changes),
      },
    ])}`,
  );
}

/** What a history row says of its change: which, when, and who made it. */
export interface ChangeHeadRow extends StoredActor {
  id: number;
  experimentId: number;
  occurredAt: string;
  action: ChangeAction;
}

/** The columns of a ChangeHeadRow, for the reads of the history. */
export const changeHeadColumns = {
  id: experimentChanges.id,
  experimentId: experimentChanges.experimentId,
  occurredAt: experimentChanges.occurredAt,
  action: experimentChanges.action,
  actorType: experimentChanges.actorType,
  actorKeyId: experimentChanges.actorKeyId,
  actorKeyName: experimentChanges.actorKeyName,
};

interface ExperimentChangeRow extends ChangeHeadRow {
  requestId: string | null;
  /** Text on SQLite, parsed on PostgreSQL. */
  changes: FieldChanges | string;
}

const CHANGE_LIST_TABLE: ListTable<'id'> = {
  from: sql`${experimentChanges}`,
  organizationColumn: experimentChanges.organizationId,
  primaryKey: experimentChanges.id,
  columns: { id: experimentChanges.id },
  fields: {
    ...changeHeadColumns,
    requestId: experimentChanges.requestId,
    changes: experimentChanges.changes,
  },
};

/**
 * One page of an experiment's history, newest first. The experiment may be deleted; null for an
 * id that never named an experiment of the organization (no record, no history).
 */
export async function readHistoryPage(
  db: Db,
  organizationId: number,
  experimentId: number,
  query: ListQuery<ExperimentChangeProperty>,
): Promise<ListedPage<ExperimentChangeRecord> | null> {
  return runListRead(db, function* () {
    const [known] = yield* selectRows<{ id: number }>(
      sql`SELECT ${experiments.id} AS "id" FROM ${experiments}
          WHERE ${experiments.organizationId} = ${organizationId} AND ${idEquals(experiments.id, experimentId)}
        UNION ALL
        SELECT ${experimentChanges.experimentId} AS "id" FROM ${experimentChanges}
          WHERE ${experimentChanges.organizationId} = ${organizationId}
            AND ${idEquals(experimentChanges.experimentId, experimentId)}
        LIMIT 1`,
    );
    if (!known) return null;
    const { rows, totalCount, next } = yield* selectListPage<'id', ExperimentChangeRow>(
      CHANGE_LIST_TABLE,
      organizationId,
      query,
      db,
      idEquals(experimentChanges.experimentId, experimentId),
    );
    const records = rows.map(
      ({ actorType, actorKeyId, actorKeyName, changes, ...row }): ExperimentChangeRecord => ({
        ...row,
        actor: storedActor({ actorType, actorKeyId, actorKeyName }),
        changes: parsedJson(changes),
      }),
    );
    return { records, totalCount, next };
  });
}

/** The stored actor columns of a history row; the key's are set exactly for `api_key`. */
export interface StoredActor {
  actorType: ChangeActor['type'];
  actorKeyId: string | null;
  actorKeyName: string | null;
}

/** Who made a change, read back from its history row. */
export function storedActor({ actorType, actorKeyId, actorKeyName }: StoredActor): ChangeActor {
  return actorType === 'api_key'
    ? { type: 'api_key', keyId: actorKeyId!, keyName: actorKeyName! }
    : { type: actorType };
}
