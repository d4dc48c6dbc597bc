/**
 * Turns the OpenAPI 3.1 contract into TypeScript source for `@hono/zod-openapi`: one zod schema per
 * `components.schemas` entry and one `createRoute` definition per operation.
 *
 * The generated schemas serve two masters: at run time they validate requests, and the server
 * renders its own OpenAPI document from them, which a test compares with the spec. So every
 * keyword maps to the zod construct that both validates like the keyword and renders back to it
 * through @asteasolutions/zod-to-openapi. A keyword outside the supported subset stops generation
 * with its JSON pointer instead of being dropped: a silently ignored `uniqueItems` would be a
 * contract the server does not keep.
 */

type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export interface RoutesModuleImports {
  /** Module specifier of `@hono/zod-openapi`, as the generated file imports it. */
  zodOpenApi: string;
  /** Module specifier of the query/path coercion helpers (apps/server/src/contract/param-coercion.ts). */
  paramCoercion: string;
  /** Module specifier of the module generateEnumValuesModule writes. */
  enumValues: string;
}

export class UnsupportedSpecError extends Error {
  override name = 'UnsupportedSpecError';
  constructor(pointer: string, problem: string) {
    super(`${pointer}: ${problem}`);
  }
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

// Keywords that only describe a schema. They are rendered into the server's document as metadata
// but never validate anything.
const ANNOTATION_KEYWORDS = [
  'title',
  'description',
  'example',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
] as const;

const VALIDATION_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'default',
  '$ref',
  'anyOf',
  'oneOf',
]);

// zod string formats whose validation matches the JSON Schema format and which zod-to-openapi
// renders back under the same `format` name. Any other format is kept as documentation only.
const VALIDATED_STRING_FORMATS: Record<string, string> = {
  // RFC 3339 allows an offset as well as `Z`; zod's default would reject `+02:00`.
  'date-time': 'z.iso.datetime({ offset: true })',
  date: 'z.iso.date()',
  email: 'z.email()',
  uri: 'z.url()',
  uuid: 'z.uuid()',
};

const RESERVED_WORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends ' +
    'false finally for function if import in instanceof new null return super switch this throw ' +
    'true try typeof var void while with yield let static implements interface package private ' +
    'protected public await undefined NaN Infinity'
  ).split(' '),
);

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

type ParamLocation = 'query' | 'path' | 'header' | 'cookie';

const REQUEST_KEY_BY_LOCATION: Record<ParamLocation, string> = {
  path: 'params',
  query: 'query',
  header: 'headers',
  cookie: 'cookies',
};

interface ResolvedParameter {
  /** The parameter as written in the operation: a $ref or the object itself. */
  node: Json;
  parameter: JsonObject;
  pointer: string;
}

/** Components referenced from operations become one shared const each, named by kind. */
const SHARED_COMPONENT_SUFFIX: Record<string, string> = {
  parameters: 'Parameter',
  headers: 'Header',
  responses: 'Response',
  requestBodies: 'RequestBody',
};

export function generateRoutesModule(spec: unknown, imports: RoutesModuleImports): string {
  return new RoutesModuleWriter(asObject(spec, '#'), imports).write();
}

/**
 * The values of each string enum in `components.schemas`, in the spec's order, as a module that
 * imports nothing: the routes validate with these lists, and the server's vocabulary names them,
 * so a value is written once.
 */
export function generateEnumValuesModule(spec: unknown): string {
  const declarations = Object.entries(componentSchemasOf(asObject(spec, '#'))).flatMap(
    ([name, schema]) => {
      const values = stringEnumValues(schema);
      return values
        ? [`export const ${constNameForSchema(name)} = ${literal(values)} as const;`]
        : [];
    },
  );
  return [
    "// Each string enum of the spec's components.schemas, its values in the spec's order: the zod",
    '// routes validate with these lists and the vocabulary names them.',
    '',
    declarations.join('\n\n'),
    '',
  ].join('\n');
}

/** `events_list` -> `eventsList`; `experiments.get-one` -> `experimentsGetOne`. */
export function camelCase(operationId: string): string {
  const words = operationId.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return words
    .map((word, index) =>
      index === 0 ? word[0]!.toLowerCase() + word.slice(1) : word[0]!.toUpperCase() + word.slice(1),
    )
    .join('');
}

class RoutesModuleWriter {
  private readonly schemaConstNames = new Map<string, string>();
  private readonly usedCoercionHelpers = new Set<string>();
  private readonly sharedComponents = new Map<string, { constName: string; declaration: string }>();
  private usesEnumValues = false;

  constructor(
    private readonly spec: JsonObject,
    private readonly imports: RoutesModuleImports,
  ) {}

