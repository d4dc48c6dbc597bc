import { z } from '@hono/zod-openapi';

// Hono's validators hand query, path, header and cookie values over as text: a string for a key
// given once and a string[] for a query key that is repeated. The generated routes wrap number,
// boolean and array parameters in these helpers. Each is a z.preprocess pipe, which
// zod-to-openapi documents as its output schema, so the server's OpenAPI document still shows
// `type: integer`, its bounds and its default exactly as the spec does.
//
// A value that cannot be read is reported as one `invalid_type` issue whose `expected` names the
// parameter type (`int`, `number`, `boolean`) and whose path is the parameter name (plus the
// element index inside an array), so the error handler can turn it into `loc: ["query", name]`
// with a parsing error type. Text is never coerced loosely: `''`, `'1.5'`, `'1e3'` and `'abc'` are
// not integers, and only `'true'` and `'false'` are booleans.

export const INTEGER_PARSING_MESSAGE =
  'Input should be a valid integer, unable to parse string as an integer';
export const NUMBER_PARSING_MESSAGE =
  'Input should be a valid number, unable to parse string as a number';
export const BOOLEAN_PARSING_MESSAGE = 'Input should be a valid boolean, unable to interpret input';

const INTEGER_TEXT = /^-?\d+$/;
const NUMBER_TEXT = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function parseText<T extends z.ZodType>(
  schema: T,
  expected: 'int' | 'number' | 'boolean',
  message: string,
  read: (text: string) => unknown,
) {
  return z.preprocess((value, context) => {
    // Anything but text (a missing key, a repeated key) goes on to the schema, which reports it.
    if (typeof value !== 'string') return value;
    const parsed = read(value);
    if (parsed !== undefined) return parsed;
    context.addIssue({ code: 'invalid_type', expected, input: value, message });
    return z.NEVER;
  }, schema);
}

/** An integer parameter: accepts only optionally signed decimal digits. */
export function integerParam<T extends z.ZodType>(schema: T) {
  return parseText(schema, 'int', INTEGER_PARSING_MESSAGE, (value) =>
    INTEGER_TEXT.test(value) ? Number(value) : undefined,
  );
}

/** A number parameter: decimal notation with an optional exponent. */
export function numberParam<T extends z.ZodType>(schema: T) {
  return parseText(schema, 'number', NUMBER_PARSING_MESSAGE, (value) =>
    NUMBER_TEXT.test(value) ? Number(value) : undefined,
  );
}

/** A boolean parameter: exactly `true` or `false`. */
export function booleanParam<T extends z.ZodType>(schema: T) {
  return parseText(schema, 'boolean', BOOLEAN_PARSING_MESSAGE, (value) =>
    value === 'true' ? true : value === 'false' ? false : undefined,
  );
}

/**
 * An array parameter. A query key given once arrives as a plain string and becomes a one-element
 * list; with a separator (`explode: false`, path and header arrays) the text is split on it.
 * Each element is then validated (and coerced) by the array's item schema.
 */
export function arrayParam<T extends z.ZodType>(schema: T, options: { separator?: string } = {}) {
  // No name of a list of names (`fields`, `search_fields`) is empty, so an empty value there
  // (`?fields=`) can only mean "none given"; in a list of free text it is a real value.
  const dropsEmpty = schema instanceof z.ZodArray && schema.element instanceof z.ZodEnum;
  return z.preprocess((value) => {
    if (value === undefined) return value;
    const values: unknown[] = Array.isArray(value) ? value : [value];
    const { separator } = options;
    const split =
      separator === undefined
        ? values
        : values.flatMap((entry) => (typeof entry === 'string' ? entry.split(separator) : [entry]));
    return dropsEmpty ? split.filter((entry) => entry !== '') : split;
  }, schema);
}
