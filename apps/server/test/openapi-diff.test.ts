import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { diffOpenApiDocuments } from './support/openapi-diff.js';

type Document = Record<string, any>;

const fixture: Document = parse(
  readFileSync(new URL('../../../tools/test/fixtures/mini-openapi.yaml', import.meta.url), 'utf8'),
);

function changed(edit: (document: Document) => void): Document {
  const copy = structuredClone(fixture);
  edit(copy);
  return copy;
}

const list = (document: Document) => document.paths['/api/v1/widgets/'].get;
const create = (document: Document) => document.paths['/api/v1/widgets/'].post;

describe('diffOpenApiDocuments: equivalent documents', () => {
  it('finds nothing between a document and itself', () => {
    expect(diffOpenApiDocuments(fixture, structuredClone(fixture))).toEqual([]);
  });

  it('treats the spellings of one schema as the same schema', () => {
    const server = changed((document) => {
      const widget = document.components.schemas.Widget;
      widget.required.reverse();
      widget.properties.owner_email = {
        anyOf: [{ type: 'string', format: 'email' }, { type: 'null' }],
      };
      widget.properties.legacy_code = { type: 'string', nullable: true };
      widget.properties.parent = {
        oneOf: [{ type: 'null' }, { $ref: '#/components/schemas/WidgetSummary' }],
      };
      widget.properties.status = { type: 'string', enum: ['active'] };
      widget.properties.grade = { type: ['string', 'null'], enum: [null, 'b', 'a'] };
      widget.properties.metadata = { type: 'object', properties: {}, additionalProperties: {} };
      widget.properties.kind = {
        allOf: [{ $ref: '#/components/schemas/WidgetKind' }, { description: 'The kind.' }],
      };
      widget.properties.currency_pattern = undefined;
      delete widget.properties.currency_pattern;
      document.components.schemas.WidgetKind.enum.reverse();
      document.components.schemas.Money.properties.currency.pattern = '^[A-Z]{3}$';
      // Inline instead of $ref, annotations changed, parameter default moved off the schema.
      list(document).parameters[0] = {
        name: 'limit',
        in: 'query',
        description: 'Another description.',
        default: 20,
        schema: { type: 'integer', minimum: 0, maximum: 100 },
      };
      list(document).summary = 'Something else';
      list(document).tags = ['widgets'];
      document.paths['/healthz'] = { get: { responses: { '200': { description: 'ok' } } } };
    });
    expect(diffOpenApiDocuments(fixture, server)).toEqual([]);
  });

  it('compares the effective security, whether set on the document or on the operation', () => {
    const server = changed((document) => {
      delete document.security;
      for (const pathItem of Object.values<Document>(document.paths)) {
        for (const operation of Object.values<Document>(pathItem)) {
          if (Array.isArray(operation)) continue;
          operation.security ??= [{ ApiKey: [] }];
        }
      }
    });
    expect(diffOpenApiDocuments(fixture, server)).toEqual([]);
  });
});

