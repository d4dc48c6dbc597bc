/**
 * Compares two OpenAPI 3.x documents for what matters on the wire: paths, methods, operation ids,
 * tags, effective security, parameters, request bodies, response codes, content types, headers,
 * schemas and security schemes. Annotations (descriptions, summaries, titles, examples, `x-*`)
 * are ignored, `$ref`s are followed on both sides, and equivalent spellings of one schema are
 * brought to one form first (`type: [X, "null"]`, `anyOf: [X, {type: "null"}]` and
 * `nullable: true`; `const` and a one-value `enum`; the order of `required` and `enum`), so a
 * difference is a difference in meaning.
 *
 * Every difference is one readable line, for example
 *   GET /api/v1/events/ response 200 application/json: $.properties.page.type: spec "integer", server "string"
 */

import {
  asList,
  asObject,
  deepEqual,
  dereference,
  isObject,
  show,
  union,
  type JsonObject,
} from './openapi-json.js';
import { canonicalSchema, diffSchemas, withoutAnnotations } from './openapi-schema.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function diffOpenApiDocuments(spec: unknown, server: unknown): string[] {
  const specDocument = asObject(spec);
  const serverDocument = asObject(server);
  const specPaths = asObject(specDocument['paths']);
  const serverPaths = asObject(serverDocument['paths']);
  const differences: string[] = [];

  for (const path of Object.keys(specPaths)) {
    if (!(path in serverPaths))
      differences.push(`path ${path} is in the spec but not in the server`);
  }
  for (const path of Object.keys(serverPaths)) {
    if (path.startsWith('/api/') && !(path in specPaths)) {
      differences.push(`path ${path} is in the server but not in the spec`);
    }
  }

  for (const path of Object.keys(specPaths).filter((candidate) => candidate in serverPaths)) {
    const specItem = asObject(specPaths[path]);
    const serverItem = asObject(serverPaths[path]);
    for (const method of HTTP_METHODS) {
      const name = `${method.toUpperCase()} ${path}`;
      if (specItem[method] === undefined && serverItem[method] === undefined) continue;
      if (serverItem[method] === undefined) {
        differences.push(`${name} is in the spec but not in the server`);
      } else if (specItem[method] === undefined) {
        differences.push(`${name} is in the server but not in the spec`);
      } else {
        differences.push(
          ...diffOperations(
            name,
            operationView(specDocument, specItem, method),
            operationView(serverDocument, serverItem, method),
          ),
        );
      }
    }
  }

  differences.push(...diffSecuritySchemes(specDocument, serverDocument));
  return differences;
}

interface ParameterView {
  required: boolean;
  style: unknown;
  explode: unknown;
  schema: unknown;
  content: Record<string, unknown> | undefined;
}

interface ResponseView {
  content: Record<string, unknown>;
  headers: Record<string, { name: string; required: boolean; schema: unknown }>;
}

interface OperationView {
  operationId: unknown;
  tags: string[];
  security: string;
  parameters: Map<string, ParameterView>;
  requestBody: { required: boolean; content: Record<string, unknown> } | undefined;
  responses: Record<string, ResponseView>;
}

