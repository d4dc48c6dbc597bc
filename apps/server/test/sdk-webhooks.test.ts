// The SDK's webhooks methods against the real server over HTTP on 127.0.0.1: every operation,
// the delivery log walked by cursor, and the errors a client gets. No dispatcher runs beside the
// app, so nothing is delivered (the endpoints name a port nothing listens on).

import {
  NotFoundError,
  UnprocessableEntityError,
  createClient,
  type AgentlineClient,
  type WebhookDelivery,
} from '@agentline/sdk';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeTokensOf } from '../src/runtime/resume-tokens.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';
import { insertWebhookAttempts } from './support/webhook-attempts.js';

let api: TestApi;
let server: LiveServer;
let acme: Tenant;
let client: AgentlineClient;
let globexClient: AgentlineClient;

const URL = 'https://127.0.0.1:9/agentline';

beforeAll(async () => {
  api = await createTestApi(undefined, {
    webhookPolicy: { allowHttp: false, allowPrivateAddresses: true },
  });
  acme = await createTenant(api.db, 'Acme');
  const globex = await createTenant(api.db, 'Globex');
  server = await startLiveServer(api.app);
  client = createClient({ apiKey: acme.key, baseUrl: server.baseUrl });
  globexClient = createClient({ apiKey: globex.key, baseUrl: server.baseUrl });
});

afterAll(async () => {
  await server.close();
  await api.close();
});

describe('client.webhooks against the running server', () => {
  it('creates, lists, reads, replaces, rotates and deletes an endpoint', async () => {
    const created = await client.webhooks.create({
      url: URL,
      description: 'SDK',
      search_fields: ['type'],
      search_field_values: ['session-ended'],
      message_types: ['event', 'experiment.status_changed'],
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(created).toMatchObject({ url: URL, enabled: true, search_fields: ['type'] });

    const second = await client.webhooks.create({ url: `${URL}/2` });
    const walked = [];
    for await (const endpoint of client.webhooks.iterate({ limit: 1 })) walked.push(endpoint);
    expect(walked.map((endpoint) => endpoint.id)).toEqual([created.id, second.id]);
    expect(walked.every((endpoint) => !('secret' in endpoint))).toBe(true);

    const got = await client.webhooks.get(created.id);
    expect(got).toEqual({ ...created, secret: undefined });
    const updated = await client.webhooks.update(created.id, {
      url: URL,
      description: null,
      enabled: false,
      search_fields: [],
      search_field_values: [],
      message_types: ['event'],
    });
    expect(updated).toMatchObject({ enabled: false, description: null, message_types: ['event'] });

    const rotated = await client.webhooks.rotateSecret(created.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);

    expect(await client.webhooks.delete(second.id)).toEqual({ id: second.id, deleted: true });
    await expect(client.webhooks.get(second.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('queues a test message and replays from a position or a moment', async () => {
    await insertTestEvents(api.db, [
      { organizationId: acme.organizationId, timestamp: '2026-05-01T00:00:00.000Z', type: 'a' },
      { organizationId: acme.organizationId, timestamp: '2026-05-02T00:00:00.000Z', type: 'b' },
    ]);
    const { id } = await client.webhooks.create({ url: URL });

    const test = await client.webhooks.test(id, { idempotencyKey: `sdk-test-${id}` });
    expect(test).toMatchObject({ endpoint_id: id, type: 'webhook.test' });
    expect(test.webhook_id).toMatch(/^msg_/);
    // The same key is the same call: no second message.
    const again = await client.webhooks.test(id, { idempotencyKey: `sdk-test-${id}` });
    expect(again.webhook_id).toBe(test.webhook_id);

    const fromStart = await client.webhooks.replay(id, { start_datetime: '2026-05-01T00:00:00Z' });
    expect(fromStart.rewound).toEqual(['event']);
    expect(fromStart.endpoint.id).toBe(id);

    const { id: other } = await client.webhooks.create({ url: URL });
    const [firstEvent] = await queryTestDb<{ id: number | string }>(
      api.db,
      sql`SELECT min(id) AS "id" FROM events WHERE organization_id = ${acme.organizationId}`,
    );
    const tokens = resumeTokensOf(api.db);
    await tokens.ready();
    const position = tokens.make(acme.organizationId, [Number(firstEvent!.id)])[0]!;
    const afterFirst = await client.webhooks.replay(other, { after_position: position });
    expect(afterFirst.rewound).toEqual(['event']);
  });

  it('walks the delivery log newest first by cursor, filtered by status', async () => {
    const { id } = await client.webhooks.create({ url: URL });
    await insertWebhookAttempts(api.db, acme.organizationId, id, [
      'delivered',
      'pending',
      'failed',
      'pending',
      'delivered',
    ]);
    const all: WebhookDelivery[] = [];
    for await (const attempt of client.webhooks.iterateDeliveries(id, { limit: 2 })) {
      all.push(attempt);
    }
    expect(all.map((attempt) => attempt.attempt)).toEqual([5, 4, 3, 2, 1]);
    const page = await client.webhooks.deliveries(id, { status: 'pending' });
    expect(page.items.map((attempt) => [attempt.attempt, attempt.next_attempt_at])).toEqual([
      [4, '2026-06-01T00:00:00.000Z'],
      [2, '2026-06-01T00:00:00.000Z'],
    ]);
  });

  it("throws the API's errors: a refused URL, a bad replay, another organization's endpoint", async () => {
    const refused = await client.webhooks
      .create({ url: 'http://127.0.0.1:9/plain' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UnprocessableEntityError);
    expect((refused as UnprocessableEntityError).detail[0]?.loc).toEqual(['body', 'url']);

    const { id } = await client.webhooks.create({ url: URL });
    const both = await client.webhooks
      .replay(id, { after_position: 'x', start_datetime: '2026-05-01T00:00:00Z' })
      .catch((e: unknown) => e);
    expect(both).toBeInstanceOf(UnprocessableEntityError);

    for (const call of [
      () => globexClient.webhooks.get(id),
      () => globexClient.webhooks.deliveries(id),
      () => globexClient.webhooks.replay(id, { start_datetime: '2026-05-01T00:00:00Z' }),
      () => globexClient.webhooks.delete(id),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(NotFoundError);
    }
    expect((await globexClient.webhooks.list()).items).toEqual([]);
  });
});
