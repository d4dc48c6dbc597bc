// Group commit: writes issued together are committed together, each answered on its own.
// batchedWrite is SQLite's (each write in its own savepoint), so its tests open SQLite databases
// of their own whichever backend the project runs on; PostgreSQL's session routing gathers its
// writes with gatherWrites and is tested through routing (experiments-traffic.test.ts).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDb, prepareServerConnection, type SqliteDb } from '../src/db/engine/client.js';
import { Database } from '../src/db/engine/sqlite-driver.js';
import { batchedWrite, gatherWrites } from '../src/db/engine/write-batcher.js';

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
    const file = join(mkdtempSync(join(tmpdir(), 'agentline-batch-')), 'batch.db');
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
    const fileDb = openSqlite(join(mkdtempSync(join(tmpdir(), 'agentline-batch-')), 'server.db'));
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

describe('gatherWrites', () => {
  it('hands the items issued together to one asynchronous commit and answers each', async () => {
    const commits: number[][] = [];
    const submit = gatherWrites(async (_db: object, items: number[]) => {
      commits.push(items);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return items.map((n) =>
        n < 0
          ? { ok: false as const, error: new Error(`${n}`) }
          : { ok: true as const, value: n * 2 },
      );
    });
    const database = {};
    const results = await Promise.allSettled([1, -1, 3].map((n) => submit(database, n)));
    expect(commits).toEqual([[1, -1, 3]]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
      2,
      'rejected',
      6,
    ]);
    await submit(database, 4);
    expect(commits).toEqual([[1, -1, 3], [4]]);
  });

  it("commits a lane's items one batch at a time, and lanes side by side", async () => {
    const commits: string[][] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const releases: Array<() => void> = [];
    const submit = gatherWrites(
      async (_db: object, items: string[]) => {
        commits.push(items);
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise<void>((resolve) => releases.push(resolve));
        inFlight -= 1;
        return items.map((item) => ({ ok: true as const, value: item.toUpperCase() }));
      },
      { laneOf: (item) => item[0]! },
    );
    const database = {};
    const first = [submit(database, 'a1'), submit(database, 'b1')];
    await new Promise((resolve) => setImmediate(resolve));
    // Lane a's batch is in flight: its next items wait for it, lane b's batch runs beside it.
    expect(commits).toEqual([['a1'], ['b1']]);
    const second = [submit(database, 'a2'), submit(database, 'a3')];
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits).toHaveLength(2);
    releases.shift()!();
    releases.shift()!();
    expect(await Promise.all(first)).toEqual(['A1', 'B1']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits).toEqual([['a1'], ['b1'], ['a2', 'a3']]);
    releases.shift()!();
    expect(await Promise.all(second)).toEqual(['A2', 'A3']);
    expect(mostInFlight).toBe(2);
    // A lane with nothing in flight commits at once again.
    const third = submit(database, 'a4');
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits.at(-1)).toEqual(['a4']);
    releases.shift()!();
    expect(await third).toBe('A4');
  });

  it('gives every item the error when the commit fails', async () => {
    const submit = gatherWrites(async (_db: object, _items: number[]) => {
      throw new Error('the database went away');
    });
    const database = {};
    const results = await Promise.allSettled([submit(database, 1), submit(database, 2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
