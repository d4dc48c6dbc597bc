// Webhook delivery across processes: two server processes on one database, the one delivering is
// killed, and the other takes its endpoint over within the lease without losing a message; and a
// replay through the API sends messages again under their original webhook-id.

import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webhookIdOf } from '../src/runtime/webhooks/delivery-attempt.js';
import type { ServerProcess } from './support/server-process.js';
import {
  call,
  createDeliveryTestbed,
  createEndpoint,
  eventIdsAfter,
  eventually,
  LEASE_MS,
  readDatabase,
  routeSessions,
  startDeliveringServer,
  startExperiment,
  type DeliveryTestbed,
} from './support/webhook-delivery-testbed.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

let bed: DeliveryTestbed;
let servers: ServerProcess[];
let receiver: WebhookReceiver;

beforeEach(async () => {
  bed = await createDeliveryTestbed();
  servers = [];
  receiver = await startWebhookReceiver();
});

afterEach(async () => {
  for (const server of servers) await server.stop('SIGTERM');
  await receiver.close();
});

const leaseOwner = async (endpointId: number) => {
  const [row] = await readDatabase<{ owner: string | null }>(
    bed.databaseUrl,
    sql`SELECT lease_owner AS "owner" FROM webhook_endpoints WHERE id = ${endpointId}`,
  );
  return row?.owner ?? null;
};

/** Which of the two processes took the endpoint, and the other. */
async function leaseHolder(endpointId: number) {
  const owner = await eventually(
    'a process to take the endpoint',
    async () => (await leaseOwner(endpointId)) ?? undefined,
  );
  const holder = servers.find((server) => owner.includes(`:${server.child.pid}:`))!;
  const survivor = servers.find((server) => server !== holder)!;
  return { owner, holder, survivor };
}

describe('webhook delivery across processes', () => {
  it('loses nothing when the delivering process is killed; the other takes over within the lease', async () => {
    servers.push(
      await startDeliveringServer(bed.databaseUrl),
      await startDeliveringServer(bed.databaseUrl),
    );
    // Slow answers keep messages in flight when the process dies.
    receiver.answerWith(() => ({ status: 200, delayMs: 30 }));
    const endpoint = await createEndpoint(servers[0]!.baseUrl, bed.acme, { url: receiver.url });
    const { owner, holder, survivor } = await leaseHolder(endpoint.id);
    await startExperiment(survivor.baseUrl, bed.acme, bed.fx);
    await routeSessions(survivor.baseUrl, bed.acme, bed.fx, 30);
    await receiver.waitFor(5);
    const killedAt = Date.now();
    await holder.stop('SIGKILL');
    servers = [survivor];
    // Routed while the takeover is watched, so the time routing takes on a busy machine does not
    // count as the takeover's.
    const routedAfterKill = routeSessions(survivor.baseUrl, bed.acme, bed.fx, 30);
    const taken = await eventually('the survivor to take the endpoint', async () => {
      const now = await leaseOwner(endpoint.id);
      return now !== null && now !== owner ? now : undefined;
    });
    const takenAfterMs = Date.now() - killedAt;
    await routedAfterKill;
    expect(taken).toContain(`:${survivor.child.pid}:`);
    // Within the lease, a turn and a generous margin for a busy machine.
    expect(takenAfterMs).toBeLessThan(LEASE_MS + 5000);
    const eventIds = await eventIdsAfter(bed.databaseUrl, bed.acme.organizationId);
    const expected = new Set(eventIds.map((id) => webhookIdOf(endpoint.id, 'event', id)));
    await eventually('every event delivered', () => {
      const received = new Set(
        receiver.received.map((request) => String(request.headers['webhook-id'])),
      );
      return [...expected].every((id) => received.has(id));
    });
    // Some may have come twice (in flight at the kill), none from elsewhere.
    const received = new Set(
      receiver.received.map((request) => String(request.headers['webhook-id'])),
    );
    expect(received).toEqual(expected);
  }, 90_000);

  it('hands its endpoints over at once on SIGTERM, exiting 0', async () => {
    servers.push(
      await startDeliveringServer(bed.databaseUrl),
      await startDeliveringServer(bed.databaseUrl),
    );
    const endpoint = await createEndpoint(servers[0]!.baseUrl, bed.acme, { url: receiver.url });
    const { holder, survivor } = await leaseHolder(endpoint.id);
    expect(await holder.stop('SIGTERM')).toBe(0);
    servers = [survivor];
    await eventually('the survivor to take the endpoint', async () =>
      (await leaseOwner(endpoint.id))?.includes(`:${survivor.child.pid}:`),
    );
    await startExperiment(survivor.baseUrl, bed.acme, bed.fx);
    await routeSessions(survivor.baseUrl, bed.acme, bed.fx, 5);
    const eventIds = await eventIdsAfter(bed.databaseUrl, bed.acme.organizationId);
    await receiver.waitFor(eventIds.length);
  }, 60_000);

  it('replays with the original webhook-ids', async () => {
    servers.push(await startDeliveringServer(bed.databaseUrl));
    const [server] = servers;
    const endpoint = await createEndpoint(servers[0]!.baseUrl, bed.acme, { url: receiver.url });
    await startExperiment(server!.baseUrl, bed.acme, bed.fx);
    await routeSessions(server!.baseUrl, bed.acme, bed.fx, 5);
    const eventIds = await eventIdsAfter(bed.databaseUrl, bed.acme.organizationId);
    await receiver.waitFor(eventIds.length);
    // Replay moves back only from where delivery is stored to stand.
    await eventually('the delivered position stored', async () => {
      const [row] = await readDatabase<{ position: number | string }>(
        bed.databaseUrl,
        sql`SELECT event_position AS "position" FROM webhook_endpoints WHERE id = ${endpoint.id}`,
      );
      return Number(row!.position) >= eventIds.at(-1)!;
    });
    const first = new Map(
      receiver.received.map((request) => [String(request.headers['webhook-id']), request.body]),
    );
    const [earliest, ...later] = eventIds.map((id) => webhookIdOf(endpoint.id, 'event', id));
    const position = (JSON.parse(first.get(earliest!)!) as { position: string }).position;
    const replayed = await call<{ rewound: string[] }>(
      server!.baseUrl,
      bed.acme,
      'POST',
      `/api/v1/webhooks/endpoints/${endpoint.id}/replay`,
      { after_position: position },
    );
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ rewound: ['event'] });
    await receiver.waitFor(eventIds.length + later.length);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const again = receiver.received.slice(eventIds.length);
    expect(again).toHaveLength(later.length);
    // The same messages, byte for byte, under the same ids.
    for (const request of again) {
      const id = String(request.headers['webhook-id']);
      expect(later).toContain(id);
      expect(request.body).toBe(first.get(id));
    }
  }, 60_000);
});
