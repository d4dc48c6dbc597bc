// Reads request bodies once, with the size limit, straight from Node's socket stream when the app
// runs on @hono/node-server. Going through the Web `Request` that Hono would otherwise build costs
// more than the rest of a small request (stream wrappers, an AbortSignal per request); the text
// read here is handed to Hono's body cache, so validators parse it without touching that Request.

import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';
import { ApiError, RequestValidationError } from './errors.js';

const METHODS_WITH_BODIES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function tooLarge(limitBytes: number): ApiError {
  return new ApiError(
    413,
    'PAYLOAD_TOO_LARGE',
    `The request body is larger than ${limitBytes} bytes; send less.`,
  );
}

async function readIncoming(incoming: IncomingMessage, limitBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function requestBody(limitBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!METHODS_WITH_BODIES.has(c.req.method)) return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > limitBytes) throw tooLarge(limitBytes);
    const incoming = c.env?.incoming;
    // In-process requests (app.request in tests) have no socket: read the Web Request instead.
    const text = incoming
      ? await readIncoming(incoming, limitBytes)
      : await c.req.raw.text().then((body) => {
          if (Buffer.byteLength(body) > limitBytes) throw tooLarge(limitBytes);
          return body;
        });
    // Hono keeps promises in its body cache although the type names the values.
    c.req.bodyCache.text = Promise.resolve(text) as unknown as string;
    await next();
  };
}

/**
 * Caps the query string: list parameters are short, so a long one is a mistake or an attack, and
 * answering it early keeps it from being parsed and validated.
 */
export function queryStringLimit(maxCharacters: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const queryStart = c.req.url.indexOf('?');
    const length = queryStart === -1 ? 0 : c.req.url.length - queryStart - 1;
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

const NUL = '\u0000';
const NUL_MESSAGE =
  'must not contain the NUL character (U+0000); remove it (PostgreSQL cannot store it, so neither backend accepts it).';

/** The path of the first string (or object key) inside `value` that contains NUL, if any. */
function pathOfNul(value: unknown, path: Array<string | number>): Array<string | number> | null {
  if (typeof value === 'string') return value.includes(NUL) ? path : null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = pathOfNul(item, [...path, index]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes(NUL)) return [...path, key];
      const found = pathOfNul(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Refuses text holding U+0000 in the query string or a JSON body with a 422 naming where it is.
 * PostgreSQL's text cannot store it and SQLite's could: refusing it up front keeps the answers of
 * both backends the same, and such input is a mistake or an attack, never a real name or search.
 */
export function rejectNulCharacters(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const queryStart = c.req.url.indexOf('?');
    if (queryStart !== -1 && /%00/.test(c.req.url.slice(queryStart))) {
      for (const [name, value] of new URLSearchParams(c.req.url.slice(queryStart + 1))) {
        if (name.includes(NUL) || value.includes(NUL)) {
          throw new RequestValidationError([
            { loc: ['query', name.replaceAll(NUL, '')], msg: NUL_MESSAGE, type: 'value_error' },
          ]);
        }
      }
    }
    const body = METHODS_WITH_BODIES.has(c.req.method)
      ? await (c.req.bodyCache.text as unknown as Promise<string> | undefined)
      : undefined;
    // JSON spells NUL as the escape \u0000; only then is the body parsed to find where it is.
    if (body && /\\u0000/i.test(body)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined; // Not JSON: the route's own validation answers that.
      }
      const path = pathOfNul(parsed, ['body']);
      if (path)
        throw new RequestValidationError([{ loc: path, msg: NUL_MESSAGE, type: 'value_error' }]);
    }
    await next();
  };
}
