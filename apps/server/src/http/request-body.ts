// Request bodies: the media type, the size limit and the shape of the JSON, checked once and only
// for authenticated callers (this runs after authentication). Bodies are read straight from Node's
// socket stream when the app runs on @hono/node-server: going through the Web `Request` costs more
// than the rest of a small request. The parsed JSON is handed to Hono's body cache, so the route's
// validator does not parse it again.

import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import spec from '../generated/openapi.json' with { type: 'json' };
import type { AppEnv } from './app-env.js';
import { ApiError, ClientAbortError, RequestValidationError } from './errors.js';
import {
  jsonBodyProblem,
  JsonValueCounter,
  MAX_JSON_VALUES,
  NUL,
  NUL_MESSAGE,
} from './json-body.js';

const METHODS_WITH_BODIES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface BodyRule {
  method: string;
  path: RegExp;
  required: boolean;
}

/** Which operations take a JSON body, and whether they require one: read from the contract. */
const BODY_RULES: BodyRule[] = Object.entries(
  spec.paths as Record<string, Record<string, { requestBody?: { required?: boolean } }>>,
).flatMap(([template, operations]) =>
  Object.entries(operations).flatMap(([method, operation]) =>
    operation.requestBody
      ? [
          {
            method: method.toUpperCase(),
            path: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
            required: operation.requestBody.required === true,
          },
        ]
      : [],
  ),
);

function bodyRuleOf(method: string, path: string): BodyRule | undefined {
  return BODY_RULES.find((rule) => rule.method === method && rule.path.test(path));
}

function unsupportedMediaType(detail: string): ApiError {
  return new ApiError('UNSUPPORTED_MEDIA_TYPE', detail);
}

/**
 * An operation that takes a body accepts only uncompressed JSON in UTF-8: anything else would be
 * misread (a gzip body as bad JSON, UTF-16 as garbage) or, worse, silently dropped.
 */
function checkContentEncoding(contentEncoding: string | undefined): void {
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') {
    throw unsupportedMediaType(
      `Content-Encoding "${contentEncoding}" is not accepted; send the JSON body uncompressed.`,
    );
  }
}

/** A body, or one the operation requires, needs a declared media type. */
function checkUndeclaredContentType(hasBody: boolean, rule: BodyRule): void {
  if (!hasBody && !rule.required) return;
  throw unsupportedMediaType(
    'The request has no Content-Type; send the body as JSON with Content-Type: application/json.',
  );
}

function checkContentType(contentType: string): void {
  const [mediaType = '', ...parameters] = contentType.split(';').map((part) => part.trim());
  if (mediaType.toLowerCase() !== 'application/json') {
    throw unsupportedMediaType(
      `Content-Type "${mediaType}" is not accepted; send the body as JSON with Content-Type: application/json.`,
    );
  }
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=').map((part) => part.trim());
    if (name.toLowerCase() === 'charset' && value.replace(/"/g, '').toLowerCase() !== 'utf-8') {
      throw unsupportedMediaType(
        `charset "${value}" is not accepted; encode the JSON body in UTF-8 (charset=utf-8 or no charset).`,
      );
    }
  }
}

function tooLarge(limitBytes: number): ApiError {
  return new ApiError(
    'PAYLOAD_TOO_LARGE',
    `The request body is larger than ${limitBytes} bytes; send less.`,
  );
}

function tooManyValues(): ApiError {
  return new ApiError(
    'PAYLOAD_TOO_LARGE',
    `The request body holds more than ${MAX_JSON_VALUES.toLocaleString('en-US')} JSON values (objects, arrays, strings, numbers, booleans and nulls, counted together); no operation takes that many: send less.`,
  );
}

/** Counts a chunk's JSON values, and refuses the body once they pass the bound. */
function countValues(counter: JsonValueCounter | undefined, chunk: Uint8Array): void {
  if (!counter) return;
  counter.add(chunk);
  if (counter.pastBound) throw tooManyValues();
}

async function readIncoming(
  incoming: IncomingMessage,
  limitBytes: number,
  counter: JsonValueCounter | undefined,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Left open past a limit: the server drains the rest after the 413, so the client reads it
    // (front-door.ts); destroying the stream here would reset the connection before the answer.
    for await (const chunk of incoming.iterator({
      destroyOnReturn: false,
    }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) throw tooLarge(limitBytes);
      countValues(counter, chunk);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The stream fails only when the client goes away before its body ends.
    throw new ClientAbortError(error);
  }
  return Buffer.concat(chunks);
}

// A leading byte order mark stays in the text, so such a body is still refused as not JSON (RFC
// 8259: a sender never adds one to JSON text on the network).
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of a body an operation reads: bytes that are not UTF-8 are refused, where a lenient
 * decoder would store U+FFFD in their place and the client would never learn its text was lost.
 */
function utf8BodyText(bytes: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new RequestValidationError([
      {
        loc: ['body'],
        msg: 'The request body is not valid UTF-8; encode the JSON body in UTF-8.',
        type: 'value_error',
      },
    ]);
  }
}

