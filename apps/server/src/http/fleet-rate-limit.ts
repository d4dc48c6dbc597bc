// A key's request budget (RATE_LIMIT_PER_MINUTE) for every server process together. The budget
// is a token bucket in the database (db/repositories/rate-limit-budgets.ts); a process leases a
// few tokens at a time and spends them on the key's requests, so one request in a lease's worth
// writes. The fleet never answers more than the bucket gives; what it can answer less is the
// tokens processes hold unspent, at most a lease each. The RateLimit fields count what the bucket
// held at this process's last lease, refilled since, with its unspent tokens: two processes'
// fields differ by what the others leased since, with a key's requests spread evenly about a
// lease per process. A process that cannot lease (the database is read-only, full or out of
// reach) counts the key's requests on its own until it can, so reads go on being served.

import type { MiddlewareHandler } from 'hono';
import type { Db } from '../db/engine/client.js';
import { leaseTokens } from '../db/repositories/rate-limit-budgets.js';
import type { AppEnv } from './app-env.js';
import { rateLimited, rateLimitFields, TokenBuckets } from './rate-limit.js';

/** A lease is this share of a minute's budget: one write per 1% of it. */
const LEASE_SHARE = 100;
/** A lease holds at most this many tokens, however large the budget. */
const MAX_LEASE = 1_000;
/** Keys this process keeps leases for; the oldest is dropped past it, its unspent tokens too. */
const MAX_KEYS = 100_000;

/** The most tokens a process leases at once for a budget of `perMinute` (at least one). */
export function leaseSize(perMinute: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(perMinute / LEASE_SHARE)));
}

interface KeyBudget {
  /** Tokens leased and not spent. */
  held: number;
  /** What the key's bucket held after this process's last lease, and when (ms since the epoch). */
  bucketLeft: number;
  bucketAt: number;
  /**
   * The lease being taken: the key's requests arriving meanwhile wait for it. It resolves to the
   * tokens granted, or null if the database could not lease.
   */
  leasing: Promise<number | null> | undefined;
}

export type Admission =
  | { admitted: true; remaining: number; secondsToNext: number }
  | { admitted: false; waitSeconds: number };

export class FleetRateLimit {
  readonly #perMs: number;
  readonly #lease: number;
  readonly #keys = new Map<string, KeyBudget>();
  /** The budgets kept in this process while leases fail. */
  readonly #unshared: TokenBuckets;

  constructor(
    private readonly db: Db,
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#perMs = perMinute / 60_000;
    this.#lease = leaseSize(perMinute);
    this.#unshared = new TokenBuckets(perMinute, now, MAX_KEYS);
  }

  /** Spends one of the key's tokens, leasing more when this process holds none. */
  async admit(keyId: string): Promise<Admission> {
    const budget = this.#budgetOf(keyId);
    for (;;) {
      if (budget.held >= 1) {
        budget.held -= 1;
        // A bucket refilled to full, as last seen, and tokens held besides: never more than a
        // minute's budget less this request all the same.
        const tokens = Math.min(this.perMinute - 1, budget.held + this.#bucketNow(budget));
        return {
          admitted: true,
          remaining: Math.floor(tokens),
          secondsToNext: this.#secondsToNextToken(tokens),
        };
      }
      // The bucket as last seen, refilled since, is the most it can hold: below one token, no
      // lease can be had, and a key that keeps asking costs no write.
      const bucket = this.#bucketNow(budget);
      if (bucket < 1) return { admitted: false, waitSeconds: this.#secondsToNextToken(bucket) };
      if (budget.leasing) {
        if ((await budget.leasing) === null) return this.#admitUnshared(keyId);
        continue;
      }
      // Smaller near the bottom, so that the processes share what is left.
      const wanted = Math.max(1, Math.min(this.#lease, Math.floor(bucket / 4)));
      budget.leasing = this.#take(budget, keyId, wanted).finally(() => {
        budget.leasing = undefined;
      });
      const granted = await budget.leasing;
      if (granted === null) return this.#admitUnshared(keyId);
      if (granted === 0) {
        return { admitted: false, waitSeconds: this.#secondsToNextToken(budget.bucketLeft) };
      }
    }
  }

  #admitUnshared(keyId: string): Admission {
    const waitSeconds = this.#unshared.waitSeconds(keyId);
    return waitSeconds > 0
      ? { admitted: false, waitSeconds }
      : { admitted: true, ...this.#unshared.take(keyId) };
  }

  async #take(budget: KeyBudget, keyId: string, wanted: number): Promise<number | null> {
    const now = this.now();
    let lease;
    try {
      lease = await leaseTokens(this.db, keyId, wanted, { perMinute: this.perMinute, now });
    } catch {
      return null;
    }
    const { granted, left } = lease;
    budget.held += granted;
    budget.bucketLeft = left;
    budget.bucketAt = now;
    return granted;
  }

  #budgetOf(keyId: string): KeyBudget {
    let budget = this.#keys.get(keyId);
    if (!budget) {
      if (this.#keys.size >= MAX_KEYS) this.#keys.delete(this.#keys.keys().next().value!);
      budget = { held: 0, bucketLeft: this.perMinute, bucketAt: 0, leasing: undefined };
      this.#keys.set(keyId, budget);
    }
    return budget;
  }

  #bucketNow(budget: KeyBudget): number {
    const refill = Math.max(0, this.now() - budget.bucketAt) * this.#perMs;
    return Math.min(this.perMinute, budget.bucketLeft + refill);
  }

  /** Whole seconds until `tokens` has grown to the next whole token (at least 1). */
  #secondsToNextToken(tokens: number): number {
    return Math.max(1, Math.ceil((Math.floor(tokens) + 1 - tokens) / this.#perMs / 1000));
  }
}

/**
 * At most `requestsPerMinute` requests per API key across every server process on the database
 * (runs after authentication). Every answer to the key says what is left, the refusal too, so a
 * client can pace itself instead of being refused.
 */
export function fleetRateLimit(
  db: Db,
  requestsPerMinute: number,
  now?: () => number,
): MiddlewareHandler<AppEnv> {
  const limit = new FleetRateLimit(db, requestsPerMinute, now);
  return async (c, next) => {
    const admission = await limit.admit(c.get('auth').keyId);
    if (!admission.admitted) {
      const { waitSeconds } = admission;
      throw rateLimited(
        `This API key made more than ${requestsPerMinute} requests in a minute; wait ${waitSeconds} s (Retry-After) and slow down.`,
        waitSeconds,
        rateLimitFields(requestsPerMinute, 0, waitSeconds),
      );
    }
    await next();
    // Errors of later steps have become this response by now (onError runs inside next).
    for (const [name, value] of Object.entries(
      rateLimitFields(requestsPerMinute, admission.remaining, admission.secondsToNext),
    )) {
      c.res.headers.set(name, value);
    }
  };
}
