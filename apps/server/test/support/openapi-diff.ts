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

type JsonObject = { [key: string]: unknown };

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const ANNOTATION_KEYWORDS = new Set([
  'title',
  'description',
  'summary',
  'example',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
  'discriminator',
  'externalDocs',
  'xml',
]);

const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'dependentSchemas',
]);
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

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

// ---- operations ------------------------------------------------------------------------------

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

// ---- schemas ---------------------------------------------------------------------------------

/**
 * One spelling per meaning: `$ref`s inlined (a cycle becomes `{ $recursiveRef }`), annotations
 * dropped, defaults of JSON Schema removed (`additionalProperties: true`, empty `properties`,
 * `items: {}`), `const` as a one-value `enum`, nullability folded into `type` (and `enum`), and
 * `type` always a sorted list.
 */
export function canonicalSchema(
  document: JsonObject,
  node: unknown,
  refTrail: string[] = [],
): unknown {
  if (node === true) return {};
  if (node === false) return { not: {} };
  if (!isObject(node)) return node;

  if (typeof node['$ref'] === 'string') {
    const ref = node['$ref'];
    if (refTrail.includes(ref)) return { $recursiveRef: ref };
    const target = canonicalSchema(document, resolvePointer(document, ref), [...refTrail, ref]);
    const { $ref: _ref, ...siblings } = node;
    const canonicalSiblings = canonicalSchema(document, siblings, refTrail);
    return isEmptySchema(canonicalSiblings)
      ? target
      : canonicalSchema(document, { allOf: [target, canonicalSiblings] }, refTrail);
  }

  let schema: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (ANNOTATION_KEYWORDS.has(key) || key.startsWith('x-')) continue;
    if (SCHEMA_KEYWORDS.has(key)) schema[key] = canonicalSchema(document, value, refTrail);
    else if (SCHEMA_MAP_KEYWORDS.has(key)) {
      schema[key] = Object.fromEntries(
        Object.entries(asObject(value)).map(([name, child]) => [
          name,
          canonicalSchema(document, child, refTrail),
        ]),
      );
    } else if (SCHEMA_LIST_KEYWORDS.has(key)) {
      schema[key] = asList(value).map((child) => canonicalSchema(document, child, refTrail));
    } else schema[key] = value;
  }

  if (schema['nullable'] === true) schema = withNull(schema);
  delete schema['nullable'];
  if ('const' in schema) {
    schema['enum'] = [schema['const']];
    delete schema['const'];
  }
  // OpenAPI 3.0 spelled exclusive bounds as booleans next to minimum/maximum.
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (schema[exclusive] === true) {
      schema[exclusive] = schema[bound];
      delete schema[bound];
    } else if (schema[exclusive] === false) delete schema[exclusive];
  }
  if (typeof schema['pattern'] === 'string')
    schema['pattern'] = schema['pattern'].replace(/\\\//g, '/');

  schema = normaliseTypeAndEnum(schema);
  if (Array.isArray(schema['required'])) {
    const required = [...new Set(schema['required'].map(String))].sort();
    if (required.length > 0) schema['required'] = required;
    else delete schema['required'];
  }
  for (const key of ['properties', 'additionalProperties', 'items', 'patternProperties']) {
    if (key in schema && isEmptySchema(schema[key])) delete schema[key];
  }

  schema = foldAllOf(schema);
  schema = foldUnion(schema, 'anyOf');
  return foldUnion(schema, 'oneOf');
}

