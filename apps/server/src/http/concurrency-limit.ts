// A cap on the requests one API key may have in progress at once. The per-minute budget
// (rate-limit.ts) bounds how often a key asks; this bounds how much of the server it holds at a
// time: a key whose requests are slow (an unindexed search over millions of events) could
// otherwise fill every database connection with them, and every other organization's requests
// would wait behind them. Requests are counted in this process only: several processes each keep
// their own counts, so a key may have the configured number in progress in each.
//
// Written here rather than taken from a library: hono-rate-limiter and its kin count requests
// per time window, and the promise limiters (p-limit, bottleneck) queue work in one process-wide
// line rather than refuse one key's extra requests; neither is a per-key count of what is in
// flight, which is a Map and a finally.

import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';
import { ApiError } from './errors.js';
import { InFlightCounts } from './in-flight-counts.js';

/**
 * A request refused for this limit may be sent again as soon as one of the key's requests ends,
 * typically within milliseconds: one second is the shortest wait Retry-After can say.
 */
const RETRY_AFTER_SECONDS = 1;

/**
 * At most `perKey` requests of one API key in progress at once (runs after authentication).
 * A request keeps its slot until the server has finished with it, however it ends (an answer,
 * an error, a client that went away): a request whose client left still holds its database
 * connection until its statement ends, and counting it keeps a client that disconnects and asks
 * again from exceeding the limit.
 */
export function concurrencyLimit(
  perKey: number,
  counts: InFlightCounts = new InFlightCounts(),
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { keyId } = c.get('auth');
    if (!counts.tryTake(keyId, perKey)) {
      throw new ApiError(
        'RATE_LIMITED',
        `This API key already has ${perKey} requests in progress on this server, the most it may have at once; send this one again once one of them is answered (Retry-After).`,
        { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      );
    }
    try {
      await next();
    } finally {
      counts.release(keyId);
    }
  };
}
