// Sends a key's paged list reads to the streaming replica once it has replayed every commit that
// ended before the read arrived, in any process (runtime/replica-reads.ts).

import type { MiddlewareHandler } from 'hono';
import type { ReplicaReads } from '../runtime/replica-reads.js';
import { isListRead } from './admission.js';
import type { AppEnv } from './app-env.js';

/** After authorization and the key's turn: the operation is known, the read about to run. */
export function replicaReads(replica: ReplicaReads): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if ((c.req.method === 'GET' || c.req.method === 'HEAD') && isListRead(c.get('operationId'))) {
      c.set('db', await replica.dbForListRead());
    }
    return next();
  };
}
