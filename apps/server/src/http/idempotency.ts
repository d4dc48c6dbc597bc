// Idempotency-Key on POST: the first answer an operation gives to a key is stored per API key and
// replayed to every retry; the same key with another method, path or body is a 422. Where the
// answer is stored depends on the operation's work (docs/architecture.md, "Idempotency-Key").

import { hash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import {
  claimIdempotencyKey,
  idempotencyKeyStanding,
  IdempotencyKeyTakenError,
  releaseIdempotencyKey,
  storeIdempotentAnswer,
  type IdempotencyClaim,
  type IdempotencyTimes,
  type IdempotentWrite,
} from '../db/repositories/idempotency.js';
import { canonicalJson } from '../domain/canonical-json.js';
import { z } from '@hono/zod-openapi';
import { idempotencyKeyParameter } from '../generated/routes.js';
import type { AppEnv } from './app-env.js';
import { ApiError, handleError, problemsOfZodError, RequestValidationError } from './errors.js';

const HEADER = 'Idempotency-Key';

// The spec's own schema of the header, checked here because a key is looked up and claimed
// before the route's validation runs.
const KEY_HEADER = z.object({ [HEADER]: idempotencyKeyParameter });

function refusal(c: Context<AppEnv>, held: Exclude<IdempotencyClaim, { kind: 'claimed' }>) {
  if (held.kind === 'replay') return replay(c, held.status, held.body);
  if (held.kind === 'different_request') {
    throw new RequestValidationError([
      {
        loc: ['header', HEADER],
        msg: `This ${HEADER} was already used for a different request (method, path or body); use a new key for a new request.`,
        type: 'value_error',
      },
    ]);
  }
  throw new ApiError(
    'CONFLICT',
    `A request with this ${HEADER} is still running; wait for its answer, then retry with the same key to get it.`,
  );
}

function replay(c: Context<AppEnv>, status: number, body: string) {
  c.header('Idempotent-Replayed', 'true');
  return c.body(body, status as 200, { 'Content-Type': 'application/json' });
}

/**
 * What a key's retry must match: the method, the path and the body, a JSON body in canonical form
 * (`canonicalJson`: whitespace and object key order do not count; array order and values do), as
 * Stripe-like clients that re-serialise a retry expect.
 */
export function requestFingerprint(method: string, path: string, body: string): string {
  return hash('sha256', `${method} ${path}\n${body}`, 'hex');
}

export function idempotency(times: IdempotencyTimes): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header(HEADER);
    if (key === undefined) return next();
    const checked = KEY_HEADER.safeParse({ [HEADER]: key });
    if (!checked.success) {
      throw new RequestValidationError(
        problemsOfZodError(checked.error, 'header', { [HEADER]: key }).map((problem) => ({
          ...problem,
          msg: `${problem.msg} Send a new random value (a UUID) per request.`,
        })),
      );
    }
    const db = c.get('db');
    const { keyId } = c.get('auth');
    // requestBody has parsed the body of every operation that takes JSON, and refused bad JSON.
    const body =
      c.req.bodyCache.json === undefined ? await c.req.text() : canonicalJson(await c.req.json());
    const requestHash = requestFingerprint(c.req.method, c.req.path, body);
    // An operation that stores its answer with its work finds a held key in that write: looking
    // the key up first would only cost every request a read.
    const storesWithWork = c.req.matchedRoutes.some(
      (route) => route.handler === storesAnswerWithWork,
    );
    if (!storesWithWork) {
      const held = await idempotencyKeyStanding(db, keyId, key, requestHash, times);
      if (held) return refusal(c, held);
    }
    const write: IdempotentWrite = { apiKeyId: keyId, key, requestHash, times, stored: false };
    c.set('idempotentWrite', write);
    await next();
    // Errors thrown by handlers have become responses by now (Hono's onError runs inside next).
    if (write.stored) return;
    let held: Exclude<IdempotencyClaim, { kind: 'claimed' }> | null;
    if (c.error instanceof IdempotencyKeyTakenError) {
      // Another request holds the key (a twin committed first, or another request's answer is
      // stored): what it holds decides the answer.
      held = await idempotencyKeyStanding(db, keyId, key, requestHash, times);
    } else if (c.error instanceof RequestValidationError || c.res.status >= 500) {
      // Refused before the handler ran (its input), or failed with its work rolled back: nothing
      // was done, so nothing is kept and a corrected or later retry with the key runs afresh.
      if (write.claimed) await releaseIdempotencyKey(db, keyId, key);
      return;
    } else {
      held = await storeIdempotentAnswer(db, write, c.res.status, await c.res.clone().text());
    }
    if (held?.kind === 'replay') c.res = replay(c, held.status, held.body);
    else if (held) c.res = await refusalResponse(c, held);
  };
}

/** The answer a refusal gives, as a response (after the handler, where throwing is too late). */
async function refusalResponse(
  c: Context<AppEnv>,
  held: Exclude<IdempotencyClaim, { kind: 'claimed' | 'replay' }>,
): Promise<Response> {
  try {
    return refusal(c, held);
  } catch (error) {
    return handleError(error as Error, c);
  }
}

/**
 * Route middleware naming a POST that stores its Idempotency-Key answer in the transaction of its
 * work (session routing): the key is then not looked up before the work.
 */
export const storesAnswerWithWork: MiddlewareHandler<AppEnv> = async (_c, next) => {
  await next();
};

/**
 * Route middleware for a POST whose work is not stored with its answer: claims the key before the
 * work, so a twin gets 409 instead of doing the work again.
 */
export function claimIdempotencyKeyFirst(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const write = c.get('idempotentWrite');
    if (!write) return next();
    const claim = await claimIdempotencyKey(
      c.get('db'),
      write.apiKeyId,
      write.key,
      write.requestHash,
      write.times,
    );
    if (claim.kind !== 'claimed') return refusal(c, claim);
    write.claimed = true;
    await next();
  };
}
