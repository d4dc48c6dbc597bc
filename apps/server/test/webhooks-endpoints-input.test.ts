// What a webhook endpoint's create and update refuse, each a 422 naming the input: malformed
// bodies, search pairs that do not pair, URLs that are not https (unless the operator allows
// http), carry credentials, or point at a loopback, private or otherwise non-public address
// (unless the operator allows those); and the form a URL is stored and answered in. Addresses
// are literal IPs and `localhost`, so no test depends on DNS.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from './support/experiments-testbed.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';

let strict: TestApi;
let lenient: TestApi;
let strictAcme: Tenant;
let lenientAcme: Tenant;

beforeAll(async () => {
  strict = await createTestApi(undefined, {
    webhookPolicy: { allowHttp: false, allowPrivateAddresses: false },
  });
  lenient = await createTestApi(undefined, {
    webhookPolicy: { allowHttp: true, allowPrivateAddresses: true },
  });
  strictAcme = await createTenant(strict.db, 'Acme');
  lenientAcme = await createTenant(lenient.db, 'Acme');
});

afterAll(async () => {
  await strict.close();
  await lenient.close();
});

const createOn = (api: TestApi, key: string, body: unknown) =>
  api.request<Schemas['HTTPValidationError']>('POST', '/api/v1/webhooks/endpoints', { key, body });

const strictCreate = (body: unknown) => createOn(strict, strictAcme.key, body);

describe('the body of a create', () => {
  it.each<[string, unknown, unknown[], string]>([
    ['without url', {}, ['body', 'url'], 'missing'],
    [
      'with a url that is not one',
      { url: 'hooks.example.com/x' },
      ['body', 'url'],
      'string_pattern_mismatch',
    ],
    [
      'with a url too long',
      { url: `https://8.8.8.8/${'a'.repeat(2048)}` },
      ['body', 'url'],
      'string_too_long',
    ],
    [
      'with a description too long',
      { url: 'https://8.8.8.8/', description: 'a'.repeat(1001) },
      ['body', 'description'],
      'string_too_long',
    ],
    [
      'with no message type',
      { url: 'https://8.8.8.8/', message_types: [] },
      ['body', 'message_types'],
      'too_short',
    ],
    [
      'with an unknown message type',
      { url: 'https://8.8.8.8/', message_types: ['everything'] },
      ['body', 'message_types', 0],
      'enum',
    ],
    [
      'with an unknown search field',
      { url: 'https://8.8.8.8/', search_fields: ['colour'], search_field_values: ['red'] },
      ['body', 'search_fields', 0],
      'enum',
    ],
    [
      'with enabled not a boolean',
      { url: 'https://8.8.8.8/', enabled: 'yes' },
      ['body', 'enabled'],
      'bool_type',
    ],
  ])('%s is a 422 at its place', async (_what, body, loc, type) => {
    const res = await strictCreate(body);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail.map((problem) => [problem.loc, problem.type])).toContainEqual([
      loc,
      type,
    ]);
  });

  it('refuses search pairs of different lengths', async () => {
    expectProblem(
      await strictCreate({
        url: 'https://8.8.8.8/',
        search_fields: ['type', 'source'],
        search_field_values: ['call'],
      }),
      ['body', 'search_field_values'],
      /search_fields has 2 entries but search_field_values has 1/,
      'value_error',
    );
  });
});

