// The finished list answers an app keeps, each valid for one version of the data it was built
// from, within one byte budget for all its lists: every request is checked against a version
// read from the database after it arrived (docs/architecture.md, "Kept list answers").
// http/versioned-cache.ts is the route middleware over it. ByteBoundedLru, what they are kept
// in, holds the events list's memory of its reads too (event-list-memory.ts).

import type { Db } from '../db/engine/client.js';
import { gatherBatches } from '../db/engine/gather-batches.js';
import type { CursorSigner } from '../domain/list-query.js';
import { jsonBytes, type JsonBytes, type JsonText } from '../vocabulary/json-text.js';

/**
 * What an entry of a ByteBoundedLru costs beyond its key's characters and its value's own bytes:
 * the Map's slot, the entry and value objects, and for a value of bytes its typed array,
 * ArrayBuffer and their native backing store with the allocator's bookkeeping. An estimate from
 * above: the resident memory a small entry was measured to take beyond its key and bytes
 * (docs/reliability.md, "In-memory structures a client can grow"), rounded up.
 */
export const ENTRY_OVERHEAD_BYTES = 1024;

/** What V8 takes for a string beside its characters: its header and the slot that points to it. */
const STRING_HEADER_BYTES = 32;

/** A string's size as V8 may hold it: two bytes a character once any is beyond Latin-1. */
export function stringBytes(text: string): number {
  return STRING_HEADER_BYTES + 2 * text.length;
}

/**
 * Entries used in turn, charged the bytes of their key, their value (`bytesOf`) and
 * ENTRY_OVERHEAD_BYTES: past `maxBytes` in all, the ones used longest ago go, so what the cache
 * is charged never exceeds its bound, whatever keys its users make up. An entry that alone
 * exceeds the bound is not kept.
 */
export class ByteBoundedLru<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  #bytes = 0;

  constructor(
    readonly maxBytes: number,
    private readonly bytesOf: (value: V) => number,
  ) {}

  /** The value of `key`, made the most recently used; undefined when none is kept. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    // A Map iterates in insertion order: re-inserted, the entry moves to the back.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const bytes = ENTRY_OVERHEAD_BYTES + stringBytes(key) + this.bytesOf(value);
    if (bytes > this.maxBytes) return;
    for (const [oldest] of this.#entries) {
      if (this.#bytes + bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** The bytes the entries are charged, at most `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }
}

/**
 * A version of some data: a value that changes with every change of it and never returns to an
 * earlier one (a counter, a highest id, a pair of them as text).
 */
export type Version = number | string;

/** Reads an organization's version of some data. */
export type VersionOf = (db: Db, organizationId: number) => Promise<Version>;

/**
 * `versionOf`, read once for the requests of an organization that arrive in one turn of the
 * event loop (gather-batches.ts): the read runs on the next turn, after all of them arrived, and
 * one arriving while it is in flight waits for the next read.
 */
export function versionReadPerTurn(versionOf: VersionOf): VersionOf {
  return gatherBatches(
    async (db: Db, organizationIds: number[]) => {
      const version = await versionOf(db, organizationIds[0]!);
      return organizationIds.map(() => ({ ok: true as const, value: version }));
    },
    { laneOf: (organizationId) => organizationId },
  );
}

interface Entry {
  version: Version;
  /** UTF-8 bytes, so a hit is written out without encoding the text again. */
  json: JsonBytes<unknown>;
}

/**
 * The finished answers of an app's kept lists, each valid for one version of its data, within one
 * byte budget: every entry is charged its key, the whole buffer its bytes hold and a fixed
 * overhead (ByteBoundedLru), and the least recently used go first beyond it.
 */
export class KeptAnswers {
  readonly #entries: ByteBoundedLru<Entry>;

  constructor({ maxBytes }: { maxBytes: number }) {
    this.#entries = new ByteBoundedLru(maxBytes, (entry) => entry.json.buffer.byteLength);
  }

  /** The answer for `key` built at `version`, or null. */
  get(key: string, version: Version): JsonBytes<unknown> | null {
    const entry = this.#entries.get(key);
    return entry?.version === version ? entry.json : null;
  }

  set(key: string, version: Version, text: JsonText<unknown>): void {
    this.#entries.set(key, { version, json: jsonBytes(text) });
  }

  /** The bytes the kept answers are charged, never more than the budget. */
  get bytes(): number {
    return this.#entries.bytes;
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** What a kept list needs of its generated route: its name and the query parameters it declares. */
export interface KeptListRoute {
  operationId: string;
  request: { query: { shape: object } };
}

/** The query as the route's validator reads it: each name's values in the order sent. */
export type QueryValues = Record<string, string[] | undefined>;

/**
 * One list's answers of type T, kept in a KeptAnswers per organization and query while the
 * organization's version of the list's data (`versionOf`) is unchanged. The key is the query as
 * the validator reads it: the parameters the route declares (it ignores any other), in the order
 * of their names, each with its values in the order sent (search_fields pair with
 * search_field_values by position). So parameters in another order or unknown ones share the
 * entry of the same query, and cannot each grow the cache.
 */
export class KeptList<T> {
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

  /** The answer kept for a query it keeps, at the organization's current version, or null. */
  async lookup(
    answers: KeptAnswers,
    db: Db,
    organizationId: number,
    query: QueryValues,
    signer: CursorSigner,
  ): Promise<JsonBytes<T> | null> {
    const key = this.keyOf(query, organizationId, signer);
    // The key names this list, whose answers are all made from T (keep).
    return answers.get(key, await this.currentVersion(db, organizationId)) as JsonBytes<T> | null;
  }

  /** Keeps the query's answer, built from the data at `version`. */
  keep(
    answers: KeptAnswers,
    organizationId: number,
    query: QueryValues,
    signer: CursorSigner,
    version: Version,
    json: JsonText<T>,
  ): void {
    if (!this.keeps(query)) return;
    answers.set(this.keyOf(query, organizationId, signer), version, json);
  }

  /** Whether answers to the query are kept and looked up. */
  keeps(query: QueryValues): boolean {
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
