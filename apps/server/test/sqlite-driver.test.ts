// The better-sqlite3 build each Node.js gets (src/db/engine/sqlite-driver.ts): 13, on Node-API, from
// Node.js 22 on; 12 only on Node.js 20. The suite runs on 20, 22 and 24 in CI, so each side is
// exercised there.

import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Database, SQLITE_DRIVER_PACKAGE } from '../src/db/engine/sqlite-driver.js';

const require = createRequire(import.meta.url);
const nodeMajor = Number(process.versions.node.split('.')[0]);

describe('the SQLite driver', () => {
  it('is the build this Node.js can run', () => {
    const version = (require(`${SQLITE_DRIVER_PACKAGE}/package.json`) as { version: string })
      .version;
    expect(Number(version.split('.')[0])).toBe(nodeMajor >= 22 ? 13 : 12);
  });

  it('opens a database and runs statements', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (x INTEGER)');
      const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
      for (let i = 0; i < 100; i += 1) insert.run(i);
      expect(db.prepare('SELECT count(*) AS n, sum(x) AS s FROM t').get()).toEqual({
        n: 100,
        s: 4950,
      });
    } finally {
      db.close();
    }
  });
});
