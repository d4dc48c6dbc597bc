// Answers whose body is JSON text rather than an object: the one cast to Hono's typed response,
// for text branded with the route's answer type (why that is safe: vocabulary/json-text.ts).

import type { Context, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import type { JsonBytes, JsonText } from '../vocabulary/json-text.js';

/** A 200 with JSON text (or its UTF-8 bytes) as the body, typed as the route's answer. */
export function jsonTextResponse<T>(
  c: Context,
  body: JsonText<T> | JsonBytes<T>,
): Response & TypedResponse<JSONParsed<T>, 200, 'json'> {
  const response: Response = c.body(body, 200, { 'Content-Type': 'application/json' });
  return response as Response & TypedResponse<JSONParsed<T>, 200, 'json'>;
}
