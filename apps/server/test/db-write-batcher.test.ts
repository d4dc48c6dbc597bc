// Group commit: writes issued together are committed together, each answered on its own.
// batchedWrite is SQLite's (each write in its own savepoint), so its tests open SQLite databases
// of their own whichever backend the project runs on.

import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDb, prepareServerConnection } from '../src/db/engine/client.js';
import type { SqliteDb } from '../src/db/engine/sqlite-open.js';
import { Database } from '../src/db/engine/sqlite-driver.js';
import { batchedWrite } from '../src/db/engine/write-batcher.js';
import { runTempFolder } from './support/run-temp-dir.js';

function openSqlite(url: string): SqliteDb {
  const opened = createDb(url);
  if (opened.kind !== 'sqlite') throw new Error(`${url} did not open as SQLite`);
  return opened;
}

let db: SqliteDb;

beforeEach(() => {
  db = openSqlite(':memory:');
  db.sqlite.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
});

afterEach(() => db.close());

const insert = (text: string) => () =>
  db.sqlite.prepare('INSERT INTO notes (text) VALUES (?)').run(text).lastInsertRowid;
const texts = () => db.sqlite.prepare('SELECT text FROM notes ORDER BY id').pluck().all();

describe('batchedWrite', () => {
  it('commits writes issued together in one transaction and answers each', async () => {
    const file = join(runTempFolder('agentline-batch-'), 'batch.db');
    const fileDb = openSqlite(file);
    fileDb.sqlite.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
    const reader = new Database(file, { readonly: true });
    const seenByAnotherConnection: number[] = [];
    const write = (text: string) => () => {
      seenByAnotherConnection.push(
        reader.prepare('SELECT count(*) FROM notes').pluck().get() as number,
      );
      return fileDb.sqlite.prepare('INSERT INTO notes (text) VALUES (?)').run(text).changes;
    };
    const answers = await Promise.all(['a', 'b', 'c'].map((t) => batchedWrite(fileDb, write(t))));
    expect(answers).toEqual([1, 1, 1]);
    // Nothing was visible outside until the one commit at the end of the batch.
    expect(seenByAnotherConnection).toEqual([0, 0, 0]);
    expect(reader.prepare('SELECT count(*) FROM notes').pluck().get()).toBe(3);
    reader.close();
    await fileDb.close();
  });

  it('rolls back only the write that failed', async () => {
    const results = await Promise.allSettled([
      batchedWrite(db, insert('a')),
      batchedWrite(db, () => {
        insert('b')();
        throw new Error('no such target');
      }),
      batchedWrite(db, insert('a')), // violates UNIQUE
      batchedWrite(db, insert('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      message: 'no such target',
    });
    expect(texts()).toEqual(['a', 'c']);
  });

  it("rolls back a failed write that touched many pages, on a file with the server's settings", async () => {
    // prepareServerConnection keeps the savepoints' journals in memory: a rolled-back write must
    // still restore every page it changed, here enough to split the table's pages many times.
    const fileDb = openSqlite(join(runTempFolder('agentline-batch-'), 'server.db'));
    prepareServerConnection(fileDb);
    expect(fileDb.sqlite.pragma('temp_store', { simple: true })).toBe(2);
    expect(fileDb.sqlite.pragma('cache_size', { simple: true })).toBe(-2000);
    fileDb.sqlite.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
    const add = (text: string) =>
      fileDb.sqlite.prepare('INSERT INTO notes (text) VALUES (?)').run(text);
    const results = await Promise.allSettled([
      batchedWrite(fileDb, () => add('a')),
      batchedWrite(fileDb, () => {
        for (let i = 0; i < 2000; i += 1) add(`${i}`.padStart(500, 'x'));
        throw new Error('no such target');
      }),
      batchedWrite(fileDb, () => add('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(fileDb.sqlite.prepare('SELECT text FROM notes ORDER BY id').pluck().all()).toEqual([
      'a',
      'c',
    ]);
    expect(fileDb.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    await fileDb.close();
  });

  it('answers nobody before the commit, and everybody with the error when the commit fails', async () => {
    db.sqlite.exec('PRAGMA query_only = ON');
    const results = await Promise.allSettled([
      batchedWrite(db, insert('a')),
      batchedWrite(db, insert('b')),
    ]);
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    db.sqlite.exec('PRAGMA query_only = OFF');
    expect(texts()).toEqual([]);
  });

  it('starts a new batch after a flush', async () => {
    await batchedWrite(db, insert('a'));
    await batchedWrite(db, insert('b'));
    expect(texts()).toEqual(['a', 'b']);
  });
});
