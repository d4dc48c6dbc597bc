// Each experiment operation (and session routing) with a key that has only the permission it
// needs, and with a key that has every permission but that one.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../src/vocabulary/permissions.js';
import {
  createKey,
  type ApiResponse,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import {
  experimentBody,
  createRoutingTestbed,
  type RoutingFixture,
} from './support/routing-fixture.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

interface Operation {
  name: string;
  permission: Permission;
  /**
   * Sends the request; `id` is a fresh draft experiment made with the admin key. `T` is the body
   * expected, as for `TestApi.request`.
   */
  send: <T>(key: string, id: number) => Promise<ApiResponse<T>>;
}

const body = () => experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]);

const OPERATIONS: Operation[] = [
  {
    name: 'list',
    permission: 'CHANNELS_READ',
    send: (key) => api.request('GET', '/api/v1/experiments/', { key }),
  },
  {
    name: 'create',
    permission: 'CHANNELS_WRITE',
    send: (key) => api.request('POST', '/api/v1/experiments/', { key, body: body() }),
  },
  {
    name: 'get',
    permission: 'CHANNELS_READ',
    send: (key, id) => api.request('GET', `/api/v1/experiments/${id}`, { key }),
  },
  {
    name: 'update',
    permission: 'CHANNELS_WRITE',
    send: (key, id) => api.request('PUT', `/api/v1/experiments/${id}`, { key, body: body() }),
  },
  {
    name: 'delete',
    permission: 'CHANNELS_DELETE',
    send: (key, id) => api.request('DELETE', `/api/v1/experiments/${id}`, { key }),
  },
  {
    name: 'start',
    permission: 'CHANNELS_WRITE',
    send: (key, id) => api.request('POST', `/api/v1/experiments/${id}/start`, { key }),
  },
  {
    name: 'results',
    permission: 'CHANNELS_READ',
    send: (key, id) => api.request('GET', `/api/v1/experiments/${id}/results`, { key }),
  },
  {
    name: 'route a session',
    permission: 'SESSIONS_WRITE',
    send: (key) =>
      api.request('POST', `/api/v1/channels/targets/${fx.targets.second}/sessions`, {
        key,
        body: {},
      }),
  },
];

async function freshDraft(): Promise<number> {
  const res = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
    key: acme.key,
    body: body(),
  });
  return res.body.id;
}

describe.each(OPERATIONS)('$name', ({ name, permission, send }) => {
  it(`works with only ${permission}`, async () => {
    const key = await createKey(api.db, acme.organizationId, [permission]);
    const id = await freshDraft();
    const res = await send(key, id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // A started draft stays running; stop it so the target is free for the next case.
    if (name === 'start') {
      await api.request('POST', `/api/v1/experiments/${id}/stop`, { key: acme.key });
    }
  });

  it(`answers 403 naming ${permission} with every other permission`, async () => {
    const key = await createKey(
      api.db,
      acme.organizationId,
      PERMISSIONS.filter((p) => p !== permission),
    );
    const res = await send<Schemas['ErrorResponse']>(key, await freshDraft());
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(res.body.detail).toContain(permission);
  });
});

describe('stop', () => {
  it('needs CHANNELS_WRITE', async () => {
    const id = await freshDraft();
    await api.request('POST', `/api/v1/experiments/${id}/start`, { key: acme.key });
    const without = await createKey(api.db, acme.organizationId, [
      'CHANNELS_READ',
      'CHANNELS_DELETE',
    ]);
    expect(
      (await api.request('POST', `/api/v1/experiments/${id}/stop`, { key: without })).status,
    ).toBe(403);
    const withIt = await createKey(api.db, acme.organizationId, ['CHANNELS_WRITE']);
    expect(
      (await api.request('POST', `/api/v1/experiments/${id}/stop`, { key: withIt })).status,
    ).toBe(200);
  });
});
