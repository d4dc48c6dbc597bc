// Spec-driven fuzzing: for every operation of the contract, generated query strings, path
// parameters and bodies (valid, nearly valid and junk) go to the real app. Whatever comes in,
// the answer is never a 5xx, always matches the spec (the harness validates every response),
// and every 422 points at an input that exists. List operations also get forged cursors: made
// with the unkeyed SHA-256 of the cursors before cursors were signed, or sealed with the database's own
// secret around any position (what a leaked secret allows): a 422 or a page, never a 5xx.
//
// CI runs a fixed seed; `FUZZ_RUNS=20000 FUZZ_SEED=123 pnpm exec vitest run test/fuzz-spec.test.ts`
// runs more, or others.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorSigner } from '../src/runtime/cursor-signer.js';
import type { CursorSigner } from '../src/domain/list-query.js';
import spec from '../src/generated/openapi.json' with { type: 'json' };
import {
  CURSOR_LISTS,
  orderQuery,
  sealedCursor,
  unkeyedCursor,
  walkOf,
  type Order,
} from './support/forged-cursors.js';
import {
  isValidationFailure,
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

const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  schema: {
    type?: string;
    enum?: string[];
    items?: { $ref?: string; type?: string };
    $ref?: string;
  };
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  hasBody: boolean;
}

type SpecDocument = {
  paths: Record<string, Record<string, unknown>>;
  components: {
    parameters: Record<string, Parameter>;
    schemas: Record<string, { enum?: string[] }>;
  };
};
const document = spec as unknown as SpecDocument;

function resolveParameter(p: Parameter | { $ref: string }): Parameter {
  return '$ref' in p ? document.components.parameters[p.$ref.split('/').pop()!]! : p;
}

function enumOf(schema: Parameter['schema']): string[] | undefined {
  const ref = schema.$ref ?? schema.items?.$ref;
  return ref ? document.components.schemas[ref.split('/').pop()!]?.enum : schema.enum;
}

const OPERATIONS: Operation[] = Object.entries(document.paths).flatMap(([path, item]) => {
  const shared = ((item.parameters ?? []) as Array<Parameter | { $ref: string }>).map(
    resolveParameter,
  );
  return (['get', 'post', 'put', 'delete'] as const).flatMap((method) => {
    const operation = item[method] as
      | {
          operationId: string;
          parameters?: Array<Parameter | { $ref: string }>;
          requestBody?: unknown;
        }
      | undefined;
    if (!operation) return [];
    return [
      {
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        parameters: [...shared, ...(operation.parameters ?? []).map(resolveParameter)],
        hasBody: operation.requestBody !== undefined,
      },
    ];
  });
});

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let signer: CursorSigner;

beforeAll(async () => {
  fc.configureGlobal({ seed: SEED, numRuns: RUNS_PER_OPERATION });
  ({ api, acme, globex, fx } = await createRoutingTestbed());
  signer = await cursorSigner(api.db);
});

afterAll(() => api.close());

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1.5',
    '1e3',
    'true',
    'null',
    '[]',
    '%',
    '_',
    "'",
    '\u0000',
    'é',
  ),
  fc.integer({ min: -5, max: 1_500 }).map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

/** Positions of every type, near and far past the ranges of the columns. */
const positionValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 1 }),
  fc.constantFrom(3e9, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, Number.MAX_SAFE_INTEGER, 1.5, -0),
  fc.integer(),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

/**
 * A forged cursor for a list ordered by `order`: unkeyed (the old construction) or sealed with
 * the database's secret, for the organization's walk or another's, around any position.
 */
function forgedCursor(path: string, order?: Order): fc.Arbitrary<string> {
  const list = CURSOR_LISTS.find((candidate) => candidate.path === path);
  if (!list) return text;
  return fc
    .tuple(
      fc.boolean(),
      fc.constantFrom(acme.organizationId, globex.organizationId),
      positionValue,
      positionValue,
    )
    .map(([sealed, organizationId, value, id]) => {
      const walk = walkOf(list.resource, organizationId, order);
      return sealed ? sealedCursor(signer, walk, value, id) : unkeyedCursor(walk, value, id);
    });
}