describe('the URL of a create', () => {
  it.each([
    ['ftp://8.8.8.8/hook', /uses ftp; a webhook URL must use https/],
    [
      'http://8.8.8.8/hook',
      /uses http; a webhook URL must use https \(this server does not allow http\)/,
    ],
    ['https://user:secret@8.8.8.8/hook', /user name or password/],
    ['https://:secret@8.8.8.8/hook', /user name or password/],
    ['https://[nonsense/hook', /is not an absolute URL/],
  ])('refuses %s', async (url, message) => {
    expectProblem(await strictCreate({ url }), ['body', 'url'], message, 'value_error');
  });

  it.each([
    ['https://127.0.0.1/hook', /loopback/],
    ['https://127.8.9.10:8443/hook', /loopback/],
    ['https://localhost/hook', /loopback/],
    ['https://[::1]/hook', /loopback/],
    ['https://10.1.2.3/hook', /private/],
    ['https://172.16.0.1/hook', /private/],
    ['https://192.168.1.20/hook', /private/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['https://[fe80::1]/hook', /link-local/],
    ['https://[fd00::1]/hook', /unique-local/],
    ['https://[::ffff:127.0.0.1]/hook', /loopback/],
    ['https://0.0.0.0/hook', /unspecified/],
    ['https://224.0.0.1/hook', /multicast/],
  ])('refuses %s, not a public address, unless the operator allows it', async (url, kind) => {
    expectProblem(await strictCreate({ url }), ['body', 'url'], kind, 'value_error');
    const allowed = await createOn(lenient, lenientAcme.key, { url });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
  });

  it('accepts a public address', async () => {
    const res = await strictCreate({ url: 'https://8.8.8.8/hook' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('accepts http where the operator allows it', async () => {
    const res = await createOn(lenient, lenientAcme.key, { url: 'http://127.0.0.1:8080/hook' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectProblem(
      await createOn(lenient, lenientAcme.key, { url: 'ftp://127.0.0.1/hook' }),
      ['body', 'url'],
      /uses ftp; a webhook URL uses https or http/,
    );
  });

  it('refuses a host that does not resolve', async () => {
    expectProblem(
      await strictCreate({ url: 'https://no-such-host.invalid/hook' }),
      ['body', 'url'],
      /no-such-host\.invalid/,
      'value_error',
    );
  });
});

describe('the body of an update', () => {
  it('needs every editable field, and checks the URL as create does', async () => {
    const created = await strict.request<Schemas['WebhookEndpointWithSecret']>(
      'POST',
      '/api/v1/webhooks/endpoints',
      { key: strictAcme.key, body: { url: 'https://8.8.8.8/hook' } },
    );
    expect(created.status).toBe(200);
    const path = `/api/v1/webhooks/endpoints/${created.body.id}`;
    const put = (body: unknown) =>
      strict.request<Schemas['HTTPValidationError']>('PUT', path, { key: strictAcme.key, body });
    const full = {
      url: 'https://8.8.4.4/hook',
      description: null,
      enabled: true,
      search_fields: [],
      search_field_values: [],
      message_types: ['event'],
    };
    for (const field of Object.keys(full)) {
      const { [field as keyof typeof full]: _left, ...without } = full;
      expectProblem(await put(without), ['body', field], /required/i, 'missing');
    }
    expectProblem(await put({ ...full, url: 'https://10.0.0.1/' }), ['body', 'url'], /private/);
    expectProblem(
      await put({ ...full, search_fields: ['type'] }),
      ['body', 'search_field_values'],
      /search_fields has 1 entries/,
    );
    // Nothing of a refused update was stored.
    const got = await strict.request<Schemas['WebhookEndpoint']>('GET', path, {
      key: strictAcme.key,
    });
    expect(got.body.url).toBe('https://8.8.8.8/hook');
    expect((await put(full)).status).toBe(200);
  });
});

describe('the URL as stored', () => {
  const endpointsPath = '/api/v1/webhooks/endpoints';
  const settings = {
    description: null,
    enabled: true,
    search_fields: [],
    search_field_values: [],
    message_types: ['event'],
  };

  /** The endpoint's URL in its create answer, its get and the list. */
  async function urlsOf(created: { status: number; body: Schemas['WebhookEndpointWithSecret'] }) {
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const got = await strict.request<Schemas['WebhookEndpoint']>(
      'GET',
      `${endpointsPath}/${created.body.id}`,
      { key: strictAcme.key },
    );
    const list = await strict.request<Schemas['WebhookEndpointListResponse']>(
      'GET',
      `${endpointsPath}?search_fields=id&search_field_values=${created.body.id}`,
      { key: strictAcme.key },
    );
    return [created.body.url, got.body.url, ...list.body.items.map((item) => item.url)];
  }

  it.each([
    // A WHATWG parser reads the host as 8.8.8.8, an RFC 3986 one as 127.0.0.1 (after userinfo).
    ['https://8.8.8.8\\@127.0.0.1/', 'https://8.8.8.8/@127.0.0.1/'],
    ['HTTPS://8.8.8.8:443/a/./b/../c?q=1', 'https://8.8.8.8/a/c?q=1'],
    ['https://134744072/hook', 'https://8.8.8.8/hook'],
    ['https://8.8.8.8/caf\u00e9', 'https://8.8.8.8/caf%C3%A9'],
  ])('stores and answers %s as WHATWG parsers read it', async (typed, normalized) => {
    const created = await strict.request<Schemas['WebhookEndpointWithSecret']>(
      'POST',
      endpointsPath,
      { key: strictAcme.key, body: { url: typed } },
    );
    expect(await urlsOf(created)).toEqual([normalized, normalized, normalized]);
  });

  it("stores an update's URL the same way", async () => {
    const created = await strict.request<Schemas['WebhookEndpointWithSecret']>(
      'POST',
      endpointsPath,
      { key: strictAcme.key, body: { url: 'https://8.8.8.8/hook' } },
    );
    const path = `${endpointsPath}/${created.body.id}`;
    const updated = await strict.request<Schemas['WebhookEndpoint']>('PUT', path, {
      key: strictAcme.key,
      body: { ...settings, url: 'https://8.8.4.4\\@10.0.0.1/x' },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.url).toBe('https://8.8.4.4/@10.0.0.1/x');
    const got = await strict.request<Schemas['WebhookEndpoint']>('GET', path, {
      key: strictAcme.key,
    });
    expect(got.body.url).toBe('https://8.8.4.4/@10.0.0.1/x');
  });

  it('refuses a user name or password on create and update, saying why', async () => {
    const why = /user name or password: every delivery would send it .* parsers disagree/;
    expectProblem(
      await strictCreate({ url: 'https://hooks@8.8.8.8/' }),
      ['body', 'url'],
      why,
      'value_error',
    );
    const created = await strict.request<Schemas['WebhookEndpointWithSecret']>(
      'POST',
      endpointsPath,
      { key: strictAcme.key, body: { url: 'https://8.8.8.8/hook' } },
    );
    const path = `${endpointsPath}/${created.body.id}`;
    const put = await strict.request<Schemas['HTTPValidationError']>('PUT', path, {
      key: strictAcme.key,
      body: { ...settings, url: 'https://:secret@8.8.8.8/hook' },
    });
    expectProblem(put, ['body', 'url'], why, 'value_error');
    const got = await strict.request<Schemas['WebhookEndpoint']>('GET', path, {
      key: strictAcme.key,
    });
    expect(got.body.url).toBe('https://8.8.8.8/hook');
  });

  it('refuses a URL longer than the bound once percent-encoded', async () => {
    const typed = `https://8.8.8.8/${'\u00e9'.repeat(400)}`;
    expect(typed.length).toBeLessThan(2048);
    expectProblem(
      await strictCreate({ url: typed }),
      ['body', 'url'],
      /has 2416 characters as URL parsers write it .* at most 2048/,
      'value_error',
    );
  });
});
