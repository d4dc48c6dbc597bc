// An integrator's whole path through the SDK, with a real server process delivering to a real
// receiver on 127.0.0.1: the endpoint made with client.webhooks, what arrives checked by
// verifyWebhook (the SDK's, not the reference library's) and typed by its `type`, a replay after
// a received message's position, and the delivery log.

import { createClient, type WebhookDelivery, type WebhookMessage } from '@agentline/sdk';
import { verifyWebhook } from '@agentline/sdk/webhooks';
import { describe, expect, it } from 'vitest';
import {
  eventually,
  routeSessions,
  startExperiment,
  useDeliveringServer,
} from './support/webhook-delivery-testbed.js';

const delivery = useDeliveringServer();

describe('webhooks through the SDK, delivered by the server', () => {
  it('verifies and types what arrives, replays after a position and shows the log', async () => {
    const client = createClient({
      apiKey: delivery.bed.acme.key,
      baseUrl: delivery.server.baseUrl,
    });
    const endpoint = await client.webhooks.create({
      url: delivery.receiver.url,
      message_types: ['event', 'experiment.status_changed'],
      search_fields: ['type'],
      search_field_values: ['session-started'],
    });
    const experimentId = await startExperiment(
      delivery.server.baseUrl,
      delivery.bed.acme,
      delivery.bed.fx,
    );
    await routeSessions(delivery.server.baseUrl, delivery.bed.acme, delivery.bed.fx, 3);
    // The start and three session-started events.
    const arrived = await delivery.receiver.waitFor(4);

    const messages: Array<{ id: string; message: WebhookMessage }> = [];
    for (const request of arrived) {
      const message = await verifyWebhook(request.body, request.headers, endpoint.secret);
      messages.push({ id: String(request.headers['webhook-id']), message });
    }
    const events = messages.flatMap(({ id, message }) =>
      message.type === 'event' ? [{ id, position: message.position, data: message.data }] : [],
    );
    expect(events.map(({ data }) => data.type)).toEqual(Array(3).fill('session-started'));
    const [change] = messages.flatMap(({ message }) =>
      message.type === 'experiment.status_changed' ? [message.data] : [],
    );
    expect(change).toMatchObject({ experiment_id: experimentId, status: 'running' });

    // The event stream gives the same events the same positions.
    const streamed: string[] = [];
    const stream = client.events.stream(
      {
        search_fields: ['type'],
        search_field_values: ['session-started'],
        start_datetime: '2000-01-01T00:00:00Z',
      },
      { signal: AbortSignal.timeout(10_000) },
    );
    for await (const event of stream) {
      void event;
      streamed.push(stream.position!);
      if (streamed.length === 3) break;
    }
    const byPosition = [...events].sort(
      (a, b) => streamed.indexOf(a.position) - streamed.indexOf(b.position),
    );
    expect(byPosition.map(({ position }) => position)).toEqual(streamed);

    // A receiver that lost what came after its first event asks for it again.
    const [firstEvent, ...later] = byPosition;
    const replay = await client.webhooks.replay(endpoint.id, {
      after_position: firstEvent!.position,
    });
    expect(replay.rewound).toEqual(['event']);
    // At least once: what came after it arrives again under its webhook-id (other messages may
    // come again too, which a receiver's deduplication drops).
    const resent = await eventually('the later events again', async () => {
      const ids = await Promise.all(
        delivery.receiver.received.slice(4).map(async (request) => {
          await verifyWebhook(request.body, request.headers, endpoint.secret);
          return String(request.headers['webhook-id']);
        }),
      );
      return later.every(({ id }) => ids.includes(id)) && ids;
    });
    const known = messages.map(({ id }) => id);
    expect(resent.filter((id) => !known.includes(id))).toEqual([]);

    const log = await eventually('every attempt in the delivery log', async () => {
      const attempts: WebhookDelivery[] = [];
      for await (const attempt of client.webhooks.iterateDeliveries(endpoint.id, { limit: 2 })) {
        attempts.push(attempt);
      }
      return attempts.length >= 4 + resent.length && attempts;
    });
    expect(new Set(log.map((attempt) => attempt.status))).toEqual(new Set(['delivered']));
    expect(new Set(log.map((attempt) => attempt.webhook_id))).toEqual(
      new Set(messages.map(({ id }) => id)),
    );
  }, 60_000);
});
