// The write-ahead log's file gives its disk back: after a burst of writes that outran the
// checkpoints (an import beside a live server), the next commit once the log is checkpointed
// starts it again and cuts the file to WAL_SIZE_LIMIT_BYTES (src/db/engine/sqlite-open.ts).

import { statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite, WAL_SIZE_LIMIT_BYTES, type SqliteDb } from '../src/db/engine/sqlite-open.js';
import { freshDatabaseUrl, onSqlite } from './support/test-database.js';

describe.runIf(onSqlite)('the SQLite write-ahead log on disk', () => {
  let file: string;
  let writer: SqliteDb;
  let reader: SqliteDb;

  beforeEach(async () => {
    file = await freshDatabaseUrl();
    writer = openSqlite(file);
    reader = openSqlite(file);
    writer.sqlite.exec('CREATE TABLE chunks (bytes BLOB NOT NULL)');
  });

  afterEach(async () => {
    await reader.close();
    await writer.close();
  });

  const walBytes = () => statSync(`${file}-wal`).size;

  it('shrinks to its limit once a log that outgrew it is checkpointed', () => {
    // A read in progress keeps its snapshot, so no checkpoint may start the log again meanwhile
    // and every commit below lengthens it, as a live server's reads do to an import's batches.
    reader.sqlite.exec('BEGIN');
    reader.sqlite.prepare('SELECT count(*) FROM chunks').get();
    const insert = writer.sqlite.prepare('INSERT INTO chunks VALUES (?)');
    const chunk = Buffer.alloc(1024 * 1024, 1);
    for (let i = 0; i < WAL_SIZE_LIMIT_BYTES / chunk.length + 8; i += 1) insert.run(chunk);
    expect(walBytes()).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);

    reader.sqlite.exec('COMMIT');
    writer.sqlite.pragma('wal_checkpoint(PASSIVE)');
    insert.run(Buffer.alloc(16));

    expect(walBytes()).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    expect(writer.sqlite.prepare('SELECT count(*) AS n FROM chunks').get()).toEqual({
      n: WAL_SIZE_LIMIT_BYTES / chunk.length + 9,
    });
  });
});
