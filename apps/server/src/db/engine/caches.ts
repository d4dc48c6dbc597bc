// Caches kept per database handle, in process memory.

import type { Db } from './client.js';

/** Memoises `build` per database handle (of one backend, when `build` takes a narrower type). */
export function perDatabase<D extends Db, T>(build: (db: D) => T): (db: D) => T {
  const cache = new WeakMap<D, T>();
  return (db) => {
    let built = cache.get(db);
    if (built === undefined) {
      built = build(db);
      cache.set(db, built);
    }
    return built;
  };
}

/** Sets `key` as the most recent entry; once `cache` holds `limit`, the one used longest ago goes. */
export function remember<K, V>(cache: Map<K, V>, key: K, value: V, limit: number): void {
  cache.delete(key);
  if (cache.size >= limit) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

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