  write(): string {
    const componentSchemas = componentSchemasOf(this.spec);
    const schemaNames = Object.keys(componentSchemas);
    for (const name of schemaNames) this.schemaConstNames.set(name, constNameForSchema(name));

    const schemaDeclarations = orderByDependencies(componentSchemas).map((name) =>
      this.componentSchemaDeclaration(name, componentSchemas[name]!),
    );
    const routes = this.operations().map((operation) => this.routeDeclaration(operation));
    const shared = [...this.sharedComponents.values()];
    this.assertDistinctNames([...shared, ...routes].map((declared) => declared.constName));

    const coercionHelpers = [...this.usedCoercionHelpers].sort();
    return [
      `import { createRoute, z } from '${this.imports.zodOpenApi}';`,
      `import type { OpenAPIHono } from '${this.imports.zodOpenApi}';`,
      coercionHelpers.length > 0
        ? `import { ${coercionHelpers.join(', ')} } from '${this.imports.paramCoercion}';`
        : '',
      this.usesEnumValues ? `import * as enumValues from '${this.imports.enumValues}';` : '',
      '',
      '// Request objects use z.object, which drops keys the contract does not define: handlers only',
      '// ever see declared fields, and an unknown key is ignored (as JSON Schema allows) rather than',
      '// rejected. Schemas with `additionalProperties: false` become strict objects and do reject them.',
      '',
      ...schemaDeclarations.flatMap((declaration) => [declaration, '']),
      ...shared.flatMap((component) => [component.declaration, '']),
      ...routes.flatMap((route) => [route.declaration, '']),
      'export const routes = {',
      ...routes.map((route) => `  ${route.key}: ${route.constName},`),
      '} as const;',
      '',
      this.documentConfigDeclaration(),
      '',
      this.registerComponentsDeclaration(schemaNames),
      '',
    ]
      .filter((line, index, lines) => !(line === '' && lines[index - 1] === ''))
      .join('\n');
  }

  private assertDistinctNames(declaredConstNames: string[]): void {
    const taken = new Map<string, string>([
      ['z', 'the zod import'],
      ['enumValues', 'the enum values import'],
      ['createRoute', 'the createRoute import'],
      ['routes', 'the routes map'],
      ['openApiDocumentConfig', 'the document config'],
      ['registerSpecComponents', 'the component registration'],
      ...[...this.usedCoercionHelpers].map((helper): [string, string] => [
        helper,
        'a coercion helper',
      ]),
    ]);
    for (const [schemaName, constName] of this.schemaConstNames) {
      const clash = taken.get(constName);
      if (clash)
        throw new UnsupportedSpecError(
          `#/components/schemas/${schemaName}`,
          `the name clashes with ${clash}`,
        );
      taken.set(constName, `components.schemas.${schemaName}`);
    }
    for (const constName of declaredConstNames) {
      const clash = taken.get(constName);
      if (clash)
        throw new UnsupportedSpecError(
          '#',
          `the generated const ${constName} clashes with ${clash}`,
        );
      taken.set(constName, `the const ${constName}`);
    }
  }

  private componentSchemaDeclaration(name: string, schema: Json): string {
    const pointer = `#/components/schemas/${escapePointer(name)}`;
    const schemaObject = asObject(schema, pointer);
    const metadata = this.schemaMetadata(schemaObject);
    const metadataArgument = Object.keys(metadata).length > 0 ? `, ${literal(metadata)}` : '';
    const core = this.componentSchemaCore(name, schemaObject, pointer);
    return `export const ${this.schemaConstNames.get(name)} = ${core}.openapi(${literal(name)}${metadataArgument});`;
  }

  /** A string enum's values come from the enum values module; any other schema is written out. */
  private componentSchemaCore(name: string, schema: JsonObject, pointer: string): string {
    if (!stringEnumValues(schema)) return this.schemaCoreWithDefault(schema, pointer);
    assertKnownKeywords(schema, pointer);
    this.usesEnumValues = true;
    return `z.enum(enumValues.${constNameForSchema(name)})`;
  }

  // ---- schemas -----------------------------------------------------------------------------

  /** A schema in any position except a component declaration or a parameter. */
  private schemaExpression(node: Json, pointer: string): string {
    const schema = asObject(node, pointer);
    if (typeof schema['$ref'] === 'string') return this.referenceExpression(schema, pointer);
    const metadata = this.schemaMetadata(schema);
    const core = this.schemaCoreWithDefault(schema, pointer);
    return Object.keys(metadata).length > 0 ? `${core}.openapi(${literal(metadata)})` : core;
  }

  /**
   * Refers to a component by its const. Wrapping the const (`.openapi({...})`, `.default()`,
   * `.nullable()`) would let zod-to-openapi render the wrapper as the component itself when it
   * meets the wrapper first, so annotations beside a `$ref` are left to the component and a
   * validating sibling is refused.
   */
  private referenceExpression(schema: JsonObject, pointer: string): string {
    const siblings = Object.keys(schema).filter(
      (key) => key !== '$ref' && !isAnnotation(key) && !key.startsWith('x-'),
    );
    if (siblings.length > 0) {
      throw new UnsupportedSpecError(
        pointer,
        `keywords beside $ref are not supported: ${siblings.join(', ')}`,
      );
    }
    return this.componentConst(schema['$ref'] as string, pointer);
  }

  private componentConst(ref: string, pointer: string): string {
    const prefix = '#/components/schemas/';
    if (!ref.startsWith(prefix)) {
      throw new UnsupportedSpecError(
        pointer,
        `$ref ${ref} does not point into #/components/schemas`,
      );
    }
    const name = unescapePointer(ref.slice(prefix.length));
    const constName = this.schemaConstNames.get(name);
    if (!constName) throw new UnsupportedSpecError(pointer, `$ref ${ref} points to no schema`);
    return constName;
  }

  private schemaCoreWithDefault(schema: JsonObject, pointer: string): string {
    const core = this.schemaCore(schema, pointer);
    return 'default' in schema ? `${core}.default(${literal(schema['default'])})` : core;
  }

  private schemaMetadata(schema: JsonObject): JsonObject {
    const metadata: JsonObject = {};
    for (const key of ANNOTATION_KEYWORDS) {
      if (key in schema) metadata[key] = schema[key]!;
    }
    return metadata;
  }

