// Request budgets kept in this process as token buckets (refilled continuously at the configured
// rate, up to one minute's worth): one per API key for requests, and one per client address for
// failed authentications. Several processes each keep their own buckets, so the effective limit
// is the configured rate times the number of processes.

import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';
import { ApiError } from './errors.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Buckets untouched this long are full again and can be forgotten. */
const IDLE_FORGET_MS = 10 * 60_000;

/** Token buckets of `perMinute` tokens each, one per name, forgotten once idle and full. */
export class TokenBuckets {
  readonly #perMs: number;
  readonly #buckets = new Map<string, Bucket>();
  #lastSweep: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#perMs = perMinute / 60_000;
    this.#lastSweep = now();
  }

  #refilled(name: string): Bucket {
    const time = this.now();
    if (time - this.#lastSweep > IDLE_FORGET_MS) {
      for (const [key, bucket] of this.#buckets) {
        if (time - bucket.updatedAt > IDLE_FORGET_MS) this.#buckets.delete(key);
      }
      this.#lastSweep = time;
    }
    const bucket = this.#buckets.get(name) ?? { tokens: this.perMinute, updatedAt: time };
    bucket.tokens = Math.min(
      this.perMinute,
      bucket.tokens + (time - bucket.updatedAt) * this.#perMs,
    );
    bucket.updatedAt = time;
    this.#buckets.set(name, bucket);
    return bucket;
  }

  /** Whole seconds until `name` has a token again; 0 when it has one now. */
  waitSeconds(name: string): number {
    const { tokens } = this.#refilled(name);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.#perMs / 1000));
  }

  /** Spends one of `name`'s tokens (the bucket may go empty, never below zero). */
  take(name: string): void {
    const bucket = this.#refilled(name);
    bucket.tokens = Math.max(0, bucket.tokens - 1);
  }
}

function rateLimited(detail: string, waitSeconds: number): ApiError {
  return new ApiError(429, 'RATE_LIMITED', detail, { 'Retry-After': String(waitSeconds) });
}

/** At most `requestsPerMinute` requests per API key (runs after authentication). */
export function rateLimit(
  requestsPerMinute: number,
  now: () => number = Date.now,
): MiddlewareHandler<AppEnv> {
  const buckets = new TokenBuckets(requestsPerMinute, now);
  return async (c, next) => {
    const { keyId } = c.get('auth');
    const waitSeconds = buckets.waitSeconds(keyId);
    if (waitSeconds > 0) {
      throw rateLimited(
        `This API key made more than ${requestsPerMinute} requests in a minute; wait ${waitSeconds} s (Retry-After) and slow down.`,
        waitSeconds,
      );
    }
    buckets.take(keyId);
    await next();
  };
}

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) is `127.0.0.1`. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The address of the client: the socket's peer, or, when that peer is a trusted proxy, the
 * nearest X-Forwarded-For entry that is not a trusted proxy. Without trusted proxies the header is
 * ignored, since any client can write it.
 */
export function clientAddress(c: Context<AppEnv>, trustedProxies: ReadonlySet<string>): string {
  let address = plainAddress(c.env?.incoming?.socket.remoteAddress ?? 'unknown');
  if (!trustedProxies.has(address)) return address;
  const forwarded = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((entry) => plainAddress(entry.trim()))
    .filter((entry) => isIP(entry) !== 0);
  while (forwarded.length > 0 && trustedProxies.has(address)) address = forwarded.pop()!;
  return address;
}

export interface AuthFailureLimit {
  /** Failed authentications one client address may have per minute. */
  perMinute: number;
  /** Peers whose X-Forwarded-For names the client (exact addresses). */
  trustedProxies: ReadonlySet<string>;
  now?: () => number;
}

/**
 * Counts failed authentications per client address and answers an address that ran out with a
 * 429 before its key is looked up or its body read, so guessing keys or sending heavy bodies
 * without one costs the server next to nothing. Returns the guard to run before authentication
 * and the function authentication calls on each failure.
 */
export function authFailureLimit({ perMinute, trustedProxies, now = Date.now }: AuthFailureLimit): {
  guard: MiddlewareHandler<AppEnv>;
  recordFailure: (c: Context<AppEnv>) => void;
} {
  const buckets = new TokenBuckets(perMinute, now);
  return {
    guard: async (c, next) => {
      const waitSeconds = buckets.waitSeconds(clientAddress(c, trustedProxies));
      if (waitSeconds > 0) {
        throw rateLimited(
          `Too many requests from this address failed authentication; wait ${waitSeconds} s (Retry-After) and check the Service-API-Key you send.`,
          waitSeconds,
        );
      }
      await next();
    },
    recordFailure: (c) => buckets.take(clientAddress(c, trustedProxies)),
  };
}
