// Finished JSON answers kept in memory, each valid for one version of the data it was built from.
// The version lives in the database (the prompts list: organizations.records_version, bumped by
// every load of records; the events list: the organization's highest event id), so a server
// process never serves an answer older than a write that another process (the CLI, another
// server) committed: every request is checked against a version read after it arrived, and the
// answer is rebuilt when the version moved.
//
// The requests of one organization that arrive in one turn of the event loop share that read: it
// runs on the next turn, after all of them arrived (and one that arrives while it is in flight
// waits for the next read). A read costs little in SQL but a transaction's locking system calls
// on SQLite, a round trip on PostgreSQL; read per request, it was half of a kept answer's CPU
// time (docs/benchmarks.md, "Events list", 2026-11-26 evening).

import type { Context, MiddlewareHandler } from 'hono';
import type { Db } from '../db/engine/client.js';
import { perDatabase } from '../db/engine/caches.js';
import { gatherBatches } from '../db/engine/gather-batches.js';
import { cursorSigner } from '../db/repositories/cursor-signer.js';
import { jsonBytes, type JsonBytes, type JsonText } from '../domain/json-text.js';
import type { CursorSigner } from '../domain/list-query.js';
import type { AppEnv } from './app-env.js';
import { jsonTextResponse } from './json-text.js';
import { queryStringOf } from './request-body.js';

/**
 * What one list's kept answers may hold per process: enough for thousands of default pages, and a
 * bounded share of a small server's memory.
 */
const LIST_ANSWERS_MAX_BYTES = 32 * 1024 * 1024;

interface VersionedCacheOptions {
  /** Total size of the kept answers; the least recently used go first beyond it. */
  maxBytes: number;
}

interface Entry<T> {
  version: number;
  /** UTF-8 bytes, so a hit is written out without encoding the text again. */
  json: JsonBytes<T>;
}

/** Answers of type T, kept as the bytes of their JSON. */
class VersionedJsonCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private bytes = 0;

  constructor(private readonly options: VersionedCacheOptions) {}

  /** The answer for `key` built at `version`, or null. */
  get(key: string, version: number): JsonBytes<T> | null {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) return null;
    // Re-insert: a Map iterates in insertion order, so the front is the least recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.json;
  }

  set(key: string, version: number, text: JsonText<T>): void {
    this.remove(key);
    const json = jsonBytes(text);
    if (json.length > this.options.maxBytes) return;
    this.entries.set(key, { version, json });
    this.bytes += json.length;
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.options.maxBytes) break;
      this.remove(oldest);
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.json.length;
  }
}

/**
 * A list's answers of type T, kept per organization and query string while the organization's
 * version of the list's data (`versionOf`) is unchanged. `serve` is route middleware ahead of the
 * query's validation: a query string answered before was valid then and means the same now, so a
 * kept answer skips validating and parsing it again (most of a repeated request's own work). The
 * query string is the key as sent: the same query spelled another way (parameters in another
 * order) is kept apart, and a query that fails validation is never kept, so it is refused every
 * time.
 */
export class KeptListAnswers<T> {
  private readonly answers = perDatabase(
    () => new VersionedJsonCache<T>({ maxBytes: LIST_ANSWERS_MAX_BYTES }),
  );

  /** The organization's version, read once for the requests gathered in a turn. */
  private readonly currentVersion: (db: Db, organizationId: number) => Promise<number>;

  /**
   * `keepsCursorPages` false: a page asked for with a `cursor` continues one walk and is neither
   * kept nor looked up (an export would push every polled page out, and each of its pages would
   * pay a version read for nothing).
   */
  constructor(
    versionOf: (db: Db, organizationId: number) => Promise<number>,
    private readonly options: { keepsCursorPages: boolean },
  ) {
    this.currentVersion = gatherBatches(
      async (db: Db, organizationIds: number[]) => {
        const version = await versionOf(db, organizationIds[0]!);
        return organizationIds.map(() => ({ ok: true as const, value: version }));
      },
      { laneOf: (organizationId) => organizationId },
    );
  }

  /** Route middleware: answers from memory what was kept for the current version. */
  readonly serve: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (!this.keeps(c.req.url)) return next();
    const db = c.get('db');
    const { organizationId } = c.get('auth');
    const key = keyOf(c.req.url, organizationId, await cursorSigner(db));
    const kept = this.answers(db).get(key, await this.currentVersion(db, organizationId));
    if (kept !== null) return jsonTextResponse(c, kept);
    await next();
  };

  /** Keeps the request's answer, built from the data at `version`. */
  keep(c: Context<AppEnv>, signer: CursorSigner, version: number, json: JsonText<T>): void {
    if (!this.keeps(c.req.url)) return;
    const key = keyOf(c.req.url, c.get('auth').organizationId, signer);
    this.answers(c.get('db')).set(key, version, json);
  }

  private keeps(url: string): boolean {
    return this.options.keepsCursorPages || !CURSOR_PARAMETER.test(queryStringOf(url));
  }
}

/** A `cursor` parameter in a query string. */
const CURSOR_PARAMETER = /(?:^|&)cursor=/;

/**
 * The organization, the secret next_cursor is sealed with (after a rotation, kept answers would
 * hand out cursors sealed with the previous one) and the query string as sent.
 */
function keyOf(url: string, organizationId: number, signer: CursorSigner): string {
  return `${organizationId}:${signer.sealingSecretId}:${queryStringOf(url)}`;
}
