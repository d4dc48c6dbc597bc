// The finished list answers an app keeps (http/versioned-cache.ts says when one may be reused), within
// one byte budget for all its lists.

import { ByteBoundedLru } from '../db/engine/caches.js';
import type { Version } from './version-reads.js';
import { jsonBytes, type JsonBytes, type JsonText } from '../vocabulary/json-text.js';

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
