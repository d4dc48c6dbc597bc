// Every operation against every kind of caller that must not get in: no key, a malformed key, a
// revoked key, a key lacking the operation's permission, and a key of another organization.
// Each gets the decided 401/403/404, and no answer carries the other organization's data. An
// operation that needs no permission is answered to a key whose role holds none.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../src/db/repositories/api-keys.js';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import { parseApiKey } from '../src/domain/api-keys.js';
import {
  isPermission,
  NO_PERMISSION,
  PERMISSIONS,
  type Permission,
} from '../src/vocabulary/permissions.js';
import {
  createKey,
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { SPEC_OPERATIONS } from './support/spec-operations.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let experimentId: number;
let channelId: number;
let endpointId: number;

// Words that exist only in Acme's data: no answer to Globex may contain them.
const ACME_SECRETS = ['acme-only-session', 'Acme secret description', '+15550100001'];

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  fx = await loadRoutingFixture(api.db, acme.organizationId);
  await loadRoutingFixture(api.db, globex.organizationId);
  await loadPlatformRecords(
    api.db,
    acme.organizationId,
    platformRecordsSchema.parse({
      channels: [
        { name: 'Acme phone', kind: 'telephony', provider: 'records', numbers: ['+15550100001'] },
      ],
    }),
  );
  const [channel] = await queryTestDb<{ id: number }>(
    api.db,
    sql`SELECT id FROM channels WHERE organization_id = ${acme.organizationId} AND kind = 'telephony'`,
  );
  channelId = channel!.id;
  await insertTestEvents(api.db, [
    {
      organizationId: acme.organizationId,
      timestamp: '2026-05-01T00:00:00.000Z',
      sessionId: 'acme-only-session',
      description: 'Acme secret description',
    },
  ]);
  const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
    key: acme.key,
    body: experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned], {
      name: 'Acme secret description',
    }),
  });
  experimentId = created.body.id;
  const endpoint = await api.request<Schemas['WebhookEndpointWithSecret']>(
    'POST',
    '/api/v1/webhooks/endpoints',
    { key: acme.key, body: webhookBody() },
  );
  endpointId = endpoint.body.id;
});

/** A public address (nothing is delivered here), as the default settings require. */
function webhookBody() {
  return {
    url: 'https://8.8.8.8/agentline',
    description: 'Acme secret description',
    enabled: true,
    search_fields: [],
    search_field_values: [],
    message_types: ['event'],
  };
}

afterAll(() => api.close());

interface Operation {
  name: string;
  method: string;
  path: () => string;
  body?: () => unknown;
  /**
   * What another organization's key gets: its own list (without Acme's records), 404 for Acme's
   * ids, or 422 for a body naming Acme's target and agents (they do not exist for it).
   */
  foreign: 200 | 404 | 422;
}

