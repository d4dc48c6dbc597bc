import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  generateEnumValuesModule,
  generateRoutesModule,
  UnsupportedSpecError,
} from '../../../tools/zod-routes.js';
import spec from '../src/generated/openapi.json' with { type: 'json' };
import * as generated from '../src/generated/routes.js';
import {
  BOOLEAN_PARSING_MESSAGE,
  INTEGER_PARSING_MESSAGE,
  NUMBER_PARSING_MESSAGE,
} from '../src/contract/param-coercion.js';
import type { Schemas } from './support/harness.js';
import { diffOpenApiDocuments } from './support/openapi-diff.js';
import { runTempFolder } from './support/run-temp-dir.js';

interface RoutesModule {
  routes: Record<string, RouteConfig>;
  openApiDocumentConfig: typeof generated.openApiDocumentConfig;
  registerSpecComponents: typeof generated.registerSpecComponents;
}

/** The document a server gets by registering every generated route, as the real app does. */
function serverDocument(module: RoutesModule) {
  const app = new OpenAPIHono();
  module.registerSpecComponents(app);
  for (const route of Object.values(module.routes)) app.openapi(route, echoValidatedInput as never);
  return app.getOpenAPI31Document(module.openApiDocumentConfig);
}

// Answers with what validation produced, whatever the route declares as its responses: the
// tests below are about the input side only.
function echoValidatedInput(c: Context) {
  const valid = (target: 'query' | 'param' | 'header' | 'json') => c.req.valid(target as never);
  return c.json({
    query: valid('query'),
    param: valid('param'),
    header: valid('header'),
    json: valid('json'),
  });
}

/**
 * What a probed route answers: the input validation produced, by part (`Json` the body's type
 * after validation), or for a 422 the part that failed and its zod issues.
 */
interface ProbeAnswer<Json> {
  query?: Record<string, unknown>;
  param?: Record<string, unknown>;
  header?: Record<string, unknown>;
  json?: Json;
  target?: string;
  issues?: unknown[];
}

/** Calls one route through Hono's own parsing and validation; a failure is a 422 with the zod issues. */
function probe<Json = unknown>(route: RouteConfig) {
  const app = new OpenAPIHono({
    defaultHook: (result, c) => {
      if (!result.success)
        return c.json({ target: result.target, issues: result.error.issues }, 422);
    },
  });
  app.openapi(route, echoValidatedInput as never);
  return async (url: string, init?: RequestInit) => {
    const response = await app.request(url, init);
    return { status: response.status, body: (await response.json()) as ProbeAnswer<Json> };
  };
}

const jsonBody = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const integerIssue = (...path: Array<string | number>) => ({
  code: 'invalid_type',
  expected: 'int',
  path,
  message: INTEGER_PARSING_MESSAGE,
});