function valueFor(parameter: Parameter, operation: Operation): fc.Arbitrary<string> {
  if (parameter.name === 'cursor') return fc.oneof(text, forgedCursor(operation.path));
  const allowed = enumOf(parameter.schema);
  return allowed ? fc.oneof(fc.constantFrom(...allowed), text) : text;
}

/** A query string of some declared parameters (repeated for arrays), plus sometimes junk. */
function queryFor(operation: Operation): fc.Arbitrary<string> {
  const queryParameters = operation.parameters.filter((p) => p.in === 'query');
  const pair = (p: Parameter) =>
    fc
      .array(valueFor(p, operation), {
        minLength: 1,
        maxLength: p.schema.type === 'array' ? 3 : 1,
      })
      .map((values) => values.map((v) => `${p.name}=${encodeURIComponent(v)}`));
  const chosen = queryParameters.length
    ? fc.subarray(queryParameters).chain((ps) => fc.tuple(...ps.map(pair)))
    : fc.constant([]);
  return fc
    .tuple(chosen, fc.option(fc.constantFrom('colour=red', 'limit', '&&', 'page=1&page=2')))
    .map(([pairs, junk]) => {
      const parts = (pairs as string[][]).flat();
      if (junk) parts.push(junk);
      return parts.length ? `?${parts.join('&')}` : '';
    });
}

function pathFor(operation: Operation, ids: { experiment: number }): fc.Arbitrary<string> {
  const idValue = (name: string) =>
    fc.oneof(
      fc.constant(
        String(
          name === 'experiment_id' ? ids.experiment : name === 'target_id' ? fx.targets.main : 1,
        ),
      ),
      fc.integer({ min: -2, max: 3_000_000_000 }).map(String),
      fc.constantFrom('abc', '0', '1.5', '%20', '9'.repeat(30)),
    );
  const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  return fc
    .tuple(...names.map(idValue))
    .map((values) =>
      names.reduce((path, name, i) => path.replace(`{${name}}`, values[i]!), operation.path),
    );
}

/** A public address (the default settings refuse others; nothing is delivered here). */
const WEBHOOK_ENDPOINT = {
  url: 'https://8.8.8.8/agentline',
  description: 'fuzzed',
  enabled: true,
  search_fields: ['type'],
  search_field_values: ['call'],
  message_types: ['event'],
};

/** The valid body of each operation that takes one, but the experiments' (made per fixture). */
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  channels_telephony_numbers_verify_a2p_compliance: { phone: '+15550100001' },
  sessions_route: { user_id: 'caller', conversation_id: 'c' },
  webhooks_endpoints_create: WEBHOOK_ENDPOINT,
  webhooks_endpoints_update: WEBHOOK_ENDPOINT,
  webhooks_endpoints_replay: { start_datetime: '2026-05-01T00:00:00Z' },
};

/** Bodies: the valid one, the valid one with a field removed or retyped, and arbitrary JSON. */
function bodyFor(operation: Operation): fc.Arbitrary<unknown> {
  const valid: Record<string, unknown> =
    VALID_BODIES[operation.operationId] ??
    experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]);
  const mutated = fc
    .tuple(
      fc.constantFrom(...Object.keys(valid)),
      fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 })),
    )
    .map(([key, value]) => ({ ...valid, [key]: value }));
  const variantMutation = fc
    .tuple(
      fc.nat(3),
      fc.constantFrom('name', 'weight', 'is_control', 'agent_id'),
      fc.jsonValue({ maxDepth: 1 }),
    )
    .map(([index, key, value]) => {
      const variants = structuredClone((valid.variants as Array<Record<string, unknown>>) ?? []);
      if (variants[index % Math.max(variants.length, 1)])
        variants[index % variants.length]![key] = value;
      return { ...valid, variants };
    });
  return fc.oneof(fc.constant(valid), mutated, variantMutation, fc.jsonValue({ maxDepth: 3 }));
}

