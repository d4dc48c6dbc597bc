import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { diffOpenApiDocuments } from './support/openapi-diff.js';

type JsonObject = { [key: string]: unknown };

// The cases edit a copy of the fixture as plain JSON. They reach what they edit through these,
// which check each step of the way instead of assuming it, so a case cannot pass by editing
// nothing.

/** The member at `path` (keys and list indexes) below `node`. */
function memberAt(node: unknown, path: ReadonlyArray<string | number>): unknown {
  return path.reduce<unknown>((parent, key) => {
    if (typeof parent !== 'object' || parent === null) {
      throw new Error(`the document has nothing at ${path.join(' > ')}`);
    }
    return (parent as Record<string | number, unknown>)[key];
  }, node);
}

/** The object at `path` below `node`. */
function objectAt(node: unknown, ...path: Array<string | number>): JsonObject {
  const member = memberAt(node, path);
  if (typeof member !== 'object' || member === null || Array.isArray(member)) {
    throw new Error(`the document has no object at ${path.join(' > ')}`);
  }
  return member as JsonObject;
}

/** The list at `path` below `node`. */
function listAt(node: unknown, ...path: Array<string | number>): unknown[] {
  const member = memberAt(node, path);
  if (!Array.isArray(member)) throw new Error(`the document has no list at ${path.join(' > ')}`);
  return member;
}

const fixture = objectAt(
  parse(
    readFileSync(
      new URL('../../../tools/test/fixtures/mini-openapi.yaml', import.meta.url),
      'utf8',
    ),
  ),
);

function changed(edit: (document: JsonObject) => void): JsonObject {
  const copy = structuredClone(fixture);
  edit(copy);
  return copy;
}

const list = (document: JsonObject) => objectAt(document, 'paths', '/api/v1/widgets/', 'get');
const create = (document: JsonObject) => objectAt(document, 'paths', '/api/v1/widgets/', 'post');

describe('diffOpenApiDocuments: equivalent documents', () => {
  it('finds nothing between a document and itself', () => {
    expect(diffOpenApiDocuments(fixture, structuredClone(fixture))).toEqual([]);
  });

  it('treats the spellings of one schema as the same schema', () => {
    const server = changed((document) => {
      const widget = objectAt(document, 'components', 'schemas', 'Widget');
      listAt(widget, 'required').reverse();
      const properties = objectAt(widget, 'properties');
      properties.owner_email = {
        anyOf: [{ type: 'string', format: 'email' }, { type: 'null' }],
      };
      properties.legacy_code = { type: 'string', nullable: true };
      properties.parent = {
        oneOf: [{ type: 'null' }, { $ref: '#/components/schemas/WidgetSummary' }],
      };
      properties.status = { type: 'string', enum: ['active'] };
      properties.grade = { type: ['string', 'null'], enum: [null, 'b', 'a'] };
      properties.metadata = { type: 'object', properties: {}, additionalProperties: {} };
      properties.kind = {
        allOf: [{ $ref: '#/components/schemas/WidgetKind' }, { description: 'The kind.' }],
      };
      properties.currency_pattern = undefined;
      delete properties.currency_pattern;
      listAt(document, 'components', 'schemas', 'WidgetKind', 'enum').reverse();
      objectAt(document, 'components', 'schemas', 'Money', 'properties', 'currency').pattern =
        '^[A-Z]{3}$';
      // Inline instead of $ref, annotations changed, parameter default moved off the schema.
      listAt(list(document), 'parameters')[0] = {
        name: 'limit',
        in: 'query',
        description: 'Another description.',
        default: 20,
        schema: { type: 'integer', minimum: 0, maximum: 100 },
      };
      list(document).summary = 'Something else';
      list(document).tags = ['widgets'];
      objectAt(document, 'paths')['/healthz'] = {
        get: { responses: { '200': { description: 'ok' } } },
      };
    });
    expect(diffOpenApiDocuments(fixture, server)).toEqual([]);
  });

  it('compares the effective security, whether set on the document or on the operation', () => {
    const server = changed((document) => {
      delete document.security;
      for (const pathItem of Object.values(objectAt(document, 'paths'))) {
        for (const operation of Object.values(objectAt(pathItem))) {
          if (Array.isArray(operation)) continue;
          objectAt(operation).security ??= [{ ApiKey: [] }];
        }
      }
    });
    expect(diffOpenApiDocuments(fixture, server)).toEqual([]);
  });
});

