// Text holding U+0000 is refused with a 422 that names where it is, on both backends alike
// (PostgreSQL's text cannot store it), and nothing of such a request is written.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { stringContaining } from './support/matchers.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

const nulProblem = (loc: Array<string | number>) => ({
  loc,
  msg: stringContaining('must not contain the NUL character (U+0000)'),
  type: 'value_error',
});

describe('the NUL character', () => {
  it('in a search value is a 422 naming the query parameter', async () => {
    const res = await api.request<Schemas['HTTPValidationError']>(
      'GET',
      '/api/v1/events/?search_fields=description&search_field_values=ro%00uted',
      { key: acme.key },
    );
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([nulProblem(['query', 'search_field_values'])]);
  });

  it('in a body string is a 422 naming the field, and nothing is created', async () => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]);
    body.variants[1]!.name = 'con\u0000cise';
    const res = await api.request<Schemas['HTTPValidationError']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([nulProblem(['body', 'variants', 1, 'name'])]);
    const list = await api.request<Schemas['ExperimentListResponse']>(
      'GET',
      '/api/v1/experiments/',
      { key: acme.key },
    );
    expect(list.body.total_count).toBe(0);
  });

  it('in a routed session user_id is a 422, and no session is stored', async () => {
    const res = await api.request<Schemas['HTTPValidationError']>(
      'POST',
      `/api/v1/channels/targets/${fx.targets.main}/sessions`,
      { key: acme.key, body: { user_id: '\u0000' } },
    );
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([nulProblem(['body', 'user_id'])]);
    const events = await api.request<Schemas['EventListResponse']>(
      'GET',
      '/api/v1/events/?limit=0',
      { key: acme.key },
    );
    expect(events.body.total_count).toBe(0);
  });

  it('spelled as a backslash and "u0000" (no NUL at all) is ordinary text', async () => {
    const res = await api.request(
      'GET',
      `/api/v1/events/?search_fields=description&search_field_values=${encodeURIComponent('\\u0000')}`,
      { key: acme.key },
    );
    expect(res.status).toBe(200);
  });
});
