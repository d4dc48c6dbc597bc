// The API promises that deliveries to a deleted, disabled or changed endpoint stop within a
// second; the dispatcher stops them at its next renewal of the endpoint's lease. So it renews
// every lease it holds at least once a second, however long its turns take.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { webhookEndpoints } from '../src/db/schema/sqlite.js';
import { createWebhookEndpoint } from '../src/use-cases/webhook-endpoints.js';
import { WebhookDispatcher } from '../src/runtime/webhooks/dispatcher.js';
import { createTenant } from './support/harness.js';
import { createTestDb, queryTestDb } from './support/test-database.js';
import { everyEventTo, inProcessDispatcher } from './support/webhook-delivery-testbed.js';

const targets = { allowHttp: false, allowPrivateAddresses: true };
/** How long the lease is watched. */
const WATCH_MS = 3_000;

let db: Db;

beforeAll(async () => {
  db = await createTestDb();
  const { organizationId } = await createTenant(db, 'Acme');
  // Nothing is ever delivered: the organization has no events.
  await createWebhookEndpoint(
    db,
    organizationId,
    everyEventTo('https://127.0.0.1:9/hook'),
    targets,
  );
});
afterAll(() => db.close());

/** The endpoint's lease expiry: the renewing turn's start plus the lease, to the millisecond. */
async function leaseExpiry(): Promise<number | null> {
  const [row] = await queryTestDb<{ expires: string | null }>(
    db,
    sql`SELECT lease_expires_at AS expires FROM ${webhookEndpoints}`,
  );
  return row?.expires ? Date.parse(row.expires) : null;
}

describe("the dispatcher's lease renewals", () => {
  it('come at least once a second, so a deleted endpoint stops within the second promised', async () => {
    const dispatcher = new WebhookDispatcher(inProcessDispatcher(db, targets));
    // Each renewal's expiry, as seen: read far more often than renewals come, none is missed.
    const expiries: number[] = [];
    try {
      dispatcher.start();
      await expect.poll(() => dispatcher.size).toBe(1);
      const began = performance.now();
      while (performance.now() - began < WATCH_MS) {
        const expiry = await leaseExpiry();
        if (expiry !== null && expiry !== expiries.at(-1)) expiries.push(expiry);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await dispatcher.stop();
    }
    // Apart by as much as the turns that wrote them started apart: a turn's own time included.
    const gaps = expiries.slice(1).map((expiry, i) => expiry - expiries[i]!);
    expect(expiries.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...gaps)).toBeLessThan(1_000);
  });
});
