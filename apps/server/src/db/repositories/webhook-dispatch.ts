// What the webhook dispatcher (src/runtime/webhooks/) reads and writes: the leases on endpoints, their
// positions, the messages due a retry and the delivery log. Every lease and position write names
// its owner in the WHERE, so a process whose lease lapsed (it was paused, or cut off) and was
// taken over writes nothing; each is one statement, atomic on both databases. When to retry, when
// to disable and what a message holds is the dispatcher's.

import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { EventProperty } from '../../vocabulary/events.js';
import type { EndedReason } from '../../vocabulary/experiments.js';
import type { Db } from '../engine/client.js';
import { gatherBatches } from '../engine/gather-batches.js';
import {
  execute,
  insertValues,
  parsedJson,
  prepared,
  runSteps,
  runWriteSteps,
  selectList,
  selectRows,
  type Steps,
} from '../engine/portable-sql.js';
import { changeHeadColumns, type ChangeHeadRow } from './experiment-history.js';
import {
  experimentChanges,
  experiments,
  webhookAttempts,
  webhookEndpoints,
  webhookMessages,
} from '../schema/sqlite.js';

/** An endpoint as its leaseholder delivers for it. */
export interface LeasedEndpoint {
  id: number;
  organizationId: number;
  url: string;
  searchFields: EventProperty[];
  searchFieldValues: string[];
  messageTypes: string[];
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  eventPosition: number;
  historyPosition: number;
  failingSince: string | null;
  updatedAt: string;
}

/** What an endpoint receives, as the drivers return it: JSON text on SQLite, parsed on PostgreSQL. */
export interface StoredSubscription<Type extends string> {
  searchFields: EventProperty[] | string;
  searchFieldValues: string[] | string;
  messageTypes: Type[] | string;
}

/** What an endpoint receives, parsed: for its leaseholder and for its record alike. */
export function parsedSubscription<Type extends string>(row: StoredSubscription<Type>) {
  return {
    searchFields: parsedJson(row.searchFields),
    searchFieldValues: parsedJson(row.searchFieldValues),
    messageTypes: parsedJson(row.messageTypes),
  };
}

type LeasedEndpointRow = Omit<
  LeasedEndpoint,
  keyof StoredSubscription<string> | 'eventPosition' | 'historyPosition'
> &
  StoredSubscription<string> & {
    // node-postgres reads a bigint as text.
    eventPosition: number | string;
    historyPosition: number | string;
  };

const LEASED_COLUMNS = selectList({
  id: webhookEndpoints.id,
  organizationId: webhookEndpoints.organizationId,
  url: webhookEndpoints.url,
  searchFields: webhookEndpoints.searchFields,
  searchFieldValues: webhookEndpoints.searchFieldValues,
  messageTypes: webhookEndpoints.messageTypes,
  secret: webhookEndpoints.secret,
  previousSecret: webhookEndpoints.previousSecret,
  previousSecretExpiresAt: webhookEndpoints.previousSecretExpiresAt,
  eventPosition: webhookEndpoints.eventPosition,
  historyPosition: webhookEndpoints.historyPosition,
  failingSince: webhookEndpoints.failingSince,
  updatedAt: webhookEndpoints.updatedAt,
});

function leasedEndpoint(row: LeasedEndpointRow): LeasedEndpoint {
  return {
    ...row,
    ...parsedSubscription(row),
    eventPosition: Number(row.eventPosition),
    historyPosition: Number(row.historyPosition),
  };
}

function* leaseUpdate(owner: string, expiresAt: string, which: SQL): Steps<LeasedEndpoint[]> {
  const rows = yield* selectRows<LeasedEndpointRow>(
    sql`UPDATE ${webhookEndpoints}
        SET lease_owner = ${owner}, lease_expires_at = ${expiresAt}
        WHERE ${webhookEndpoints.enabled} AND ${which}
        RETURNING ${LEASED_COLUMNS}`,
  );
  return rows.map(leasedEndpoint);
}

/** Renews the leases `owner` holds on enabled endpoints; returns those endpoints as they are now. */
export function renewLeases(db: Db, owner: string, expiresAt: string): Promise<LeasedEndpoint[]> {
  return runWriteSteps(db, () =>
    leaseUpdate(owner, expiresAt, sql`${webhookEndpoints.leaseOwner} = ${owner}`),
  );
}

