// Finished JSON answers kept in memory, each valid for one version of the data it was built from.
// The version lives in the database (the prompts list: organizations.records_version, bumped by
// every load of records; the events list: the organization's highest event id), so a server
// process never serves an answer older than a write that another process (the CLI, another
// server) committed: it reads the version on every request and rebuilds when it moved.

import { jsonBytes, type JsonBytes, type JsonText } from '../domain/json-text.js';
import type { CursorSigner, ListQuery } from '../domain/list-query.js';

/**
 * A list answer's key: the organization, the query, and the secret its next_cursor is sealed
 * with (after a rotation, kept answers would hand out cursors sealed with the previous secret).
 */
export function listAnswerKey(
  organizationId: number,
  signer: CursorSigner,
  query: ListQuery<string>,
): string {
  const projection = query.projection ? [...query.projection].sort() : null;
  return `${organizationId}:${signer.sealingSecretId}:${JSON.stringify({ ...query, projection })}`;
}

/**
 * What one list's kept answers may hold per process: enough for thousands of default pages, and a
 * bounded share of a small server's memory.
 */
export const LIST_ANSWERS_MAX_BYTES = 32 * 1024 * 1024;

export interface VersionedCacheOptions {
  /** Total size of the kept answers; the least recently used go first beyond it. */
  maxBytes: number;
}

interface Entry<T> {
  version: number;
  /** UTF-8 bytes, so a hit is written out without encoding the text again. */
  json: JsonBytes<T>;
}

/** Answers of type T, kept as the bytes of their JSON. */
export class VersionedJsonCache<T> {
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
