// Webhook delivery end to end: a real server process delivers to a real receiver on 127.0.0.1
// while sessions are routed through the API, on both databases.

import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookIdOf } from '../src/runtime/webhooks/delivery-attempt.js';
import {
  call,
  createEndpoint,
  eventIdsAfter,
  eventually,
  readDatabase,
  routeSessions,
  startExperiment,
  useDeliveringServer,
} from './support/webhook-delivery-testbed.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const delivery = useDeliveringServer();

interface Body {
  type: string;
  position: string | null;
  data: Record<string, unknown>;
}

const bodies = () => delivery.receiver.received.map((request) => JSON.parse(request.body) as Body);
const idsReceived = () =>
  delivery.receiver.received.map((request) => String(request.headers['webhook-id']));

describe('webhook delivery', () => {
  it('delivers every event of the organization exactly once, signed, while sessions are routed', async () => {
    const endpoint = await createEndpoint(delivery.server.baseUrl, delivery.bed.acme, {
      url: delivery.receiver.url,
    });
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    // The other organization's traffic goes on beside it and never reaches this endpoint.
    await startExperiment(delivery.server.baseUrl, delivery.bed.globex, delivery.bed.globexFx);
    await Promise.all([
      routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 60),
      routeSessions(delivery.server.baseUrl, delivery.bed.globex, delivery.bed.globexFx, 30),
    ]);
    const eventIds = await eventIdsAfter(
      delivery.bed.databaseUrl,
      delivery.bed.acme.organizationId,
    );
    expect(eventIds.length).toBeGreaterThanOrEqual(60);
    const expected = new Set(eventIds.map((id) => webhookIdOf(endpoint.id, 'event', id)));
    await delivery.receiver.waitFor(expected.size);
    // Nothing more comes: no repeat, no other organization's event.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(delivery.receiver.received).toHaveLength(expected.size);
    expect(new Set(idsReceived())).toEqual(expected);
    for (const request of delivery.receiver.received) {
      const headers = request.headers as Record<string, string>;
      const body = new Webhook(endpoint.secret).verify(request.body, headers) as Body;
      expect(body.type).toBe('event');
      expect(body.position).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(body.data).toHaveProperty('session_id');
    }
    const logged = await readDatabase<{ n: number | string }>(
      delivery.bed.databaseUrl,
      sql`SELECT count(*) AS n FROM webhook_attempts WHERE endpoint_id = ${endpoint.id} AND status = 'delivered'`,
    );
    expect(Number(logged[0]!.n)).toBe(expected.size);
  }, 60_000);

  it('sends only the events that match its search pairs', async () => {
    const endpoint = await createEndpoint(delivery.server.baseUrl, delivery.bed.acme, {
      url: delivery.receiver.url,
      search_fields: ['type'],
      search_field_values: ['session-started'],
    });
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 10);
    await delivery.receiver.waitFor(10);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(bodies().map((body) => body.data.type)).toEqual(Array(10).fill('session-started'));
    expect(new Set(idsReceived()).size).toBe(10);
    expect(idsReceived().every((id) => id.startsWith('msg_'))).toBe(true);
    expect(endpoint.id).toBeGreaterThan(0);
  }, 60_000);

  it('retries a failing receiver until it recovers, logging every attempt', async () => {
    let failures = 0;
    delivery.receiver.answerWith(() =>
      failures++ < 12 ? { status: 500, body: 'try later' } : { status: 200 },
    );
    const endpoint = await createEndpoint(delivery.server.baseUrl, delivery.bed.acme, {
      url: delivery.receiver.url,
    });
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 4);
    const eventIds = await eventIdsAfter(
      delivery.bed.databaseUrl,
      delivery.bed.acme.organizationId,
    );
    const expected = eventIds.map((id) => webhookIdOf(endpoint.id, 'event', id));
    const attempts = () =>
      readDatabase<{
        webhookId: string;
        attempt: number;
        status: string;
        responseStatus: number | null;
        error: string | null;
      }>(
        delivery.bed.databaseUrl,
        sql`SELECT webhook_id AS "webhookId", attempt, status, response_status AS "responseStatus", error
            FROM webhook_attempts WHERE endpoint_id = ${endpoint.id} ORDER BY id`,
      );
    await eventually('every message delivered', async () => {
      const delivered = (await attempts()).filter((row) => row.status === 'delivered');
      return delivered.length === expected.length;
    });
    const rows = await attempts();
    expect(
      new Set(rows.filter((row) => row.status === 'delivered').map((row) => row.webhookId)),
    ).toEqual(new Set(expected));
    const failed = rows.filter((row) => row.status === 'pending');
    expect(failed.length).toBeGreaterThanOrEqual(12);
    for (const row of failed) {
      expect(row).toMatchObject({ responseStatus: 500, error: 'answered 500: try later' });
    }
    // Each message's attempts are numbered 1, 2, ... in the order they were made.
    for (const webhookId of expected) {
      const numbers = rows.filter((row) => row.webhookId === webhookId).map((row) => row.attempt);
      expect(numbers).toEqual(numbers.map((_, index) => index + 1));
    }
    // Every attempt of a message carried the same id and the same body.
    for (const webhookId of expected) {
      const sent = delivery.receiver.received.filter(
        (request) => request.headers['webhook-id'] === webhookId,
      );
      expect(new Set(sent.map((request) => request.body)).size).toBe(1);
    }
  }, 60_000);

  it("keeps at most 8 attempts of an endpoint in flight (as documented), and the others' go on", async () => {
    const { server, bed, receiver } = delivery;
    receiver.answerWith(() => ({ status: 204, delayMs: 300 }));
    const other = await startWebhookReceiver();
    try {
      await createEndpoint(server.baseUrl, bed.acme, { url: receiver.url });
      await createEndpoint(server.baseUrl, bed.acme, { url: other.url });
      await startExperiment(server.baseUrl, bed.acme, bed.fx);
      await routeSessions(server.baseUrl, bed.acme, bed.fx, 30);
      const events = (await eventIdsAfter(bed.databaseUrl, bed.acme.organizationId)).length;
      // The quick receiver has everything while the slow one is still being sent 8 at a time.
      await other.waitFor(events);
      expect(receiver.received.length).toBeLessThan(events);
      await receiver.waitFor(events);
      expect(receiver.mostInFlight).toBe(8);
      expect(other.mostInFlight).toBeLessThanOrEqual(8);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('disables an endpoint whose receiver answers 410', async () => {
    delivery.receiver.answerWith(() => ({ status: 410 }));
    const endpoint = await createEndpoint(delivery.server.baseUrl, delivery.bed.acme, {
      url: delivery.receiver.url,
    });
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 3);
    const disabled = await eventually('the endpoint disabled', async () => {
      const [row] = await readDatabase<{ enabled: boolean | number; reason: string | null }>(
        delivery.bed.databaseUrl,
        sql`SELECT enabled, disabled_reason AS "reason" FROM webhook_endpoints WHERE id = ${endpoint.id}`,
      );
      return row && !row.enabled ? row : undefined;
    });
    expect(disabled.reason).toContain('410 Gone');
    // Attempts already in flight when it was disabled may still land (on a busy machine, after
    // the row changed): the count is taken once they have.
    let countAfterDisable = -1;
    while (countAfterDisable !== delivery.receiver.received.length) {
      countAfterDisable = delivery.receiver.received.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 3);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // At most the attempts already in flight when it was disabled.
    expect(delivery.receiver.received.length).toBe(countAfterDisable);
    expect(countAfterDisable).toBeLessThanOrEqual(8);
    // Enabled again, it resumes where it stopped: every event, the ones answered 410 included.
    delivery.receiver.answerWith(() => ({ status: 204 }));
    const enabled = await call(
      delivery.server.baseUrl,
      delivery.bed.acme,
      'PUT',
      `/api/v1/webhooks/endpoints/${endpoint.id}`,
      {
        url: delivery.receiver.url,
        description: null,
        enabled: true,
        search_fields: [],
        search_field_values: [],
        message_types: ['event'],
      },
    );
    expect(enabled.status).toBe(200);
    const eventIds = await eventIdsAfter(
      delivery.bed.databaseUrl,
      delivery.bed.acme.organizationId,
    );
    const expected = eventIds.map((id) => webhookIdOf(endpoint.id, 'event', id));
    await eventually('every event delivered after the endpoint was enabled again', () => {
      const received = new Set(idsReceived().slice(countAfterDisable));
      return expected.every((id) => received.has(id));
    });
  }, 60_000);

  it('stops delivering within a second of the endpoint being deleted', async () => {
    delivery.receiver.answerWith(() => ({ status: 204, delayMs: 200 }));
    const endpoint = await createEndpoint(delivery.server.baseUrl, delivery.bed.acme, {
      url: delivery.receiver.url,
    });
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 40);
    await delivery.receiver.waitFor(3);
    const deleted = await fetch(
      `${delivery.server.baseUrl}/api/v1/webhooks/endpoints/${endpoint.id}`,
      {
        method: 'DELETE',
        headers: { 'Service-API-Key': delivery.bed.acme.key },
      },
    );
    expect(deleted.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const afterASecond = delivery.receiver.received.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(delivery.receiver.received.length).toBe(afterASecond);
    expect(afterASecond).toBeLessThan(40 * 2);
  }, 60_000);

  it('sends a test message and logs it delivered', async () => {
    const endpoint = await createEndpoint(delivery.server.baseUrl, delivery.bed.acme, {
      url: delivery.receiver.url,
    });
    const queued = await call<{ webhook_id: string }>(
      delivery.server.baseUrl,
      delivery.bed.acme,
      'POST',
      `/api/v1/webhooks/endpoints/${endpoint.id}/test`,
    );
    expect(queued.status).toBe(200);
    const [request] = await delivery.receiver.waitFor(1);
    expect(request!.headers['webhook-id']).toBe(queued.body.webhook_id);
    const body = new Webhook(endpoint.secret).verify(
      request!.body,
      request!.headers as Record<string, string>,
    ) as Body;
    expect(body).toMatchObject({
      type: 'webhook.test',
      position: null,
      data: { endpoint_id: endpoint.id },
    });
    const rows = await eventually('the message marked delivered', async () => {
      const found = await readDatabase<{ status: string; attempts: number }>(
        delivery.bed.databaseUrl,
        sql`SELECT status, attempts FROM webhook_messages WHERE webhook_id = ${queued.body.webhook_id}`,
      );
      return found[0]?.status === 'delivered' ? found : undefined;
    });
    expect(rows).toEqual([{ status: 'delivered', attempts: 1 }]);
  }, 60_000);

  it("never sends another organization's events", async () => {
    await createEndpoint(delivery.server.baseUrl, delivery.bed.globex, {
      url: delivery.receiver.url,
    });
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 20);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(delivery.receiver.received).toHaveLength(0);
  }, 60_000);

  it('sends one status change when an experiment reaches its planned end', async () => {
    const endpoint = await createEndpoint(delivery.server.baseUrl, delivery.bed.acme, {
      url: delivery.receiver.url,
      message_types: ['experiment.status_changed'],
    });
    // Far enough ahead for the create and the start to come first on a busy machine.
    const endAt = new Date(Date.now() + 1500).toISOString();
    const experimentId = await startExperiment(
      delivery.server.baseUrl,
      delivery.bed.acme,
      delivery.bed.fx,
      { end_at: endAt },
    );
    await new Promise((resolve) => setTimeout(resolve, Date.parse(endAt) + 100 - Date.now()));
    // Routing past the end stores it (without traffic the sweep would, within a minute).
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 2, 1);
    await delivery.receiver.waitFor(2);
    // Nothing more comes: the end is stored once.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const changes = bodies();
    expect(changes).toHaveLength(2);
    expect(changes.map((body) => body.type)).toEqual([
      'experiment.status_changed',
      'experiment.status_changed',
    ]);
    const byStatus = new Map(changes.map((body) => [body.data.status, body]));
    expect(byStatus.get('running')!.data).toMatchObject({
      experiment_id: experimentId,
      ended_reason: null,
      actor: { type: 'api_key' },
    });
    expect(byStatus.get('stopped')!.data).toMatchObject({
      experiment_id: experimentId,
      ended_reason: 'end_at',
      actor: { type: 'system' },
    });
    expect(
      new Webhook(endpoint.secret).verify(
        delivery.receiver.received[0]!.body,
        delivery.receiver.received[0]!.headers as Record<string, string>,
      ),
    ).toBeTruthy();
  }, 60_000);
});