describe('diffOpenApiDocuments: one line per difference', () => {
  const cases: Array<[string, (document: JsonObject) => void, string]> = [
    [
      'a missing path',
      (document) => delete objectAt(document, 'paths')['/api/v1/widgets/{widget_id}'],
      'path /api/v1/widgets/{widget_id} is in the spec but not in the server',
    ],
    [
      'an extra API path',
      (document) => (objectAt(document, 'paths')['/api/v1/gadgets/'] = { get: { responses: {} } }),
      'path /api/v1/gadgets/ is in the server but not in the spec',
    ],
    [
      'a missing method',
      (document) => delete objectAt(document, 'paths', '/api/v1/widgets/{widget_id}').delete,
      'DELETE /api/v1/widgets/{widget_id} is in the spec but not in the server',
    ],
    [
      'an operationId',
      (document) => (list(document).operationId = 'listWidgets'),
      'GET /api/v1/widgets/: operationId: spec "widgets_list", server "listWidgets"',
    ],
    [
      'tags',
      (document) => (list(document).tags = ['gadgets']),
      'GET /api/v1/widgets/: tags: spec ["widgets"], server ["gadgets"]',
    ],
    [
      'security',
      (document) => (create(document).security = [{ ApiKey: [] }]),
      'POST /api/v1/widgets/: security: spec [], server [{"ApiKey":[]}]',
    ],
    [
      'a missing parameter',
      (document) => listAt(list(document), 'parameters').splice(1, 1),
      'GET /api/v1/widgets/: parameter query offset is in the spec but not in the server',
    ],
    [
      'an extra parameter',
      (document) =>
        listAt(list(document), 'parameters').push({
          name: 'extra',
          in: 'query',
          schema: { type: 'string' },
        }),
      'GET /api/v1/widgets/: parameter query extra is in the server but not in the spec',
    ],
    [
      'whether a parameter is required',
      (document) => (objectAt(list(document), 'parameters', 2).required = true),
      'GET /api/v1/widgets/ parameter query ratio: required: spec false, server true',
    ],
    [
      'explode',
      (document) => delete objectAt(list(document), 'parameters', 6).explode,
      'GET /api/v1/widgets/ parameter query labels: explode: spec false, server true',
    ],
    [
      'a parameter schema',
      (document) =>
        (objectAt(document, 'components', 'parameters', 'Limit', 'schema').maximum = 1000),
      'GET /api/v1/widgets/ parameter query limit schema: $.maximum: spec 100, server 1000',
    ],
    [
      'a parameter default',
      (document) => delete objectAt(list(document), 'parameters', 3, 'schema').default,
      'GET /api/v1/widgets/ parameter query include_archived schema: $.default: spec false, server absent',
    ],
    [
      'a missing request body',
      (document) => delete create(document).requestBody,
      'POST /api/v1/widgets/: request body is in the spec but not in the server',
    ],
    [
      'whether the request body is required',
      (document) =>
        (objectAt(document, 'components', 'requestBodies', 'WidgetCreate').required = false),
      'POST /api/v1/widgets/: request body required: spec true, server false',
    ],
    [
      'a request body content type',
      (document) => {
        const content = objectAt(
          document,
          'components',
          'requestBodies',
          'WidgetCreate',
          'content',
        );
        content['application/merge-patch+json'] = content['application/json'];
        delete content['application/json'];
      },
      'POST /api/v1/widgets/ request body: content application/json is in the spec but not in the server',
    ],
    [
      'a request body schema',
      (document) => listAt(document, 'components', 'schemas', 'WidgetCreate', 'required').pop(),
      'POST /api/v1/widgets/ request body application/json: $.required: spec ["kind","name","price"], server ["kind","name"]',
    ],
    [
      'a missing response',
      (document) => delete objectAt(create(document), 'responses')['409'],
      'POST /api/v1/widgets/: response 409 is in the spec but not in the server',
    ],
    [
      'an extra response',
      (document) => (objectAt(create(document), 'responses')['500'] = { description: 'oops' }),
      'POST /api/v1/widgets/: response 500 is in the server but not in the spec',
    ],
    [
      'a response content type',
      (document) =>
        delete objectAt(document, 'paths', '/api/v1/widgets/{widget_id}', 'get', 'responses', '200')
          .content,
      'GET /api/v1/widgets/{widget_id} response 200: content application/json is in the spec but not in the server',
    ],
    [
      'a type deep inside a response schema',
      (document) =>
        (objectAt(document, 'components', 'schemas', 'Widget', 'properties').created_at = {
          type: 'integer',
        }),
      'GET /api/v1/widgets/ response 200 application/json: $.properties.items.items.properties.created_at.type: spec "string", server "integer"',
    ],
    [
      'nullability',
      (document) =>
        (objectAt(document, 'components', 'schemas', 'Widget', 'properties', 'owner_email').type =
          'string'),
      'GET /api/v1/widgets/ response 200 application/json: $.properties.items.items.properties.owner_email.type: spec ["null","string"], server "string"',
    ],
    [
      'a property only one side has',
      (document) =>
        delete objectAt(document, 'components', 'schemas', 'Widget', 'properties').serial,
      'GET /api/v1/widgets/ response 200 application/json: $.properties.items.items.properties.serial: spec {"type":"string","format":"uuid"}, server absent',
    ],
    [
      'an enum',
      (document) => listAt(document, 'components', 'schemas', 'WidgetKind', 'enum').pop(),
      'GET /api/v1/widgets/ parameter query kinds schema: $.items.enum: spec ["cog/wheel","gear","sprocket"], server ["gear","sprocket"]',
    ],
    [
      'a missing response header',
      (document) =>
        delete objectAt(document, 'components', 'responses', 'Conflict', 'headers')['Retry-After'],
      'POST /api/v1/widgets/ response 409: header Retry-After is in the spec but not in the server',
    ],
    [
      'a response header schema',
      (document) =>
        (objectAt(document, 'components', 'headers', 'RetryAfter', 'schema').type = 'string'),
      'POST /api/v1/widgets/ response 409 header Retry-After: $.type: spec "integer", server "string"',
    ],
    [
      'a security scheme',
      (document) =>
        (objectAt(document, 'components', 'securitySchemes', 'ApiKey').name = 'Authorization'),
      'security scheme ApiKey: spec {"type":"apiKey","in":"header","name":"X-Api-Key"}, server {"type":"apiKey","in":"header","name":"Authorization"}',
    ],
  ];

  it.each(cases)('reports %s', (_kind, edit, expected) => {
    expect(diffOpenApiDocuments(fixture, changed(edit))).toContain(expected);
  });

  it('reports only what differs', () => {
    const server = changed((document) => (list(document).operationId = 'listWidgets'));
    expect(diffOpenApiDocuments(fixture, server)).toHaveLength(1);
  });
});
