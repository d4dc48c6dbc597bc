// The webhook thread's own life: it starts once the database holds an endpoint, not before; a
// thread that cannot open its database says so once and is not started again and again (its
// endpoints are left to other processes), and stopping it then still returns; one stopped while
// it loads is let load first. Delivery through a running thread is what every delivery test
// exercises (their servers start it, main.ts).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookEndpoint } from '../src/use-cases/webhook-endpoints.js';
import {
  startWebhookDelivery,
  WEBHOOKS_APPLICATION_NAME,
  type DeliveryThreadData,
} from '../src/runtime/webhooks/delivery-thread.js';
import { createTenant, type Tenant } from './support/harness.js';
import { expectThreadsBackTo, processThreads } from './support/process-threads.js';
import {
  createSharedTestDb,
  onPostgres,
  queryTestDb,
  type SharedTestDb,
} from './support/test-database.js';
import { everyEventTo } from './support/webhook-delivery-testbed.js';

const targets = { allowHttp: true, allowPrivateAddresses: true };
const RUNNING = 'the webhook thread is running';

let database: SharedTestDb;
let acme: Tenant;

beforeAll(async () => {
  database = await createSharedTestDb();
  acme = await createTenant(database.db, 'Acme');
});
afterAll(() => database?.close());

/** A logger whose lines land in `lines`. */
function capturedLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  return { lines, logger };
}

function threadData(databaseUrl: string): DeliveryThreadData {
  return {
    databaseUrl,
    listQueryTimeoutMs: 1000,
    logLevel: 'silent',
    dispatcher: { leaseMs: 15_000, retrySchedule: [1000], targets },
  };
}

const createEndpoint = () =>
  createWebhookEndpoint(
    database.db,
    acme.organizationId,
    everyEventTo('http://127.0.0.1:9/hook'),
    targets,
  );

describe('the webhook thread', () => {
  it('starts once the database holds an endpoint, and not before', async () => {
    const { lines, logger } = capturedLogger();
    const delivery = startWebhookDelivery(database.db, logger, threadData(database.databaseUrl));
    try {
      // Three looks and more: no endpoint, no thread.
      await new Promise((resolve) => setTimeout(resolve, 1600));
      expect(lines).toEqual([]);
      await createEndpoint();
      await expect
        .poll(() => lines.map((line) => line.msg), { timeout: 10_000 })
        .toContain(RUNNING);
    } finally {
      await delivery.stop();
    }
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
  });

  it.runIf(onPostgres)("names its connections apart from the API's", async () => {
    await createEndpoint();
    const { logger } = capturedLogger();
    const delivery = startWebhookDelivery(database.db, logger, threadData(database.databaseUrl));
    const namesOnThisDatabase = async () =>
      (
        await queryTestDb<{ name: string }>(
          database.db,
          sql`SELECT DISTINCT application_name AS name FROM pg_stat_activity
              WHERE datname = current_database() ORDER BY name`,
        )
      ).map(({ name }) => name);
    try {
      // The dispatcher's first turn reads on one of the thread's connections.
      await expect
        .poll(namesOnThisDatabase, { timeout: 10_000 })
        .toContain(WEBHOOKS_APPLICATION_NAME);
    } finally {
      await delivery.stop();
    }
    expect(WEBHOOKS_APPLICATION_NAME).not.toBe('agentline');
    expect(await namesOnThisDatabase()).not.toContain(WEBHOOKS_APPLICATION_NAME);
  });

  it('stopped while it loads, is let load and then stops in order', async () => {
    await createEndpoint();
    const { lines, logger } = capturedLogger();
    // One more thread once the webhook thread has started.
    const before = processThreads();
    const delivery = startWebhookDelivery(database.db, logger, threadData(database.databaseUrl));
    await expect.poll(processThreads, { interval: 5, timeout: 10_000 }).toBeGreaterThan(before);
    expect(lines.map((line) => line.msg)).not.toContain(RUNNING);
    // Terminated mid-load, the thread would abort this process (startModuleThread).
    await delivery.stop();
    expect(lines.map((line) => line.msg)).toEqual([RUNNING]);
    await expectThreadsBackTo(before);
  });

  it('that cannot start is reported once and not started again', async () => {
    const { lines, logger } = capturedLogger();
    const directory = mkdtempSync(join(tmpdir(), 'agentline-webhook-thread-'));
    const notADirectory = join(directory, 'file');
    writeFileSync(notADirectory, '');
    await createEndpoint();
    // The database holds an endpoint, so the thread is started, on a database under a file, not
    // a directory: it cannot be created there.
    const delivery = startWebhookDelivery(
      database.db,
      logger,
      threadData(join(notADirectory, 'agentline.db')),
    );
    await expect
      .poll(() => lines.map((line) => line.msg), { timeout: 10_000 })
      .toContain('the webhook thread could not start; this process delivers no webhooks');
    // Past the restart delay: nothing started again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([
      'the webhook thread failed',
      'the webhook thread could not start; this process delivers no webhooks',
    ]);
    await delivery.stop();
    rmSync(directory, { recursive: true, force: true });
  });
});
