// A process delivers at most its share of the endpoints (the dispatcher's maxEndpoints, 1,000 by
// default, each a feed subscription and up to 8 attempts): the others stay unleased, and another
// process takes them.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { webhookEndpoints } from '../src/db/schema/sqlite.js';
import { createWebhookEndpoint } from '../src/use-cases/webhook-endpoints.js';
import { WebhookDispatcher, type DispatcherOptions } from '../src/runtime/webhooks/dispatcher.js';
import { createTenant } from './support/harness.js';
import { createTestDb, queryTestDb } from './support/test-database.js';
import { everyEventTo, inProcessDispatcher } from './support/webhook-delivery-testbed.js';

const ENDPOINTS = 3;
const SHARE = 2;
const targets = { allowHttp: false, allowPrivateAddresses: true };

let db: Db;
let options: DispatcherOptions;

beforeAll(async () => {
  db = await createTestDb();
  const { organizationId } = await createTenant(db, 'Acme');
  for (let i = 0; i < ENDPOINTS; i += 1) {
    // Nothing is ever delivered: the organization has no events.
    await createWebhookEndpoint(
      db,
      organizationId,
      everyEventTo(`https://127.0.0.1:9/hook-${i}`),
      targets,
    );
  }
  options = { ...inProcessDispatcher(db, targets), maxEndpoints: SHARE };
});
afterAll(() => db.close());

/** How many endpoints each lease owner holds, most first. */
async function leasesByOwner(): Promise<number[]> {
  const rows = await queryTestDb<{ held: number | string }>(
    db,
    sql`SELECT COUNT(*) AS held FROM ${webhookEndpoints}
         WHERE lease_owner IS NOT NULL GROUP BY lease_owner ORDER BY held DESC`,
  );
  return rows.map((row) => Number(row.held));
}

describe('the endpoints one process delivers', () => {
  it('are at most its share; a second process takes the rest', async () => {
    const first = new WebhookDispatcher(options);
    const second = new WebhookDispatcher(options);
    try {
      first.start();
      await expect.poll(() => first.size).toBe(SHARE);
      // Turns later (two a second), still its share and no more.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(first.size).toBe(SHARE);
      expect(await leasesByOwner()).toEqual([SHARE]);

      second.start();
      await expect.poll(() => second.size).toBe(ENDPOINTS - SHARE);
      expect(await leasesByOwner()).toEqual([SHARE, ENDPOINTS - SHARE]);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    // Stopping hands the leases back at once.
    expect(await leasesByOwner()).toEqual([]);
  }, 30_000);
});
