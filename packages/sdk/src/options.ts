// The settings of a client and of one call.

export const API_KEY_ENV = 'AGENTLINE_API_KEY';
export const BASE_URL_ENV = 'AGENTLINE_BASE_URL';

// Every option also takes `undefined` (as not given), so that `{ apiKey: process.env.X }` compiles
// under exactOptionalPropertyTypes.

/** Settings of one call; each overrides the client's own for that call only. */
export interface RequestOptions {
  /**
   * Aborts the call and its retries: it then fails with ApiUserAbortError, or with
   * ApiTimeoutError when the signal is an `AbortSignal.timeout(...)`.
   */
  signal?: AbortSignal | undefined;
  /** Milliseconds one attempt may take; then it fails with ApiTimeoutError. */
  timeout?: number | undefined;
  /** How often the call is retried (see ClientOptions.maxRetries). */
  maxRetries?: number | undefined;
  /** Extra headers for this call, over the client's. */
  headers?: Record<string, string> | undefined;
}

/** Settings of one POST call. */
export interface PostRequestOptions extends RequestOptions {
  /**
   * The call's Idempotency-Key. By default every POST gets a new one (`newIdempotencyKey()`, a
   * UUIDv7), kept across its retries; pass your own to make a retry of your own (after a crash,
   * say) safe too.
   */
  idempotencyKey?: string | undefined;
}

export interface ClientOptions {
  /** The organization's API key; defaults to the AGENTLINE_API_KEY environment variable. */
  apiKey?: string | undefined;
  /** Defaults to AGENTLINE_BASE_URL, else http://127.0.0.1:8080. */
  baseUrl?: string | undefined;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch | undefined;
  /** Milliseconds one attempt may take (default 60,000); then it fails with ApiTimeoutError. */
  timeout?: number | undefined;
  /**
   * How often a failed call is retried (default 2): on 408, 429 and 5xx answers and network
   * errors, with exponential backoff and jitter, waiting what `Retry-After` asks up to 60 s.
   * Never on 409.
   */
  maxRetries?: number | undefined;
  /** Extra headers sent with every request. */
  headers?: Record<string, string> | undefined;
}