/**
 * Reads the body of an authenticated request once, within the size limit. For an operation that
 * takes a body, the media type must be JSON in UTF-8 (415 otherwise), the JSON must hold at most
 * MAX_JSON_VALUES values (413 otherwise) and be valid, shallow enough and free of unstorable text
 * (422 with its loc otherwise).
 */
export function requestBody(limitBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!METHODS_WITH_BODIES.has(c.req.method)) return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > limitBytes) throw tooLarge(limitBytes);
    const rule = bodyRuleOf(c.req.method, c.req.path);
    const contentType = c.req.header('content-type');
    if (rule) {
      checkContentEncoding(c.req.header('content-encoding'));
      // Checked before the body is read, so a JSON body's values are counted as they arrive.
      if (contentType !== undefined) checkContentType(contentType);
    }
    const counter =
      rule && contentType !== undefined ? new JsonValueCounter(MAX_JSON_VALUES) : undefined;
    const incoming = c.env?.incoming;
    // In-process requests (app.request in tests) have no socket: read the Web Request instead.
    const bytes = incoming
      ? await readIncoming(incoming, limitBytes, counter)
      : await c.req.raw.arrayBuffer().then((body) => {
          if (body.byteLength > limitBytes) throw tooLarge(limitBytes);
          countValues(counter, new Uint8Array(body));
          return Buffer.from(body);
        });
    if (rule && contentType === undefined) checkUndeclaredContentType(bytes.length > 0, rule);
    // An operation that takes no body ignores one: its text needs no check.
    const text = rule ? utf8BodyText(bytes) : bytes.toString('utf8');
    // Hono keeps promises in its body cache although the type names the values.
    c.req.bodyCache.text = Promise.resolve(text) as unknown as string;
    if (rule && text !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new RequestValidationError([
          { loc: ['body'], msg: 'The request body is not valid JSON.', type: 'json_invalid' },
        ]);
      }
      const problem = jsonBodyProblem(parsed);
      if (problem) throw new RequestValidationError([problem]);
      c.req.bodyCache.json = Promise.resolve(parsed);
    }
    await next();
  };
}

/** The query string of a request URL as sent (without the `?`; empty when it has none). */
export function queryStringOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? '' : url.slice(queryStart + 1);
}

/**
 * Caps the query string: list parameters are short, so a long one is a mistake or an attack, and
 * answering it early keeps it from being parsed and validated.
 */
export function queryStringLimit(maxCharacters: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { length } = queryStringOf(c.req.url);
    if (length > maxCharacters) {
      throw new RequestValidationError([
        {
          loc: ['query'],
          msg: `The query string has ${length} characters; at most ${maxCharacters} are accepted. Narrow the search or page through the results.`,
          type: 'too_long',
        },
      ]);
    }
    await next();
  };
}

// A `%` not followed by two hex digits is a literal `%`, as URL parsers read it; only the escapes
// spell bytes, and those must be UTF-8.
const STRAY_PERCENT = /%(?![0-9A-Fa-f]{2})/g;

/** `component` (form-encoded, `+` for a space) decoded, or null when its escapes are not UTF-8. */
function decodedQueryComponent(component: string): string | null {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' ').replace(STRAY_PERCENT, '%25'));
  } catch {
    return null;
  }
}

/**
 * Refuses a query string whose percent escapes are not UTF-8 (`?user_id=%FF`) with a 422 naming
 * the parameter. Hono would hand such a value over still encoded, so the operation would look up
 * the text `%FF`, and another parser would read U+FFFD: neither is what the client meant.
 */
export function rejectInvalidUtf8InQuery(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const query = queryStringOf(c.req.url);
    if (query.includes('%') && decodedQueryComponent(query) === null) {
      for (const pair of query.split('&')) {
        const separator = pair.indexOf('=');
        const name = separator === -1 ? pair : pair.slice(0, separator);
        const value = separator === -1 ? '' : pair.slice(separator + 1);
        if (decodedQueryComponent(name) !== null && decodedQueryComponent(value) !== null) continue;
        throw new RequestValidationError([
          {
            loc: ['query', decodedQueryComponent(name) ?? name],
            msg: 'is not percent-encoded UTF-8; encode the text as UTF-8, then percent-encode its bytes.',
            type: 'value_error',
          },
        ]);
      }
    }
    await next();
  };
}

/**
 * Refuses a query string holding U+0000 with a 422 naming the parameter. PostgreSQL's text cannot
 * store it and SQLite's could: refusing it up front keeps the answers of both backends the same,
 * and such input is a mistake or an attack, never a real name or search.
 */
export function rejectNulInQuery(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const query = queryStringOf(c.req.url);
    if (query.includes('%00')) {
      for (const [name, value] of new URLSearchParams(query)) {
        if (name.includes(NUL) || value.includes(NUL)) {
          throw new RequestValidationError([
            { loc: ['query', name.replaceAll(NUL, '')], msg: NUL_MESSAGE, type: 'value_error' },
          ]);
        }
      }
    }
    await next();
  };
}
