// A per-key request budget: a token bucket per API key (refilled continuously at the configured
// rate, up to one minute's worth), kept in this process. Several processes each keep their own
// buckets, so the effective limit is the configured rate times the number of processes.

import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';
import { ApiError } from './errors.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Buckets untouched this long are full again and can be forgotten. */
const IDLE_FORGET_MS = 10 * 60_000;

export function rateLimit(
  requestsPerMinute: number,
  now: () => number = Date.now,
): MiddlewareHandler<AppEnv> {
  const perMs = requestsPerMinute / 60_000;
  const buckets = new Map<string, Bucket>();
  let lastSweep = now();

  return async (c, next) => {
    const time = now();
    if (time - lastSweep > IDLE_FORGET_MS) {
      for (const [key, bucket] of buckets) {
        if (time - bucket.updatedAt > IDLE_FORGET_MS) buckets.delete(key);
      }
      lastSweep = time;
    }
    const { keyId } = c.get('auth');
    const bucket = buckets.get(keyId) ?? { tokens: requestsPerMinute, updatedAt: time };
    bucket.tokens = Math.min(requestsPerMinute, bucket.tokens + (time - bucket.updatedAt) * perMs);
    bucket.updatedAt = time;
    buckets.set(keyId, bucket);
    if (bucket.tokens < 1) {
      const waitSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
      throw new ApiError(
        429,
        'RATE_LIMITED',
        `This API key made more than ${requestsPerMinute} requests in a minute; wait ${waitSeconds} s (Retry-After) and slow down.`,
        { 'Retry-After': String(waitSeconds) },
      );
    }
    bucket.tokens -= 1;
    await next();
  };
}
