// Webhook endpoints as the API reads and writes them: the list, one endpoint, and the rows a change
// writes. The use-cases (use-cases/webhook-endpoints.ts) check the input and own the transactions;
// the dispatcher's own reads and writes are in webhook-dispatch.ts. No read here selects a secret:
// create and rotate-secret answer the secret they generated, and nothing else shows one.

import { sql } from 'drizzle-orm';
import type { EventProperty } from '../../vocabulary/events.js';
import type { ListedPage, ListQuery } from '../../vocabulary/list-query.js';
import type { WebhookEndpointProperty, WebhookMessageType } from '../../vocabulary/webhooks.js';
import type { Db } from '../engine/client.js';
import { perDatabase } from '../engine/caches.js';
import type { ColumnMap } from '../engine/list-sql.js';
import { selectListPage, type ListTable } from '../engine/list-table.js';
import {
  idEquals,
  insertValues,
  jsonText,
  runListRead,
  runSteps,
  runWriteSteps,
  selectList,
  selectRows,
  setValues,
  type Steps,
} from '../engine/portable-sql.js';
import { events, experimentChanges, webhookEndpoints } from '../schema/sqlite.js';
import { parsedSubscription, type StoredSubscription } from './webhook-dispatch.js';

export interface WebhookEndpointRecord {
  id: number;
  url: string;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  searchFields: EventProperty[];
  searchFieldValues: string[];
  messageTypes: WebhookMessageType[];
  createdAt: string;
  updatedAt: string;
}

/** What a create or an update writes of an endpoint's settings. */
export interface WebhookEndpointSettings {
  url: string;
  description: string | null;
  enabled: boolean;
  searchFields: readonly EventProperty[];
  searchFieldValues: readonly string[];
  messageTypes: readonly WebhookMessageType[];
}

const ENDPOINT_FIELDS = {
  id: webhookEndpoints.id,
  url: webhookEndpoints.url,
  description: webhookEndpoints.description,
  enabled: webhookEndpoints.enabled,
  disabledReason: webhookEndpoints.disabledReason,
  searchFields: webhookEndpoints.searchFields,
  searchFieldValues: webhookEndpoints.searchFieldValues,
  messageTypes: webhookEndpoints.messageTypes,
  createdAt: webhookEndpoints.createdAt,
  updatedAt: webhookEndpoints.updatedAt,
};

/** A row as the drivers return it: SQLite's booleans are 0 and 1, its JSON is text. */
type EndpointRow = Omit<
  WebhookEndpointRecord,
  'enabled' | keyof StoredSubscription<WebhookMessageType>
> &
  StoredSubscription<WebhookMessageType> & { enabled: boolean | number };

function recordOf(row: EndpointRow): WebhookEndpointRecord {
  return { ...row, enabled: Boolean(row.enabled), ...parsedSubscription(row) };
}

/** The settings as column values (JSON columns as text). */
function settingsValues(settings: WebhookEndpointSettings) {
  return {
    url: settings.url,
    description: settings.description,
    enabled: settings.enabled,
    searchFields: jsonText(settings.searchFields),
    searchFieldValues: jsonText(settings.searchFieldValues),
    messageTypes: jsonText(settings.messageTypes),
  };
}

// message_types is searched and ordered by the JSON text it was stored as.
const endpointListTable = perDatabase(({ spelling }: Db): ListTable<WebhookEndpointProperty> => ({
  from: sql`${webhookEndpoints}`,
  organizationColumn: webhookEndpoints.organizationId,
  primaryKey: webhookEndpoints.id,
  columns: {
    id: webhookEndpoints.id,
    url: webhookEndpoints.url,
    description: webhookEndpoints.description,
    enabled: webhookEndpoints.enabled,
    disabled_reason: webhookEndpoints.disabledReason,
    message_types: spelling.jsonText(webhookEndpoints.messageTypes),
    created_at: webhookEndpoints.createdAt,
    updated_at: webhookEndpoints.updatedAt,
  } satisfies ColumnMap<WebhookEndpointProperty>,
  fields: ENDPOINT_FIELDS,
  windowColumn: webhookEndpoints.createdAt,
}));

