// Webhook endpoints through the API: the round trip of create, read, list, replace, rotate and
// delete, the secret shown by create and rotate only, and another organization's endpoints, which
// answer 404 and are never listed. Every answer is checked against the spec by the harness.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../src/db/schema/sqlite.js';
import { MAX_ENDPOINTS_PER_ORGANIZATION } from '../src/domain/webhooks.js';
import { createTenant, type Schemas, type Tenant, type TestApi } from './support/harness.js';
import { sendRaw, startLiveServer } from './support/live-server.js';
import { useWebhooksTestbed } from './support/webhooks-testbed.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

const { call } = useWebhooksTestbed((testbed) => {
  ({ api, acme, globex } = testbed);
});

// Nothing listens there: the testbed delivers nothing.
const URL_A = 'https://127.0.0.1:9/agentline';
const URL_B = 'https://127.0.0.1:9/other';
const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;

async function create(body: Record<string, unknown> = { url: URL_A }, key = acme.key) {
  const res = await call<Schemas['WebhookEndpointWithSecret']>('POST', '', body, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function storedSecrets(id: number) {
  const [row] = await queryTestDb<{
    secret: string;
    previousSecret: string | null;
    previousSecretExpiresAt: string | null;
  }>(
    api.db,
    sql`SELECT secret AS "secret", previous_secret AS "previousSecret",
          previous_secret_expires_at AS "previousSecretExpiresAt"
        FROM ${webhookEndpoints} WHERE id = ${id}`,
  );
  return row!;
}

describe('create', () => {
  it('answers the endpoint with its defaults and a new secret, which only it shows', async () => {
    const created = await create();
    expect(created).toEqual({
      id: expect.any(Number) as number,
      url: URL_A,
      description: null,
      enabled: true,
      disabled_reason: null,
      search_fields: [],
      search_field_values: [],
      message_types: ['event'],
      created_at: created.created_at,
      updated_at: created.created_at,
      secret: expect.stringMatching(SECRET) as string,
    });
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect((await storedSecrets(created.id)).secret).toBe(created.secret);

    const { secret: _secret, ...endpoint } = created;
    const got = await call<Schemas['WebhookEndpoint']>('GET', `/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(endpoint);
    const listed = await call<Schemas['WebhookEndpointListResponse']>('GET', '?limit=1000');
    expect(listed.body.items).toContainEqual(endpoint);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');
  });

  it('stores every field given, and a type listed twice once', async () => {
    const given = {
      url: URL_B,
      description: 'Support tooling',
      enabled: false,
      search_fields: ['type', 'user_id'],
      search_field_values: ['session-started', '+15550100001'],
      message_types: ['experiment.status_changed', 'event'],
    };
    expect(await create(given)).toMatchObject(given);
    const twice = await create({ url: URL_A, message_types: ['event', 'event'] });
    expect(twice.message_types).toEqual(['event']);
  });

  it('gives every endpoint its own secret', async () => {
    const [first, second] = [await create(), await create()];
    expect(first.secret).not.toBe(second.secret);
  });
});

describe('update (PUT)', () => {
  it('replaces every editable field and keeps the secret', async () => {
    const created = await create();
    const replacement = {
      url: URL_B,
      description: 'Replaced',
      enabled: false,
      search_fields: ['category'],
      search_field_values: ['session'],
      message_types: ['experiment.status_changed'],
    };
    const res = await call<Schemas['WebhookEndpoint']>('PUT', `/${created.id}`, replacement);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, ...replacement, disabled_reason: null });
    expect(res.body).not.toHaveProperty('secret');
    expect(res.body.created_at).toBe(created.created_at);
    expect(res.body.updated_at >= created.updated_at).toBe(true);
    expect((await storedSecrets(created.id)).secret).toBe(created.secret);
    const got = await call<Schemas['WebhookEndpoint']>('GET', `/${created.id}`);
    expect(got.body).toEqual(res.body);
  });

  it('enabling a disabled endpoint clears why it was disabled and since when it failed', async () => {
    const created = await create();
    await queryTestDb(
      api.db,
      sql`UPDATE ${webhookEndpoints} SET enabled = FALSE, disabled_reason = 'The receiver answered 410 Gone.',
            failing_since = '2026-01-01T00:00:00.000Z' WHERE id = ${created.id}`,
    );
    const disabled = await call<Schemas['WebhookEndpoint']>('GET', `/${created.id}`);
    expect(disabled.body).toMatchObject({
      enabled: false,
      disabled_reason: 'The receiver answered 410 Gone.',
    });
    const {
      id: _id,
      created_at: _c,
      updated_at: _u,
      disabled_reason: _d,
      ...settings
    } = disabled.body;
    const res = await call<Schemas['WebhookEndpoint']>('PUT', `/${created.id}`, {
      ...settings,
      enabled: true,
    });
    expect(res.body).toMatchObject({ enabled: true, disabled_reason: null });
    const [row] = await queryTestDb<{ failingSince: string | null }>(
      api.db,
      sql`SELECT failing_since AS "failingSince" FROM ${webhookEndpoints} WHERE id = ${created.id}`,
    );
    expect(row!.failingSince).toBeNull();
  });

  it('clears the lease, so the process delivering for the endpoint takes it again', async () => {
    const created = await create();
    await queryTestDb(
      api.db,
      sql`UPDATE ${webhookEndpoints} SET lease_owner = 'process-1', lease_expires_at = '2999-01-01T00:00:00.000Z'
          WHERE id = ${created.id}`,
    );
    const {
      secret: _s,
      id: _i,
      created_at: _c,
      updated_at: _u,
      disabled_reason: _d,
      ...body
    } = created;
    expect((await call('PUT', `/${created.id}`, { ...body, description: 'x' })).status).toBe(200);
    const [row] = await queryTestDb<{ leaseOwner: string | null }>(
      api.db,
      sql`SELECT lease_owner AS "leaseOwner" FROM ${webhookEndpoints} WHERE id = ${created.id}`,
    );
    expect(row!.leaseOwner).toBeNull();
  });
});

describe('rotate-secret', () => {
  it('answers a new secret and keeps the previous one signing for 24 hours', async () => {
    const created = await create();
    const before = Date.now();
    const res = await call<Schemas['WebhookEndpointWithSecret']>(
      'POST',
      `/${created.id}/rotate-secret`,
    );
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(SECRET);
    expect(res.body.secret).not.toBe(created.secret);
    const stored = await storedSecrets(created.id);
    expect(stored.secret).toBe(res.body.secret);
    expect(stored.previousSecret).toBe(created.secret);
    const expires = Date.parse(stored.previousSecretExpiresAt!);
    expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 1000);

    // A second rotation keeps only the two newest.
    const again = await call<Schemas['WebhookEndpointWithSecret']>(
      'POST',
      `/${created.id}/rotate-secret`,
    );
    expect((await storedSecrets(created.id)).previousSecret).toBe(res.body.secret);
    expect(again.body.secret).not.toBe(res.body.secret);
    const got = await call('GET', `/${created.id}`);
    expect(JSON.stringify(got.body)).not.toContain('whsec_');
  });
});

describe('delete', () => {
  it('removes the endpoint; a second delete and a read are 404', async () => {
    const created = await create();
    const res = await call<Schemas['WebhookEndpointDeleteResponse']>('DELETE', `/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.id, deleted: true });
    expect((await call('GET', `/${created.id}`)).status).toBe(404);
    expect((await call('DELETE', `/${created.id}`)).status).toBe(404);
    const listed = await call<Schemas['WebhookEndpointListResponse']>('GET', '?limit=1000');
    expect(listed.body.items.map((item) => item.id)).not.toContain(created.id);
  });
});

describe('the bound on endpoints', () => {
  it(`refuses an organization's endpoint past ${MAX_ENDPOINTS_PER_ORGANIZATION} with a 409 that says what to do, and makes room on a delete`, async () => {
    const initech = await createTenant(api.db, 'Initech');
    const ids: number[] = [];
    for (let index = 0; index < MAX_ENDPOINTS_PER_ORGANIZATION; index += 1) {
      ids.push((await create({ url: `${URL_A}/${index}` }, initech.key)).id);
    }
    const refused = await call<Schemas['ErrorResponse']>('POST', '', { url: URL_B }, initech.key);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/100 webhook endpoints, the most it may have; delete one/);
    // Another organization's count is its own.
    await create({ url: URL_B }, acme.key);
    expect((await call('DELETE', `/${ids[0]}`, undefined, initech.key)).status).toBe(200);
    await create({ url: URL_B }, initech.key);
  });
});

