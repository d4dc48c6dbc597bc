// The route middleware over a list's kept answers (runtime/kept-answers.ts): a query answered
// before was valid then and means the same now, so a kept answer is served ahead of the query's
// validation and parsing (most of a repeated request's own work). A query that fails validation
// is never kept, so it is refused every time. Both a kept answer and a new one are JSON text
// (jsonTextResponse).

import type { Context, MiddlewareHandler, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import { cursorSigner } from '../runtime/cursor-signer.js';
import {
  KeptList,
  type KeptListRoute,
  type QueryValues,
  type Version,
  type VersionOf,
} from '../runtime/kept-answers.js';
import type { JsonBytes, JsonText } from '../vocabulary/json-text.js';
import type { CursorSigner } from '../domain/list-query.js';
import type { AppEnv } from './app-env.js';

/**
 * A 200 with JSON text (or its UTF-8 bytes) as the body, typed as the route's answer: the one cast
 * to Hono's typed response, for text branded with the route's answer type (why that is safe:
 * vocabulary/json-text.ts).
 */
export function jsonTextResponse<T>(
  c: Context,
  body: JsonText<T> | JsonBytes<T>,
): Response & TypedResponse<JSONParsed<T>, 200, 'json'> {
  const response: Response = c.body(body, 200, { 'Content-Type': 'application/json' });
  return response as Response & TypedResponse<JSONParsed<T>, 200, 'json'>;
}

/** A list's answers of type T, kept in the app's KeptAnswers (KeptList), served by `serve`. */
export class KeptListAnswers<T> {
  private readonly list: KeptList<T>;

  constructor(route: KeptListRoute, versionOf: VersionOf, options: { keepsCursorPages: boolean }) {
    this.list = new KeptList(route, versionOf, options);
  }

  /** Route middleware: answers from memory what was kept for the current version. */
  readonly serve: MiddlewareHandler<AppEnv> = async (c, next) => {
    const query: QueryValues = c.req.queries();
    if (!this.list.keeps(query)) return next();
    const db = c.get('db');
    const { organizationId } = c.get('auth');
    const signer = await cursorSigner(db);
    const kept = await this.list.lookup(c.get('keptAnswers'), db, organizationId, query, signer);
    if (kept !== null) return jsonTextResponse(c, kept);
    await next();
  };

  /** Keeps the request's answer, built from the data at `version`. */
  keep(c: Context<AppEnv>, signer: CursorSigner, version: Version, json: JsonText<T>): void {
    const { organizationId } = c.get('auth');
    this.list.keep(c.get('keptAnswers'), organizationId, c.req.queries(), signer, version, json);
  }
}
