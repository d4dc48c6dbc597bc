// GET /api/v1/events/: tenancy and access: no organization sees another's events, and a request
// without a valid key or without EVENTS_READ is refused. Every response is checked against the
// spec by the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventsList, type EventsList } from './support/events-list-fixture.js';
import { createKey, type Schemas } from './support/harness.js';

let api: EventsList['api'];
let acme: EventsList['acme'];
let globex: EventsList['globex'];
let list: EventsList['list'];

beforeAll(async () => {
  ({ api, acme, globex, list } = await openEventsList());
});

afterAll(() => api.close());

describe('tenancy and access', () => {
  it("never shows another organization's events", async () => {
    const own = await list('?limit=1000', globex.key);
    expect(own.body.total_count).toBe(1);
    expect(own.body.items[0]?.description).toBe('Globex session started');
    const acmeSearch = await list('?search_fields=attributes&search_field_values=globex');
    expect(acmeSearch.body).toMatchObject({ items: [], total_count: 0 });
  });

  it('answers 401 without a key, with the decided body and challenge', async () => {
    const res = await api.request<Schemas['ErrorResponse']>('GET', '/api/v1/events/');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({
      code: 'UNAUTHENTICATED',
      request_id: res.headers.get('x-request-id'),
    });
    expect(res.body.detail).toContain('Service-API-Key');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="Service-API-Key"');
  });

  it.each([
    ['a malformed key', 'Bearer abc'],
    ['an unknown key', 'agl_zzzzzzzzzzzz_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('answers 401 for %s', async (_, key) => {
    const res = await list<Schemas['ErrorResponse']>('', key);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHENTICATED');
  });

  it('answers 401 for a right key id with a wrong secret', async () => {
    const wrongSecret = `${acme.key.slice(0, 17)}${'A'.repeat(32)}`;
    const res = await list('', wrongSecret);
    expect(res.status).toBe(401);
  });

  it('answers 403 naming EVENTS_READ for a key without it, before looking at the input', async () => {
    const key = await createKey(api.db, acme.organizationId, ['PROMPTS_READ']);
    const res = await list<Schemas['ErrorResponse']>('?limit=abc', key);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('PERMISSION_DENIED');
    expect(res.body.detail).toContain('EVENTS_READ');
  });

  it('lets a key with only EVENTS_READ list events', async () => {
    const key = await createKey(api.db, acme.organizationId, ['EVENTS_READ']);
    expect((await list('', key)).status).toBe(200);
  });

  it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
    const safe = await api.request('GET', '/api/v1/events/', {
      key: acme.key,
      headers: { 'X-Request-Id': 'trace-123' },
    });
    expect(safe.headers.get('x-request-id')).toBe('trace-123');
    const unsafe = await api.request<Schemas['ErrorResponse']>('GET', '/api/v1/events/', {
      headers: { 'X-Request-Id': 'bad id<script>' },
    });
    expect(unsafe.headers.get('x-request-id')).not.toBe('bad id<script>');
    expect(unsafe.body.request_id).toBe(unsafe.headers.get('x-request-id'));
  });
});