describe('routes generated from spec/openapi.yaml', () => {
  it('produce a server document equivalent to the spec', () => {
    expect(diffOpenApiDocuments(spec, serverDocument(generated))).toEqual([]);
  });

  it('register every component schema of the spec', () => {
    const document = serverDocument(generated);
    expect(Object.keys(document.components?.schemas ?? {}).sort()).toEqual(
      Object.keys(spec.components.schemas).sort(),
    );
  });

  describe('query coercion (events list)', () => {
    const listEvents = probe(generated.eventsListRoute);

    it('reads integers and applies defaults', async () => {
      const { status, body } = await listEvents('/api/v1/events/?limit=5');
      expect(status).toBe(200);
      expect(body.query).toEqual({
        page: 0,
        limit: 5,
        search_fields: [],
        search_field_values: [],
        fields: [],
      });
    });

    it.each(['abc', '', '1.5', '1e3', ' 5', '0x10'])(
      'refuses limit=%j as an integer-parsing error on ["limit"]',
      async (value) => {
        const { status, body } = await listEvents(
          `/api/v1/events/?limit=${encodeURIComponent(value)}`,
        );
        expect(status).toBe(422);
        expect(body).toEqual({ target: 'query', issues: [integerIssue('limit')] });
      },
    );

    it('keeps the bounds of the spec', async () => {
      const { status, body } = await listEvents('/api/v1/events/?limit=1001&page=-1');
      expect(status).toBe(422);
      expect(body.issues).toEqual([
        expect.objectContaining({ code: 'too_small', path: ['page'], minimum: 0 }),
        expect.objectContaining({ code: 'too_big', path: ['limit'], maximum: 1000 }),
      ]);
    });

    it('turns a single value of an array parameter into a one-element list', async () => {
      const { body } = await listEvents('/api/v1/events/?search_fields=type');
      expect(body.query?.search_fields).toEqual(['type']);
    });

    it('collects repeated keys into lists', async () => {
      const { body } = await listEvents(
        '/api/v1/events/?search_fields=type&search_fields=source&search_field_values=call&search_field_values=llm&fields=timestamp&fields=type',
      );
      expect(body.query).toMatchObject({
        search_fields: ['type', 'source'],
        search_field_values: ['call', 'llm'],
        fields: ['timestamp', 'type'],
      });
    });

    it('checks every element of a list, naming its index', async () => {
      const { status, body } = await listEvents(
        '/api/v1/events/?search_fields=type&search_fields=nope',
      );
      expect(status).toBe(422);
      expect(body.issues).toEqual([
        expect.objectContaining({ code: 'invalid_value', path: ['search_fields', 1] }),
      ]);
    });

    it('refuses a scalar parameter given twice', async () => {
      const { status, body } = await listEvents('/api/v1/events/?limit=5&limit=6');
      expect(status).toBe(422);
      expect(body.issues).toEqual([
        expect.objectContaining({ code: 'invalid_type', path: ['limit'] }),
      ]);
    });

    it('ignores unknown query parameters and takes date-times with an offset', async () => {
      const { status, body } = await listEvents(
        `/api/v1/events/?colour=red&start_datetime=${encodeURIComponent('2026-05-01T00:00:00+02:00')}`,
      );
      expect(status).toBe(200);
      expect(body.query).not.toHaveProperty('colour');
      expect(body.query?.start_datetime).toBe('2026-05-01T00:00:00+02:00');
    });
  });

  describe('path and body validation', () => {
    it('reads an integer path parameter', async () => {
      const getExperiment = probe(generated.experimentsGetRoute);
      expect((await getExperiment('/api/v1/experiments/12')).body.param).toEqual({
        experiment_id: 12,
      });
      expect((await getExperiment('/api/v1/experiments/abc')).body).toEqual({
        target: 'param',
        issues: [integerIssue('experiment_id')],
      });
      expect((await getExperiment('/api/v1/experiments/0')).body.issues).toEqual([
        expect.objectContaining({ code: 'too_small', path: ['experiment_id'] }),
      ]);
    });

    it('requires variants on create and refuses strings where integers are due', async () => {
      const createExperiment = probe(generated.experimentsCreateRoute);
      const { status, body } = await createExperiment(
        '/api/v1/experiments/',
        jsonBody({ name: 'Greeting test', target_id: '5' }),
      );
      expect(status).toBe(422);
      expect(body.target).toBe('json');
      expect(body.issues).toEqual([
        expect.objectContaining({ code: 'invalid_type', expected: 'number', path: ['target_id'] }),
        expect.objectContaining({ code: 'invalid_type', expected: 'array', path: ['variants'] }),
      ]);
    });

    it('applies body defaults', async () => {
      const createExperiment = probe<Schemas['ExperimentCreate']>(generated.experimentsCreateRoute);
      const variants = [
        { name: 'a', weight: 50, agent_id: 1, is_control: true },
        { name: 'b', weight: 50, agent_id: 2 },
      ];
      const { body } = await createExperiment(
        '/api/v1/experiments/',
        jsonBody({ name: 'x', target_id: 5, variants }),
      );
      expect(body.json?.variants[1]).toEqual({
        name: 'b',
        weight: 50,
        agent_id: 2,
        is_control: false,
      });
    });
  });
});