function operationView(document: JsonObject, pathItem: JsonObject, method: string): OperationView {
  const operation = asObject(pathItem[method]);
  const parameters = new Map<string, ParameterView>();
  // Path-item parameters apply unless the operation redefines the same (in, name).
  for (const node of [...asList(pathItem['parameters']), ...asList(operation['parameters'])]) {
    const parameter = dereference(document, node);
    const location = String(parameter['in']);
    const name =
      location === 'header' ? String(parameter['name']).toLowerCase() : String(parameter['name']);
    parameters.set(`${location} ${name}`, parameterView(document, parameter));
  }

  const requestBodyNode = operation['requestBody'];
  const requestBody =
    requestBodyNode === undefined
      ? undefined
      : (() => {
          const body = dereference(document, requestBodyNode);
          return {
            required: body['required'] === true,
            content: contentView(document, body['content']),
          };
        })();

  const responses: Record<string, ResponseView> = {};
  for (const [status, node] of Object.entries(asObject(operation['responses']))) {
    const response = dereference(document, node);
    const headers: ResponseView['headers'] = {};
    for (const [headerName, headerNode] of Object.entries(asObject(response['headers']))) {
      // OpenAPI ignores a Content-Type response header: the content map says it.
      if (headerName.toLowerCase() === 'content-type') continue;
      const header = dereference(document, headerNode);
      headers[headerName.toLowerCase()] = {
        name: headerName,
        required: header['required'] === true,
        schema: canonicalSchema(document, header['schema'] ?? {}),
      };
    }
    responses[status] = { content: contentView(document, response['content']), headers };
  }

  const security = operation['security'] ?? document['security'] ?? [];
  return {
    operationId: operation['operationId'],
    tags: asList(operation['tags']).map(String).sort(),
    security: canonicalSecurity(security),
    parameters,
    requestBody,
    responses,
  };
}

function parameterView(document: JsonObject, parameter: JsonObject): ParameterView {
  const location = parameter['in'];
  const style =
    parameter['style'] ?? (location === 'query' || location === 'cookie' ? 'form' : 'simple');
  const baseSchema =
    parameter['schema'] === undefined ? undefined : canonicalSchema(document, parameter['schema']);
  // A default written on the parameter instead of its schema means the same thing.
  const schema =
    parameter['default'] !== undefined && isObject(baseSchema) && !('default' in baseSchema)
      ? { ...baseSchema, default: parameter['default'] }
      : baseSchema;
  return {
    required: location === 'path' || parameter['required'] === true,
    style,
    explode: parameter['explode'] ?? style === 'form',
    schema,
    content:
      parameter['content'] === undefined ? undefined : contentView(document, parameter['content']),
  };
}

function contentView(document: JsonObject, content: unknown): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(asObject(content)).map(([mediaType, media]) => [
      mediaType,
      canonicalSchema(document, asObject(media)['schema'] ?? {}),
    ]),
  );
}

