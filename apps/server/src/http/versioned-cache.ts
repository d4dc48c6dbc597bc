// Finished JSON answers kept in memory, each valid for one version of the data it was built from:
// every request is checked against a version read from the database after it arrived
// (docs/architecture.md, "Kept list answers").

import type { Context, MiddlewareHandler } from 'hono';
import { cursorSigner } from '../runtime/cursor-signer.js';
import { versionReadPerTurn, type Version, type VersionOf } from '../runtime/version-reads.js';
import type { JsonBytes, JsonText } from '../vocabulary/json-text.js';
import type { CursorSigner } from '../domain/list-query.js';
import type { AppEnv } from './app-env.js';
import { jsonTextResponse } from './json-text.js';

/** What a kept list needs of its generated route: its name and the query parameters it declares. */
export interface KeptListRoute {
  operationId: string;
  request: { query: { shape: object } };
}

/** The query as Hono reads it for the route's validator: each name's values in the order sent. */
type QueryValues = Record<string, string[] | undefined>;

/**
 * A list's answers of type T, kept in the app's KeptAnswers per organization and query while the
 * organization's version of the list's data (`versionOf`) is unchanged. `serve` is route
 * middleware ahead of the query's validation: a query answered before was valid then and means
 * the same now, so a kept answer skips validating and parsing it again (most of a repeated
 * request's own work). The key is the query as the validator reads it: the parameters the route
 * declares (it ignores any other), in the order of their names, each with its values in the order
 * sent (search_fields pair with search_field_values by position). So parameters in another order
 * or unknown ones share the entry of the same query, and cannot each grow the cache. A query
 * that fails validation is never kept, so it is refused every time.
 */
export class KeptListAnswers<T> {
  private readonly operationId: string;
  private readonly parameterNames: readonly string[];

  /** The organization's version, read once for the requests gathered in a turn. */
  private readonly currentVersion: VersionOf;

  /**
   * `keepsCursorPages` false: a page asked for with a `cursor` continues one walk and is neither
   * kept nor looked up (an export would push every polled page out, and each of its pages would
   * pay a version read for nothing).
   */
  constructor(
    route: KeptListRoute,
    versionOf: VersionOf,
    private readonly options: { keepsCursorPages: boolean },
  ) {
    this.operationId = route.operationId;
    this.parameterNames = Object.keys(route.request.query.shape).sort();
    this.currentVersion = versionReadPerTurn(versionOf);
  }

  /** Route middleware: answers from memory what was kept for the current version. */
  readonly serve: MiddlewareHandler<AppEnv> = async (c, next) => {
    const query: QueryValues = c.req.queries();
    if (!this.keeps(query)) return next();
    const db = c.get('db');
    const { organizationId } = c.get('auth');
    const key = this.keyOf(query, organizationId, await cursorSigner(db));
    const kept = c.get('keptAnswers').get(key, await this.currentVersion(db, organizationId));
    // The key names this list, whose answers are all made from T (keep).
    if (kept !== null) return jsonTextResponse(c, kept as JsonBytes<T>);
    await next();
  };

  /** Keeps the request's answer, built from the data at `version`. */
  keep(c: Context<AppEnv>, signer: CursorSigner, version: Version, json: JsonText<T>): void {
    const query: QueryValues = c.req.queries();
    if (!this.keeps(query)) return;
    const key = this.keyOf(query, c.get('auth').organizationId, signer);
    c.get('keptAnswers').set(key, version, json);
  }

  private keeps(query: QueryValues): boolean {
    return this.options.keepsCursorPages || query.cursor === undefined;
  }

  /**
   * The list, the organization, the secret next_cursor is sealed with (after a rotation, kept
   * answers would hand out cursors sealed with the previous one) and each declared parameter
   * given, by name in order, with its values as JSON (no value can end one early).
   */
  private keyOf(query: QueryValues, organizationId: number, signer: CursorSigner): string {
    let key = `${this.operationId}\n${organizationId}\n${signer.sealingSecretId}`;
    for (const name of this.parameterNames) {
      const values = query[name];
      if (values !== undefined) key += `\n${name}=${JSON.stringify(values)}`;
    }
    return key;
  }
}
