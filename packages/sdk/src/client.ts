// The Agentline client: the typed openapi-fetch client generated from the spec, plus one method
// per operation that returns the body of a 200 or throws the error class of the status.

import createFetchClient, { type Client } from 'openapi-fetch';
import { AgentlineError, ApiConnectionError, errorForResponse } from './errors.js';
import type { components, operations, paths } from './generated/openapi.js';
import { iteratePages, type PageQuery } from './pagination.js';
import { retryingFetch } from './retry.js';

export const SDK_VERSION = '0.0.3';
export const API_KEY_ENV = 'AGENTLINE_API_KEY';
export const BASE_URL_ENV = 'AGENTLINE_BASE_URL';

export interface ClientOptions {
  /** The organization's API key; defaults to the AGENTLINE_API_KEY environment variable. */
  apiKey?: string;
  /** Defaults to AGENTLINE_BASE_URL, else http://127.0.0.1:8080. */
  baseUrl?: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
  /** Milliseconds one attempt may take (default 60,000); then it fails with ApiTimeoutError. */
  timeout?: number;
  /**
   * How often a failed call is retried (default 2): on 408, 429 and 5xx answers and network
   * errors, with exponential backoff and jitter, honouring Retry-After. Never on 409.
   */
  maxRetries?: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

type Schemas = components['schemas'];
type QueryOf<O extends keyof operations> = operations[O] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

export type EventListQuery = QueryOf<'events_list'>;
export type PromptListQuery = QueryOf<'prompts_list'>;
export type ExperimentListQuery = QueryOf<'experiments_list'>;

function environment(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[
    name
  ];
}

/** Options of one call. */
export interface RequestOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
}

type Result = { data?: unknown; error?: unknown; response: Response };

/** Resolves to the body of a successful answer, or throws the error class of the status. */
async function unwrap<R extends Result>(call: Promise<R>): Promise<NonNullable<R['data']>> {
  let result: R;
  try {
    result = await call;
  } catch (cause) {
    if (cause instanceof AgentlineError || (cause as Error | null)?.name === 'AbortError')
      throw cause;
    throw new ApiConnectionError(
      `Could not reach the Agentline API: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
  if (!result.response.ok) {
    throw errorForResponse(result.response.status, result.error, result.response.headers);
  }
  return result.data as NonNullable<R['data']>;
}

/**
 * Creates a client.
 *
 * @example
 * const client = createClient({ apiKey: process.env.AGENTLINE_API_KEY, baseUrl: 'http://127.0.0.1:8080' });
 * const page = await client.events.list({ limit: 10 });
 */
export function createClient(options: ClientOptions = {}) {
  const apiKey = options.apiKey ?? environment(API_KEY_ENV);
  const headers: Record<string, string> = {
    'User-Agent': `agentline-sdk-typescript/${SDK_VERSION}`,
    ...options.headers,
  };
  if (apiKey) headers['Service-API-Key'] = apiKey;
  const raw: Client<paths> = createFetchClient<paths>({
    baseUrl: options.baseUrl ?? environment(BASE_URL_ENV) ?? 'http://127.0.0.1:8080',
    headers,
    fetch: retryingFetch(options.fetch ?? globalThis.fetch, {
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeout ?? 60_000,
    }),
  });

  const listEvents = (query: EventListQuery = {}, request: RequestOptions = {}) =>
    unwrap(raw.GET('/api/v1/events/', { params: { query }, ...request }));
  const listPrompts = (query: PromptListQuery = {}, request: RequestOptions = {}) =>
    unwrap(raw.GET('/api/v1/prompts/', { params: { query }, ...request }));
  const listExperiments = (query: ExperimentListQuery = {}, request: RequestOptions = {}) =>
    unwrap(raw.GET('/api/v1/experiments/', { params: { query }, ...request }));
  const experimentPath = (experimentId: number, request: RequestOptions) => ({
    params: { path: { experiment_id: experimentId } },
    ...request,
  });

  return {
    /** The typed openapi-fetch client, for anything the methods below do not cover. */
    raw,
    events: {
      /** One page of events, newest first by default. */
      list: listEvents,
      /** Every event matching the query, page after page: `for await (const e of client.events.iterate())`. */
      iterate: (query: EventListQuery = {}) => iteratePages(listEvents, query as PageQuery),
    },
    prompts: {
      list: listPrompts,
      iterate: (query: PromptListQuery = {}) => iteratePages(listPrompts, query as PageQuery),
    },
    experiments: {
      list: listExperiments,
      iterate: (query: ExperimentListQuery = {}) =>
        iteratePages(listExperiments, query as PageQuery),
      /** Creates a draft experiment. `variants` is required: the complete variant set. */
      create: (body: Schemas['ExperimentCreate'], request: RequestOptions = {}) =>
        unwrap(raw.POST('/api/v1/experiments/', { body, ...request })),
      get: (experimentId: number, request: RequestOptions = {}) =>
        unwrap(
          raw.GET('/api/v1/experiments/{experiment_id}', experimentPath(experimentId, request)),
        ),
      /** Replaces name, description and the whole variant set of a draft. */
      update: (
        experimentId: number,
        body: Schemas['ExperimentUpdate'],
        request: RequestOptions = {},
      ) =>
        unwrap(
          raw.PUT('/api/v1/experiments/{experiment_id}', {
            ...experimentPath(experimentId, request),
            body,
          }),
        ),
      delete: (experimentId: number, request: RequestOptions = {}) =>
        unwrap(
          raw.DELETE('/api/v1/experiments/{experiment_id}', experimentPath(experimentId, request)),
        ),
      /** Starts a draft; the answer carries `warnings` that did not prevent the start. */
      start: (experimentId: number, request: RequestOptions = {}) =>
        unwrap(
          raw.POST(
            '/api/v1/experiments/{experiment_id}/start',
            experimentPath(experimentId, request),
          ),
        ),
      stop: (experimentId: number, request: RequestOptions = {}) =>
        unwrap(
          raw.POST(
            '/api/v1/experiments/{experiment_id}/stop',
            experimentPath(experimentId, request),
          ),
        ),
      results: (experimentId: number, request: RequestOptions = {}) =>
        unwrap(
          raw.GET(
            '/api/v1/experiments/{experiment_id}/results',
            experimentPath(experimentId, request),
          ),
        ),
    },
    telephony: {
      /** Is this incoming number on a US A2P messaging path with an approved brand and a verified campaign? */
      verifyA2pCompliance: (
        channelId: number,
        body: Schemas['A2pMessagingPathCheckRequest'],
        request: RequestOptions = {},
      ) =>
        unwrap(
          raw.POST('/api/v1/channels/telephony/{channel_id}/numbers/verify-a2p-compliance', {
            params: { path: { channel_id: channelId } },
            body,
            ...request,
          }),
        ),
    },
    sessions: {
      /** Asks which agent answers a new session on a channel target. */
      route: (
        targetId: number,
        body: Schemas['SessionRouteRequest'] = {},
        request: RequestOptions = {},
      ) =>
        unwrap(
          raw.POST('/api/v1/channels/targets/{target_id}/sessions', {
            params: { path: { target_id: targetId } },
            body,
            ...request,
          }),
        ),
    },
  };
}

export type AgentlineClient = ReturnType<typeof createClient>;