describe('routes generated from the fixture spec (every supported feature)', () => {
  const fixturePath = fileURLToPath(
    new URL('../../../tools/test/fixtures/mini-openapi.yaml', import.meta.url),
  );
  const fixture: unknown = parse(readFileSync(fixturePath, 'utf8'));
  let fixtureRoutes: RoutesModule;

  beforeAll(async () => {
    // The module is written outside the source tree, so its imports are absolute: the ESM build
    // of @hono/zod-openapi (the one this test uses) and the coercion helpers; its enum values
    // module is written beside it.
    const require = createRequire(import.meta.url);
    const zodOpenApiPackage = require.resolve('@hono/zod-openapi/package.json');
    const { exports } = JSON.parse(readFileSync(zodOpenApiPackage, 'utf8')) as {
      exports: { '.': { import: string } };
    };
    const source = generateRoutesModule(fixture, {
      zodOpenApi: pathToFileURL(join(dirname(zodOpenApiPackage), exports['.'].import)).href,
      paramCoercion: new URL('../src/contract/param-coercion.ts', import.meta.url).href,
      enumValues: './enum-values.ts',
    });
    const folder = runTempFolder('agentline-routes-');
    writeFileSync(join(folder, 'enum-values.ts'), generateEnumValuesModule(fixture));
    const file = join(folder, 'routes.ts');
    writeFileSync(file, source);
    fixtureRoutes = (await import(pathToFileURL(file).href)) as RoutesModule;
  });

  it('produce a server document equivalent to the fixture', () => {
    expect(diffOpenApiDocuments(fixture, serverDocument(fixtureRoutes))).toEqual([]);
  });

  it('coerce numbers, booleans, comma-separated lists and required headers', async () => {
    const listWidgets = probe(fixtureRoutes.routes['widgetsList']!);
    const headers = { 'X-Trace': 't-1' };
    const ok = await listWidgets(
      '/api/v1/widgets/?ratio=0.5&include_archived=true&labels=a,b&ids=3&ids=4',
      {
        headers,
      },
    );
    expect(ok.body.query).toEqual({
      limit: 20,
      ratio: 0.5,
      include_archived: true,
      kinds: [],
      labels: ['a', 'b'],
      ids: [3, 4],
    });
    expect(ok.body.header).toEqual({ 'X-Trace': 't-1' });

    const bad = await listWidgets('/api/v1/widgets/?ratio=half&include_archived=yes&ids=3&ids=x', {
      headers,
    });
    expect(bad.body.issues).toEqual([
      {
        code: 'invalid_type',
        expected: 'number',
        path: ['ratio'],
        message: NUMBER_PARSING_MESSAGE,
      },
      {
        code: 'invalid_type',
        expected: 'boolean',
        path: ['include_archived'],
        message: BOOLEAN_PARSING_MESSAGE,
      },
      integerIssue('ids', 1),
    ]);

    const missingHeader = await listWidgets('/api/v1/widgets/');
    expect(missingHeader.body).toMatchObject({
      target: 'header',
      issues: [expect.objectContaining({ path: ['X-Trace'] })],
    });
  });

  it('reject unknown keys only where additionalProperties is false', async () => {
    const createWidget = probe(fixtureRoutes.routes['widgetsCreate']!);
    const widget = { name: 'Gear', kind: 'gear', price: { amount: 5, currency: 'EUR' } };
    const ok = await createWidget('/api/v1/widgets/', jsonBody(widget));
    expect(ok.body.json).toEqual({ ...widget, labels: [], is_public: false });

    const extra = await createWidget('/api/v1/widgets/', jsonBody({ ...widget, colour: 'red' }));
    expect(extra.body.issues).toEqual([
      expect.objectContaining({ code: 'unrecognized_keys', keys: ['colour'] }),
    ]);

    const updateWidget = probe(fixtureRoutes.routes['widgetsUpdate']!);
    const patched = await updateWidget('/api/v1/widgets/7', {
      ...jsonBody({ name: 'Cog', colour: 'red' }),
      method: 'PATCH',
    });
    expect(patched.body.json).toEqual({ name: 'Cog' });
  });
});

describe('the generator', () => {
  const imports = {
    zodOpenApi: '@hono/zod-openapi',
    paramCoercion: './param-coercion.js',
    enumValues: './enum-values.js',
  };
  const specWith = (schema: unknown) => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    components: { schemas: { Tags: schema } },
  });

  it('refuses a keyword outside the supported subset, naming where it is', () => {
    expect(() =>
      generateRoutesModule(specWith({ type: 'array', uniqueItems: true }), imports),
    ).toThrow(
      new UnsupportedSpecError('#/components/schemas/Tags', 'unsupported keyword(s): uniqueItems'),
    );
  });

  it('refuses a keyword that does not fit the type instead of dropping it', () => {
    expect(() => generateRoutesModule(specWith({ type: 'string', minItems: 1 }), imports)).toThrow(
      '#/components/schemas/Tags: minItems on a string schema',
    );
  });
});