/** One page of the organization's endpoints. */
export async function listWebhookEndpoints(
  db: Db,
  organizationId: number,
  query: ListQuery<WebhookEndpointProperty>,
): Promise<ListedPage<WebhookEndpointRecord>> {
  return runListRead(db, function* () {
    const { rows, totalCount, next } = yield* selectListPage<WebhookEndpointProperty, EndpointRow>(
      endpointListTable(db),
      organizationId,
      query,
      db,
    );
    return { records: rows.map(recordOf), totalCount, next };
  });
}

/** The organization's endpoint `id`, or null when it has none. */
export function* webhookEndpoint(
  organizationId: number,
  id: number,
): Steps<WebhookEndpointRecord | null> {
  const [row] = yield* selectRows<EndpointRow>(
    sql`SELECT ${selectList(ENDPOINT_FIELDS)} FROM ${webhookEndpoints}
        WHERE ${webhookEndpoints.organizationId} = ${organizationId}
          AND ${idEquals(webhookEndpoints.id, id)}`,
  );
  return row ? recordOf(row) : null;
}

export async function findWebhookEndpoint(
  db: Db,
  organizationId: number,
  id: number,
): Promise<WebhookEndpointRecord | null> {
  return runSteps(db, () => webhookEndpoint(organizationId, id));
}

export function* countWebhookEndpoints(organizationId: number): Steps<number> {
  const [row] = yield* selectRows<{ n: number | string }>(
    sql`SELECT count(*) AS "n" FROM ${webhookEndpoints}
        WHERE ${webhookEndpoints.organizationId} = ${organizationId}`,
  );
  // PostgreSQL's count is a bigint, which node-postgres reads as text.
  return Number(row?.n ?? 0);
}

/** The organization's highest experiment history id (0 when it has none). */
export function* highestHistoryIdOf(organizationId: number): Steps<number> {
  const [row] = yield* selectRows<{ top: number | null }>(
    sql`SELECT max(${experimentChanges.id}) AS "top" FROM ${experimentChanges}
        WHERE ${experimentChanges.organizationId} = ${organizationId}`,
  );
  return row?.top ?? 0;
}

export interface NewWebhookEndpoint extends WebhookEndpointSettings {
  organizationId: number;
  secret: string;
  eventPosition: number;
  historyPosition: number;
  now: string;
}

/** Inserts an endpoint; returns it as stored. */
export function* insertWebhookEndpoint(endpoint: NewWebhookEndpoint): Steps<WebhookEndpointRecord> {
  const [row] = yield* selectRows<EndpointRow>(
    sql`INSERT INTO ${webhookEndpoints} ${insertValues(webhookEndpoints, [
      {
        organizationId: endpoint.organizationId,
        ...settingsValues(endpoint),
        secret: endpoint.secret,
        eventPosition: endpoint.eventPosition,
        historyPosition: endpoint.historyPosition,
        createdAt: endpoint.now,
        updatedAt: endpoint.now,
      },
    ])} RETURNING ${selectList(ENDPOINT_FIELDS)}`,
  );
  return recordOf(row!);
}

// Every write below clears the lease: the process serving the endpoint finds its next
// conditional write refused (webhook-dispatch.ts), and whoever leases it next reads what this
// write left. `updated_at` moves with each.
const LEASE_CLEARED = { leaseOwner: null, leaseExpiresAt: null };

/**
 * Updates the organization's endpoint `id` and returns it, or null when it has none. `values`
 * are columns of webhook_endpoints, JSON columns as text.
 */
function* updateEndpoint(
  organizationId: number,
  id: number,
  values: Partial<Record<keyof typeof webhookEndpoints.$inferInsert, unknown>>,
): Steps<WebhookEndpointRecord | null> {
  const [row] = yield* selectRows<EndpointRow>(
    sql`UPDATE ${webhookEndpoints} SET ${setValues(webhookEndpoints, { ...values, ...LEASE_CLEARED })}
        WHERE ${webhookEndpoints.organizationId} = ${organizationId}
          AND ${idEquals(webhookEndpoints.id, id)}
        RETURNING ${selectList(ENDPOINT_FIELDS)}`,
  );
  return row ? recordOf(row) : null;
}

/**
 * Replaces the endpoint's settings; `clearFailure` also forgets why it was disabled and since when
 * it was failing.
 */
