// SQLite lets one connection at a time write a database file. When another process holds the
// write lock (an `agentline events import` committing a batch, a second server process), a
// BEGIN IMMEDIATE left to SQLite's busy handler sleeps inside the call, and this process's event
// loop with it: no list, stream or /healthz answer until the lock is free. So a write
// transaction asks for the lock without waiting (busy_timeout 0 for that one BEGIN) and, while it
// is held elsewhere, waits on a timer and asks again. The process's transactions wait in arrival
// order behind the first, so one timer asks for all of them.

import { perDatabase } from './caches.js';
import type { SqliteDb } from './sqlite-open.js';

/** The first wait after a refused BEGIN; each next one doubles, up to LONGEST_RETRY_MS. */
const FIRST_RETRY_MS = 1;
/** Short enough that a lock freed between another process's transactions is taken in time. */
const LONGEST_RETRY_MS = 8;

interface Waiter {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When it began waiting: past the busy timeout it fails as a busy database. */
  since: number;
}

interface WriteLock {
  /** The connection's busy_timeout, as openSqlite set it (SQLITE_BUSY_TIMEOUT_MS). */
  busyTimeoutMs: number;
  waiting: Waiter[];
  timer: NodeJS.Timeout | undefined;
  statements: {
    begin: { run(): unknown };
    commit: { run(): unknown };
    rollback: { run(): unknown };
  };
}

const writeLockOf = perDatabase((db: SqliteDb): WriteLock => ({
  busyTimeoutMs: db.sqlite.pragma('busy_timeout', { simple: true }) as number,
  waiting: [],
  timer: undefined,
  statements: {
    begin: db.sqlite.prepare('BEGIN IMMEDIATE'),
    commit: db.sqlite.prepare('COMMIT'),
    rollback: db.sqlite.prepare('ROLLBACK'),
  },
}));

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** Takes the write lock if no other connection holds it; false (at once) if one does. */
function tryBegin(db: SqliteDb, { busyTimeoutMs, statements }: WriteLock): boolean {
  // Not prepared once: SQLite applies this pragma when the statement is prepared, not when it runs.
  db.sqlite.pragma('busy_timeout = 0');
  try {
    statements.begin.run();
    return true;
  } catch (error) {
    if (isBusy(error)) return false;
    throw error;
  } finally {
    db.sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}

/** Runs `work` in the transaction tryBegin opened, and commits it, or rolls it back and throws. */
function finish<T>(db: SqliteDb, { statements }: WriteLock, work: () => T): T {
  try {
    const value = work();
    statements.commit.run();
    return value;
  } catch (error) {
    if (db.sqlite.inTransaction) statements.rollback.run();
    throw error;
  }
}

function askAgain(db: SqliteDb, lock: WriteLock, waitMs: number): void {
  lock.timer = setTimeout(() => {
    lock.timer = undefined;
    while (lock.waiting.length > 0) {
      const head = lock.waiting[0]!;
      let began: boolean;
      try {
        began = tryBegin(db, lock);
      } catch (error) {
        lock.waiting.shift();
        head.reject(error);
        continue;
      }
      if (!began) {
        if (Date.now() - head.since < lock.busyTimeoutMs) {
          askAgain(db, lock, Math.min(waitMs * 2, LONGEST_RETRY_MS));
          return;
        }
        lock.waiting.shift();
        head.reject(busyError());
        continue;
      }
      lock.waiting.shift();
      try {
        head.resolve(finish(db, lock, head.work));
      } catch (error) {
        head.reject(error);
      }
    }
  }, waitMs);
}

/** What a write that waited as long as SQLite's busy handler would have gets: the same error. */
function busyError(): Error {
  return Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
}

/**
 * Runs `work` (synchronous, on `db`'s connection) in a write transaction (BEGIN IMMEDIATE) and
 * resolves with what it returned once committed. While another connection holds the write lock,
 * it waits without blocking the event loop, behind this process's earlier write transactions; a
 * wait past the busy timeout fails with SQLITE_BUSY, as SQLite's own wait would.
 */
export async function inWriteTransaction<T>(db: SqliteDb, work: () => T): Promise<T> {
  const lock = writeLockOf(db);
  if (lock.waiting.length === 0 && tryBegin(db, lock)) return finish(db, lock, work);
  return new Promise<T>((resolve, reject) => {
    lock.waiting.push({
      work,
      resolve: resolve as (value: unknown) => void,
      reject,
      since: Date.now(),
    });
    if (!lock.timer) askAgain(db, lock, FIRST_RETRY_MS);
  });
}
