// One spelling per meaning for the schemas of two OpenAPI documents, and the differences between
// two schemas so spelled, for the OpenAPI comparison (openapi-diff.ts).

import {
  asList,
  asObject,
  deepEqual,
  isList,
  isObject,
  resolvePointer,
  show,
  union,
  type JsonObject,
} from './openapi-json.js';

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
export function diffSchemas(spec: unknown, server: unknown, path = '$'): string[] {
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

/** The node without the keywords that say nothing on the wire (descriptions, examples, `x-*`). */
export function withoutAnnotations(node: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(node).filter(([key]) => !ANNOTATION_KEYWORDS.has(key) && !key.startsWith('x-')),
  );
}

function segment(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