export function replaceWebhookEndpointSettings(
  organizationId: number,
  id: number,
  settings: WebhookEndpointSettings,
  { now, clearFailure }: { now: string; clearFailure: boolean },
): Steps<WebhookEndpointRecord | null> {
  return updateEndpoint(organizationId, id, {
    ...settingsValues(settings),
    ...(clearFailure ? { disabledReason: null, failingSince: null } : {}),
    updatedAt: now,
  });
}

/** The endpoint's current secret, for a rotation to keep beside the new one. */
export function* webhookEndpointSecret(organizationId: number, id: number): Steps<string | null> {
  const [row] = yield* selectRows<{ secret: string }>(
    sql`SELECT ${webhookEndpoints.secret} AS "secret" FROM ${webhookEndpoints}
        WHERE ${webhookEndpoints.organizationId} = ${organizationId}
          AND ${idEquals(webhookEndpoints.id, id)}`,
  );
  return row?.secret ?? null;
}

/** Signs with `secret` from now on, and with `previousSecret` beside it until it expires. */
export function storeWebhookEndpointSecret(
  organizationId: number,
  id: number,
  rotation: {
    secret: string;
    previousSecret: string;
    previousSecretExpiresAt: string;
    now: string;
  },
): Steps<WebhookEndpointRecord | null> {
  return updateEndpoint(organizationId, id, {
    secret: rotation.secret,
    previousSecret: rotation.previousSecret,
    previousSecretExpiresAt: rotation.previousSecretExpiresAt,
    updatedAt: rotation.now,
  });
}

/** Where the endpoint's delivery stands: the highest event and history ids handled. */
export interface WebhookPositions {
  eventPosition: number;
  historyPosition: number;
}

export function* webhookEndpointPositions(
  organizationId: number,
  id: number,
): Steps<WebhookPositions | null> {
  const [row] = yield* selectRows<{ eventPosition: number | string; historyPosition: number }>(
    sql`SELECT ${selectList({
      eventPosition: webhookEndpoints.eventPosition,
      historyPosition: webhookEndpoints.historyPosition,
    })} FROM ${webhookEndpoints}
        WHERE ${webhookEndpoints.organizationId} = ${organizationId}
          AND ${idEquals(webhookEndpoints.id, id)}`,
  );
  // node-postgres reads PostgreSQL's bigint event_position as text.
  return row
    ? { eventPosition: Number(row.eventPosition), historyPosition: row.historyPosition }
    : null;
}

/** Moves the endpoint's positions (a replay moves them back). */
export function storeWebhookEndpointPositions(
  organizationId: number,
  id: number,
  positions: WebhookPositions,
  now: string,
): Steps<WebhookEndpointRecord | null> {
  return updateEndpoint(organizationId, id, { ...positions, updatedAt: now });
}

/** Deletes the endpoint and, by cascade, its queued messages and delivery log. */
export async function deleteWebhookEndpointRow(
  db: Db,
  organizationId: number,
  id: number,
): Promise<boolean> {
  const deleted = await runWriteSteps(db, () =>
    selectRows<{ id: number }>(
      sql`DELETE FROM ${webhookEndpoints}
          WHERE ${webhookEndpoints.organizationId} = ${organizationId}
            AND ${idEquals(webhookEndpoints.id, id)}
          RETURNING ${webhookEndpoints.id} AS "id"`,
    ),
  );
  return deleted.length > 0;
}

/**
 * Where a replay from `since` puts the positions: just before the organization's first event
 * whose timestamp, and first history entry whose time, is at or after it; null for a kind with
 * none (nothing of it to send again).
 */
export function* positionsBefore(
  organizationId: number,
  since: string,
): Steps<{ eventPosition: number | null; historyPosition: number | null }> {
  const [row] = yield* selectRows<{
    firstEvent: number | string | null;
    firstChange: number | null;
  }>(
    sql`SELECT
          (SELECT min(${events.id}) FROM ${events}
            WHERE ${events.organizationId} = ${organizationId} AND ${events.timestamp} >= ${since})
            AS "firstEvent",
          (SELECT min(${experimentChanges.id}) FROM ${experimentChanges}
            WHERE ${experimentChanges.organizationId} = ${organizationId}
              AND ${experimentChanges.occurredAt} >= ${since})
            AS "firstChange"`,
  );
  const before = (id: number | string | null | undefined) => (id == null ? null : Number(id) - 1);
  return { eventPosition: before(row?.firstEvent), historyPosition: before(row?.firstChange) };
}