describe("another organization's endpoint", () => {
  it('is a 404 to every operation and never listed', async () => {
    const theirs = await create({ url: URL_A, description: 'Globex only' }, globex.key);
    const put = {
      url: URL_B,
      description: null,
      enabled: true,
      search_fields: [],
      search_field_values: [],
      message_types: ['event'],
    };
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/${theirs.id}`],
      ['PUT', `/${theirs.id}`, put],
      ['DELETE', `/${theirs.id}`],
      ['POST', `/${theirs.id}/rotate-secret`],
      ['POST', `/${theirs.id}/test`],
      ['POST', `/${theirs.id}/replay`, { start_datetime: '2026-01-01T00:00:00Z' }],
      ['GET', `/${theirs.id}/deliveries`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call<Schemas['ErrorResponse']>(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
      expect(JSON.stringify(res.body)).not.toContain('Globex only');
    }
    const listed = await call<Schemas['WebhookEndpointListResponse']>('GET', '?limit=1000');
    expect(listed.body.items.map((item) => item.id)).not.toContain(theirs.id);
    expect(JSON.stringify(listed.body)).not.toContain('Globex only');
    // Still theirs, unchanged.
    const own = await call<Schemas['WebhookEndpoint']>(
      'GET',
      `/${theirs.id}`,
      undefined,
      globex.key,
    );
    expect(own.body).toMatchObject({ url: URL_A, description: 'Globex only' });
    expect((await storedSecrets(theirs.id)).secret).toBe(theirs.secret);
  });

  it('is an id that does not exist, answered alike', async () => {
    const res = await call<Schemas['ErrorResponse']>('GET', '/2147483647');
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/No webhook endpoint 2147483647/);
  });
});

describe('list', () => {
  it('pages, searches, narrows and orders like the other lists', async () => {
    const organization = await createTenant(api.db, 'Lister');
    const ids: number[] = [];
    for (const description of ['alpha', 'beta', 'gamma']) {
      ids.push((await create({ url: URL_A, description }, organization.key)).id);
    }
    await create({ url: URL_B, description: 'off', enabled: false }, organization.key);
    const list = (query: string) =>
      call<Schemas['WebhookEndpointListResponse']>('GET', `?${query}`, undefined, organization.key);

    const first = await list('limit=2');
    expect(first.body).toMatchObject({ page: 0, page_size: 2, total_count: 4, total_pages: 2 });
    expect(first.body.items.map((item) => item.id)).toEqual(ids.slice(0, 2));
    const next = await list(`limit=2&cursor=${first.body.next_cursor}`);
    expect(next.body.items.map((item) => item.description)).toEqual(['gamma', 'off']);
    expect(next.body.next_cursor).toBeNull();

    const enabledOnly = await list('search_fields=enabled&search_field_values=true');
    expect(enabledOnly.body.total_count).toBe(3);
    const narrowed = await list('fields=url&order_by=description&order_by_direction=desc');
    expect(narrowed.body.items[0]).toEqual({ id: expect.any(Number) as number, url: URL_B });
    const bad = await list('search_fields=enabled&search_field_values=maybe');
    expect(bad.status).toBe(422);
  });
});

describe('through a real HTTP server', () => {
  it('creates, reads and deletes an endpoint as a client on the network does', async () => {
    const server = await startLiveServer(api.app);
    try {
      const headers = { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' };
      const created = await sendRaw<Schemas['WebhookEndpointWithSecret']>(server.baseUrl, {
        path: '/api/v1/webhooks/endpoints',
        headers,
        chunks: [JSON.stringify({ url: URL_A, description: 'over the wire' })],
      });
      expect(created.status).toBe(200);
      expect(created.body.secret).toMatch(SECRET);
      const path = `/api/v1/webhooks/endpoints/${created.body.id}`;
      const got = await sendRaw<Schemas['WebhookEndpoint']>(server.baseUrl, {
        method: 'GET',
        path,
        headers: { 'Service-API-Key': acme.key },
      });
      expect(got.body).toMatchObject({ id: created.body.id, description: 'over the wire' });
      expect(got.body).not.toHaveProperty('secret');
      const deleted = await sendRaw(server.baseUrl, {
        method: 'DELETE',
        path,
        headers: { 'Service-API-Key': acme.key },
      });
      expect(deleted.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