function diffOperations(name: string, spec: OperationView, server: OperationView): string[] {
  const differences: string[] = [];
  const compare = (label: string, specValue: unknown, serverValue: unknown) => {
    if (!deepEqual(specValue, serverValue)) {
      differences.push(`${name}: ${label}: spec ${show(specValue)}, server ${show(serverValue)}`);
    }
  };
  compare('operationId', spec.operationId, server.operationId);
  compare('tags', spec.tags, server.tags);
  compare('security', JSON.parse(spec.security), JSON.parse(server.security));

  for (const key of union(spec.parameters.keys(), server.parameters.keys())) {
    const specParameter = spec.parameters.get(key);
    const serverParameter = server.parameters.get(key);
    if (!serverParameter) {
      differences.push(`${name}: parameter ${key} is in the spec but not in the server`);
    } else if (!specParameter) {
      differences.push(`${name}: parameter ${key} is in the server but not in the spec`);
    } else {
      const label = `${name} parameter ${key}`;
      for (const field of ['required', 'style', 'explode'] as const) {
        if (specParameter[field] !== serverParameter[field]) {
          differences.push(
            `${label}: ${field}: spec ${show(specParameter[field])}, server ${show(serverParameter[field])}`,
          );
        }
      }
      differences.push(
        ...prefixed(`${label} schema`, diffSchemas(specParameter.schema, serverParameter.schema)),
      );
      if (specParameter.content || serverParameter.content) {
        differences.push(
          ...diffContent(`${label}`, specParameter.content ?? {}, serverParameter.content ?? {}),
        );
      }
    }
  }

  if (spec.requestBody && !server.requestBody) {
    differences.push(`${name}: request body is in the spec but not in the server`);
  } else if (!spec.requestBody && server.requestBody) {
    differences.push(`${name}: request body is in the server but not in the spec`);
  } else if (spec.requestBody && server.requestBody) {
    if (spec.requestBody.required !== server.requestBody.required) {
      differences.push(
        `${name}: request body required: spec ${spec.requestBody.required}, server ${server.requestBody.required}`,
      );
    }
    differences.push(
      ...diffContent(`${name} request body`, spec.requestBody.content, server.requestBody.content),
    );
  }

  for (const status of union(Object.keys(spec.responses), Object.keys(server.responses))) {
    const specResponse = spec.responses[status];
    const serverResponse = server.responses[status];
    if (!serverResponse) {
      differences.push(`${name}: response ${status} is in the spec but not in the server`);
    } else if (!specResponse) {
      differences.push(`${name}: response ${status} is in the server but not in the spec`);
    } else {
      const label = `${name} response ${status}`;
      differences.push(...diffContent(label, specResponse.content, serverResponse.content));
      for (const header of union(
        Object.keys(specResponse.headers),
        Object.keys(serverResponse.headers),
      )) {
        const specHeader = specResponse.headers[header];
        const serverHeader = serverResponse.headers[header];
        if (!serverHeader) {
          differences.push(
            `${label}: header ${specHeader!.name} is in the spec but not in the server`,
          );
        } else if (!specHeader) {
          differences.push(
            `${label}: header ${serverHeader.name} is in the server but not in the spec`,
          );
        } else {
          if (specHeader.required !== serverHeader.required) {
            differences.push(
              `${label} header ${specHeader.name}: required: spec ${specHeader.required}, server ${serverHeader.required}`,
            );
          }
          differences.push(
            ...prefixed(
              `${label} header ${specHeader.name}`,
              diffSchemas(specHeader.schema, serverHeader.schema),
            ),
          );
        }
      }
    }
  }
  return differences;
}

function diffContent(
  label: string,
  spec: Record<string, unknown>,
  server: Record<string, unknown>,
): string[] {
  return union(Object.keys(spec), Object.keys(server)).flatMap((mediaType) => {
    if (!(mediaType in server))
      return [`${label}: content ${mediaType} is in the spec but not in the server`];
    if (!(mediaType in spec))
      return [`${label}: content ${mediaType} is in the server but not in the spec`];
    return prefixed(`${label} ${mediaType}`, diffSchemas(spec[mediaType], server[mediaType]));
  });
}

function diffSecuritySchemes(spec: JsonObject, server: JsonObject): string[] {
  const specSchemes = asObject(asObject(spec['components'])['securitySchemes']);
  const serverSchemes = asObject(asObject(server['components'])['securitySchemes']);
  return union(Object.keys(specSchemes), Object.keys(serverSchemes)).flatMap((name) => {
    if (!(name in serverSchemes))
      return [`security scheme ${name} is in the spec but not in the server`];
    if (!(name in specSchemes))
      return [`security scheme ${name} is in the server but not in the spec`];
    const specScheme = withoutAnnotations(dereference(spec, specSchemes[name]));
    const serverScheme = withoutAnnotations(dereference(server, serverSchemes[name]));
    return deepEqual(specScheme, serverScheme)
      ? []
      : [`security scheme ${name}: spec ${show(specScheme)}, server ${show(serverScheme)}`];
  });
}

function canonicalSecurity(security: unknown): string {
  const requirements = asList(security).map((requirement) =>
    Object.fromEntries(
      Object.entries(asObject(requirement))
        .sort(([left], [right]) => left.localeCompare(right))
        .map(([scheme, scopes]) => [scheme, asList(scopes).map(String).sort()]),
    ),
  );
  return JSON.stringify(
    [...new Set(requirements.map((requirement) => JSON.stringify(requirement)))]
      .sort()
      .map((text): unknown => JSON.parse(text)),
  );
}

function prefixed(label: string, lines: string[]): string[] {
  return lines.map((line) => `${label}: ${line}`);
}