  /** The validating part of a schema: no annotations, no default. */
  private schemaCore(schema: JsonObject, pointer: string): string {
    assertKnownKeywords(schema, pointer);
    if (typeof schema['$ref'] === 'string') return this.referenceExpression(schema, pointer);
    if (Array.isArray(schema['anyOf']) || Array.isArray(schema['oneOf'])) {
      return this.unionExpression(schema, pointer);
    }
    if ('enum' in schema || 'const' in schema) {
      const misplaced = Object.keys(schema).filter(
        (key) =>
          VALIDATION_KEYWORDS.has(key) && !['type', 'enum', 'const', 'default'].includes(key),
      );
      if (misplaced.length > 0)
        throw new UnsupportedSpecError(pointer, `${misplaced.join(', ')} beside enum or const`);
      return 'enum' in schema
        ? this.enumExpression(schema, pointer)
        : literalSchema(schema['const']!, pointer);
    }

    const types = typeList(schema, pointer);
    const nullable = types.includes('null');
    const nonNullTypes = types.filter((type) => type !== 'null');
    if (nonNullTypes.length > 1) {
      throw new UnsupportedSpecError(
        pointer,
        `a type list with several non-null types (${nonNullTypes.join(', ')}); use anyOf`,
      );
    }
    const [type] = nonNullTypes;
    if (type === undefined) {
      const typeSpecific = Object.keys(schema).filter(
        (key) => VALIDATION_KEYWORDS.has(key) && key !== 'type' && key !== 'default',
      );
      if (typeSpecific.length > 0) {
        throw new UnsupportedSpecError(pointer, `${typeSpecific.join(', ')} without a type`);
      }
      return nullable ? 'z.null()' : 'z.unknown()';
    }
    const core = this.typedCore(type, schema, pointer);
    return nullable ? `${core}.nullable()` : core;
  }

  private typedCore(type: string, schema: JsonObject, pointer: string): string {
    switch (type) {
      case 'string':
        return this.stringCore(schema, pointer);
      case 'integer':
      case 'number':
        return numberCore(type, schema, pointer);
      case 'boolean':
        assertOnlyKeywordsFor('boolean', schema, pointer, []);
        return 'z.boolean()';
      case 'array':
        return this.arrayCore(schema, pointer);
      case 'object':
        return this.objectCore(schema, pointer);
      default:
        throw new UnsupportedSpecError(pointer, `unknown type ${JSON.stringify(type)}`);
    }
  }

  private stringCore(schema: JsonObject, pointer: string): string {
    assertOnlyKeywordsFor('string', schema, pointer, [
      'minLength',
      'maxLength',
      'pattern',
      'format',
    ]);
    const format = schema['format'];
    if (format !== undefined && typeof format !== 'string') {
      throw new UnsupportedSpecError(pointer, 'format must be a string');
    }
    const validatedFormat = format === undefined ? undefined : VALIDATED_STRING_FORMATS[format];
    let expression = validatedFormat ?? 'z.string()';
    if (schema['minLength'] !== undefined)
      expression += `.min(${integerKeyword(schema, 'minLength', pointer)})`;
    if (schema['maxLength'] !== undefined)
      expression += `.max(${integerKeyword(schema, 'maxLength', pointer)})`;
    if (schema['pattern'] !== undefined) {
      if (typeof schema['pattern'] !== 'string')
        throw new UnsupportedSpecError(pointer, 'pattern must be a string');
      expression += `.regex(new RegExp(${literal(schema['pattern'])}))`;
    }
    // A format zod cannot check is still documented, so clients see it.
    if (format !== undefined && validatedFormat === undefined)
      expression += `.openapi(${literal({ format })})`;
    return expression;
  }

  private arrayCore(schema: JsonObject, pointer: string): string {
    assertOnlyKeywordsFor('array', schema, pointer, ['items', 'minItems', 'maxItems']);
    const items =
      schema['items'] === undefined
        ? 'z.unknown()'
        : this.schemaExpression(schema['items'], `${pointer}/items`);
    let expression = `z.array(${items})`;
    if (schema['minItems'] !== undefined)
      expression += `.min(${integerKeyword(schema, 'minItems', pointer)})`;
    if (schema['maxItems'] !== undefined)
      expression += `.max(${integerKeyword(schema, 'maxItems', pointer)})`;
    return expression;
  }

  private objectCore(schema: JsonObject, pointer: string): string {
    assertOnlyKeywordsFor('object', schema, pointer, [
      'properties',
      'required',
      'additionalProperties',
    ]);
    const properties = optionalObject(schema['properties'], `${pointer}/properties`) ?? {};
    const required = stringList(schema['required'], `${pointer}/required`);
    const undeclared = required.filter((name) => !(name in properties));
    if (undeclared.length > 0) {
      throw new UnsupportedSpecError(
        pointer,
        `required names without a property schema: ${undeclared.join(', ')}`,
      );
    }

    const entries = Object.entries(properties).map(([name, propertySchema]) => {
      const propertyPointer = `${pointer}/properties/${escapePointer(name)}`;
      const hasDefault = isObject(propertySchema) && 'default' in propertySchema;
      if (hasDefault && required.includes(name)) {
        throw new UnsupportedSpecError(
          propertyPointer,
          'a required property with a default (zod would make it optional)',
        );
      }
      if (required.includes(name) && isAnyValueSchema(propertySchema)) {
        throw new UnsupportedSpecError(
          propertyPointer,
          'a required property that may hold any value (z.unknown() also accepts a missing key)',
        );
      }
      const optional = required.includes(name) || hasDefault ? '' : '.optional()';
      return `${propertyKey(name)}: ${this.schemaExpression(propertySchema, propertyPointer)}${optional},`;
    });
    const shape = entries.length === 0 ? '{}' : `{\n${indent(entries.join('\n'))}\n}`;

    const additional = schema['additionalProperties'];
    const allowsAnyExtra =
      additional === undefined
        ? false
        : additional === true || (isObject(additional) && Object.keys(additional).length === 0);
    if (additional === false) return `z.strictObject(${shape})`;
    if (additional === undefined) return `z.object(${shape})`;
    const extraValues = allowsAnyExtra
      ? 'z.unknown()'
      : this.schemaExpression(additional, `${pointer}/additionalProperties`);
    if (entries.length === 0) return `z.record(z.string(), ${extraValues})`;
    return allowsAnyExtra
      ? `z.looseObject(${shape})`
      : `z.object(${shape}).catchall(${extraValues})`;
  }

