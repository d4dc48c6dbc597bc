// Hot paths (auth, session routing) run prepared statements built once per database handle:
// building a drizzle query and preparing it costs more than running it.

import type { Db } from './client.js';

/** Memoises `build` per database handle. */
export function perDatabase<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let built = cache.get(db);
    if (built === undefined) {
      built = build(db);
      cache.set(db, built);
    }
    return built;
  };
}
