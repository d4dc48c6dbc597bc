// Sends a key's paged list reads to the streaming replica when it has what the key wrote
// (serving/replica-reads.ts), and notes the end of every request of the key that may have written.

import type { MiddlewareHandler } from 'hono';
import type { ReplicaReads } from '../serving/replica-reads.js';
import { isListRead } from './admission.js';
import type { AppEnv } from './app-env.js';

/** After authorization: the operation and the key are known. */
export function replicaReads(replica: ReplicaReads): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { keyId } = c.get('auth');
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      if (isListRead(c.get('operationId'))) c.set('db', replica.dbForKey(keyId));
      return next();
    }
    try {
      await next();
    } finally {
      // Whatever its answer: a failed request may still have committed part of its work.
      replica.wrote(keyId);
    }
  };
}
