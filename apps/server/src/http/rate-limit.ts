// Budgets of failed authentications kept in this process as token buckets (refilled continuously
// at the configured rate, up to one minute's worth), one per client address and one per presented
// key id; several processes each keep their own, since they guard each process's own work. The
// RateLimit fields and the 429 of a key's request budget, which the fleet shares, are here too
// (the budget itself: fleet-rate-limit.ts).

import { isIP } from 'node:net';
import type { Context } from 'hono';
import type { AppEnv } from './app-env.js';
import { ApiError } from './errors.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** A bucket refills from empty in a minute: one untouched that long is full and can be forgotten. */
const IDLE_FORGET_MS = 60_000;

/** How often a full table may be swept for forgettable buckets before a new name is turned away. */
const FULL_SWEEP_MS = 1_000;

/** The bucket every new name shares while the table is full. */
const OVERFLOW = '\u0000overflow';

/**
 * Token buckets of `perMinute` tokens each, one per name, forgotten once idle and full. At most
 * `maxBuckets` names have buckets of their own: while that many are in use, new names share one
 * bucket, so names a client makes up (key ids, addresses) cannot grow the table without bound.
 */
export class TokenBuckets {
  readonly #perMs: number;
  readonly #buckets = new Map<string, Bucket>();
  #lastSweep: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly maxBuckets = Number.POSITIVE_INFINITY,
  ) {
    this.#perMs = perMinute / 60_000;
    this.#lastSweep = now();
  }

  #sweep(time: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (time - bucket.updatedAt >= IDLE_FORGET_MS) this.#buckets.delete(key);
    }
    this.#lastSweep = time;
  }

  #refilled(requestedName: string): Bucket {
    const time = this.now();
    if (time - this.#lastSweep >= IDLE_FORGET_MS) this.#sweep(time);
    let name = requestedName;
    if (!this.#buckets.has(name) && this.#buckets.size >= this.maxBuckets) {
      if (time - this.#lastSweep >= FULL_SWEEP_MS) this.#sweep(time);
      if (this.#buckets.size >= this.maxBuckets) name = OVERFLOW;
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

  /** Whole seconds until `tokens` has grown to the next whole token (at least 1). */
  #secondsToNextToken(tokens: number): number {
    return Math.max(1, Math.ceil((Math.floor(tokens) + 1 - tokens) / this.#perMs / 1000));
  }

  /** Whole seconds until `name` has a token again; 0 when it has one now. */
  waitSeconds(name: string): number {
    const { tokens } = this.#refilled(name);
    return tokens >= 1 ? 0 : this.#secondsToNextToken(tokens);
  }

  /**
   * Spends one of `name`'s tokens (the bucket may go empty, never below zero), and says what is
   * left: whole tokens, and the seconds until the next one.
   */
  take(name: string): { remaining: number; secondsToNext: number } {
    const bucket = this.#refilled(name);
    bucket.tokens = Math.max(0, bucket.tokens - 1);
    return {
      remaining: Math.floor(bucket.tokens),
      secondsToNext: this.#secondsToNextToken(bucket.tokens),
    };
  }

  /** How many names have buckets now (for tests). */
  get size(): number {
    return this.#buckets.size;
  }
}

export function rateLimited(
  detail: string,
  waitSeconds: number,
  headers: Record<string, string> = {},
): ApiError {
  return new ApiError('RATE_LIMITED', detail, { ...headers, 'Retry-After': String(waitSeconds) });
}

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, Structured Field syntax) of a
 * key's per-minute quota: the policy, and what is left of it.
 */
export function rateLimitFields(
  perMinute: number,
  remaining: number,
  secondsToNext: number,
): Record<string, string> {
  return {
    'RateLimit-Policy': `"default";q=${perMinute};w=60`,
    RateLimit: `"default";r=${remaining};t=${secondsToNext}`,
  };
}

/** The eight 16-bit groups of an IPv6 address (a zone index such as `%eth0` is dropped), or null. */
function ipv6Groups(address: string): number[] | null {
  const text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return null;
  const groupsOf = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [parseInt(group, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [a * 256 + b, c * 256 + d];
        });
  const [head = '', tail] = text.split('::');
  const first = groupsOf(head);
  if (tail === undefined) return first;
  const last = groupsOf(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

/**
 * One spelling per address, so budgets and trusted proxies compare equal whatever form a socket
 * or a header uses: IPv4 as it is, IPv4-mapped IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as
 * IPv4, other IPv6 as eight lowercase groups without zero compression. Anything else unchanged.
 */
export function canonicalAddress(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return groups.map((group) => group.toString(16)).join(':');
}

/**
 * The failure budget an address draws on: an IPv4 address has its own, an IPv6 address shares
 * its /64 (what one subscriber or host is usually given, and so can rotate through at will).
 */
export function addressBudgetName(address: string): string {
  const canonical = canonicalAddress(address);
  const groups = ipv6Groups(canonical);
  return groups
    ? `${groups
        .slice(0, 4)
        .map((group) => group.toString(16))
        .join(':')}::/64`
    : canonical;
}

/**
 * One X-Forwarded-For entry as an address: `203.0.113.5`, `203.0.113.5:4711`, `2001:db8::1` or
 * `[2001:db8::1]:4711` (proxies that add the client's port); null for anything else.
 */
function forwardedAddress(entry: string): string | null {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  const text = bracketed ? bracketed[1]! : entry.replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1');
  return isIP(text.replace(/%.*$/, '')) === 0 ? null : canonicalAddress(text);
}

/**
 * The address of the client (canonical): the socket's peer, or, when that peer is a trusted proxy,
 * the nearest X-Forwarded-For entry that is not a trusted proxy. Without trusted proxies the
 * header is ignored, since any client can write it. An entry that is not an address ends the
 * walk at the proxy that wrote it: entries before it are the client's own words.
 * `trustedProxies` holds canonical addresses (see canonicalAddress).
 */
export function clientAddress(c: Context<AppEnv>, trustedProxies: ReadonlySet<string>): string {
  let address = canonicalAddress(c.env?.incoming?.socket.remoteAddress ?? 'unknown');
  if (!trustedProxies.has(address)) return address;
  const forwarded = (c.req.header('x-forwarded-for') ?? '').split(',');
  while (forwarded.length > 0 && trustedProxies.has(address)) {
    const entry = forwardedAddress(forwarded.pop()!.trim());
    if (entry === null) break;
    address = entry;
  }
  return address;
}

export interface AuthFailureLimit {
  /** Failed authentications one client address (IPv6: one /64), or one key id, may have per minute. */
  perMinute: number;
  /** Peers whose X-Forwarded-For names the client (IP addresses, in any spelling). */
  trustedProxies: ReadonlySet<string>;
  now?: () => number;
  /** Budgets each table keeps apart before new names share one (see TokenBuckets). */
  maxBuckets?: number;
}

/** What the failure budgets say about one request. */
export interface AuthFailureBudget {
  /**
   * The 429 to answer instead of a 401 when the request's address, or the key id it presented,
   * has used up its failures (with Retry-After); null while both have some left.
   */
  readonly refusal: ApiError | null;
  /** Counts this request's failed authentication against its address and its key id, if any. */
  recordFailure(): void;
}

export interface AuthFailureLimiter {
  /** The budgets of a request from its address, presenting `keyId` (undefined: no well-formed key). */
  budget(c: Context<AppEnv>, keyId: string | undefined): AuthFailureBudget;
}

/**
 * Each table holds at most this many addresses or key ids (a few MiB); past it, new ones share a
 * budget, which can only turn more failing requests' 401s into 429s: valid keys always pass.
 */
const DEFAULT_MAX_FAILURE_BUCKETS = 100_000;

/**
 * Counts failed authentications per client address (IPv4 exact, IPv6 per /64) and per presented
 * key id. A budget never refuses a valid key: authentication (auth.ts) answers the refusal at
 * once only to a request without a well-formed key, for which there is nothing to look up (and
 * nothing of its body is read), and otherwise only after the key has failed. So clients that fail
 * cannot lock out the valid keys at their address, as they would behind a proxy whose clients all
 * share its address, and guessing keys stays bounded from any number of addresses.
 */
export function authFailureLimit({
  perMinute,
  trustedProxies,
  now = Date.now,
  maxBuckets = DEFAULT_MAX_FAILURE_BUCKETS,
}: AuthFailureLimit): AuthFailureLimiter {
  const addresses = new TokenBuckets(perMinute, now, maxBuckets);
  const keyIds = new TokenBuckets(perMinute, now, maxBuckets);
  const proxies = new Set([...trustedProxies].map(canonicalAddress));
  return {
    budget: (c, keyId) => {
      const address = addressBudgetName(clientAddress(c, proxies));
      const addressWait = addresses.waitSeconds(address);
      const keyIdWait = keyId === undefined ? 0 : keyIds.waitSeconds(keyId);
      const waitSeconds = Math.max(addressWait, keyIdWait);
      const whose =
        addressWait > 0 && keyIdWait > 0
          ? 'from this address and with this key id'
          : addressWait > 0
            ? 'from this address'
            : 'with this key id';
      return {
        refusal:
          waitSeconds > 0
            ? rateLimited(
                `Too many requests ${whose} failed authentication; wait ${waitSeconds} s (Retry-After) and check the Service-API-Key you send.`,
                waitSeconds,
              )
            : null,
        recordFailure: () => {
          addresses.take(address);
          if (keyId !== undefined) keyIds.take(keyId);
        },
      };
    },
  };
}
