// What the API reads and queues of an endpoint's deliveries: its delivery log (webhook_attempts,
// written by the dispatcher) in pages, and test messages (webhook_messages rows that the
// dispatcher sends as it sends retries).

import { and, eq, sql } from 'drizzle-orm';
import type { ListedPage, ListQuery } from '../../vocabulary/list-query.js';
import type {
  WebhookDeliveryProperty,
  WebhookDeliveryStatus,
  WebhookDeliveryType,
} from '../../vocabulary/webhooks.js';
import type { Db } from '../engine/client.js';
import { selectListPage, type ListTable } from '../engine/list-table.js';
import {
  execute,
  idEquals,
  insertValues,
  runListRead,
  selectRows,
  type Steps,
} from '../engine/portable-sql.js';
import { webhookAttempts, webhookMessages } from '../schema/sqlite.js';

export interface WebhookAttemptRecord {
  id: number;
  webhookId: string;
  type: WebhookDeliveryType;
  position: string | null;
  attempt: number;
  status: WebhookDeliveryStatus;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
  nextAttemptAt: string | null;
}

const ATTEMPT_FIELDS = {
  id: webhookAttempts.id,
  webhookId: webhookAttempts.webhookId,
  type: webhookAttempts.type,
  position: webhookAttempts.position,
  attempt: webhookAttempts.attempt,
  status: webhookAttempts.status,
  responseStatus: webhookAttempts.responseStatus,
  error: webhookAttempts.error,
  durationMs: webhookAttempts.durationMs,
  attemptedAt: webhookAttempts.attemptedAt,
  nextAttemptAt: webhookAttempts.nextAttemptAt,
};

const ATTEMPT_LIST_TABLE: ListTable<WebhookDeliveryProperty> = {
  from: sql`${webhookAttempts}`,
  organizationColumn: webhookAttempts.organizationId,
  primaryKey: webhookAttempts.id,
  columns: { id: webhookAttempts.id, status: webhookAttempts.status },
  fields: ATTEMPT_FIELDS,
  windowColumn: webhookAttempts.attemptedAt,
};

/** One page of the endpoint's attempts (the caller has checked the endpoint is the organization's). */
export async function listWebhookAttempts(
  db: Db,
  organizationId: number,
  endpointId: number,
  query: ListQuery<WebhookDeliveryProperty>,
): Promise<ListedPage<WebhookAttemptRecord>> {
  return runListRead(db, function* () {
    const { rows, totalCount, next } = yield* selectListPage<
      WebhookDeliveryProperty,
      WebhookAttemptRecord
    >(
      ATTEMPT_LIST_TABLE,
      organizationId,
      query,
      db,
      idEquals(webhookAttempts.endpointId, endpointId),
    );
    return { records: rows, totalCount, next };
  });
}

export interface NewTestMessage {
  endpointId: number;
  organizationId: number;
  webhookId: string;
  /** The body as it is sent, JSON text. */
  payload: string;
  now: string;
}

/** The endpoint's test messages that wait for an attempt. */
export function* countWaitingTestMessages(endpointId: number): Steps<number> {
  const [row] = yield* selectRows<{ n: number | string }>(
    sql`SELECT count(*) AS "n" FROM ${webhookMessages}
        WHERE ${and(
          eq(webhookMessages.endpointId, endpointId),
          sql`${webhookMessages.status} = 'pending'`,
          eq(webhookMessages.type, 'webhook.test'),
        )}`,
  );
  // PostgreSQL's count is a bigint, which node-postgres reads as text.
  return Number(row?.n ?? 0);
}

/** Queues a test message, due now: the dispatcher sends it as it sends a retry. */
export function insertTestMessage(message: NewTestMessage): Steps<void> {
  return execute(
    sql`INSERT INTO ${webhookMessages} ${insertValues(webhookMessages, [
      {
        endpointId: message.endpointId,
        organizationId: message.organizationId,
        webhookId: message.webhookId,
        type: 'webhook.test',
        position: null,
        payload: message.payload,
        attempts: 0,
        status: 'pending',
        nextAttemptAt: message.now,
        createdAt: message.now,
      },
    ])}`,
  );
}
