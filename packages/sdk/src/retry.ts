// A fetch wrapper that gives every call a per-attempt timeout, retries what a retry can fix, and
// keeps one Idempotency-Key across the attempts of a POST.

import { ApiConnectionError, ApiTimeoutError, errorForFailure } from './errors.js';
import { newIdempotencyKey } from './idempotency-key.js';

export interface RetryPolicy {
  /** Retries after the first attempt (0 turns retrying off). */
  maxRetries: number;
  /** Milliseconds one attempt may take before it is abandoned. */
  timeoutMs: number;
  /** The caller's signal, if the call has one: it ends the attempts and the waits between them. */
  signal?: AbortSignal | undefined;
  /** Base of the exponential backoff, in milliseconds. */
  initialDelayMs?: number;
  /** Longest backoff between attempts, in milliseconds (a Retry-After hint may ask for more). */
  maxDelayMs?: number;
  /** Only for tests: how to wait. */
  sleep?: (ms: number, signal: AbortSignal | null) => Promise<void>;
  /** Only for tests: a number in [0, 1) for the jitter (Math.random). */
  random?: () => number;
}

/**
 * The longest wait a Retry-After hint may ask for. A server that asks for more is not going to
 * answer soon: the call fails at once with its error, whose message says how long it asked.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Sent with every attempt: 0 on the first, then 1, 2... so server logs can tell retries apart. */
export const RETRY_COUNT_HEADER = 'Agentline-Retry-Count';

// 409 is not here on purpose: in this API it is a state conflict (an experiment that is running),
// which asking again cannot change.
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

function sleepFor(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      // The reason goes on as given (any value); errorForFailure classifies it.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal!.reason);
    };
    // A caller's signal can outlive many calls: each wait takes its listener back.
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

const NUMBER = /^\d+(\.\d+)?$/;

/**
 * How long the server asked to wait, in milliseconds: `retry-after-ms`, else `Retry-After` in
 * seconds or as an HTTP date; null when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const milliseconds = headers.get('retry-after-ms')?.trim();
  if (milliseconds && NUMBER.test(milliseconds)) return Number(milliseconds);
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (NUMBER.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
/**
 * How long to wait when the server said `hintedMs`: a random time from the hint to twice the
 * hint. Never sooner than asked; spread over one more such interval so that the calls a server
 * refused together (a full queue refuses a burst at once) do not all come back at the same
 * moment and fill it again.
 */
export function jitteredRetryAfterMs(hintedMs: number, random: () => number = Math.random): number {
  return hintedMs * (1 + random());
}

/** Exponential backoff with jitter: base * 2^attempt, minus up to a quarter, capped. */
export function backoffMs(attempt: number, initialDelayMs: number, maxDelayMs: number): number {
  const exponential = Math.min(initialDelayMs * 2 ** attempt, maxDelayMs);
  return exponential * (1 - Math.random() * 0.25);
}

function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | null)?.cause;
  return cause?.code === 'ECONNREFUSED';
}

/**
 * Whether a failed attempt may be sent again. GET, PUT and DELETE are idempotent by nature; a
 * POST is made safe by its Idempotency-Key, which the server stores with the first answer and
 * replays to a retry. A POST without one (a caller removed it) is retried only when it surely
 * did not run: on 429 (refused before anything ran) and on a refused connection.
 */
function mayRetry(
  method: string,
  hasIdempotencyKey: boolean,
  outcome: { status: number } | { error: unknown },
): boolean {
  const safe = IDEMPOTENT_METHODS.has(method) || hasIdempotencyKey;
  if ('status' in outcome) {
    if (!RETRYABLE_STATUSES.has(outcome.status)) return false;
    return safe || outcome.status === 429;
  }
  return safe || connectionRefused(outcome.error);
}

export function retryingFetch(
  fetchImpl: typeof globalThis.fetch,
  policy: RetryPolicy,
): (request: Request) => Promise<Response> {
  const initialDelayMs = policy.initialDelayMs ?? 500;
  const maxDelayMs = policy.maxDelayMs ?? 8_000;
  const sleep = policy.sleep ?? sleepFor;
  const random = policy.random ?? Math.random;

  return async (original: Request) => {
    // The caller's signal comes with the policy, not on the Request: each Request listens to its
    // signal, and a signal shared by many calls at once made every new call walk the listeners of
    // the others. A call without one then also needs no signal joining it to the timeout.
    const callerSignal = policy.signal ?? null;
    const headers = new Headers(original.headers);
    // One key per call, kept across its retries, so the server can recognise a repeat.
    if (original.method === 'POST' && !headers.has('idempotency-key')) {
      headers.set('Idempotency-Key', newIdempotencyKey());
    }
    const body = original.body === null ? null : await original.arrayBuffer();

    for (let attempt = 0; ; attempt += 1) {
      if (callerSignal?.aborted) throw errorForFailure(callerSignal.reason, callerSignal);
      headers.set(RETRY_COUNT_HEADER, String(attempt));
      const timeout = AbortSignal.timeout(policy.timeoutMs);
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
      let outcome: { status: number; response: Response } | { error: unknown };
      try {
        // The URL and init, not a Request: fetch would copy a Request's body into a new stream.
        const response = await fetchImpl(original.url, {
          method: original.method,
          headers,
          body,
          signal,
        });
        outcome = { status: response.status, response };
      } catch (error) {
        if (callerSignal?.aborted) throw errorForFailure(error, callerSignal);
        outcome = {
          error: timeout.aborted
            ? new ApiTimeoutError(
                `No answer within ${policy.timeoutMs} ms from ${original.method} ${original.url}`,
              )
            : error,
        };
      }

      const hinted = 'response' in outcome ? retryAfterMs(outcome.response.headers) : null;
      const retry =
        attempt < policy.maxRetries &&
        (hinted === null || hinted <= MAX_RETRY_AFTER_MS) &&
        mayRetry(original.method, headers.has('idempotency-key'), outcome);
      if (!retry) {
        if ('response' in outcome) return outcome.response;
        if (outcome.error instanceof ApiConnectionError) throw outcome.error;
        throw errorForFailure(outcome.error, null);
      }
      if ('response' in outcome) await outcome.response.body?.cancel();
      try {
        await sleep(
          hinted === null
            ? backoffMs(attempt, initialDelayMs, maxDelayMs)
            : jitteredRetryAfterMs(hinted, random),
          callerSignal,
        );
      } catch (error) {
        throw errorForFailure(error, callerSignal);
      }
    }
  };
}
