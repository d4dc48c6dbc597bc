// Every bound the contract states on a request input is the one the server keeps. The probes are
// read from the spec, not listed here: for each operation, each parameter (path, query, header)
// and each field of its body that carries maxLength, minLength, maxItems, minItems, maximum,
// minimum, a pattern or a date-time format gets one request just past the bound (a 422 whose
// detail names that input with the bound's type) and, where the bound is a size, one request
// exactly at it (accepted as far as that input goes: no 5xx, no bound problem at its place), so a
// bound that is enforced one off, or silently cut to size, fails. Every answer also carries the
// per-key rate-limit fields.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import spec from '../src/generated/openapi.json' with { type: 'json' };
import { createTenant, createTestApi, type ApiResponse, type TestApi } from './support/harness.js';

type Schema = { [keyword: string]: unknown };
type Location = 'path' | 'query' | 'header' | 'body';
type Loc = Array<string | number>;

interface Parameter {
  name: string;
  in: Exclude<Location, 'body'>;
  required?: boolean;
  schema: Schema;
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: Schema;
}

/** A value that breaks one bound, and the `type` the 422 gives it. */
interface Probe {
  bound: string;
  over: unknown;
  type: string;
  /** The same input exactly at the bound, when the bound is a size. */
  at?: unknown;
}

const BOUND_TYPES = new Set([
  'string_too_long',
  'string_too_short',
  'too_long',
  'too_short',
  'less_than_equal',
  'greater_than_equal',
  'string_pattern_mismatch',
  'datetime_parsing',
]);

const PER_MINUTE = 1_000_000;

const document = spec as unknown as {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
};

function resolve<T>(node: unknown): T {
  let current = node as { $ref?: string };
  while (typeof current.$ref === 'string') {
    const [, kind, name] = current.$ref.split('/').slice(1);
    current = document.components[kind!]![name!] as { $ref?: string };
  }
  return current as T;
}

const OPERATIONS: Operation[] = Object.entries(document.paths).flatMap(([path, item]) =>
  (['get', 'post', 'put', 'delete'] as const).flatMap((method) => {
    const operation = item[method] as
      { operationId: string; parameters?: unknown[]; requestBody?: unknown } | undefined;
    if (!operation) return [];
    const parameters = [...((item.parameters ?? []) as unknown[]), ...(operation.parameters ?? [])];
    const body = operation.requestBody
      ? resolve<{ content: Record<string, { schema: Schema }> }>(operation.requestBody).content[
          'application/json'
        ]!.schema
      : undefined;
    return [
      {
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        parameters: parameters.map((parameter) => resolve<Parameter>(parameter)),
        body,
      },
    ];
  }),
);

function nonNullType(schema: Schema): string | undefined {
  const type = schema['type'];
  return Array.isArray(type)
    ? (type as string[]).find((entry) => entry !== 'null')
    : (type as string | undefined);
}

/** The smallest value the schema accepts (enough for validation, not for the domain's rules). */
function validValue(node: unknown): unknown {
  const schema = resolve<Schema>(node);
  if (Array.isArray(schema['enum'])) return schema['enum'].find((value) => value !== null);
  switch (nonNullType(schema)) {
    case 'object': {
      const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
      const required = (schema['required'] ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, validValue(properties[name])]));
    }
    case 'array':
      return Array.from({ length: Number(schema['minItems'] ?? 0) }, () =>
        validValue(schema['items']),
      );
    case 'integer':
    case 'number':
      return Number(schema['minimum'] ?? 0);
    case 'boolean':
      return false;
    default:
      return stringOfLength(schema, Number(schema['minLength'] ?? 1)) ?? 'a';
  }
}