const OPERATIONS: Operation[] = [
  {
    name: 'events_list',
    method: 'GET',
    path: () => '/api/v1/events/',
    foreign: 200,
  },
  {
    name: 'events_stream',
    method: 'GET',
    path: () => '/api/v1/events/stream',
    foreign: 200,
  },
  {
    name: 'prompts_list',
    method: 'GET',
    path: () => '/api/v1/prompts/',
    foreign: 200,
  },
  {
    name: 'channels_telephony_numbers_verify_a2p_compliance',
    method: 'POST',
    path: () => `/api/v1/channels/telephony/${channelId}/numbers/verify-a2p-compliance`,
    body: () => ({ phone: '+15550100001' }),
    foreign: 404,
  },
  {
    name: 'channels_telephony_numbers_a2p_status',
    method: 'GET',
    path: () => `/api/v1/channels/telephony/${channelId}/numbers/a2p-status`,
    foreign: 404,
  },
  {
    name: 'agents_list',
    method: 'GET',
    path: () => '/api/v1/agents/',
    foreign: 200,
  },
  {
    name: 'channel_targets_list',
    method: 'GET',
    path: () => '/api/v1/channels/targets/',
    foreign: 200,
  },
  {
    name: 'experiments_list',
    method: 'GET',
    path: () => '/api/v1/experiments/',
    foreign: 200,
  },
  {
    name: 'experiments_create',
    method: 'POST',
    path: () => '/api/v1/experiments/',
    body: () => experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
    foreign: 422,
  },
  {
    name: 'experiments_get',
    method: 'GET',
    path: () => `/api/v1/experiments/${experimentId}`,
    foreign: 404,
  },
  {
    name: 'experiments_update',
    method: 'PUT',
    path: () => `/api/v1/experiments/${experimentId}`,
    body: () => experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
    foreign: 404,
  },
  {
    name: 'experiments_delete',
    method: 'DELETE',
    path: () => `/api/v1/experiments/${experimentId}`,
    foreign: 404,
  },
  {
    name: 'experiments_start',
    method: 'POST',
    path: () => `/api/v1/experiments/${experimentId}/start`,
    foreign: 404,
  },
  {
    name: 'experiments_stop',
    method: 'POST',
    path: () => `/api/v1/experiments/${experimentId}/stop`,
    foreign: 404,
  },
  {
    name: 'experiments_results',
    method: 'GET',
    path: () => `/api/v1/experiments/${experimentId}/results`,
    foreign: 404,
  },
  {
    name: 'experiments_results_timeline',
    method: 'GET',
    path: () => `/api/v1/experiments/${experimentId}/results/timeline`,
    foreign: 404,
  },
  {
    name: 'experiments_history',
    method: 'GET',
    path: () => `/api/v1/experiments/${experimentId}/history`,
    foreign: 404,
  },
  {
    name: 'sessions_route',
    method: 'POST',
    path: () => `/api/v1/channels/targets/${fx.targets.main}/sessions`,
    body: () => ({}),
    foreign: 404,
  },
  {
    name: 'channel_targets_assignment',
    method: 'GET',
    path: () => `/api/v1/channels/targets/${fx.targets.main}/assignment?user_id=caller-1`,
    foreign: 404,
  },
  {
    name: 'webhooks_endpoints_list',
    method: 'GET',
    path: () => '/api/v1/webhooks/endpoints',
    foreign: 200,
  },
  {
    name: 'webhooks_endpoints_create',
    method: 'POST',
    path: () => '/api/v1/webhooks/endpoints',
    body: () => ({ ...webhookBody(), description: 'Globex endpoint' }),
    foreign: 200,
  },
  {
    name: 'webhooks_endpoints_get',
    method: 'GET',
    path: () => `/api/v1/webhooks/endpoints/${endpointId}`,
    foreign: 404,
  },
  {
    name: 'webhooks_endpoints_update',
    method: 'PUT',
    path: () => `/api/v1/webhooks/endpoints/${endpointId}`,
    body: () => ({ ...webhookBody(), description: 'Globex endpoint' }),
    foreign: 404,
  },
  {
    name: 'webhooks_endpoints_delete',
    method: 'DELETE',
    path: () => `/api/v1/webhooks/endpoints/${endpointId}`,
    foreign: 404,
  },
  {
    name: 'webhooks_endpoints_rotate_secret',
    method: 'POST',
    path: () => `/api/v1/webhooks/endpoints/${endpointId}/rotate-secret`,
    foreign: 404,
  },
  {
    name: 'webhooks_endpoints_test',
    method: 'POST',
    path: () => `/api/v1/webhooks/endpoints/${endpointId}/test`,
    foreign: 404,
  },
  {
    name: 'webhooks_endpoints_replay',
    method: 'POST',
    path: () => `/api/v1/webhooks/endpoints/${endpointId}/replay`,
    body: () => ({ start_datetime: '2026-01-01T00:00:00Z' }),
    foreign: 404,
  },
  {
    name: 'webhooks_endpoints_deliveries',
    method: 'GET',
    path: () => `/api/v1/webhooks/endpoints/${endpointId}/deliveries`,
    foreign: 404,
  },
  {
    name: 'keys_current',
    method: 'GET',
    path: () => '/api/v1/keys/current',
    foreign: 200,
  },
];

/** `T` is the body expected, as for `TestApi.request`. */
const send = <T>(operation: Operation, key?: string) =>
  api.request<T>(operation.method, operation.path(), { key, body: operation.body?.() });

/** A stream's events are not read here: test/events-stream.test.ts checks them per organization. */
function expectNoAcmeData(body: unknown) {
  const text = JSON.stringify(body ?? null);
  for (const secret of ACME_SECRETS) expect(text).not.toContain(secret);
}

/** Each operation's permission, as the spec names it (the rule the server enforces). */
function permissionOf(operation: Operation): Permission | typeof NO_PERMISSION {
  const permission = SPEC_OPERATIONS.find((op) => op.operationId === operation.name)?.[
    'x-agentline-permission'
  ];
  if (permission === NO_PERMISSION) return permission;
  if (!permission || !isPermission(permission)) {
    throw new Error(`${operation.name} names no permission in the spec (x-agentline-permission)`);
  }
  return permission;
}

it('covers every operation of the spec', () => {
  expect(OPERATIONS.map((o) => o.name).sort()).toEqual(
    SPEC_OPERATIONS.map((op) => op.operationId).sort(),
  );
});

describe.each(OPERATIONS)('$name', (operation) => {
  it('answers 401 without a key, with a malformed key and with a revoked key', async () => {
    const revoked = await createKey(api.db, acme.organizationId, PERMISSIONS);
    await revokeApiKey(api.db, parseApiKey(revoked)!.keyId);
    for (const key of [undefined, 'not-a-key', `${acme.key}x`, revoked]) {
      const res = await send<Schemas['ErrorResponse']>(operation, key);
      expect(res.status, String(key)).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toBe('ApiKey header="Service-API-Key"');
      expectNoAcmeData(res.body);
    }
  });

  const permission = permissionOf(operation);
  if (permission === NO_PERMISSION) {
    it('answers a key whose role holds no permission', async () => {
      const key = await createKey(api.db, acme.organizationId, []);
      expect((await send(operation, key)).status).toBe(200);
    });
  } else {
    it(`answers 403 naming ${permission} to a key without it`, async () => {
      const key = await createKey(
        api.db,
        acme.organizationId,
        PERMISSIONS.filter((p) => p !== permission),
      );
      const res = await send<Schemas['ErrorResponse']>(operation, key);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'PERMISSION_DENIED' });
      expect(res.body.detail).toContain(permission);
      expectNoAcmeData(res.body);
    });
  }

  it("shows another organization's key nothing of Acme", async () => {
    const res = await send(operation, globex.key);
    expect(res.status).toBe(operation.foreign);
    expectNoAcmeData(res.body);
  });
});
