import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  createSpecValidator,
  expectResponseMatchesSpec,
  specValidator,
} from './support/contract.js';

const fixture: unknown = parse(
  readFileSync(new URL('../../../tools/test/fixtures/mini-openapi.yaml', import.meta.url), 'utf8'),
);
const validator = createSpecValidator(fixture);

const widget = {
  id: 7,
  name: 'Left-handed gear',
  kind: 'gear',
  created_at: '2026-03-17T07:22:20.252Z',
  price: { amount: 1250, currency: 'EUR' },
  labels: ['blue'],
  owner_email: null,
  parent: { id: 1, name: 'Gearbox' },
  status: 'active',
};
const json = { 'content-type': 'application/json; charset=UTF-8' };

describe('createSpecValidator', () => {
  it('accepts a body that matches the declared schema, $refs included', () => {
    expect(() =>
      validator.validateResponse({
        method: 'GET',
        url: 'http://localhost/api/v1/widgets/?limit=5',
        status: 200,
        headers: json,
        body: { items: [widget, { ...widget, id: 8, parent: null }], total: 2 },
      }),
    ).not.toThrow();
  });

  it('names the JSON path of a value of the wrong type', () => {
    const body = { items: [{ ...widget, created_at: 1_700_000_000 }], total: null };
    expect(() =>
      validator.validateResponse({ method: 'GET', url: '/api/v1/widgets/', status: 200, body }),
    ).toThrow(/\$\.items\[0\]\.created_at must be string/);
  });

  it('checks formats', () => {
    const body = { ...widget, owner_email: 'not an email' };
    expect(() =>
      validator.validateResponse({ method: 'GET', url: '/api/v1/widgets/7', status: 200, body }),
    ).toThrow(/\$\.owner_email must match format "email"/);
  });

  it('fails on a status code the operation does not declare', () => {
    expect(() =>
      validator.validateResponse({
        method: 'GET',
        url: '/api/v1/widgets/7',
        status: 500,
        body: {},
      }),
    ).toThrow(
      'GET /api/v1/widgets/7 -> 500: status 500 is not declared for GET /api/v1/widgets/{widget_id} (declared: 200, 404)',
    );
  });

  it('validates a response declared by $ref against the component', () => {
    const check = (body: unknown) => () =>
      validator.validateResponse({
        method: 'DELETE',
        url: '/api/v1/widgets/7',
        status: 404,
        headers: json,
        body,
      });
    expect(check({ detail: 'No widget 7.', code: 'NOT_FOUND' })).not.toThrow();
    expect(check({ detail: 'No widget 7.' })).toThrow(
      /components\/responses\/NotFound.*\n.*\$ must have required property 'code'/,
    );
  });

  it('accepts an empty body where the spec declares none, and refuses a body there', () => {
    const response = { method: 'DELETE', url: '/api/v1/widgets/7', status: 204 };
    expect(() => validator.validateResponse({ ...response, body: undefined })).not.toThrow();
    expect(() => validator.validateResponse({ ...response, body: { deleted: true } })).toThrow(
      /declares no body/,
    );
  });

  it('matches path templates exactly, trailing slash included', () => {
    const notFound = { status: 404, body: { detail: 'x', code: 'NOT_FOUND' } };
    expect(() =>
      validator.validateResponse({ method: 'GET', url: '/api/v1/widgets', ...notFound }),
    ).toThrow('GET /api/v1/widgets -> 404: the path matches no path of the spec');
    expect(() =>
      validator.validateResponse({ method: 'GET', url: '/api/v1/widgets/7/', ...notFound }),
    ).toThrow(/matches no path/);
    expect(() =>
      validator.validateResponse({ method: 'PUT', url: '/api/v1/widgets/7', ...notFound }),
    ).toThrow(
      'PUT /api/v1/widgets/7 -> 404: the spec declares no PUT on /api/v1/widgets/{widget_id}',
    );
  });

  it('refuses a content type the response does not declare', () => {
    expect(() =>
      validator.validateResponse({
        method: 'GET',
        url: '/api/v1/widgets/7',
        status: 200,
        headers: { 'Content-Type': 'text/html' },
        body: '<p>hi</p>',
      }),
    ).toThrow(/content type text\/html is not declared/);
  });
});

describe('specValidator (the generated openapi.json)', () => {
  it('validates fetch Responses against the real contract', async () => {
    const unauthorized = new Response(
      JSON.stringify({ detail: 'Missing API key.', code: 'UNAUTHENTICATED', request_id: 'r-1' }),
      { status: 401, headers: { 'content-type': 'application/json' } },
    );
    await expect(
      expectResponseMatchesSpec('GET', '/api/v1/events/', unauthorized),
    ).resolves.toBeUndefined();

    const badPage = new Response(JSON.stringify({ items: [], page: '0', page_size: 25 }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
    await expect(expectResponseMatchesSpec('GET', '/api/v1/events/', badPage)).rejects.toThrow(
      /\$\.page must be integer/,
    );
  });

  it('fails on an undeclared status of the real contract', () => {
    expect(() =>
      specValidator.validateResponse({
        method: 'POST',
        url: '/api/v1/experiments/',
        status: 201,
        body: {},
      }),
    ).toThrow(/status 201 is not declared for POST \/api\/v1\/experiments\//);
  });

  it("holds a webhook request to the spec's webhooks: type, headers and body", () => {
    const headers = {
      'webhook-id': 'msg_2bD1v9c3XnQ8w4ZkLmN0pQ',
      'webhook-timestamp': '1795000000',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    };
    const test = {
      type: 'webhook.test',
      position: null,
      data: { endpoint_id: 3, sent_at: '2026-11-27T20:00:00.000Z' },
    };
    const body = JSON.stringify(test);
    expect(() => specValidator.validateWebhookRequest({ headers, body })).not.toThrow();
    expect(() =>
      specValidator.validateWebhookRequest({
        headers,
        body: JSON.stringify({ ...test, type: 'webhook.other' }),
      }),
    ).toThrow(/declares no such webhook/);
    expect(() =>
      specValidator.validateWebhookRequest({
        headers,
        body: JSON.stringify({ ...test, position: 'AAAA' }),
      }),
    ).toThrow(/the body does not match .*webhook.test/);
    expect(() =>
      specValidator.validateWebhookRequest({
        headers: { ...headers, 'webhook-timestamp': undefined },
        body,
      }),
    ).toThrow(/header webhook-timestamp undefined does not match/);
  });
});
