// Idempotency-Key on POST (the IETF draft's rules, as Stripe applies them): the first answer to
// a key, success or error, is stored per API key for the retention (24 hours) and replayed to
// every retry; the same key with another method, path or body is a 422; a retry while the first
// is still running is a 409, until the first one's lease runs out (its process died) and the retry
// takes the key over. A 5xx is not stored: its transaction rolled back, so the retry runs afresh.
// Expired keys are swept away in the background (startIdempotencySweeper).

import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
  sweepExpiredIdempotencyKeys,
  type IdempotencyTimes,
} from '../db/repositories/idempotency.js';
import type { AppEnv } from './app-env.js';
import { ApiError, RequestValidationError } from './errors.js';

const HEADER = 'Idempotency-Key';

export function idempotency(times: IdempotencyTimes): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header(HEADER);
    if (c.req.method !== 'POST' || key === undefined) return next();
    if (key.length === 0 || key.length > 255) {
      throw new RequestValidationError([
        {
          loc: ['header', HEADER],
          msg: `${HEADER} must have 1 to 255 characters (it has ${key.length}); send a new random value (a UUID) per request.`,
          type: key.length === 0 ? 'string_too_short' : 'string_too_long',
        },
      ]);
    }
    const db = c.get('db');
    const { keyId } = c.get('auth');
    const body = await c.req.text();
    const requestHash = createHash('sha256')
      .update(`${c.req.method} ${c.req.path}\n${body}`)
      .digest('hex');
    const claim = await claimIdempotencyKey(db, keyId, key, requestHash, times);
    if (claim.kind === 'replay') {
      c.header('Idempotent-Replayed', 'true');
      return c.body(claim.body, claim.status as 200, { 'Content-Type': 'application/json' });
    }
    if (claim.kind === 'different_request') {
      throw new RequestValidationError([
        {
          loc: ['header', HEADER],
          msg: `This ${HEADER} was already used for a different request (method, path or body); use a new key for a new request.`,
          type: 'value_error',
        },
      ]);
    }
    if (claim.kind === 'in_flight') {
      throw new ApiError(
        409,
        'CONFLICT',
        `A request with this ${HEADER} is still running; wait for its answer, then retry with the same key to get it.`,
      );
    }
    try {
      await next();
    } catch (error) {
      await releaseIdempotencyKey(db, keyId, key);
      throw error;
    }
    // Errors thrown by handlers have become responses by now (Hono's onError runs inside next).
    if (c.res.status >= 500) await releaseIdempotencyKey(db, keyId, key);
    else await completeIdempotencyKey(db, keyId, key, c.res.status, await c.res.clone().text());
  };
}

/** Rows one sweep statement deletes at most, so it holds the write lock only briefly. */
const SWEEP_BATCH = 1000;

/**
 * Deletes expired keys now and then every `intervalMs`, in batches, until none is left. Returns a
 * function that stops it. The timer does not keep the process alive.
 */
export function startIdempotencySweeper(
  db: Db,
  logger: Logger,
  { retentionMs, intervalMs }: { retentionMs: number; intervalMs: number },
): () => void {
  let running: Promise<void> | null = null;
  const sweep = async () => {
    let swept = 0;
    for (;;) {
      const deleted = await sweepExpiredIdempotencyKeys(db, retentionMs, SWEEP_BATCH);
      swept += deleted;
      if (deleted < SWEEP_BATCH) break;
      // Let requests waiting on the event loop run between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (swept > 0) logger.debug({ swept }, 'expired idempotency keys swept');
  };
  const tick = () => {
    running ??= sweep()
      .catch((error: unknown) => logger.warn({ err: error }, 'idempotency key sweep failed'))
      .finally(() => (running = null));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