/** Takes up to `limit` enabled endpoints that nobody holds, or whose lease lapsed before `now`. */
export function claimLeases(
  db: Db,
  owner: string,
  now: string,
  expiresAt: string,
  limit: number,
): Promise<LeasedEndpoint[]> {
  const free = sql`(${webhookEndpoints.leaseOwner} IS NULL OR ${webhookEndpoints.leaseExpiresAt} < ${now})`;
  // The outer condition is checked again on each row as it is updated, so of two processes that
  // picked the same free endpoint, one takes it and the other's update skips it.
  return runWriteSteps(db, () =>
    leaseUpdate(
      owner,
      expiresAt,
      sql`${free} AND ${webhookEndpoints.id} IN (
            SELECT ${webhookEndpoints.id} FROM ${webhookEndpoints}
            WHERE ${webhookEndpoints.enabled} AND ${free}
            ORDER BY ${webhookEndpoints.id} LIMIT ${limit})`,
    ),
  );
}

/** Whether `owner` still holds the endpoint (it exists, is enabled, and no change cleared it). */
export async function holdsLease(db: Db, endpointId: number, owner: string): Promise<boolean> {
  const rows = await runSteps(db, () =>
    selectRows<{ id: number }>(
      sql`SELECT ${webhookEndpoints.id} AS "id" FROM ${webhookEndpoints}
          WHERE ${webhookEndpoints.id} = ${endpointId} AND ${webhookEndpoints.leaseOwner} = ${owner}
            AND ${webhookEndpoints.enabled}`,
    ),
  );
  return rows.length > 0;
}

/** Gives up every lease `owner` holds, so another process takes them over at once. */
export function releaseLeases(db: Db, owner: string): Promise<void> {
  return runWriteSteps(db, () =>
    execute(
      sql`UPDATE ${webhookEndpoints} SET lease_owner = NULL, lease_expires_at = NULL
          WHERE ${webhookEndpoints.leaseOwner} = ${owner}`,
    ),
  );
}

/**
 * Moves an endpoint's event or history position from `from` to `to` while `owner` holds it and
 * nobody moved it meanwhile (a replay rewinds it); false when either changed.
 */
export async function advancePosition(
  db: Db,
  endpointId: number,
  owner: string,
  column: 'event_position' | 'history_position',
  from: number,
  to: number,
): Promise<boolean> {
  const rows = await runWriteSteps(db, () =>
    selectRows<{ id: number }>(
      sql`UPDATE ${webhookEndpoints} SET ${sql.raw(column)} = ${to}
          WHERE ${webhookEndpoints.id} = ${endpointId}
            AND ${webhookEndpoints.leaseOwner} = ${owner}
            AND ${sql.raw(column)} = ${from}
          RETURNING ${webhookEndpoints.id} AS "id"`,
    ),
  );
  return rows.length > 0;
}

/** Turns an endpoint off with the reason its owner gives; its lease goes with it. */
export function disableEndpoint(
  db: Db,
  endpointId: number,
  reason: string,
  now: string,
): Promise<void> {
  return runWriteSteps(db, () =>
    execute(
      sql`UPDATE ${webhookEndpoints}
          SET enabled = FALSE, disabled_reason = ${reason}, lease_owner = NULL,
              lease_expires_at = NULL, updated_at = ${now}
          WHERE ${webhookEndpoints.id} = ${endpointId}`,
    ),
  );
}

/** A message waiting for a later attempt. */
export interface DueMessage {
  id: number;
  webhookId: string;
  type: string;
  /** Null for a test message. */
  position: string | null;
  payload: string;
  attempts: number;
}

/** Up to `limit` of the endpoint's pending messages due at `now`, oldest due first. */
export function dueMessages(
  db: Db,
  endpointId: number,
  now: string,
  excludedIds: readonly number[],
  limit: number,
): Promise<DueMessage[]> {
  const notExcluded =
    excludedIds.length === 0
      ? sql`TRUE`
      : sql`${webhookMessages.id} NOT IN (${sql.join(
          excludedIds.map((id) => sql`${id}`),
          sql`, `,
        )})`;
  return runSteps(db, () =>
    selectRows<DueMessage>(
      sql`SELECT ${selectList({
        id: webhookMessages.id,
        webhookId: webhookMessages.webhookId,
        type: webhookMessages.type,
        position: webhookMessages.position,
        payload: webhookMessages.payload,
        attempts: webhookMessages.attempts,
      })} FROM ${webhookMessages}
        WHERE ${webhookMessages.endpointId} = ${endpointId} AND ${webhookMessages.status} = 'pending'
          AND ${webhookMessages.nextAttemptAt} <= ${now} AND ${notExcluded}
        ORDER BY ${webhookMessages.nextAttemptAt}, ${webhookMessages.id} LIMIT ${limit}`,
    ),
  );
}