  private enumExpression(schema: JsonObject, pointer: string): string {
    const values = schema['enum'];
    if (!Array.isArray(values) || values.length === 0)
      throw new UnsupportedSpecError(pointer, 'enum must be a non-empty array');
    const nonNull = values.filter((value) => value !== null);
    // With an enum, the listed values decide whether null is allowed, whatever `type` says.
    const nullable = nonNull.length < values.length;
    let core: string;
    if (nonNull.every((value) => typeof value === 'string')) {
      core = `z.enum(${literal(nonNull)})`;
    } else if (nonNull.every((value) => typeof value === 'number' || typeof value === 'boolean')) {
      // z.literal([...]) validates every value, but zod-to-openapi renders only the first one.
      const type = nonNull.every((value) => typeof value === 'boolean')
        ? 'boolean'
        : nonNull.every(Number.isInteger)
          ? 'integer'
          : 'number';
      core = `z.literal(${literal(nonNull)}).openapi(${literal({ type, enum: nonNull })})`;
    } else {
      throw new UnsupportedSpecError(
        pointer,
        'an enum mixing strings with other values, or listing objects',
      );
    }
    return nullable ? `${core}.nullable()` : core;
  }

  private unionExpression(schema: JsonObject, pointer: string): string {
    const keyword = Array.isArray(schema['anyOf']) ? 'anyOf' : 'oneOf';
    const extra = Object.keys(schema).filter(
      (key) => key !== keyword && key !== 'default' && !isAnnotation(key) && !key.startsWith('x-'),
    );
    if (extra.length > 0)
      throw new UnsupportedSpecError(pointer, `keywords beside ${keyword}: ${extra.join(', ')}`);
    const branches = (schema[keyword] as Json[]).map((branch, index) =>
      this.schemaExpression(branch, `${pointer}/${keyword}/${index}`),
    );
    // z.union renders as anyOf; z.xor fails unless exactly one branch matches, which is what
    // oneOf means, and the preferred-type option makes it render as oneOf.
    return keyword === 'anyOf'
      ? `z.union([${branches.join(', ')}])`
      : `z.xor([${branches.join(', ')}]).openapi({}, { unionPreferredType: 'oneOf' })`;
  }

  // ---- parameters --------------------------------------------------------------------------

  /**
   * Query, path, header and cookie values arrive as text (a repeated query key as a list), so
   * numbers, booleans and arrays go through a coercion helper. The helpers are z.preprocess
   * pipes, which zod-to-openapi renders as their output schema, so the documented parameter
   * keeps the spec's type, bounds and default.
   */
  private parameterExpression(
    { parameter, pointer }: ResolvedParameter,
    location: ParamLocation,
  ): string {
    if (parameter['content'] !== undefined)
      throw new UnsupportedSpecError(pointer, 'parameters described by content');
    const schemaPointer = `${pointer}/schema`;
    const schema = asObject(parameter['schema'] ?? null, schemaPointer);
    const resolved = this.followRefs(schema, schemaPointer);
    const explode = parameter['explode'] ?? (location === 'query' || location === 'cookie');

    let expression: string;
    if (firstNonNullType(resolved.value) === 'array') {
      const items = resolved.value['items'];
      if (items === undefined)
        throw new UnsupportedSpecError(resolved.pointer, 'an array parameter needs items');
      assertOnlyKeywordsFor('array', resolved.value, resolved.pointer, [
        'items',
        'minItems',
        'maxItems',
      ]);
      let array = `z.array(${this.parameterValueExpression(asObject(items, `${resolved.pointer}/items`), `${resolved.pointer}/items`)})`;
      if (resolved.value['minItems'] !== undefined)
        array += `.min(${integerKeyword(resolved.value, 'minItems', resolved.pointer)})`;
      if (resolved.value['maxItems'] !== undefined)
        array += `.max(${integerKeyword(resolved.value, 'maxItems', resolved.pointer)})`;
      const metadata = this.schemaMetadata(resolved.value);
      if (Object.keys(metadata).length > 0) array += `.openapi(${literal(metadata)})`;
      expression = this.coercion(
        'arrayParam',
        explode === false ? `${array}, { separator: ',' }` : array,
      );
    } else {
      expression = this.parameterValueExpression(schema, schemaPointer);
    }

    const defaultValue = resolved.value['default'];
    const required = location === 'path' || parameter['required'] === true;
    if (defaultValue !== undefined) expression += `.default(${literal(defaultValue)})`;
    else if (!required) expression += '.optional()';

    const parameterMetadata: JsonObject = {};
    for (const key of [
      'description',
      'deprecated',
      'example',
      'examples',
      'style',
      'explode',
      'allowEmptyValue',
    ]) {
      if (parameter[key] !== undefined) parameterMetadata[key] = parameter[key]!;
    }
    return Object.keys(parameterMetadata).length > 0
      ? `${expression}.openapi(${literal({ param: parameterMetadata })})`
      : expression;
  }