/**
 * Bodies a hostile or careless client sends: nesting far past the depth limit, escaped NULs and
 * lone surrogates in every field, escaped backslashes that only look like them, arrays of tens of
 * thousands of items (under the body limit). Raw text, so nothing is lost by re-encoding.
 */
const hostileBody: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 1, max: 8000 }).map((n) => `{"a":${'['.repeat(n)}1${']'.repeat(n)}}`),
  fc.integer({ min: 1, max: 4000 }).map((n) => `{"a":${'{"b":'.repeat(n)}null${'}'.repeat(n)}}`),
  fc
    .constantFrom('\\u0000', '\\ud800', '\\udfff', '\\\\u0000', '\\ud83d\\ude00', '\\u0000\\ud800')
    .chain((escape) =>
      fc.constantFrom(
        `{"name":"x${escape}","user_id":"u${escape}","phone":"+1415555${escape}"}`,
        `{"${escape}":1}`,
        `{"variants":[{"name":"${escape}"}],"conversation_id":"${escape}"}`,
      ),
    ),
  fc.integer({ min: 1_000, max: 60_000 }).map((n) => `{"variants":[${'1,'.repeat(n)}1]}`),
);

/** Content types and encodings: the accepted spellings and the refused ones. */
const mediaHeaders = fc.constantFrom<Record<string, string>>(
  { 'Content-Type': 'application/json' },
  { 'Content-Type': 'APPLICATION/JSON; charset="UTF-8"' },
  { 'Content-Type': 'application/json', 'Content-Encoding': 'identity' },
  { 'Content-Type': 'text/plain' },
  { 'Content-Type': 'application/x-www-form-urlencoded' },
  { 'Content-Type': 'application/json; charset=utf-16' },
  { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
  { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
);

function isAcceptedMediaType(headers: Record<string, string>): boolean {
  const type = headers['Content-Type']!.toLowerCase();
  return (
    type.startsWith('application/json') &&
    !type.includes('utf-16') &&
    (headers['Content-Encoding'] ?? 'identity') === 'identity'
  );
}

function expectLocationsExist(
  res: ApiResponse<Schemas['HTTPValidationError']>,
  operation: Operation,
  body: unknown,
) {
  for (const problem of res.body.detail) {
    const [where, name] = problem.loc;
    if (where === 'query' || where === 'path') {
      const declared = operation.parameters.filter((p) => p.in === where).map((p) => p.name);
      expect(declared, JSON.stringify(problem)).toContain(name);
    } else if (where === 'body' && problem.loc.length > 1) {
      // The location exists in the body, or names a declared field the body lacks.
      let node: unknown = body;
      for (const key of problem.loc.slice(1, -1))
        node = (node as Record<string | number, unknown>)?.[key];
      expect(node === undefined || typeof node === 'object', JSON.stringify(problem)).toBe(true);
    } else {
      expect(['body', 'header'], JSON.stringify(problem)).toContain(where);
    }
  }
}

describe.each(OPERATIONS)('$method $path', (operation) => {
  it('never answers 5xx, always matches the spec, and points 422s at real inputs', async () => {
    const draft = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
    });
    await fc.assert(
      fc.asyncProperty(
        pathFor(operation, { experiment: draft.body.id }),
        queryFor(operation),
        operation.hasBody ? bodyFor(operation) : fc.constant(undefined),
        async (path, query, body) => {
          const res = await api.request(operation.method, `${path}${query}`, {
            key: acme.key,
            body,
          });
          expect(
            res.status,
            `${operation.method} ${path}${query} ${JSON.stringify(body)}`,
          ).toBeLessThan(500);
          if (isValidationFailure(res)) expectLocationsExist(res, operation, body);
        },
      ),
    );
  }, 120_000);
});