describe('diffOpenApiDocuments: one line per difference', () => {
  const cases: Array<[string, (document: Document) => void, string]> = [
    [
      'a missing path',
      (document) => delete document.paths['/api/v1/widgets/{widget_id}'],
      'path /api/v1/widgets/{widget_id} is in the spec but not in the server',
    ],
    [
      'an extra API path',
      (document) => (document.paths['/api/v1/gadgets/'] = { get: { responses: {} } }),
      'path /api/v1/gadgets/ is in the server but not in the spec',
    ],
    [
      'a missing method',
      (document) => delete document.paths['/api/v1/widgets/{widget_id}'].delete,
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
      (document) => list(document).parameters.splice(1, 1),
      'GET /api/v1/widgets/: parameter query offset is in the spec but not in the server',
    ],
    [
      'an extra parameter',
      (document) =>
        list(document).parameters.push({ name: 'extra', in: 'query', schema: { type: 'string' } }),
      'GET /api/v1/widgets/: parameter query extra is in the server but not in the spec',
    ],
    [
      'whether a parameter is required',
      (document) => (list(document).parameters[2].required = true),
      'GET /api/v1/widgets/ parameter query ratio: required: spec false, server true',
    ],
    [
      'explode',
      (document) => delete list(document).parameters[6].explode,
      'GET /api/v1/widgets/ parameter query labels: explode: spec false, server true',
    ],
    [
      'a parameter schema',
      (document) => (document.components.parameters.Limit.schema.maximum = 1000),
      'GET /api/v1/widgets/ parameter query limit schema: $.maximum: spec 100, server 1000',
    ],
    [
      'a parameter default',
      (document) => delete list(document).parameters[3].schema.default,
      'GET /api/v1/widgets/ parameter query include_archived schema: $.default: spec false, server absent',
    ],
    [
      'a missing request body',
      (document) => delete create(document).requestBody,
      'POST /api/v1/widgets/: request body is in the spec but not in the server',
    ],
    [
      'whether the request body is required',
      (document) => (document.components.requestBodies.WidgetCreate.required = false),
      'POST /api/v1/widgets/: request body required: spec true, server false',
    ],
    [
      'a request body content type',
      (document) => {
        const content = document.components.requestBodies.WidgetCreate.content;
        content['application/merge-patch+json'] = content['application/json'];
        delete content['application/json'];
      },
      'POST /api/v1/widgets/ request body: content application/json is in the spec but not in the server',
    ],
    [
      'a request body schema',
      (document) => document.components.schemas.WidgetCreate.required.pop(),
      'POST /api/v1/widgets/ request body application/json: $.required: spec ["kind","name","price"], server ["kind","name"]',
    ],
    [
      'a missing response',
      (document) => delete create(document).responses['409'],
      'POST /api/v1/widgets/: response 409 is in the spec but not in the server',
    ],
    [
      'an extra response',
      (document) => (create(document).responses['500'] = { description: 'oops' }),
      'POST /api/v1/widgets/: response 500 is in the server but not in the spec',
    ],
    [
      'a response content type',
      (document) =>
        delete document.paths['/api/v1/widgets/{widget_id}'].get.responses['200'].content,
      'GET /api/v1/widgets/{widget_id} response 200: content application/json is in the spec but not in the server',
    ],
    [
      'a type deep inside a response schema',
      (document) =>
        (document.components.schemas.Widget.properties.created_at = { type: 'integer' }),
      'GET /api/v1/widgets/ response 200 application/json: $.properties.items.items.properties.created_at.type: spec "string", server "integer"',
    ],
    [
      'nullability',
      (document) => (document.components.schemas.Widget.properties.owner_email.type = 'string'),
      'GET /api/v1/widgets/ response 200 application/json: $.properties.items.items.properties.owner_email.type: spec ["null","string"], server "string"',
    ],
    [
      'a property only one side has',
      (document) => delete document.components.schemas.Widget.properties.serial,
      'GET /api/v1/widgets/ response 200 application/json: $.properties.items.items.properties.serial: spec {"type":"string","format":"uuid"}, server absent',
    ],
    [
      'an enum',
      (document) => document.components.schemas.WidgetKind.enum.pop(),
      'GET /api/v1/widgets/ parameter query kinds schema: $.items.enum: spec ["cog/wheel","gear","sprocket"], server ["gear","sprocket"]',
    ],
    [
      'a missing response header',
      (document) => delete document.components.responses.Conflict.headers['Retry-After'],
      'POST /api/v1/widgets/ response 409: header Retry-After is in the spec but not in the server',
    ],
    [
      'a response header schema',
      (document) => (document.components.headers.RetryAfter.schema.type = 'string'),
      'POST /api/v1/widgets/ response 409 header Retry-After: $.type: spec "integer", server "string"',
    ],
    [
      'a security scheme',
      (document) => (document.components.securitySchemes.ApiKey.name = 'Authorization'),
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