function normaliseTypeAndEnum(schema: JsonObject): JsonObject {
  const result = { ...schema };
  let types =
    typeof result['type'] === 'string'
      ? [result['type']]
      : Array.isArray(result['type'])
        ? result['type'].map(String)
        : undefined;
  if (isList(result['enum'])) {
    let values = result['enum'];
    if (types) {
      // The enum and the type must both accept a value: null survives only if both allow it.
      if (!types.includes('null')) values = values.filter((value) => value !== null);
      if (!values.includes(null)) types = types.filter((type) => type !== 'null');
    } else {
      types = [...new Set(values.map(jsonType))];
    }
    const byText = new Map(values.map((value) => [JSON.stringify(value), value]));
    result['enum'] = [...byText.keys()].sort().map((text) => byText.get(text));
  }
  if (types) result['type'] = [...new Set(types)].sort();
  return result;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function withNull(schema: JsonObject): JsonObject {
  const types =
    typeof schema['type'] === 'string'
      ? [schema['type']]
      : Array.isArray(schema['type'])
        ? schema['type']
        : undefined;
  if (!types) return { anyOf: [schema, { type: 'null' }] };
  const result: JsonObject = {
    ...schema,
    type: [...new Set([...types.map(String), 'null'])].sort(),
  };
  if (isList(schema['enum']) && !schema['enum'].includes(null))
    result['enum'] = [...schema['enum'], null];
  return result;
}

/** An allOf whose members (after canonicalisation) leave one non-empty schema is that schema. */
function foldAllOf(schema: JsonObject): JsonObject {
  if (!isList(schema['allOf'])) return schema;
  const members = schema['allOf'].filter((member) => !isEmptySchema(member));
  const { allOf: _allOf, ...rest } = schema;
  if (members.length === 0) return rest;
  const [only] = members;
  if (members.length === 1 && isObject(only) && Object.keys(only).every((key) => !(key in rest))) {
    return normaliseTypeAndEnum({ ...rest, ...only });
  }
  return { ...rest, allOf: sortSchemas(members) };
}

/**
 * `anyOf: [X, {type: "null"}]` (or oneOf) where X has a type is `X` with "null" added to its
 * type; a single-member union is its member. Other unions keep their members, sorted.
 */
function foldUnion(schema: JsonObject, keyword: 'anyOf' | 'oneOf'): JsonObject {
  if (!isList(schema[keyword])) return schema;
  const members = schema[keyword];
  const { [keyword]: _members, ...rest } = schema;
  const isNull = (member: unknown) => isObject(member) && deepEqual(member, { type: ['null'] });
  const others = members.filter((member) => !isNull(member));
  const [only] = others;
  const canMerge = isObject(only) && Object.keys(only).every((key) => !(key in rest));
  if (others.length === 1 && canMerge) {
    if (others.length === members.length) return normaliseTypeAndEnum({ ...rest, ...only });
    const types = only['type'];
    if (Array.isArray(types) && !types.includes('null'))
      return normaliseTypeAndEnum({ ...rest, ...withNull(only) });
  }
  return { ...rest, [keyword]: sortSchemas(members) };
}

function sortSchemas(schemas: unknown[]): unknown[] {
  const byText = new Map(schemas.map((schema) => [JSON.stringify(schema), schema]));
  return [...byText.keys()].sort().map((text) => byText.get(text));
}

function isEmptySchema(value: unknown): boolean {
  return isObject(value) && Object.keys(value).length === 0;
}

/** Differences between two canonical schemas, one line per differing location. */
function diffSchemas(spec: unknown, server: unknown, path = '$'): string[] {
  if (isObject(spec) && isObject(server)) {
    return union(Object.keys(spec), Object.keys(server)).flatMap((key) => {
      const childPath = `${path}${segment(key)}`;
      if (!(key in server)) return [`${childPath}: spec ${showSchema(spec[key])}, server absent`];
      if (!(key in spec)) return [`${childPath}: spec absent, server ${showSchema(server[key])}`];
      if (key === 'type' && !deepEqual(spec[key], server[key])) {
        return [
          `${childPath}: spec ${showSchema(singleType(spec[key]))}, server ${showSchema(singleType(server[key]))}`,
        ];
      }
      return diffSchemas(spec[key], server[key], childPath);
    });
  }
  const isSchemaList =
    Array.isArray(spec) &&
    Array.isArray(server) &&
    spec.length === server.length &&
    spec.some(isObject);
  if (isSchemaList)
    return spec.flatMap((member, index) => diffSchemas(member, server[index], `${path}[${index}]`));
  return deepEqual(spec, server)
    ? []
    : [`${path}: spec ${showSchema(spec)}, server ${showSchema(server)}`];
}

function showSchema(value: unknown): string {
  return show(withSingleTypes(value));
}

/** Writes canonical `type: ["string"]` back as `type: "string"`, the way a spec usually does. */
function withSingleTypes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withSingleTypes);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key === 'type' && Array.isArray(child) ? singleType(child) : withSingleTypes(child),
    ]),
  );
}

function singleType(type: unknown): unknown {
  return Array.isArray(type) && type.length === 1 ? type[0] : type;
}

// ---- small helpers ---------------------------------------------------------------------------

function dereference(document: JsonObject, node: unknown): JsonObject {
  let current = asObject(node);
  const seen = new Set<string>();
  while (typeof current['$ref'] === 'string' && !seen.has(current['$ref'])) {
    seen.add(current['$ref']);
    current = asObject(resolvePointer(document, current['$ref']));
  }
  return current;
}

function resolvePointer(document: JsonObject, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`Only local $refs can be compared, not ${ref}`);
  let node: unknown = document;
  for (const segmentText of ref.slice(2).split('/')) {
    const key = segmentText.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined;
    if (node === undefined) throw new Error(`$ref ${ref} does not resolve`);
  }
  return node;
}

function withoutAnnotations(node: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(node).filter(([key]) => !ANNOTATION_KEYWORDS.has(key) && !key.startsWith('x-')),
  );
}

function prefixed(label: string, lines: string[]): string[] {
  return lines.map((line) => `${label}: ${line}`);
}

function segment(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? 'absent';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function union<T>(left: Iterable<T>, right: Iterable<T>): T[] {
  return [...new Set([...left, ...right])];
}

function deepEqual(left: unknown, right: unknown): boolean {
  return JSON.stringify(sortKeys(left)) === JSON.stringify(sortKeys(right));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `Array.isArray`, narrowing to `unknown[]` where it narrows to `any[]`. */
function isList(value: unknown): value is unknown[] {
  return Array.isArray(value);
}