  /** One parameter value (a scalar, or one element of an array parameter), without its default. */
  private parameterValueExpression(schema: JsonObject, pointer: string): string {
    const resolved = this.followRefs(schema, pointer);
    const type = firstNonNullType(resolved.value);
    const helper =
      type === 'integer'
        ? 'integerParam'
        : type === 'number'
          ? 'numberParam'
          : type === 'boolean'
            ? 'booleanParam'
            : undefined;
    if (helper === undefined) {
      if (type === 'array' || type === 'object') {
        throw new UnsupportedSpecError(pointer, `a ${type} inside a parameter value`);
      }
      if (typeof schema['$ref'] === 'string') return this.referenceExpression(schema, pointer);
      const metadata = this.schemaMetadata(schema);
      const core = this.schemaCore(withoutDefault(schema), pointer);
      return Object.keys(metadata).length > 0 ? `${core}.openapi(${literal(metadata)})` : core;
    }
    const metadata = this.schemaMetadata(resolved.value);
    const core = this.schemaCore(withoutDefault(resolved.value), resolved.pointer);
    const inner = Object.keys(metadata).length > 0 ? `${core}.openapi(${literal(metadata)})` : core;
    return this.coercion(helper, inner);
  }

  private coercion(helper: string, argument: string): string {
    this.usedCoercionHelpers.add(helper);
    return `${helper}(${argument})`;
  }

  /** A schema, parameter, header, response or request body with its $ref chain followed. */
  private followRefs(
    node: Json | undefined,
    pointer: string,
  ): { value: JsonObject; pointer: string } {
    let current = { value: asObject(node ?? null, pointer), pointer };
    const seen = new Set<string>();
    while (typeof current.value['$ref'] === 'string') {
      const ref = current.value['$ref'];
      if (seen.has(ref)) throw new UnsupportedSpecError(pointer, `$ref cycle through ${ref}`);
      seen.add(ref);
      current = {
        value: asObject(resolvePointer(this.spec, ref, current.pointer), ref),
        pointer: ref,
      };
    }
    return current;
  }

  /**
   * The source for a parameter, header, response or request body. One referenced from
   * components becomes a shared const (declared once, after whatever it uses), so the routes
   * read like the spec; an inline one is written in place.
   */
  private sharedComponent(
    node: Json,
    pointer: string,
    build: (value: JsonObject, pointer: string) => string,
  ): string {
    const ref = isObject(node) ? node['$ref'] : undefined;
    const match =
      typeof ref === 'string' ? /^#\/components\/([A-Za-z]+)\/([^/]+)$/.exec(ref) : null;
    const suffix = match ? SHARED_COMPONENT_SUFFIX[match[1]!] : undefined;
    const { value, pointer: resolvedPointer } = this.followRefs(node, pointer);
    if (match === null || suffix === undefined) return build(value, resolvedPointer);

    const existing = this.sharedComponents.get(ref as string);
    if (existing) return existing.constName;
    const constName = lowerFirstWord(constNameForSchema(unescapePointer(match[2]!))) + suffix;
    const expression = build(value, resolvedPointer);
    this.sharedComponents.set(ref as string, {
      constName,
      declaration: `export const ${constName} = ${expression};`,
    });
    return constName;
  }

  // ---- operations --------------------------------------------------------------------------

  private operations(): Array<{
    path: string;
    method: string;
    operation: JsonObject;
    pathItem: JsonObject;
    pointer: string;
  }> {
    const paths = optionalObject(this.spec['paths'], '#/paths') ?? {};
    return Object.entries(paths).flatMap(([path, pathItemNode]) => {
      const pathPointer = `#/paths/${escapePointer(path)}`;
      const pathItem = asObject(pathItemNode, pathPointer);
      return HTTP_METHODS.filter((method) => pathItem[method] !== undefined).map((method) => ({
        path,
        method,
        pathItem,
        operation: asObject(pathItem[method]!, `${pathPointer}/${method}`),
        pointer: `${pathPointer}/${method}`,
      }));
    });
  }

  private routeDeclaration(input: {
    path: string;
    method: string;
    operation: JsonObject;
    pathItem: JsonObject;
    pointer: string;
  }): { key: string; constName: string; declaration: string } {
    const { path, method, operation, pathItem, pointer } = input;
    const operationId = operation['operationId'];
    if (typeof operationId !== 'string' || operationId === '') {
      throw new UnsupportedSpecError(
        pointer,
        'every operation needs an operationId (it names the route)',
      );
    }
    const key = camelCase(operationId);
    const constName = `${key}Route`;

    const fields: string[] = [
      `method: ${literal(method)},`,
      `path: ${literal(path)},`,
      `operationId: ${literal(operationId)},`,
    ];
    for (const field of ['tags', 'summary', 'description', 'deprecated'] as const) {
      if (operation[field] !== undefined) fields.push(`${field}: ${literal(operation[field])},`);
    }
    // Extensions carry rules the server enforces (x-agentline-permission), so they keep their
    // literal types; they also render back into the server's document unchanged.
    for (const [field, value] of Object.entries(operation)) {
      if (field.startsWith('x-')) fields.push(`${literal(field)}: ${literal(value)} as const,`);
    }
    // The effective requirement is written on every route, so middleware can read it from the
    // route and the server's document does not depend on a document-level default.
    const security = operation['security'] ?? this.spec['security'];
    if (security !== undefined) fields.push(`security: ${literal(security)},`);
    const request = this.requestExpression(operation, pathItem, pointer);
    if (request !== undefined) fields.push(`request: ${request},`);
    fields.push(`responses: ${this.responsesExpression(operation, pointer)},`);

    return {
      key,
      constName,
      declaration: `export const ${constName} = createRoute({\n${indent(fields.join('\n'))}\n});`,
    };
  }

