// How many JSON values a request body may hold (MAX_JSON_VALUES), counted on its bytes as they
// arrive, before the body is parsed, and what becomes of properties a body's schema does not
// name: ignored, within the same bounds as the rest of the body.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import spec from '../src/generated/openapi.json' with { type: 'json' };
import { JsonValueCounter, MAX_JSON_VALUES } from '../src/http/json-body.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { stringContaining } from './support/matchers.js';
import { dereference, type JsonObject } from './support/openapi-json.js';
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

const sessionsPath = () => `/api/v1/channels/targets/${fx.targets.main}/sessions`;

/** A routing body of exactly `values` JSON values: the object, its user_id and an unknown list. */
function routingBodyOf(values: number): string {
  return `{"user_id":"+14155550100","extra":[${Array<string>(values - 3)
    .fill('1')
    .join(',')}]}`;
}

async function sessionsStarted(): Promise<number | null | undefined> {
  const res = await api.request<Schemas['EventListResponse']>(
    'GET',
    '/api/v1/events/?limit=0&search_fields=type&search_field_values=session-started',
    { key: acme.key },
  );
  return res.body.total_count;
}

/** The values `JsonValueCounter` counts in `bytes` arriving in pieces cut at `cuts`. */
function countArriving(bytes: Buffer, cuts: number[]): number {
  const counter = new JsonValueCounter(Infinity);
  let from = 0;
  for (const cut of [...cuts.map((at) => at % (bytes.length + 1)), bytes.length].sort(
    (a, b) => a - b,
  )) {
    counter.add(bytes.subarray(from, cut));
    from = cut;
  }
  return counter.values;
}

/** What JSON.parse makes of a text, counted the way MAX_JSON_VALUES counts it. */
function valuesOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, item) => sum + valuesOf(item), 0);
  if (value !== null && typeof value === 'object') {
    return 1 + Object.values(value).reduce((sum: number, item) => sum + valuesOf(item), 0);
  }
  return 1;
}

/** The most values a body matching `schema` can hold, following the spec's bounds. */
function mostValues(schema: unknown): number {
  const resolved = dereference(spec, schema);
  const alternatives = (resolved.oneOf ?? resolved.anyOf) as unknown[] | undefined;
  if (alternatives) return Math.max(...alternatives.map(mostValues));
  const types = [resolved.type].flat();
  if (types.includes('array')) {
    expect(resolved.maxItems, 'every array of a request body states maxItems').toBeTypeOf('number');
    return 1 + (resolved.maxItems as number) * mostValues(resolved.items);
  }
  if (types.includes('object')) {
    expect(resolved.additionalProperties, 'request bodies name their properties').toBeUndefined();
    const properties = Object.values((resolved.properties ?? {}) as JsonObject);
    return 1 + properties.reduce((sum: number, property) => sum + mostValues(property), 0);
  }
  return 1;
}

describe('the bound on JSON values', () => {
  it('leaves a hundred times the largest body the spec allows, and the spec states it', () => {
    // A path's operations, and its `parameters` list, which has no request body.
    const bodies = Object.values(spec.paths as Record<string, object>)
      .flatMap((operations) => Object.values(operations) as JsonObject[])
      .flatMap((operation) => {
        const body = operation.requestBody as JsonObject | undefined;
        return body ? [(body.content as JsonObject)['application/json']] : [];
      });
    expect(bodies.length).toBeGreaterThan(0);
    const largest = Math.max(...bodies.map((media) => mostValues((media as JsonObject).schema)));
    expect(MAX_JSON_VALUES).toBeGreaterThanOrEqual(100 * largest);
    expect(spec.info.description).toContain(
      `more than ${MAX_JSON_VALUES.toLocaleString('en-US')} JSON values`,
    );
  });

  it('is counted exactly on any JSON text however it arrives, keys not counted', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.constantFrom(0, 2),
        fc.array(fc.nat(), { maxLength: 8 }),
        (value, space, cuts) => {
          const bytes = Buffer.from(JSON.stringify(value, null, space));
          expect(countArriving(bytes, cuts)).toBe(valuesOf(value));
        },
      ),
    );
    // Escaped quotes and backslashes, cut at every byte.
    const text = Buffer.from(
      String.raw`{"a\"":"b\\", "c" : [ {}, [], true, -1.5e3, null, "\"" ] }`,
    );
    expect(valuesOf(JSON.parse(text.toString()))).toBe(9);
    for (let cut = 0; cut <= text.length; cut += 1) expect(countArriving(text, [cut])).toBe(9);
  });

  it('stops counting just past the bound: half a million numbers are not read through', () => {
    const counter = new JsonValueCounter(MAX_JSON_VALUES);
    counter.add(Buffer.from(`[${'1,'.repeat(499_999)}1]`));
    expect(counter.values).toBe(MAX_JSON_VALUES + 1);
  });

  it('refuses one value more with a 413 naming the bound, and routes nothing', async () => {
    const before = await sessionsStarted();
    const res = await api.request<Schemas['ErrorResponse']>('POST', sessionsPath(), {
      key: acme.key,
      body: routingBodyOf(MAX_JSON_VALUES + 1),
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      detail: stringContaining(`more than ${MAX_JSON_VALUES.toLocaleString('en-US')} JSON values`),
      request_id: res.headers.get('x-request-id'),
    });
    expect(await sessionsStarted()).toBe(before);
  });

  it('accepts a body of exactly the bound', async () => {
    const before = (await sessionsStarted())!;
    const res = await api.request<Schemas['RoutedSession']>('POST', sessionsPath(), {
      key: acme.key,
      body: routingBodyOf(MAX_JSON_VALUES),
    });
    expect(res.status).toBe(200);
    expect(await sessionsStarted()).toBe(before + 1);
  });

  it('refuses a 1 MB array of 500,000 numbers with the same 413', async () => {
    const body = `[${'1,'.repeat(499_999)}1]`;
    expect(body.length).toBeGreaterThan(1_000_000);
    const res = await api.request<Schemas['ErrorResponse']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body,
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.body.detail).toContain(`${MAX_JSON_VALUES.toLocaleString('en-US')} JSON values`);
  });
});

describe('properties a body schema does not name', () => {
  it('are ignored: neither stored nor answered, at any level of the body', async () => {
    const body = {
      ...experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
      colour: 'red',
      status: 'running',
    };
    body.variants[0] = { ...body.variants[0]!, ...{ share: 0.7 } };
    const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body,
    });
    expect(created.status).toBe(200);
    expect(created.body).not.toHaveProperty('colour');
    // An ignored property changes nothing, even where its name is a response field's.
    expect(created.body.status).toBe('draft');
    const read = await api.request<Schemas['Experiment']>(
      'GET',
      `/api/v1/experiments/${created.body.id}`,
      { key: acme.key },
    );
    expect(read.body).not.toHaveProperty('colour');
    expect(read.body.variants[0]).not.toHaveProperty('share');
    expect(read.body.variants.map(({ name, weight }) => [name, weight])).toEqual([
      ['control', 70],
      ['candidate', 30],
    ]);
  });

  it('are held to the checks every body gets: their text, their depth, their count', async () => {
    const res = await api.request<Schemas['HTTPValidationError']>('POST', sessionsPath(), {
      key: acme.key,
      body: { user_id: '+14155550100', note: 'a\u0000b' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'note'],
        msg: stringContaining('must not contain the NUL character'),
        type: 'value_error',
      },
    ]);
  });
});
