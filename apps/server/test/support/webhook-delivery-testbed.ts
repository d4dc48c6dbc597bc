// Webhook delivery end to end: a fresh database with two organizations that can route sessions,
// real server processes that deliver (short lease and retry schedule, http and 127.0.0.1 allowed),
// and the calls the tests make through the API. A file whose tests each need only one delivering
// server shares one (useDeliveringServer); each test then has organizations of its own.

import { sql, type SQL } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { createDb, type Db } from '../../src/db/engine/client.js';
import { migrateDb } from '../../src/db/migrate.js';
import type { WebhookEndpointInput } from '../../src/use-cases/webhook-endpoints.js';
import type { DispatcherOptions } from '../../src/runtime/webhooks/dispatcher.js';
import type { TargetAddressSettings } from '../../src/domain/webhook-target-address.js';
import { specValidator } from './contract.js';
import { createTenant, type Schemas, type Tenant } from './harness.js';
import { experimentBody, loadRoutingFixture, type RoutingFixture } from './routing-fixture.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { freshDatabaseUrl, queryTestDb } from './test-database.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

/** createWebhookEndpoint's input: an enabled endpoint of every event, sent to `url`. */
export const everyEventTo = (url: string): WebhookEndpointInput => ({
  url,
  description: null,
  enabled: true,
  search_fields: [],
  search_field_values: [],
  message_types: ['event'],
});

/** A dispatcher run in the test's own process on `db`: silent, a 3 s lease, retries after 1 s. */
export const inProcessDispatcher = (db: Db, targets: TargetAddressSettings): DispatcherOptions => ({
  db,
  logger: pino({ level: 'silent' }),
  leaseMs: 3_000,
  retrySchedule: [1_000],
  targets,
});

export interface DeliveryTestbed {
  databaseUrl: string;
  acme: Tenant;
  globex: Tenant;
  fx: RoutingFixture;
  globexFx: RoutingFixture;
}

export const LEASE_MS = 1500;

// Organization names are unique in a database; a file's tests may add many pairs to one.
let tenantPairs = 0;

/** Two new organizations (Acme and Globex) that can route sessions, on a migrated database. */
async function addDeliveryTenants(databaseUrl: string): Promise<DeliveryTestbed> {
  tenantPairs += 1;
  const db = createDb(databaseUrl);
  try {
    const acme = await createTenant(db, `Acme ${tenantPairs}`);
    const globex = await createTenant(db, `Globex ${tenantPairs}`);
    const fx = await loadRoutingFixture(db, acme.organizationId);
    const globexFx = await loadRoutingFixture(db, globex.organizationId);
    return { databaseUrl, acme, globex, fx, globexFx };
  } finally {
    await db.close();
  }
}

async function migratedDatabaseUrl(): Promise<string> {
  const databaseUrl = await freshDatabaseUrl();
  const db = createDb(databaseUrl);
  try {
    await migrateDb(db);
  } finally {
    await db.close();
  }
  return databaseUrl;
}

export async function createDeliveryTestbed(): Promise<DeliveryTestbed> {
  return addDeliveryTenants(await migratedDatabaseUrl());
}

export interface DeliveringServer {
  server: ServerProcess;
  /** This test's own organizations. */
  bed: DeliveryTestbed;
  /** This test's own receiver. */
  receiver: WebhookReceiver;
}

/**
 * One delivering server for the file (started once: a process start is most of a short test),
 * and for each test two organizations and a receiver of its own, so that no test sees another's
 * endpoints or messages. The fields are set by the hooks; read them inside tests. Every request
 * a test's receiver got must match the spec's `webhooks`, and the server must exit 0 on SIGTERM
 * at the end.
 */
export function useDeliveringServer(): DeliveringServer {
  const delivery = {} as DeliveringServer;
  let databaseUrl: string;
  beforeAll(async () => {
    databaseUrl = await migratedDatabaseUrl();
    delivery.server = await startDeliveringServer(databaseUrl);
  });
  afterAll(async () => {
    expect(await delivery.server.stop('SIGTERM')).toBe(0);
  });
  beforeEach(async () => {
    delivery.bed = await addDeliveryTenants(databaseUrl);
    delivery.receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await delivery.receiver.close();
    // Whatever a test had sent is what the spec's `webhooks` declare, headers and body.
    for (const { headers, body } of delivery.receiver.received) {
      specValidator.validateWebhookRequest({ headers, body });
    }
  });
  return delivery;
}

export function startDeliveringServer(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  return startServerProcess({
    DATABASE_URL: databaseUrl,
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    WEBHOOK_LEASE_MS: String(LEASE_MS),
    WEBHOOK_RETRY_SCHEDULE: '50ms,100ms,200ms,400ms,400ms,400ms',
    ...env,
  });
}

/** An API call with the tenant's key; its JSON answer. */
export async function call<T>(
  baseUrl: string,
  tenant: Tenant,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'Service-API-Key': tenant.key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** Creates an endpoint of the tenant through the API (`body` as the create operation takes it). */
export async function createEndpoint(
  baseUrl: string,
  tenant: Tenant,
  body: Record<string, unknown>,
): Promise<Schemas['WebhookEndpointWithSecret']> {
  const created = await call<Schemas['WebhookEndpointWithSecret']>(
    baseUrl,
    tenant,
    'POST',
    '/api/v1/webhooks/endpoints',
    body,
  );
  expect(created.status).toBe(200);
  return created.body;
}

/** Creates and starts an experiment on the fixture's main target; its id. */
export async function startExperiment(
  baseUrl: string,
  tenant: Tenant,
  fx: RoutingFixture,
  overrides: Record<string, unknown> = {},
): Promise<number> {
  const created = await call<Schemas['Experiment']>(
    baseUrl,
    tenant,
    'POST',
    '/api/v1/experiments/',
    experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned], overrides),
  );
  expect(created.status).toBe(200);
  const started = await call(
    baseUrl,
    tenant,
    'POST',
    `/api/v1/experiments/${created.body.id}/start`,
  );
  expect(started.status).toBe(200);
  return created.body.id;
}

/** Routes `count` sessions on the main target, `concurrency` at a time. */
export async function routeSessions(
  baseUrl: string,
  tenant: Tenant,
  fx: RoutingFixture,
  count: number,
  concurrency = 8,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        const routed = await call(
          baseUrl,
          tenant,
          'POST',
          `/api/v1/channels/targets/${fx.targets.main}/sessions`,
          {
            user_id: `caller-${tenant.organizationId}-${index}`,
          },
        );
        expect(routed.status, JSON.stringify(routed.body)).toBe(200);
      }
    }),
  );
}

/** Reads the database through a connection of its own. */
export async function readDatabase<T>(databaseUrl: string, query: SQL): Promise<T[]> {
  const db = createDb(databaseUrl);
  try {
    return await queryTestDb<T>(db, query);
  } finally {
    await db.close();
  }
}

/** The organization's event ids above `afterId`. */
export async function eventIdsAfter(
  databaseUrl: string,
  organizationId: number,
  afterId = 0,
): Promise<number[]> {
  const rows = await readDatabase<{ id: number | string }>(
    databaseUrl,
    sql`SELECT id FROM events WHERE organization_id = ${organizationId} AND id > ${afterId} ORDER BY id`,
  );
  return rows.map((row) => Number(row.id));
}

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