  private requestExpression(
    operation: JsonObject,
    pathItem: JsonObject,
    pointer: string,
  ): string | undefined {
    const byLocation = new Map<ParamLocation, Array<{ name: string; expression: string }>>();
    for (const resolved of this.mergedParameters(operation, pathItem, pointer)) {
      const location = resolved.parameter['in'] as ParamLocation;
      const name = resolved.parameter['name'] as string;
      const list = byLocation.get(location) ?? [];
      const expression = this.sharedComponent(resolved.node, resolved.pointer, () =>
        this.parameterExpression(resolved, location),
      );
      list.push({ name, expression });
      byLocation.set(location, list);
    }

    const parts: string[] = [];
    for (const location of ['path', 'query', 'header', 'cookie'] as const) {
      const parameters = byLocation.get(location);
      if (!parameters) continue;
      const shape = parameters
        .map(({ name, expression }) => `${propertyKey(name)}: ${expression},`)
        .join('\n');
      parts.push(`${REQUEST_KEY_BY_LOCATION[location]}: z.object({\n${indent(shape)}\n}),`);
    }
    if (operation['requestBody'] !== undefined) {
      const body = this.sharedComponent(
        operation['requestBody'],
        `${pointer}/requestBody`,
        (value, bodyPointer) => {
          const fields: string[] = [];
          if (value['description'] !== undefined)
            fields.push(`description: ${literal(value['description'])},`);
          fields.push(`required: ${value['required'] === true},`);
          fields.push(
            `content: ${this.contentExpression(value['content'], `${bodyPointer}/content`)},`,
          );
          return `{\n${indent(fields.join('\n'))}\n}`;
        },
      );
      parts.push(`body: ${body},`);
    }
    return parts.length > 0 ? `{\n${indent(parts.join('\n'))}\n}` : undefined;
  }

  /** Path-item parameters apply to every operation unless the operation redefines (in, name). */
  private mergedParameters(
    operation: JsonObject,
    pathItem: JsonObject,
    pointer: string,
  ): ResolvedParameter[] {
    const pathPointer = pointer.slice(0, pointer.lastIndexOf('/'));
    const merged = new Map<string, ResolvedParameter>();
    const collect = (list: Json | undefined, listPointer: string) => {
      if (list === undefined) return;
      if (!Array.isArray(list))
        throw new UnsupportedSpecError(listPointer, 'parameters must be an array');
      list.forEach((node, index) => {
        const { value: parameter, pointer: parameterPointer } = this.followRefs(
          node,
          `${listPointer}/${index}`,
        );
        const location = parameter['in'];
        if (
          location !== 'query' &&
          location !== 'path' &&
          location !== 'header' &&
          location !== 'cookie'
        ) {
          throw new UnsupportedSpecError(
            parameterPointer,
            `unknown parameter location ${JSON.stringify(location)}`,
          );
        }
        if (typeof parameter['name'] !== 'string')
          throw new UnsupportedSpecError(parameterPointer, 'a parameter needs a name');
        merged.set(`${location}:${parameter['name']}`, {
          node,
          parameter,
          pointer: parameterPointer,
        });
      });
    };
    collect(pathItem['parameters'], `${pathPointer}/parameters`);
    collect(operation['parameters'], `${pointer}/parameters`);
    return [...merged.values()];
  }

  private contentExpression(node: Json | undefined, pointer: string): string {
    const content = asObject(node ?? null, pointer);
    const entries = Object.entries(content).map(([mediaType, mediaNode]) => {
      const mediaPointer = `${pointer}/${escapePointer(mediaType)}`;
      const media = asObject(mediaNode, mediaPointer);
      const schema =
        media['schema'] === undefined
          ? 'z.unknown()'
          : this.schemaExpression(media['schema'], `${mediaPointer}/schema`);
      return `${literal(mediaType)}: { schema: ${schema} },`;
    });
    return `{\n${indent(entries.join('\n'))}\n}`;
  }

  private responsesExpression(operation: JsonObject, pointer: string): string {
    const responses = asObject(operation['responses'] ?? null, `${pointer}/responses`);
    const entries = Object.entries(responses).map(([status, node]) => {
      const response = this.sharedComponent(
        node,
        `${pointer}/responses/${status}`,
        (value, responsePointer) => {
          const fields: string[] = [`description: ${literal(value['description'] ?? '')},`];
          if (value['headers'] !== undefined) {
            fields.push(
              `headers: ${this.responseHeadersExpression(value['headers'], `${responsePointer}/headers`)},`,
            );
          }
          if (value['content'] !== undefined) {
            fields.push(
              `content: ${this.contentExpression(value['content'], `${responsePointer}/content`)},`,
            );
          }
          return `{\n${indent(fields.join('\n'))}\n}`;
        },
      );
      const key = /^[1-5][0-9][0-9]$/.test(status) ? status : literal(status);
      return `${key}: ${response},`;
    });
    return `{\n${indent(entries.join('\n'))}\n}`;
  }

