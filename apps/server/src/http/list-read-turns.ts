// How many of one API key's list reads run at once. A list read is the request a client can make
// slow (an unindexed substring search over a million events keeps a database core busy for
// seconds), so a key gets fewer of them at once than requests in progress
// (concurrency-limit.ts): with every core of the database busy with one key's searches, another
// organization's session routing waits for a core instead of its statements. A list read past
// its key's share is not refused: it waits, holding no database connection, until one of the
// key's list reads ends. Waiting is bounded by the cap on requests in progress, which it still
// counts against, and by the list query timeout of the reads ahead of it.

import type { MiddlewareHandler } from 'hono';
import pLimit, { type LimitFunction } from 'p-limit';
import { routes } from '../generated/routes.js';
import type { AppEnv } from './app-env.js';

/** The paged lists of the spec: the operations that take its `cursor` parameter. */
const LIST_READS: ReadonlySet<string> = new Set(
  Object.values(routes)
    .filter((route) => route.request && 'query' in route.request && hasCursor(route.request.query))
    .map((route) => route.operationId),
);

function hasCursor(query: unknown): boolean {
  return typeof query === 'object' && query !== null && 'shape' in query
    ? Object.hasOwn(query.shape as object, 'cursor')
    : false;
}

/** Whether `operationId` names a paged list of the spec. */
export function isListRead(operationId: string): boolean {
  return LIST_READS.has(operationId);
}

/**
 * At most `perKey` list reads of one API key run at once in this process; the others wait their
 * turn in arrival order. Runs after `authorize`, which names the operation.
 */
export function listReadTurns(perKey: number): MiddlewareHandler<AppEnv> {
  const turns = new Map<string, LimitFunction>();
  return async (c, next) => {
    if (!isListRead(c.get('operationId'))) return next();
    const { keyId } = c.get('auth');
    const limit = turns.get(keyId) ?? pLimit(perKey);
    turns.set(keyId, limit);
    try {
      await limit(next);
    } finally {
      if (limit.activeCount === 0 && limit.pendingCount === 0) turns.delete(keyId);
    }
  };
}
