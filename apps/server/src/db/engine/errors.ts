// Recognises constraint failures and outages whatever wraps them, on both backends: SQLite's
// result codes (`SQLITE_...`) and PostgreSQL's SQLSTATEs (five characters, e.g. 23505). Drizzle
// wraps driver errors in DrizzleQueryError, whose message also carries the SQL parameters and so
// must not be shown.

function* errorChain(error: unknown): Generator<unknown> {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

type DriverCode = { backend: 'sqlite' | 'postgres' | 'network'; code: string };

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

function driverCode(error: unknown): DriverCode | undefined {
  for (const link of errorChain(error)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (code.startsWith('SQLITE_')) return { backend: 'sqlite', code };
    if (/^[0-9A-Z]{5}$/.test(code) && (link as { severity?: unknown }).severity !== undefined) {
      return { backend: 'postgres', code };
    }
    if (NETWORK_CODES.has(code)) return { backend: 'network', code };
  }
  return undefined;
}

/** True for a UNIQUE or PRIMARY KEY violation (e.g. a second running experiment on a target). */
export function isUniqueViolation(error: unknown): boolean {
  const found = driverCode(error);
  if (found?.backend === 'postgres') return found.code === '23505';
  return (
    found?.code === 'SQLITE_CONSTRAINT_UNIQUE' || found?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** True when PostgreSQL aborted a transaction only for a concurrent one (40001, 40P01): run it again. */
export function isConcurrencyConflict(error: unknown): boolean {
  const found = driverCode(error);
  return found?.backend === 'postgres' && (found.code === '40001' || found.code === '40P01');
}

/** True when a PostgreSQL statement gave up waiting for a lock (55P03, past lock_timeout). */
export function isLockTimeout(error: unknown): boolean {
  const found = driverCode(error);
  return found?.backend === 'postgres' && found.code === '55P03';
}

/** True when a PostgreSQL statement names a table (42P01) or schema (3F000) that does not exist. */
export function isMissingRelation(error: unknown): boolean {
  const found = driverCode(error);
  return found?.backend === 'postgres' && (found.code === '42P01' || found.code === '3F000');
}

export function isForeignKeyViolation(error: unknown): boolean {
  const found = driverCode(error);
  return (
    found?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    (found?.backend === 'postgres' && found.code === '23503')
  );
}

function postgresUnavailableReason(code: string): string | null {
  if (code === '53100') return 'the database disk is full';
  if (code === '25006') return 'the database is read-only';
  if (code.startsWith('08') || code.startsWith('57P') || code === '53300') {
    return 'the database server cannot be reached or is shutting down';
  }
  if (code === '55P03' || code === '40001' || code === '40P01') {
    return 'the database is busy with other writers';
  }
  return null;
}

function sqliteUnavailableReason(code: string): string | null {
  if (code === 'SQLITE_FULL') return 'the database disk is full';
  if (code.startsWith('SQLITE_READONLY')) return 'the database is read-only';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return 'the database is busy with another writer';
  }
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN') {
    return 'the database file cannot be read or written';
  }
  return null;
}

/**
 * Why the database cannot take a request right now (a full or read-only disk, a lock held too
 * long, an I/O failure, an unreachable server), or null for every other error. These are the
 * operator's to fix, not the caller's, and a retry later may succeed: the HTTP layer answers
 * them with 503.
 */
export function databaseUnavailableReason(error: unknown): string | null {
  const found = driverCode(error);
  if (found === undefined) return null;
  switch (found.backend) {
    case 'sqlite':
      return sqliteUnavailableReason(found.code);
    case 'postgres':
      return postgresUnavailableReason(found.code);
    case 'network':
      return 'the database server cannot be reached';
  }
}

/**
 * A list read ran past the list query timeout (DbOptions.listQueryTimeoutMs) and was stopped
 * before the database: a SQLite reader thread's job, or a PostgreSQL list read whose statements
 * together used up the time.
 */
export class QueryTimeoutError extends Error {
  override name = 'QueryTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`the list read took longer than ${timeoutMs} ms and was stopped`);
  }
}

/**
 * True when a list read was stopped for taking too long: a QueryTimeoutError, or PostgreSQL's
 * 57014 (query_canceled), which its statement_timeout raises. Only list reads run with a
 * statement_timeout; an operator's pg_cancel_backend gives the same code, and the caller's
 * remedy (a narrower query, or a retry) is the same.
 */
export function isQueryTimeout(error: unknown): boolean {
  for (const link of errorChain(error)) if (link instanceof QueryTimeoutError) return true;
  const found = driverCode(error);
  return found?.backend === 'postgres' && found.code === '57014';
}

/** The driver's own message (e.g. "UNIQUE constraint failed: ..."), without SQL or parameters. */
export function driverMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (const link of errorChain(error)) {
    if (link instanceof Error && (link as { code?: unknown }).code !== undefined) {
      message = link.message;
    }
  }
  return message;
}
