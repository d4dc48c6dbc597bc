// Memos kept per database handle, in process memory (perDatabase: column maps, prepared
// statements), and the rule of a bounded map (remember). Nothing under db/ caches what the tables
// hold: that is runtime/'s (kept-answers.ts, event-list-memory.ts).

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
