// Delivery log rows as the dispatcher writes them, for tests of what reads the log (the SDK, the
// CLI) without running a dispatcher: one attempt per status given, a day apart, oldest first.

import { sql } from 'drizzle-orm';
import type { Db } from '../../src/db/engine/client.js';
import { insertValues } from '../../src/db/engine/portable-sql.js';
import { webhookAttempts } from '../../src/db/schema/sqlite.js';
import type { WebhookDeliveryStatus } from '../../src/vocabulary/webhooks.js';
import { queryTestDb } from './test-database.js';

export async function insertWebhookAttempts(
  db: Db,
  organizationId: number,
  endpointId: number,
  statuses: readonly WebhookDeliveryStatus[],
): Promise<void> {
  const rows = statuses.map((status, index) => ({
    endpointId,
    organizationId,
    webhookId: `msg_${endpointId}_${index}`,
    type: 'event' as const,
    position: `position-${index}`,
    attempt: index + 1,
    status,
    responseStatus: status === 'delivered' ? 204 : status === 'failed' ? 500 : null,
    error: status === 'delivered' ? null : 'connection refused',
    durationMs: 12,
    attemptedAt: `2026-05-${String(index + 1).padStart(2, '0')}T00:00:00.000Z`,
    nextAttemptAt: status === 'pending' ? '2026-06-01T00:00:00.000Z' : null,
  }));
  await queryTestDb(db, sql`INSERT INTO ${webhookAttempts} ${insertValues(webhookAttempts, rows)}`);
}
