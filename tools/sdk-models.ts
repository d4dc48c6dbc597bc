/**
 * Turns the contract's schemas into the SDK's named model types: one interface per object schema
 * (`Event`, `Experiment`, ...), one alias per other schema (the string enums), and one interface
 * per list operation's query (`EventListQuery`, named after its `...ListResponse`).
 *
 * Why interfaces and not `type Event = components['schemas']['Event']`: TypeScript prints an alias
 * of an existing object type as its whole structure, so editor tooltips and errors would spell out
 * every property. An interface prints as its name. Each one extends the openapi-typescript type
 * (the single source of the properties) and only re-declares the properties that point at other
 * schemas, so that an envelope reads `items: Event[]` rather than the item's structure.
 */

import type { JsonObject } from './zod-routes.js';

const SCHEMA_PREFIX = '#/components/schemas/';

type Schema = JsonObject & {
  description?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
};

function refName(schema: Schema): string | null {
  return typeof schema.$ref === 'string' && schema.$ref.startsWith(SCHEMA_PREFIX)
    ? schema.$ref.slice(SCHEMA_PREFIX.length)
    : null;
}

/** The named type of a property that points at other schemas, or null when it points at none. */
function namedPropertyType(property: Schema): string | null {
  const direct = refName(property);
  if (direct) return direct;
  if (property.type === 'array' && property.items) {
    const item = refName(property.items);
    return item && `${item}[]`;
  }
  const alternatives = property.anyOf ?? property.oneOf;
  if (!alternatives) return null;
  const names = alternatives.map((alternative) =>
    alternative.type === 'null' ? 'null' : refName(alternative),
  );
  return names.every((name) => name !== null) && names.some((name) => name !== 'null')
    ? names.join(' | ')
    : null;
}

function docComment(text: string | undefined, indent: string): string {
  if (!text) return '';
  // A `*/` in a description would end the comment early.
  const lines = text.trim().replaceAll('*/', '*\\/').split('\n');
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function modelDeclaration(name: string, schema: Schema): string {
  const doc = docComment(schema.description, '');
  if (schema.type !== 'object' || !schema.properties) {
    return `${doc}export type ${name} = Schema<'${name}'>;\n`;
  }
  const required = new Set(schema.required ?? []);
  const named = Object.entries(schema.properties).flatMap(([property, propertySchema]) => {
    const type = namedPropertyType(propertySchema);
    return type ? [{ property, type, doc: propertySchema.description }] : [];
  });
  if (named.length === 0) {
    return `${doc}export interface ${name} extends Schema<'${name}'> {}\n`;
  }
  const omitted = named.map(({ property }) => `'${property}'`).join(' | ');
  const members = named
    .map(
      ({ property, type, doc: propertyDoc }) =>
        `${docComment(propertyDoc, '  ')}  ${property}${required.has(property) ? '' : '?'}: ${type};`,
    )
    .join('\n');
  return `${doc}export interface ${name} extends Omit<Schema<'${name}'>, ${omitted}> {\n${members}\n}\n`;
}

interface Operation {
  operationId?: string;
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

/** `XListQuery` for every operation whose 200 answer is an `XListResponse`. */
function listQueryDeclarations(spec: JsonObject): string[] {
  const pathItems = Object.values((spec.paths ?? {}) as Record<string, Record<string, Operation>>);
  return pathItems.flatMap((pathItem) =>
    // A path item's `parameters` is an array, not an operation: it has no responses.
    Object.values(pathItem).flatMap(({ operationId, responses }) => {
      const schema = responses?.['200']?.content?.['application/json']?.schema;
      const response = schema ? refName(schema) : null;
      if (!operationId || !response?.endsWith('ListResponse')) return [];
      return [
        `/** The query of \`${operationId}\`. */\n` +
          `export interface ${response.replace(/Response$/, 'Query')} extends NonNullable<operations['${operationId}']['parameters']['query']> {}\n`,
      ];
    }),
  );
}

export function generateModelsModule(spec: JsonObject, typesModule: string): string {
  const schemas = ((spec.components as JsonObject | undefined)?.schemas ?? {}) as Record<
    string,
    Schema
  >;
  return [
    `import type { components, operations } from '${typesModule}';\n`,
    `type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];\n`,
    ...Object.entries(schemas).map(([name, schema]) => modelDeclaration(name, schema)),
    ...listQueryDeclarations(spec),
  ].join('\n');
}
