// Recognises constraint failures whatever wraps them (drizzle wraps driver errors in
// DrizzleQueryError, whose message also carries the SQL parameters and so must not be shown).

function* errorChain(error: unknown): Generator<unknown> {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

function driverCode(error: unknown): string | undefined {
  for (const link of errorChain(error)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
  }
  return undefined;
}

/** True for a UNIQUE or PRIMARY KEY violation (e.g. a second running experiment on a target). */
export function isUniqueViolation(error: unknown): boolean {
  const code = driverCode(error);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * Why the database cannot take a request right now (a full or read-only disk, a lock held too
 * long, an I/O failure), or null for every other error. These are the operator's to fix, not
 * the caller's, and a retry later may succeed: the HTTP layer answers them with 503.
 */
export function databaseUnavailableReason(error: unknown): string | null {
  const code = driverCode(error);
  if (code === undefined) return null;
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

export function isForeignKeyViolation(error: unknown): boolean {
  return driverCode(error) === 'SQLITE_CONSTRAINT_FOREIGNKEY';
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