  private responseHeadersExpression(node: Json, pointer: string): string {
    const headers = asObject(node, pointer);
    const entries = Object.entries(headers).map(([name, headerNode]) => {
      const expression = this.sharedComponent(
        headerNode,
        `${pointer}/${escapePointer(name)}`,
        (header, headerPointer) => {
          if (header['schema'] === undefined)
            throw new UnsupportedSpecError(headerPointer, 'a header without a schema');
          let schema = this.schemaExpression(header['schema'], `${headerPointer}/schema`);
          if (header['required'] !== true) schema += '.optional()';
          // Header metadata goes under `param` so zod-to-openapi puts it on the header object,
          // not into its schema.
          const parameterMetadata: JsonObject = {};
          for (const key of ['description', 'deprecated', 'example', 'examples']) {
            if (header[key] !== undefined) parameterMetadata[key] = header[key]!;
          }
          return Object.keys(parameterMetadata).length > 0
            ? `${schema}.openapi(${literal({ param: parameterMetadata })})`
            : schema;
        },
      );
      return `${literal(name)}: ${expression},`;
    });
    return `z.object({\n${indent(entries.join('\n'))}\n})`;
  }

  // ---- document-level data -----------------------------------------------------------------

  private documentConfigDeclaration(): string {
    const config: JsonObject = {};
    for (const key of [
      'openapi',
      'info',
      'jsonSchemaDialect',
      'servers',
      'tags',
      'externalDocs',
      'security',
    ]) {
      if (this.spec[key] !== undefined) config[key] = this.spec[key]!;
    }
    return [
      "/** The spec's document-level fields, for `app.getOpenAPI31Document(openApiDocumentConfig)`. */",
      // Not annotated with the generator's config type: openapi3-ts lacks some 3.1 fields
      // (`info.license.identifier`), and the object is still checked where it is passed.
      `export const openApiDocumentConfig = ${JSON.stringify(config, null, 2)};`,
    ].join('\n');
  }

  private registerComponentsDeclaration(schemaNames: string[]): string {
    const components = optionalObject(this.spec['components'], '#/components') ?? {};
    const securitySchemes =
      optionalObject(components['securitySchemes'], '#/components/securitySchemes') ?? {};
    const lines = [
      ...Object.entries(securitySchemes).map(
        ([name, scheme]) =>
          `app.openAPIRegistry.registerComponent('securitySchemes', ${literal(name)}, ${literal(scheme)});`,
      ),
      ...schemaNames.map(
        (name) =>
          `app.openAPIRegistry.register(${literal(name)}, ${this.schemaConstNames.get(name)});`,
      ),
    ];
    return [
      '/**',
      " * Registers the spec's security schemes and every component schema, so the server's document",
      ' * lists them even where no route refers to them. Call it before getOpenAPI31Document.',
      ' */',
      "export function registerSpecComponents(app: Pick<OpenAPIHono, 'openAPIRegistry'>): void {",
      indent(lines.join('\n')),
      '}',
    ].join('\n');
  }
}

// ---- helpers -------------------------------------------------------------------------------

function numberCore(type: 'integer' | 'number', schema: JsonObject, pointer: string): string {
  assertOnlyKeywordsFor(type, schema, pointer, [
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'format',
  ]);
  let expression = type === 'integer' ? 'z.int()' : 'z.number()';
  const bound = (key: string): number => {
    const value = schema[key];
    if (typeof value !== 'number')
      throw new UnsupportedSpecError(pointer, `${key} must be a number (3.1 form)`);
    return value;
  };
  if (schema['minimum'] !== undefined) expression += `.gte(${bound('minimum')})`;
  if (schema['exclusiveMinimum'] !== undefined) expression += `.gt(${bound('exclusiveMinimum')})`;
  if (schema['maximum'] !== undefined) expression += `.lte(${bound('maximum')})`;
  if (schema['exclusiveMaximum'] !== undefined) expression += `.lt(${bound('exclusiveMaximum')})`;
  // zod has no int64/int32 number kinds that render as `integer`, so the format is documented
  // only; z.int() already keeps values within the safe-integer range.
  if (schema['format'] !== undefined)
    expression += `.openapi(${literal({ format: schema['format'] })})`;
  return expression;
}

function componentSchemasOf(spec: JsonObject): JsonObject {
  return (
    optionalObject(
      optionalObject(spec['components'], '#/components')?.['schemas'],
      '#/components/schemas',
    ) ?? {}
  );
}

/** The values of a schema that is nothing but an enum of strings (no null, no default). */
function stringEnumValues(schema: Json): string[] | undefined {
  if (!isObject(schema) || !Array.isArray(schema['enum'])) return undefined;
  const values = schema['enum'];
  const onlyEnum = Object.keys(schema).every(
    (key) => !VALIDATION_KEYWORDS.has(key) || key === 'enum' || key === 'type',
  );
  return onlyEnum &&
    (schema['type'] === undefined || schema['type'] === 'string') &&
    values.length > 0 &&
    values.every((value) => typeof value === 'string')
    ? values
    : undefined;
}

function literalSchema(value: Json, pointer: string): string {
  if (value === null) return 'z.null()';
  if (typeof value === 'object')
    throw new UnsupportedSpecError(pointer, 'const with an object or array value');
  return `z.literal(${literal(value)})`;
}

function assertKnownKeywords(schema: JsonObject, pointer: string): void {
  const unknown = Object.keys(schema).filter(
    (key) =>
      !VALIDATION_KEYWORDS.has(key) &&
      !isAnnotation(key) &&
      !key.startsWith('x-') &&
      key !== '$comment',
  );
  if (unknown.length > 0)
    throw new UnsupportedSpecError(pointer, `unsupported keyword(s): ${unknown.join(', ')}`);
}

const KEYWORDS_OF_EVERY_TYPE = new Set(['type', 'default', '$ref']);