export type AttemptStatus = 'delivered' | 'pending' | 'failed';

/** One attempt as the delivery log keeps it. */
export interface AttemptRecord {
  endpointId: number;
  organizationId: number;
  webhookId: string;
  type: string;
  position: string | null;
  payload: string;
  /** 1-based. */
  attempt: number;
  status: AttemptStatus;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
  nextAttemptAt: string | null;
}

/** The log row's columns, all but its id, in the order insertLoggedRows takes them. */
const LOGGED = Object.entries(getTableColumns(webhookAttempts)).filter(([key]) => key !== 'id');
const loggedInto = sql`INSERT INTO ${webhookAttempts} (${sql.join(
  LOGGED.map(([, column]) => sql.identifier(column.name)),
  sql`, `,
)})`;

/**
 * A batch of log rows in one statement whose text is the same for any number of rows, so it is
 * rendered and prepared once: one JSON array of rows on SQLite, one array per column (cast to the
 * column's type) on PostgreSQL. As VALUES, each batch was rendered anew with all its values, a
 * tenth of the webhook thread's time (docs/benchmarks.md, "Figures behind the code").
 */
const insertLoggedRows = {
  sqlite: prepared(
    sql`${loggedInto} SELECT ${sql.raw(LOGGED.map((_, index) => `value ->> ${index}`).join(', '))}
        FROM json_each(${sql.placeholder('rows')})`,
  ),
  postgres: prepared(
    sql`${loggedInto} SELECT * FROM unnest(${sql.join(
      LOGGED.map(([key, { dataType }]) => {
        const type = sql.raw(dataType === 'number' ? 'integer' : 'text');
        return sql`CAST(${sql.placeholder(key)} AS ${type}[])`;
      }),
      sql`, `,
    )})`,
  ),
};

/** The values of insertLoggedRows[kind] for `attempts`. */
function loggedRowValues(kind: Db['kind'], attempts: readonly AttemptRecord[]) {
  // Every column but the id is a field of the record (the log row is the record without payload).
  const keys = LOGGED.map(([key]) => key as keyof AttemptRecord);
  if (kind === 'sqlite') {
    return { rows: JSON.stringify(attempts.map((attempt) => keys.map((key) => attempt[key]))) };
  }
  return Object.fromEntries(keys.map((key) => [key, attempts.map((attempt) => attempt[key])]));
}

/**
 * First attempts that were delivered (most of all attempts), gathered per turn of the event loop
 * and stored together: at thousands of deliveries a second, one write (and on SQLite one turn of
 * the write lock) for many rather than one each. Each caller is answered once its row committed.
 */
const recordDeliveredTogether = gatherBatches(
  (db: Db, attempts: AttemptRecord[]) =>
    runWriteSteps(db, function* () {
      yield* insertLoggedRows[db.kind](loggedRowValues(db.kind, attempts));
      const endpointIds = [...new Set(attempts.map((attempt) => attempt.endpointId))];
      // Written only when it changes: most deliveries leave the endpoint's row alone.
      yield* execute(
        sql`UPDATE ${webhookEndpoints} SET failing_since = NULL
            WHERE ${webhookEndpoints.id} IN (${sql.join(
              endpointIds.map((id) => sql`${id}`),
              sql`, `,
            )}) AND ${webhookEndpoints.failingSince} IS NOT NULL`,
      );
      return attempts.map(() => ({ ok: true as const, value: null }));
    }),
  // One batch at a time: what is delivered while one is written goes in the next.
  { laneOf: () => 0 },
);

/**
 * Stores an attempt: its log row; the message row (`messageId`'s, or a new one when a first
 * attempt was not delivered, so the retry survives the process); and whether the endpoint is
 * failing. Returns since when the endpoint has been failing (null once an attempt succeeded).
 */
