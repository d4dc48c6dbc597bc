// What an endpoint's messages look like through the API, without the dispatcher: where a new
// endpoint starts (after what was committed before it), replay moving its positions back (and
// never forward), the test message queued as a due row, and the delivery log in pages.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { resumeTokensOf } from '../src/runtime/resume-tokens.js';
import { experimentChanges, webhookAttempts, webhookMessages } from '../src/db/schema/sqlite.js';
import { insertValues } from '../src/db/engine/portable-sql.js';
import { recordAttempt } from '../src/db/repositories/webhook-dispatch.js';
import { expectProblem } from './support/experiments-testbed.js';
import { createTenant, type Schemas, type Tenant, type TestApi } from './support/harness.js';
import { findWebhookEndpointPositions, useWebhooksTestbed } from './support/webhooks-testbed.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

const { call } = useWebhooksTestbed((testbed) => {
  ({ api, acme, globex } = testbed);
});

async function createEndpoint(tenant = acme): Promise<number> {
  const res = await call<Schemas['WebhookEndpointWithSecret']>(
    'POST',
    '',
    { url: 'https://127.0.0.1:9/hook', message_types: ['event', 'experiment.status_changed'] },
    tenant.key,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

async function eventIds(organizationId: number): Promise<number[]> {
  const rows = await queryTestDb<{ id: number | string }>(
    api.db,
    sql`SELECT id FROM events WHERE organization_id = ${organizationId} ORDER BY id`,
  );
  return rows.map((row) => Number(row.id));
}

async function addHistory(organizationId: number, occurredAt: string): Promise<number> {
  const [row] = await queryTestDb<{ id: number }>(
    api.db,
    sql`INSERT INTO ${experimentChanges} ${insertValues(experimentChanges, [
      {
        organizationId,
        experimentId: 1,
        occurredAt,
        action: 'started',
        actorType: 'operator',
        changes: '{}',
      },
    ])} RETURNING id`,
  );
  return row!.id;
}

describe('a new endpoint', () => {
  it('starts after the events and history committed before it', async () => {
    const organization = await createTenant(api.db, 'Starter');
    await insertTestEvents(api.db, [
      { organizationId: organization.organizationId, timestamp: '2026-05-01T00:00:00.000Z' },
    ]);
    const historyId = await addHistory(organization.organizationId, '2026-05-01T00:00:00.000Z');
    const id = await createEndpoint(organization);
    const positions = await findWebhookEndpointPositions(api.db, organization.organizationId, id);
    const [eventId] = await eventIds(organization.organizationId);
    // At least past its own organization's last event (SQLite counts every organization's).
    expect(positions!.eventPosition).toBeGreaterThanOrEqual(eventId!);
    expect(positions!.historyPosition).toBe(historyId);
  });
});

describe('replay', () => {
  it('moves the positions back to just before the first message at or after start_datetime', async () => {
    const organization = await createTenant(api.db, 'Replayer');
    await insertTestEvents(
      api.db,
      ['2026-05-01T00:00:00.000Z', '2026-05-02T00:00:00.000Z', '2026-05-03T00:00:00.000Z'].map(
        (timestamp) => ({ organizationId: organization.organizationId, timestamp }),
      ),
    );
    const [, may2] = await eventIds(organization.organizationId);
    await addHistory(organization.organizationId, '2026-05-01T12:00:00.000Z');
    const may2History = await addHistory(organization.organizationId, '2026-05-02T12:00:00.000Z');
    const id = await createEndpoint(organization);
    const before = await findWebhookEndpointPositions(api.db, organization.organizationId, id);

    const res = await call<Schemas['WebhookReplayResponse']>(
      'POST',
      `/${id}/replay`,
      { start_datetime: '2026-05-02T00:00:00+00:00' },
      organization.key,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.rewound.sort()).toEqual(['event', 'experiment.status_changed']);
    expect(res.body.endpoint.id).toBe(id);
    expect(await findWebhookEndpointPositions(api.db, organization.organizationId, id)).toEqual({
      eventPosition: may2! - 1,
      historyPosition: may2History - 1,
    });

    // A later point moves nothing forward: what lies between is not delivered yet.
    const later = await call<Schemas['WebhookReplayResponse']>(
      'POST',
      `/${id}/replay`,
      { start_datetime: '2026-05-03T00:00:00Z' },
      organization.key,
    );
    expect(later.body.rewound).toEqual([]);
    expect(
      (await findWebhookEndpointPositions(api.db, organization.organizationId, id))!.eventPosition,
    ).toBe(may2! - 1);
    expect(before!.eventPosition).toBeGreaterThan(may2! - 1);
  });

  it.each([
    ['event', 'eventPosition', 'event'],
    ['history', 'historyPosition', 'experiment.status_changed'],
  ] as const)(
    'moves the %s position back to just after a position token of its kind',
    async (kind, position, messageType) => {
      const organization = await createTenant(api.db, `Token replayer of ${kind}`);
      const days = ['2026-06-01T00:00:00.000Z', '2026-06-02T00:00:00.000Z'];
      let first: number;
      if (kind === 'event') {
        await insertTestEvents(
          api.db,
          days.map((timestamp) => ({ organizationId: organization.organizationId, timestamp })),
        );
        [first] = (await eventIds(organization.organizationId)) as [number];
      } else {
        first = await addHistory(organization.organizationId, days[0]!);
        await addHistory(organization.organizationId, days[1]!);
      }
      const id = await createEndpoint(organization);
      const tokens = resumeTokensOf(api.db);
      await tokens.ready();
      const [token] = tokens.make(organization.organizationId, [first], kind);
      const res = await call<Schemas['WebhookReplayResponse']>(
        'POST',
        `/${id}/replay`,
        { after_position: token },
        organization.key,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.rewound).toEqual([messageType]);
      const positions = await findWebhookEndpointPositions(api.db, organization.organizationId, id);
      expect(positions![position]).toBe(first);
    },
  );

  it("refuses another organization's token, a made-up one, and a body with neither or both", async () => {
    const id = await createEndpoint();
    const tokens = resumeTokensOf(api.db);
    await tokens.ready();
    const [theirs] = tokens.make(globex.organizationId, [1]);
    const [theirHistory] = tokens.make(globex.organizationId, [1], 'history');
    for (const after_position of [
      theirs!,
      theirHistory!,
      'AAAAAAAAAAAAAAAAAAAAAA',
      'not-a-token',
    ]) {
      expectProblem(
        await call('POST', `/${id}/replay`, { after_position }),
        ['body', 'after_position'],
        /is not a position this API gave to this organization/,
        'value_error',
      );
    }
    expectProblem(await call('POST', `/${id}/replay`, {}), ['body'], /neither was given/);
    expectProblem(
      await call('POST', `/${id}/replay`, {
        after_position: theirs,
        start_datetime: '2026-01-01T00:00:00Z',
      }),
      ['body'],
      /both were given/,
    );
    expectProblem(
      await call('POST', `/${id}/replay`, { start_datetime: 'yesterday' }),
      ['body', 'start_datetime'],
      /date-time/,
    );
  });
});

describe('test', () => {
  it('queues one due webhook.test message, up to ten waiting at once', async () => {
    const id = await createEndpoint();
    const res = await call<Schemas['WebhookTestMessage']>('POST', `/${id}/test`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      endpoint_id: id,
      webhook_id: expect.stringMatching(/^msg_[A-Za-z0-9_-]{22}$/) as string,
      type: 'webhook.test',
      queued_at: expect.any(String) as string,
    });
    const rows = await queryTestDb<{
      webhookId: string;
      type: string;
      position: string | null;
      payload: string;
      attempts: number;
      status: string;
      nextAttemptAt: string;
    }>(
      api.db,
      sql`SELECT webhook_id AS "webhookId", type, position, payload, attempts, status,
            next_attempt_at AS "nextAttemptAt"
          FROM ${webhookMessages} WHERE endpoint_id = ${id}`,
    );
    expect(rows).toEqual([
      {
        webhookId: res.body.webhook_id,
        type: 'webhook.test',
        position: null,
        payload: JSON.stringify({
          type: 'webhook.test',
          position: null,
          data: { endpoint_id: id, sent_at: res.body.queued_at },
        }),
        attempts: 0,
        status: 'pending',
        nextAttemptAt: res.body.queued_at,
      },
    ]);
    expect(rows[0]!.nextAttemptAt <= new Date().toISOString()).toBe(true);

    for (let sent = 1; sent < 10; sent += 1) {
      expect((await call('POST', `/${id}/test`)).status).toBe(200);
    }
    const refused = await call<Schemas['ErrorResponse']>('POST', `/${id}/test`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/10 test messages waiting/);
  });

  it('goes away with its endpoint', async () => {
    const id = await createEndpoint();
    expect((await call('POST', `/${id}/test`)).status).toBe(200);
    expect((await call('DELETE', `/${id}`)).status).toBe(200);
    const rows = await queryTestDb(
      api.db,
      sql`SELECT id FROM ${webhookMessages} WHERE endpoint_id = ${id}`,
    );
    expect(rows).toEqual([]);
  });
});

describe('deliveries', () => {
  it('pages the delivery log newest first, filtered by status', async () => {
    const id = await createEndpoint();
    const attempts = (['delivered', 'pending', 'failed', 'pending', 'delivered'] as const).map(
      (status, index) => ({
        endpointId: id,
        organizationId: acme.organizationId,
        webhookId: `msg_${index}`,
        type: 'event',
        position: `position-${index}`,
        attempt: index + 1,
        status,
        responseStatus: status === 'delivered' ? 204 : status === 'failed' ? 500 : null,
        error: status === 'delivered' ? null : 'connection refused',
        durationMs: 12,
        attemptedAt: `2026-05-0${index + 1}T00:00:00.000Z`,
        nextAttemptAt: status === 'pending' ? '2026-05-10T00:00:00.000Z' : null,
      }),
    );
    await queryTestDb(
      api.db,
      sql`INSERT INTO ${webhookAttempts} ${insertValues(webhookAttempts, attempts)}`,
    );
    type Page = Schemas['WebhookDeliveryListResponse'];
    const all = await call<Page>('GET', `/${id}/deliveries?limit=2`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 5, page_size: 2, total_pages: 3 });
    expect(all.body.items.map((item) => item.webhook_id)).toEqual(['msg_4', 'msg_3']);
    expect(all.body.items[1]).toEqual({
      id: expect.any(Number) as number,
      webhook_id: 'msg_3',
      type: 'event',
      position: 'position-3',
      attempt: 4,
      status: 'pending',
      response_status: null,
      error: 'connection refused',
      duration_ms: 12,
      attempted_at: '2026-05-04T00:00:00.000Z',
      next_attempt_at: '2026-05-10T00:00:00.000Z',
    });
    const rest = await call<Page>(
      'GET',
      `/${id}/deliveries?limit=10&cursor=${all.body.next_cursor}`,
    );
    expect(rest.body.items.map((item) => item.webhook_id)).toEqual(['msg_2', 'msg_1', 'msg_0']);

    const pending = await call<Page>('GET', `/${id}/deliveries?status=pending`);
    expect(pending.body.items.map((item) => item.webhook_id)).toEqual(['msg_3', 'msg_1']);
    // A cursor is bound to its status filter.
    const pendingFirst = await call<Page>('GET', `/${id}/deliveries?status=pending&limit=1`);
    expectProblem(
      await call('GET', `/${id}/deliveries?status=failed&cursor=${pendingFirst.body.next_cursor}`),
      ['query', 'cursor'],
      /another query/,
    );
    const window = await call<Page>(
      'GET',
      `/${id}/deliveries?start_datetime=2026-05-02T00:00:00Z&end_datetime=2026-05-04T00:00:00Z`,
    );
    expect(window.body.items.map((item) => item.webhook_id)).toEqual(['msg_2', 'msg_1']);
    expect((await call('GET', `/${id}/deliveries?status=lost`)).status).toBe(422);

    // Another endpoint's cursor, and another organization, see nothing of it.
    const other = await createEndpoint();
    expectProblem(
      await call('GET', `/${other}/deliveries?cursor=${all.body.next_cursor}`),
      ['query', 'cursor'],
      /another query/,
    );
    expect((await call('GET', `/${id}/deliveries`, undefined, globex.key)).status).toBe(404);
  });

  it('shows every field of attempts the dispatcher stored together', async () => {
    const id = await createEndpoint();
    const delivered = (n: number, position: string | null) => ({
      endpointId: id,
      organizationId: acme.organizationId,
      webhookId: `msg_together_${n}`,
      type: 'event' as const,
      position,
      payload: '{"not":"logged"}',
      attempt: 1,
      status: 'delivered' as const,
      responseStatus: 200 + n,
      error: null,
      durationMs: 7 * n,
      attemptedAt: `2026-05-0${n}T00:00:00.000Z`,
      nextAttemptAt: null,
    });
    // Delivered first attempts made in one turn are written as one batch.
    await Promise.all(
      [1, 2, 3].map((n) =>
        recordAttempt(api.db, delivered(n, n === 2 ? null : `position-${n}`), null),
      ),
    );
    const page = await call<Schemas['WebhookDeliveryListResponse']>('GET', `/${id}/deliveries`);
    expect(page.status).toBe(200);
    expect(page.body.items).toEqual(
      [3, 2, 1].map((n) => ({
        id: expect.any(Number) as number,
        webhook_id: `msg_together_${n}`,
        type: 'event',
        position: n === 2 ? null : `position-${n}`,
        attempt: 1,
        status: 'delivered',
        response_status: 200 + n,
        error: null,
        duration_ms: 7 * n,
        attempted_at: `2026-05-0${n}T00:00:00.000Z`,
        next_attempt_at: null,
      })),
    );
    const [owner] = await queryTestDb<{ organizationId: number }>(
      api.db,
      sql`SELECT DISTINCT organization_id AS "organizationId" FROM webhook_attempts
          WHERE endpoint_id = ${id}`,
    );
    expect(owner).toEqual({ organizationId: acme.organizationId });
  });
});
