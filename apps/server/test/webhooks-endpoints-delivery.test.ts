// The endpoint operations with the dispatcher at work: a real server process delivers to a real
// receiver on 127.0.0.1 what the API set up. An endpoint created through the API receives what
// is committed after it, signed with the secret its create answered; a test message arrives and
// shows in the delivery log; a replay sends the same messages again under their original
// webhook-ids; a rotated secret signs beside the previous one; a deleted endpoint gets nothing.

import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { Schemas } from './support/harness.js';
import {
  call,
  eventually,
  routeSessions,
  startExperiment,
  useDeliveringServer,
} from './support/webhook-delivery-testbed.js';

const delivery = useDeliveringServer();

interface Message {
  type: string;
  position: string | null;
  data: Record<string, unknown>;
}

const api = <T>(method: string, path: string, body?: unknown) =>
  call<T>(
    delivery.server.baseUrl,
    delivery.bed.acme,
    method,
    `/api/v1/webhooks/endpoints${path}`,
    body,
  );

async function createEndpoint(body: Record<string, unknown>) {
  const created = await api<Schemas['WebhookEndpointWithSecret']>('POST', '', {
    url: delivery.receiver.url,
    ...body,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body;
}

/** The received messages of `type`, each checked against the secrets given. */
function verified(type: string, ...secrets: string[]): Array<{ id: string; message: Message }> {
  return delivery.receiver.received
    .filter((request) => (JSON.parse(request.body) as Message).type === type)
    .map((request) => {
      const headers = request.headers as Record<string, string>;
      let message: Message | undefined;
      for (const secret of secrets) {
        message = new Webhook(secret).verify(request.body, headers) as Message;
      }
      return { id: headers['webhook-id']!, message: message! };
    });
}

describe('an endpoint made through the API', () => {
  it('receives a test message signed with its secret, shown in its delivery log', async () => {
    const endpoint = await createEndpoint({});
    const test = await api<Schemas['WebhookTestMessage']>('POST', `/${endpoint.id}/test`);
    expect(test.status).toBe(200);
    await delivery.receiver.waitFor(1);
    const [received] = verified('webhook.test', endpoint.secret);
    expect(received).toEqual({
      id: test.body.webhook_id,
      message: {
        type: 'webhook.test',
        position: null,
        data: { endpoint_id: endpoint.id, sent_at: test.body.queued_at },
      },
    });
    const log = await eventually('the attempt in the log', async () => {
      const page = await api<Schemas['WebhookDeliveryListResponse']>(
        'GET',
        `/${endpoint.id}/deliveries?status=delivered`,
      );
      return page.body.items.length > 0 && page.body;
    });
    expect(log.items[0]).toMatchObject({
      webhook_id: test.body.webhook_id,
      type: 'webhook.test',
      position: null,
      attempt: 1,
      status: 'delivered',
      response_status: 204,
    });
  }, 60_000);

  it('sends experiment status changes and events again on replay, with the same ids', async () => {
    const endpoint = await createEndpoint({
      message_types: ['event', 'experiment.status_changed'],
      search_fields: ['type'],
      search_field_values: ['session-started'],
    });
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 3);
    // One start, three session-started events.
    await delivery.receiver.waitFor(4);
    const first = [
      ...verified('event', endpoint.secret),
      ...verified('experiment.status_changed', endpoint.secret),
    ];
    expect(first).toHaveLength(4);
    expect(first.find(({ message }) => message.type === 'experiment.status_changed')).toMatchObject(
      { message: { data: { status: 'running' } } },
    );

    const replay = await api<Schemas['WebhookReplayResponse']>('POST', `/${endpoint.id}/replay`, {
      start_datetime: '2020-01-01T00:00:00Z',
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect([...replay.body.rewound].sort()).toEqual(['event', 'experiment.status_changed']);
    await delivery.receiver.waitFor(8);
    const again = [
      ...verified('event', endpoint.secret),
      ...verified('experiment.status_changed', endpoint.secret),
    ];
    const count = (id: string) => again.filter((entry) => entry.id === id).length;
    for (const { id } of first) expect(count(id), id).toBe(2);
  }, 60_000);

  it('signs with both secrets for a day after a rotation, and a deleted one gets nothing', async () => {
    const endpoint = await createEndpoint({});
    const rotated = await api<Schemas['WebhookEndpointWithSecret']>(
      'POST',
      `/${endpoint.id}/rotate-secret`,
    );
    expect(rotated.status).toBe(200);
    await api('POST', `/${endpoint.id}/test`);
    await delivery.receiver.waitFor(1);
    const signature = String(delivery.receiver.received[0]!.headers['webhook-signature']);
    expect(signature.split(' ')).toHaveLength(2);
    // Each secret alone verifies the message.
    expect(verified('webhook.test', rotated.body.secret)).toHaveLength(1);
    expect(verified('webhook.test', endpoint.secret)).toHaveLength(1);

    expect((await api('DELETE', `/${endpoint.id}`)).status).toBe(200);
    await startExperiment(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx);
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 2);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(delivery.receiver.received).toHaveLength(1);
  }, 60_000);
});
