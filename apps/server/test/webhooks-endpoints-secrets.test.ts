// Webhook signing secrets never reach the logs (whatever the level), and the admin roles of
// databases made before webhooks get the two new permissions from their migration.

import { readdirSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createRole, findRoleByName } from '../src/db/repositories/roles.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import type { Db } from '../src/db/engine/client.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './support/harness.js';
import { queryTestDb, TEST_BACKEND } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
});

afterAll(() => api.close());

describe('logs', () => {
  it('never contain a webhook secret, from create or rotate-secret', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = createApp({
      db: api.db,
      logger: pino({ level: 'trace' }, sink),
      webhookPolicy: { allowHttp: true, allowPrivateAddresses: true },
    });
    const send = async (method: string, url: string, body?: unknown) => {
      const res = await app.request(url, {
        method,
        headers: { 'Content-Type': 'application/json', 'Service-API-Key': acme.key },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as { id: number; secret: string };
    };
    const created = await send('POST', '/api/v1/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/hook',
    });
    const rotated = await send('POST', `/api/v1/webhooks/endpoints/${created.id}/rotate-secret`);
    await send('GET', `/api/v1/webhooks/endpoints/${created.id}`);
    expect(created.secret).toMatch(/^whsec_/);
    expect(rotated.secret).toMatch(/^whsec_/);
    const log = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const secret of [created.secret, rotated.secret]) {
      expect(log).not.toContain(secret.slice('whsec_'.length));
    }
  });
});

/** The migration that gives the admin roles the webhook permissions, as written for this backend. */
function adminRolesMigration(): string {
  const folder = new URL(`../drizzle/${TEST_BACKEND}/`, import.meta.url);
  const file = readdirSync(folder).find((name) => name.endsWith('_webhooks_admin_permissions.sql'));
  if (!file) throw new Error(`no webhooks_admin_permissions migration in ${folder.pathname}`);
  return readFileSync(new URL(file, folder), 'utf8');
}

async function runMigration(db: Db, text: string): Promise<void> {
  for (const statement of text.split('--> statement-breakpoint')) {
    await queryTestDb(db, sql.raw(statement));
  }
}

describe('the admin roles migration', () => {
  it('gives both webhook permissions to admin roles and to roles with every earlier one', async () => {
    const earlier = [
      'EVENTS_READ',
      'PROMPTS_READ',
      'CHANNELS_READ',
      'CHANNELS_WRITE',
      'CHANNELS_DELETE',
      'SESSIONS_WRITE',
    ] as const;
    const organization = await createOrganization(api.db, 'Before webhooks');
    const roles = {
      admin: ['EVENTS_READ'] as const,
      everything: earlier,
      reader: ['EVENTS_READ', 'PROMPTS_READ'] as const,
      parked: [] as const,
    };
    for (const [name, permissions] of Object.entries(roles)) {
      await createRole(api.db, { organizationId: organization.id, name, permissions });
    }
    const migration = adminRolesMigration();
    // Twice: a role that has them already does not get them again.
    await runMigration(api.db, migration);
    await runMigration(api.db, migration);
    const permissionsOf = async (name: string) =>
      (await findRoleByName(api.db, organization.id, name))!.permissions;
    expect(await permissionsOf('admin')).toEqual([
      'EVENTS_READ',
      'WEBHOOKS_READ',
      'WEBHOOKS_WRITE',
    ]);
    expect(await permissionsOf('everything')).toEqual([
      ...earlier,
      'WEBHOOKS_READ',
      'WEBHOOKS_WRITE',
    ]);
    expect(await permissionsOf('reader')).toEqual(['EVENTS_READ', 'PROMPTS_READ']);
    expect(await permissionsOf('parked')).toEqual([]);
  });
});