function assertOnlyKeywordsFor(
  type: string,
  schema: JsonObject,
  pointer: string,
  allowed: string[],
): void {
  const misplaced = Object.keys(schema).filter(
    (key) =>
      VALIDATION_KEYWORDS.has(key) && !KEYWORDS_OF_EVERY_TYPE.has(key) && !allowed.includes(key),
  );
  if (misplaced.length > 0) {
    throw new UnsupportedSpecError(pointer, `${misplaced.join(', ')} on a ${type} schema`);
  }
}

function isAnnotation(key: string): boolean {
  return (ANNOTATION_KEYWORDS as readonly string[]).includes(key);
}

function typeList(schema: JsonObject, pointer: string): string[] {
  const type = schema['type'];
  if (type === undefined) return [];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type) && type.every((entry) => typeof entry === 'string')) return type;
  throw new UnsupportedSpecError(pointer, 'type must be a string or a list of strings');
}

function isAnyValueSchema(schema: Json): boolean {
  return (
    isObject(schema) &&
    ['type', 'enum', 'const', '$ref', 'anyOf', 'oneOf'].every((key) => !(key in schema))
  );
}

function firstNonNullType(schema: JsonObject): string | undefined {
  if (Array.isArray(schema['enum']) && schema['type'] === undefined) {
    return schema['enum'].every((value) => typeof value === 'string' || value === null)
      ? 'string'
      : undefined;
  }
  const type = schema['type'];
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : [];
  return types.find((entry): entry is string => typeof entry === 'string' && entry !== 'null');
}

function withoutDefault(schema: JsonObject): JsonObject {
  const { default: _default, ...rest } = schema;
  return rest;
}

function integerKeyword(schema: JsonObject, key: string, pointer: string): number {
  const value = schema[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new UnsupportedSpecError(pointer, `${key} must be a non-negative integer`);
  }
  return value;
}

function stringList(node: Json | undefined, pointer: string): string[] {
  if (node === undefined) return [];
  if (!Array.isArray(node) || !node.every((entry) => typeof entry === 'string')) {
    throw new UnsupportedSpecError(pointer, 'expected a list of strings');
  }
  return node;
}

/** Component names in an order where every schema comes after the schemas it refers to. */
function orderByDependencies(schemas: JsonObject): string[] {
  const ordered: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, trail: string[]) => {
    const current = state.get(name);
    if (current === 'done') return;
    if (current === 'visiting') {
      throw new UnsupportedSpecError(
        `#/components/schemas/${escapePointer(name)}`,
        `recursive schemas are not supported (${[...trail, name].join(' -> ')})`,
      );
    }
    state.set(name, 'visiting');
    for (const dependency of schemaRefs(schemas[name]!)) {
      if (dependency in schemas) visit(dependency, [...trail, name]);
    }
    state.set(name, 'done');
    ordered.push(name);
  };
  for (const name of Object.keys(schemas)) visit(name, []);
  return ordered;
}

function schemaRefs(node: Json): string[] {
  if (Array.isArray(node)) return node.flatMap(schemaRefs);
  if (!isObject(node)) return [];
  const own =
    typeof node['$ref'] === 'string' && node['$ref'].startsWith('#/components/schemas/')
      ? [unescapePointer(node['$ref'].slice('#/components/schemas/'.length))]
      : [];
  return [...own, ...Object.values(node).flatMap(schemaRefs)];
}

function resolvePointer(spec: JsonObject, ref: string, from: string): Json {
  if (!ref.startsWith('#/'))
    throw new UnsupportedSpecError(from, `only local $refs are supported, not ${ref}`);
  let node: Json = spec;
  for (const segment of ref.slice(2).split('/').map(unescapePointer)) {
    if (!isObject(node) && !Array.isArray(node))
      throw new UnsupportedSpecError(from, `$ref ${ref} does not resolve`);
    const next: Json | undefined = Array.isArray(node) ? node[Number(segment)] : node[segment];
    if (next === undefined) throw new UnsupportedSpecError(from, `$ref ${ref} does not resolve`);
    node = next;
  }
  return node;
}

function constNameForSchema(name: string): string {
  if (IDENTIFIER.test(name) && !RESERVED_WORDS.has(name)) return name;
  const cleaned = name.replace(/[^A-Za-z0-9_$]+/g, '_');
  return /^[0-9]/.test(cleaned) || RESERVED_WORDS.has(cleaned) ? `${cleaned}Schema` : cleaned;
}

/** `XRequestId` -> `xRequestId`, `WWWAuthenticate` -> `wwwAuthenticate`, `Page` -> `page`. */
function lowerFirstWord(name: string): string {
  const leadingCapitals = /^[A-Z]+(?=[A-Z][a-z0-9]|$)|^[A-Z]/.exec(name)?.[0] ?? '';
  return leadingCapitals.toLowerCase() + name.slice(leadingCapitals.length);
}

function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : literal(name);
}

/** A JSON value as TypeScript source: single-quoted strings, bare keys where they are identifiers. */
function literal(value: Json): string {
  if (typeof value === 'string') {
    return `'${JSON.stringify(value).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
  }
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (isObject(value)) {
    const entries = Object.entries(value).map(
      ([key, entry]) => `${propertyKey(key)}: ${literal(entry)}`,
    );
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return JSON.stringify(value);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown, pointer: string): JsonObject {
  if (!isObject(value)) throw new UnsupportedSpecError(pointer, 'expected an object');
  return value;
}

function optionalObject(value: unknown, pointer: string): JsonObject | undefined {
  return value === undefined ? undefined : asObject(value, pointer);
}