/** A string of exactly `length` characters that meets the schema's format and pattern, if any. */
function stringOfLength(schema: Schema, length: number): string | undefined {
  if (schema['format'] === 'date-time') {
    const digits = length - '2026-05-01T00:00:00.+00:00'.length;
    return digits >= 1 ? `2026-05-01T00:00:00.${'0'.repeat(digits)}+00:00` : undefined;
  }
  if (typeof schema['pattern'] !== 'string') return 'a'.repeat(length);
  const pattern = new RegExp(schema['pattern']);
  const examples = (schema['examples'] as string[] | undefined) ?? [];
  for (const start of [...examples, 'a', '']) {
    for (const filler of new Set([...start, 'a', '0'])) {
      const candidate = (start + filler.repeat(Math.max(0, length - start.length))).slice(
        0,
        length,
      );
      if (candidate.length === length && pattern.test(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The probes of one input's own schema (an array's items are probed as their own input). */
function probesOf(node: unknown): Probe[] {
  const schema = resolve<Schema>(node);
  const probes: Probe[] = [];
  const type = nonNullType(schema);
  if (type === 'string' && !Array.isArray(schema['enum'])) {
    if (typeof schema['maxLength'] === 'number') {
      const max = schema['maxLength'];
      probes.push({
        bound: `maxLength ${max}`,
        over: stringOfLength(schema, max + 1) ?? 'a'.repeat(max + 1),
        at: stringOfLength(schema, max),
        type: 'string_too_long',
      });
    }
    if (typeof schema['minLength'] === 'number' && schema['minLength'] > 0) {
      const min = schema['minLength'];
      probes.push({
        bound: `minLength ${min}`,
        over: 'a'.repeat(min - 1),
        at: stringOfLength(schema, min),
        type: 'string_too_short',
      });
    }
    if (typeof schema['pattern'] === 'string') {
      const pattern = new RegExp(schema['pattern']);
      const misfit = ['!', 'é', ' ', 'a b', '~'].find((candidate) => !pattern.test(candidate));
      if (misfit === undefined) throw new Error(`no probe breaks the pattern ${pattern}`);
      probes.push({ bound: `pattern ${pattern}`, over: misfit, type: 'string_pattern_mismatch' });
    }
    if (schema['format'] === 'date-time') {
      probes.push({ bound: 'format date-time', over: 'yesterday', type: 'datetime_parsing' });
    }
  }
  if (type === 'array') {
    const item = validValue(schema['items']);
    if (typeof schema['maxItems'] === 'number') {
      const max = schema['maxItems'];
      probes.push({
        bound: `maxItems ${max}`,
        over: Array.from({ length: max + 1 }, () => item),
        at: Array.from({ length: max }, () => item),
        type: 'too_long',
      });
    }
    if (typeof schema['minItems'] === 'number' && schema['minItems'] > 0) {
      const min = schema['minItems'];
      probes.push({
        bound: `minItems ${min}`,
        over: Array.from({ length: min - 1 }, () => item),
        at: Array.from({ length: min }, () => item),
        type: 'too_short',
      });
    }
  }
  if (type === 'integer' || type === 'number') {
    if (typeof schema['maximum'] === 'number') {
      const max = schema['maximum'];
      probes.push({ bound: `maximum ${max}`, over: max + 1, at: max, type: 'less_than_equal' });
    }
    if (typeof schema['minimum'] === 'number') {
      const min = schema['minimum'];
      probes.push({ bound: `minimum ${min}`, over: min - 1, at: min, type: 'greater_than_equal' });
    }
  }
  return probes;
}

/** Each bounded place of a body: its path below the body, its schema. */
function bodyPlaces(node: unknown, path: Loc = []): Array<{ path: Loc; schema: unknown }> {
  const schema = resolve<Schema>(node);
  const here = [{ path, schema: node }];
  switch (nonNullType(schema)) {
    case 'object':
      return [
        ...(path.length > 0 ? here : []),
        ...Object.entries((schema['properties'] ?? {}) as Record<string, unknown>).flatMap(
          ([name, property]) => bodyPlaces(property, [...path, name]),
        ),
      ];
    case 'array':
      return [...here, ...bodyPlaces(schema['items'], [...path, 0])];
    default:
      return here;
  }
}

/** `body` with `value` written at `path`, creating the containers the path runs through. */
function withValueAt(body: unknown, path: Loc, value: unknown): unknown {
  if (path.length === 0) return value;
  const [key, ...rest] = path;
  if (typeof key === 'number') {
    const copy = Array.isArray(body) ? [...(body as unknown[])] : [];
    copy[key] = withValueAt(copy[key], rest, value);
    return copy;
  }
  const copy = { ...((body as Record<string, unknown> | undefined) ?? {}) };
  copy[key!] = withValueAt(copy[key!], rest, value);
  return copy;
}

interface Place {
  label: string;
  loc: Loc;
  schema: unknown;
  /** The request with this place holding `value`. */
  request(value: unknown): { url: string; headers: Record<string, string>; body?: unknown };
}

function placesOf(operation: Operation): Place[] {
  const base = (): { path: Record<string, unknown>; query: Record<string, unknown> } => ({
    path: Object.fromEntries(
      operation.parameters
        .filter((p) => p.in === 'path')
        .map((p) => [p.name, validValue(p.schema)]),
    ),
    query: Object.fromEntries(
      operation.parameters
        .filter((p) => p.in === 'query' && p.required)
        .map((p) => [p.name, validValue(p.schema)]),
    ),
  });
  const baseBody = operation.body ? validValue(operation.body) : undefined;
  const build = (
    path: Record<string, unknown>,
    query: Record<string, unknown>,
    headers: Record<string, string>,
    body: unknown,
  ) => {
    const url =
      operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
        encodeURIComponent(String(path[name])),
      ) +
      '?' +
      Object.entries(query)
        .flatMap(([name, value]) =>
          (Array.isArray(value) ? value : [value]).map(
            (entry) => `${name}=${encodeURIComponent(String(entry))}`,
          ),
        )
        .join('&');
    return { url, headers, body };
  };

  const parameterPlaces = operation.parameters.flatMap((parameter): Place[] => {
    const schema = resolve<Schema>(parameter.schema);
    const place = (loc: Loc, placeSchema: unknown, wrap: (value: unknown) => unknown): Place => ({
      label: `${parameter.in} ${loc.slice(1).join('.')}`,
      loc,
      schema: placeSchema,
      request: (value) => {
        const { path, query } = base();
        const headers: Record<string, string> = {};
        if (parameter.in === 'path') path[parameter.name] = wrap(value);
        if (parameter.in === 'query') query[parameter.name] = wrap(value);
        if (parameter.in === 'header') headers[parameter.name] = String(wrap(value));
        return build(path, query, headers, baseBody);
      },
    });
    const own = place([parameter.in, parameter.name], parameter.schema, (value) => value);
    return nonNullType(schema) === 'array'
      ? [own, place([parameter.in, parameter.name, 0], schema['items'], (value) => [value])]
      : [own];
  });
  const bodyPlacesOf = operation.body
    ? bodyPlaces(operation.body).map(({ path: bodyPath, schema }): Place => ({
        label: `body ${bodyPath.join('.')}`,
        loc: ['body', ...bodyPath],
        schema,
        request: (value) => {
          const { path, query } = base();
          return build(path, query, {}, withValueAt(baseBody, bodyPath, value));
        },
      }))
    : [];
  return [...parameterPlaces, ...bodyPlacesOf];
}

const CASES = OPERATIONS.flatMap((operation) =>
  placesOf(operation).flatMap((place) =>
    probesOf(place.schema).map((probe) => ({ operation, place, probe })),
  ),
);

let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await createTestApi(undefined, { rateLimitPerMinute: PER_MINUTE });
  ({ key } = await createTenant(api.db, 'bounds'));
});

afterAll(() => api.close());

async function send(
  operation: Operation,
  request: ReturnType<Place['request']>,
): Promise<ApiResponse> {
  const response = await api.request(operation.method, request.url, {
    key,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  expect(response.headers.get('RateLimit-Policy')).toBe(`"default";q=${PER_MINUTE};w=60`);
  expect(response.headers.get('RateLimit')).toMatch(/^"default";r=\d+;t=\d+$/);
  return response;
}

function problemsAt(response: ApiResponse, loc: Loc): Array<{ type: string; msg: string }> {
  if (response.status !== 422) return [];
  const detail = (response.body as { detail: Array<{ loc: Loc; type: string; msg: string }> })
    .detail;
  return detail.filter((problem) => JSON.stringify(problem.loc) === JSON.stringify(loc));
}

describe('every bound the spec states on an input', () => {
  it('is found in the spec (the walk reads every operation)', () => {
    const operationsProbed = new Set(CASES.map(({ operation }) => operation.operationId));
    // An operation that takes no input at all (keys_current) has no bound to probe.
    const withInputs = OPERATIONS.filter(({ parameters, body }) => parameters.length > 0 || body);
    expect(withInputs.length).toBe(OPERATIONS.length - 1);
    expect(operationsProbed.size).toBe(withInputs.length);
    expect(CASES.length).toBeGreaterThan(60);
  });

  it.each(
    CASES.map((entry) => [
      entry.operation.operationId,
      entry.place.label,
      entry.probe.bound,
      entry,
    ]),
  )('%s %s: %s', async (_operationId, _label, _bound, { operation, place, probe }) => {
    const over = await send(operation, place.request(probe.over));
    expect(over.status, JSON.stringify(over.body)).toBe(422);
    expect(problemsAt(over, place.loc).map((problem) => problem.type)).toContain(probe.type);

    if (probe.at === undefined) return;
    const at = await send(operation, place.request(probe.at));
    expect(at.status, JSON.stringify(at.body)).toBeLessThan(500);
    const boundProblems = problemsAt(at, place.loc).filter((problem) =>
      BOUND_TYPES.has(problem.type),
    );
    expect(boundProblems, JSON.stringify(at.body)).toEqual([]);
  });
});