describe.each(CURSOR_LISTS)('GET $path with forged cursors', ({ path, resource }) => {
  it('answers 422 or a page, never 5xx, in every order', async () => {
    const orders = fc.record({
      property: fc.constantFrom(...Object.keys(resource.kinds)),
      direction: fc.constantFrom('asc' as const, 'desc' as const),
    });
    await fc.assert(
      fc.asyncProperty(
        orders.chain((order) => fc.tuple(fc.constant(order), forgedCursor(path, order))),
        fc.integer({ min: 0, max: 30 }),
        async ([order, cursor], limit) => {
          const url = `${path}?${orderQuery(order)}&limit=${limit}&cursor=${encodeURIComponent(cursor)}`;
          const res = await api.request('GET', url, { key: acme.key });
          expect(res.status, `${url} ${JSON.stringify(res.body)}`).toBeLessThan(500);
          if (isValidationFailure(res)) {
            expect(res.body.detail.map((problem) => problem.loc)).toEqual([['query', 'cursor']]);
          }
        },
      ),
    );
  }, 120_000);
});

const BODY_OPERATIONS = OPERATIONS.filter((operation) => operation.hasBody);

describe.each(BODY_OPERATIONS)('$method $path with hostile bodies', (operation) => {
  it('answers 415 for refused media types and never 5xx, whatever the body', async () => {
    await fc.assert(
      fc.asyncProperty(
        pathFor(operation, { experiment: 1 }),
        hostileBody,
        mediaHeaders,
        async (path, body, headers) => {
          const res = await api.request(operation.method, path, { key: acme.key, body, headers });
          const what = `${operation.method} ${path} ${JSON.stringify(headers)} ${body.slice(0, 80)}`;
          expect(res.status, what).toBeLessThan(500);
          if (!isAcceptedMediaType(headers)) expect(res.status, what).toBe(415);
          if (isValidationFailure(res)) expectLocationsExist(res, operation, JSON.parse(body));
        },
      ),
      { numRuns: Math.ceil(RUNS_PER_OPERATION / 4) },
    );
  }, 120_000);
});

const POST_OPERATIONS = OPERATIONS.filter((operation) => operation.method === 'POST');

describe('Idempotency-Keys reused across every POST operation', () => {
  it('never replays one request’s answer to another, and never answers 5xx', async () => {
    const draft = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
    });
    // Every answer given afresh, by key: a replay must repeat one of these, to the same request.
    const answered = new Map<string, Array<{ request: string; body: string }>>();
    const request = fc
      .constantFrom(...POST_OPERATIONS)
      .chain((operation) =>
        fc.tuple(
          fc.constant(operation),
          pathFor(operation, { experiment: draft.body.id }),
          operation.hasBody ? bodyFor(operation) : fc.constant(undefined),
        ),
      );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('shared-1', 'shared-2', 'shared-3'),
        request,
        async (idempotencyKey, [operation, path, body]) => {
          const res = await api.request(operation.method, path, {
            key: acme.key,
            body,
            headers: { 'Idempotency-Key': idempotencyKey },
          });
          const what = `${operation.method} ${path} ${JSON.stringify(body)}`;
          expect(res.status, what).toBeLessThan(500);
          const sent = `${operation.method} ${path}\n${JSON.stringify(body)}`;
          const answer = JSON.stringify(res.body);
          const earlier = answered.get(idempotencyKey) ?? [];
          if (res.headers.get('idempotent-replayed') === 'true') {
            expect(earlier, what).toContainEqual({ request: sent, body: answer });
          } else {
            answered.set(idempotencyKey, [...earlier, { request: sent, body: answer }]);
          }
        },
      ),
      { numRuns: RUNS_PER_OPERATION },
    );
  }, 120_000);
});