export function recordAttempt(
  db: Db,
  attempt: AttemptRecord,
  messageId: number | null,
): Promise<string | null> {
  if (attempt.status === 'delivered' && messageId === null) {
    return recordDeliveredTogether(db, attempt);
  }
  // Statement by statement: a crash between them leaves a log row without its retry, and the
  // message unhandled, so it is sent again. One transaction would make the attempts of an endpoint
  // in flight together conflict on its row (PostgreSQL's SERIALIZABLE) for no gain.
  return runWriteSteps(db, function* () {
    const { payload, ...logged } = attempt;
    const { endpointId, attemptedAt } = attempt;
    yield* execute(sql`INSERT INTO ${webhookAttempts} ${insertValues(webhookAttempts, [logged])}`);
    if (messageId !== null) {
      yield* execute(
        sql`UPDATE ${webhookMessages}
            SET attempts = ${attempt.attempt}, status = ${attempt.status},
                next_attempt_at = ${attempt.nextAttemptAt}
            WHERE ${webhookMessages.id} = ${messageId}`,
      );
    } else if (attempt.status !== 'delivered') {
      const { organizationId, webhookId, type, position, status, nextAttemptAt } = attempt;
      const message = { endpointId, organizationId, webhookId, type, position, payload, status };
      yield* execute(
        sql`INSERT INTO ${webhookMessages} ${insertValues(webhookMessages, [
          { ...message, attempts: attempt.attempt, nextAttemptAt, createdAt: attemptedAt },
        ])}`,
      );
    }
    // Written only when it changes: most attempts leave the endpoint's row alone.
    if (attempt.status === 'delivered') {
      yield* execute(
        sql`UPDATE ${webhookEndpoints} SET failing_since = NULL
            WHERE ${webhookEndpoints.id} = ${endpointId} AND ${webhookEndpoints.failingSince} IS NOT NULL`,
      );
      return null;
    }
    yield* execute(
      sql`UPDATE ${webhookEndpoints} SET failing_since = ${attemptedAt}
          WHERE ${webhookEndpoints.id} = ${endpointId} AND ${webhookEndpoints.failingSince} IS NULL`,
    );
    const [endpoint] = yield* selectRows<{ failingSince: string | null }>(
      sql`SELECT ${webhookEndpoints.failingSince} AS "failingSince" FROM ${webhookEndpoints}
          WHERE ${webhookEndpoints.id} = ${endpointId}`,
    );
    return endpoint?.failingSince ?? null;
  });
}

/** An experiment's start, stop or end, from its history. */
export interface StatusChangeRow extends ChangeHeadRow {
  action: 'started' | 'stopped' | 'ended';
  /** The experiment's ended_reason now (null once it is deleted). */
  endedReason: EndedReason | null;
}

/** The organization's status changes with ids in (afterId, throughId], up to `limit`, by id. */
export function statusChangesAfter(
  db: Db,
  organizationId: number,
  afterId: number,
  throughId: number,
  limit: number,
): Promise<StatusChangeRow[]> {
  return runSteps(db, () =>
    selectRows<StatusChangeRow>(
      sql`SELECT ${selectList({
        ...changeHeadColumns,
        endedReason: experiments.endedReason,
      })} FROM ${experimentChanges}
        LEFT JOIN ${experiments} ON ${experiments.id} = ${experimentChanges.experimentId}
        WHERE ${experimentChanges.organizationId} = ${organizationId}
          AND ${experimentChanges.id} > ${afterId} AND ${experimentChanges.id} <= ${throughId}
          AND ${experimentChanges.action} IN ('started', 'stopped', 'ended')
        ORDER BY ${experimentChanges.id} LIMIT ${limit}`,
    ),
  );
}

/** Whether any organization has a webhook endpoint: until one does, no process delivers. */
export async function anyWebhookEndpoint(db: Db): Promise<boolean> {
  const rows = await runSteps(db, () =>
    selectRows(sql`SELECT 1 AS "one" FROM ${webhookEndpoints} LIMIT 1`),
  );
  return rows.length > 0;
}

/** The highest history id of every organization: what has been written, committed or not yet. */
export async function highestHistoryId(db: Db): Promise<number> {
  const [row] = await runSteps(db, () =>
    selectRows<{ top: number | string | null }>(
      sql`SELECT max(${experimentChanges.id}) AS "top" FROM ${experimentChanges}`,
    ),
  );
  return Number(row?.top ?? 0);
}

/** Removes delivery log rows and finished messages older than `before`. */
export function sweepDeliveryLog(db: Db, before: string): Promise<void> {
  return runWriteSteps(db, function* () {
    yield* execute(
      sql`DELETE FROM ${webhookAttempts} WHERE ${webhookAttempts.attemptedAt} < ${before}`,
    );
    yield* execute(
      sql`DELETE FROM ${webhookMessages}
          WHERE ${webhookMessages.status} <> 'pending' AND ${webhookMessages.createdAt} < ${before}`,
    );
  });
}
