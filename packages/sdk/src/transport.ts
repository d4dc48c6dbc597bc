// How a client sends a call: its headers, fetch and retry policy from the client's options and
// the call's own, and the answer turned into its body or the SDK error of its status.

import createFetchClient, { type Client } from 'openapi-fetch';
import { ApiPromise } from './api-promise.js';
import { errorForFailure, errorForResponse } from './errors.js';
import type { paths } from '../../../spec/generated/openapi.js';
import type { EventStreamTransport } from './event-stream.js';
import {
  API_KEY_ENV,
  BASE_URL_ENV,
  type ClientOptions,
  type PostRequestOptions,
  type RequestOptions,
} from './options.js';
import { rateLimitOf } from './rate-limit.js';
import { retryingFetch, type RetryPolicy } from './retry.js';

export const SDK_VERSION = '0.0.3';

function environment(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[
    name
  ];
}

type Result = { data?: unknown; error?: unknown; response: Response };

/** The client's raw openapi-fetch client, how each call is sent and answered, and the stream's needs. */
export function createTransport(options: ClientOptions) {
  const apiKey = options.apiKey ?? environment(API_KEY_ENV);
  const headers: Record<string, string> = {
    'User-Agent': `agentline-sdk-typescript/${SDK_VERSION}`,
    ...options.headers,
  };
  if (apiKey) headers['Service-API-Key'] = apiKey;
  // Always called as a plain function: a browser's fetch called as a method of another object
  // (the stream's transport) throws "Illegal invocation".
  const givenFetch = options.fetch ?? globalThis.fetch;
  const baseFetch: typeof globalThis.fetch = (input, init) => givenFetch(input, init);
  const policy: RetryPolicy = {
    maxRetries: options.maxRetries ?? 2,
    timeoutMs: options.timeout ?? 60_000,
  };
  const baseUrl = options.baseUrl ?? environment(BASE_URL_ENV) ?? 'http://127.0.0.1:8080';
  const raw: Client<paths> = createFetchClient<paths>({
    baseUrl,
    headers,
    fetch: retryingFetch(baseFetch, policy),
  });

  /** The openapi-fetch options of one call: its signal, its headers and its retry policy. */
  function callOptions(request: PostRequestOptions) {
    const callHeaders: Record<string, string> = { ...request.headers };
    if (request.idempotencyKey !== undefined) {
      callHeaders['Idempotency-Key'] = request.idempotencyKey;
    }
    const ownPolicy =
      request.timeout !== undefined ||
      request.maxRetries !== undefined ||
      request.signal !== undefined;
    return {
      headers: callHeaders,
      // The signal goes to the retrying fetch only (retry.ts says why), not to openapi-fetch.
      ...(ownPolicy && {
        fetch: retryingFetch(baseFetch, {
          maxRetries: request.maxRetries ?? policy.maxRetries,
          timeoutMs: request.timeout ?? policy.timeoutMs,
          signal: request.signal,
        }),
      }),
    };
  }

  /** Resolves to the body of a successful answer, or rejects with the SDK error for the failure. */
  function call<R extends Result>(
    send: Promise<R>,
    request: RequestOptions,
  ): ApiPromise<NonNullable<R['data']>> {
    return new ApiPromise(
      send.then(
        ({ data, error, response }) => {
          if (!response.ok) throw errorForResponse(response.status, error, response.headers);
          return {
            data: data as NonNullable<R['data']>,
            response,
            requestId: response.headers.get('x-request-id'),
            rateLimit: rateLimitOf(response.headers),
          };
        },
        (cause: unknown) => {
          throw errorForFailure(cause, request.signal);
        },
      ),
    );
  }

  const streamTransport: EventStreamTransport = { baseUrl, headers, fetch: baseFetch };
  return { raw, callOptions, call, streamTransport };
}
