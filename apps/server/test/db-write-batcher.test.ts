// Group commit: concurrent writes share one transaction, each in its own savepoint.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/client.js';
import { batchedWrite } from '../src/db/write-batcher.js';

let db: Db;

beforeEach(() => {
  db = createDb(':memory:');
  db.sqlite.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
});

afterEach(() => db.close());

const insert = (text: string) => () =>
  db.sqlite.prepare('INSERT INTO notes (text) VALUES (?)').run(text).lastInsertRowid;
const texts = () => db.sqlite.prepare('SELECT text FROM notes ORDER BY id').pluck().all();

describe('batchedWrite', () => {
  it('commits writes issued together in one transaction and answers each', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'agentline-batch-')), 'batch.db');
    const fileDb = createDb(file);
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
    fileDb.close();
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
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('no such target');
    expect(texts()).toEqual(['a', 'c']);
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
