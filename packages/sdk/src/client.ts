// The Agentline client: the typed openapi-fetch client generated from the spec, plus one method
// per operation that returns the body of a 200 or throws the error class of the status.

import type { ApiPromise } from './api-promise.js';
import type {
  A2pMessagingPathCheckRequest,
  A2pMessagingPathCheckResponse,
  A2pNumberStatus,
  A2pNumberStatusListQuery,
  A2pNumberStatusListResponse,
  Agent,
  AgentListQuery,
  AgentListResponse,
  ApiKeyInfo,
  Assignment,
  ChannelTarget,
  ChannelTargetListQuery,
  ChannelTargetListResponse,
  Event,
  EventListQuery,
  EventListResponse,
  Experiment,
  ExperimentChange,
  ExperimentChangeListQuery,
  ExperimentChangeListResponse,
  ExperimentCreate,
  ExperimentDeleteResponse,
  ExperimentListItem,
  ExperimentListQuery,
  ExperimentListResponse,
  ExperimentResults,
  ExperimentTimeline,
  ExperimentStartResponse,
  ExperimentUpdate,
  Prompt,
  PromptListQuery,
  PromptListResponse,
  RoutedSession,
  SessionRouteRequest,
} from './generated/models.js';
import type { operations } from '../../../spec/generated/openapi.js';
import {
  openEventStream,
  type EventStream,
  type EventStreamOptions,
  type EventStreamQuery,
} from './event-stream.js';
import type { ClientOptions, PostRequestOptions, RequestOptions } from './options.js';
import { iteratePages } from './pagination.js';
import { createTransport } from './transport.js';
import { webhookEndpoints } from './webhook-endpoints.js';

/** The query of `experiments.timeline`: `interval`, `time_zone` and the window. */
export type ExperimentTimelineQuery = NonNullable<
  operations['experiments_results_timeline']['parameters']['query']
>;

/**
 * Creates a client.
 *
 * @example
 * const client = createClient({ apiKey: process.env.AGENTLINE_API_KEY, baseUrl: 'http://127.0.0.1:8080' });
 * const page = await client.events.list({ limit: 10 });
 */
export function createClient(options: ClientOptions = {}) {
  const transport = createTransport(options);
  const { raw, callOptions, call, streamTransport } = transport;

  const experiment = (experimentId: number, request: RequestOptions) => ({
    params: { path: { experiment_id: experimentId } },
    ...callOptions(request),
  });

  // Each method is written once, here: its signature is the public type (AgentlineClient).
  const events = {
    /** `GET /api/v1/events/`: one page of events, newest first by default. */
    list: (
      query: EventListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<EventListResponse> =>
      call(raw.GET('/api/v1/events/', { params: { query }, ...callOptions(request) }), request),
    /** Every event matching the query, page after page: `for await (const e of client.events.iterate())`. */
    iterate: (
      query: EventListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<Event, void> => iteratePages((page) => events.list(page, request), query),
    /**
     * `GET /api/v1/events/stream`: every matching event committed from now on (or after
     * `lastEventId`, or from `start_datetime`), in commit order, for as long as you iterate:
     * `for await (const e of client.events.stream({ search_fields: ['type'], search_field_values: ['session-ended'] }))`.
     * It reconnects by itself, resuming after the last event it handed out; `position` is that
     * event's resume token, for continuing after a restart of your own process.
     */
    stream: (query: EventStreamQuery = {}, streamOptions: EventStreamOptions = {}): EventStream =>
      openEventStream(streamTransport, query, streamOptions),
  };
  const prompts = {
    /** `GET /api/v1/prompts/`: one page of prompts with their tools and validation issues. */
    list: (
      query: PromptListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<PromptListResponse> =>
      call(raw.GET('/api/v1/prompts/', { params: { query }, ...callOptions(request) }), request),
    /** Every prompt matching the query, page after page. */
    iterate: (
      query: PromptListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<Prompt, void> => iteratePages((page) => prompts.list(page, request), query),
  };
  const experiments = {
    /** `GET /api/v1/experiments/`: one page of experiments. */
    list: (
      query: ExperimentListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<ExperimentListResponse> =>
      call(
        raw.GET('/api/v1/experiments/', { params: { query }, ...callOptions(request) }),
        request,
      ),
    /** Every experiment matching the query, page after page. */
    iterate: (
      query: ExperimentListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<ExperimentListItem, void> =>
      iteratePages((page) => experiments.list(page, request), query),
    /** `POST /api/v1/experiments/`: creates a draft. `variants` is required: the complete variant set. */
    create: (body: ExperimentCreate, request: PostRequestOptions = {}): ApiPromise<Experiment> =>
      call(raw.POST('/api/v1/experiments/', { body, ...callOptions(request) }), request),
    /** `GET /api/v1/experiments/{experiment_id}`. */
    get: (experimentId: number, request: RequestOptions = {}): ApiPromise<Experiment> =>
      call(
        raw.GET('/api/v1/experiments/{experiment_id}', experiment(experimentId, request)),
        request,
      ),
    /** `PUT /api/v1/experiments/{experiment_id}`: replaces name, description and the whole variant set of a draft. */
    update: (
      experimentId: number,
      body: ExperimentUpdate,
      request: RequestOptions = {},
    ): ApiPromise<Experiment> =>
      call(
        raw.PUT('/api/v1/experiments/{experiment_id}', {
          ...experiment(experimentId, request),
          body,
        }),
        request,
      ),
    /** `DELETE /api/v1/experiments/{experiment_id}`: deletes a draft or a stopped experiment. */
    delete: (
      experimentId: number,
      request: RequestOptions = {},
    ): ApiPromise<ExperimentDeleteResponse> =>
      call(
        raw.DELETE('/api/v1/experiments/{experiment_id}', experiment(experimentId, request)),
        request,
      ),
    /** `POST /api/v1/experiments/{experiment_id}/start`: the answer carries `warnings` that did not prevent the start. */
    start: (
      experimentId: number,
      request: PostRequestOptions = {},
    ): ApiPromise<ExperimentStartResponse> =>
      call(
        raw.POST('/api/v1/experiments/{experiment_id}/start', experiment(experimentId, request)),
        request,
      ),
    /** `POST /api/v1/experiments/{experiment_id}/stop`. */
    stop: (experimentId: number, request: PostRequestOptions = {}): ApiPromise<Experiment> =>
      call(
        raw.POST('/api/v1/experiments/{experiment_id}/stop', experiment(experimentId, request)),
        request,
      ),
    /** `GET /api/v1/experiments/{experiment_id}/results`: sessions per variant. */
    results: (experimentId: number, request: RequestOptions = {}): ApiPromise<ExperimentResults> =>
      call(
        raw.GET('/api/v1/experiments/{experiment_id}/results', experiment(experimentId, request)),
        request,
      ),
    /**
     * `GET /api/v1/experiments/{experiment_id}/results/timeline`: sessions per variant per hour or
     * day in a time zone (local midnights and hours, daylight saving included), every bucket of
     * the window in order, empty ones too. Over the whole run the buckets add up to `results`.
     */
    timeline: (
      experimentId: number,
      query: ExperimentTimelineQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<ExperimentTimeline> =>
      call(
        raw.GET('/api/v1/experiments/{experiment_id}/results/timeline', {
          params: { path: { experiment_id: experimentId }, query },
          ...callOptions(request),
        }),
        request,
      ),
    /**
     * `GET /api/v1/experiments/{experiment_id}/history`: one page of the experiment's changes,
     * newest first, each with its actor, request id and every changed field's before and after.
     * Readable after the experiment is deleted.
     */
    history: (
      experimentId: number,
      query: ExperimentChangeListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<ExperimentChangeListResponse> =>
      call(
        raw.GET('/api/v1/experiments/{experiment_id}/history', {
          params: { path: { experiment_id: experimentId }, query },
          ...callOptions(request),
        }),
        request,
      ),
    /** Every change of the experiment, newest first, page after page. */
    iterateHistory: (
      experimentId: number,
      query: ExperimentChangeListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<ExperimentChange, void> =>
      iteratePages((page) => experiments.history(experimentId, page, request), query),
  };
  const telephony = {
    /**
     * `POST /api/v1/channels/telephony/{channel_id}/numbers/verify-a2p-compliance`: is this
     * incoming number on a US A2P messaging path with an approved brand and a verified campaign?
     */
    verifyA2pCompliance: (
      channelId: number,
      body: A2pMessagingPathCheckRequest,
      request: PostRequestOptions = {},
    ): ApiPromise<A2pMessagingPathCheckResponse> =>
      call(
        raw.POST('/api/v1/channels/telephony/{channel_id}/numbers/verify-a2p-compliance', {
          params: { path: { channel_id: channelId } },
          body,
          ...callOptions(request),
        }),
        request,
      ),
    /**
     * `GET /api/v1/channels/telephony/{channel_id}/numbers/a2p-status`: one page of the channel's
     * incoming numbers, in phone order, each with `a2p_approved` and the four `checks` behind it.
     */
    a2pStatus: (
      channelId: number,
      query: A2pNumberStatusListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<A2pNumberStatusListResponse> =>
      call(
        raw.GET('/api/v1/channels/telephony/{channel_id}/numbers/a2p-status', {
          params: { path: { channel_id: channelId }, query },
          ...callOptions(request),
        }),
        request,
      ),
    /** Every incoming number of the channel with its A2P status, page after page. */
    iterateA2pStatus: (
      channelId: number,
      query: A2pNumberStatusListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<A2pNumberStatus, void> =>
      iteratePages((page) => telephony.a2pStatus(channelId, page, request), query),
  };
  const agents = {
    /** `GET /api/v1/agents/`: one page of agents, for the `agent_id` of an experiment's variants. */
    list: (
      query: AgentListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<AgentListResponse> =>
      call(raw.GET('/api/v1/agents/', { params: { query }, ...callOptions(request) }), request),
    /** Every agent matching the query, page after page. */
    iterate: (
      query: AgentListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<Agent, void> => iteratePages((page) => agents.list(page, request), query),
  };
  const channelTargets = {
    /** `GET /api/v1/channels/targets/`: one page of channel targets, for a `target_id`. */
    list: (
      query: ChannelTargetListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<ChannelTargetListResponse> =>
      call(
        raw.GET('/api/v1/channels/targets/', { params: { query }, ...callOptions(request) }),
        request,
      ),
    /** Every channel target matching the query, page after page. */
    iterate: (
      query: ChannelTargetListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<ChannelTarget, void> =>
      iteratePages((page) => channelTargets.list(page, request), query),
    /**
     * `GET /api/v1/channels/targets/{target_id}/assignment`: which agent (and variant) routing
     * would give this user's next session on the target now; creates no session, event or count.
     */
    assignment: (
      targetId: number,
      userId: string,
      request: RequestOptions = {},
    ): ApiPromise<Assignment> =>
      call(
        raw.GET('/api/v1/channels/targets/{target_id}/assignment', {
          params: { path: { target_id: targetId }, query: { user_id: userId } },
          ...callOptions(request),
        }),
        request,
      ),
  };
  const sessions = {
    /** `POST /api/v1/channels/targets/{target_id}/sessions`: which agent answers a new session on a channel target. */
    route: (
      targetId: number,
      body: SessionRouteRequest = {},
      request: PostRequestOptions = {},
    ): ApiPromise<RoutedSession> =>
      call(
        raw.POST('/api/v1/channels/targets/{target_id}/sessions', {
          params: { path: { target_id: targetId } },
          body,
          ...callOptions(request),
        }),
        request,
      ),
  };
  const keys = {
    /**
     * `GET /api/v1/keys/current`: the client's own API key (never its secret): its name, its
     * role's name and sorted permissions, and its organization. Any valid key may call it.
     */
    current: (request: RequestOptions = {}): ApiPromise<ApiKeyInfo> =>
      call(raw.GET('/api/v1/keys/current', callOptions(request)), request),
  };
  return {
    /** The typed openapi-fetch client, for anything the methods do not cover. */
    raw,
    events,
    prompts,
    experiments,
    telephony,
    agents,
    channelTargets,
    sessions,
    keys,
    /** Webhook endpoints, their secrets, test messages, replays and delivery logs. */
    webhooks: webhookEndpoints(transport),
  };
}

/**
 * One method per operation of the API; each names its endpoint. The methods are plain functions
 * (no `this`), so `const list = client.events.list` works.
 */
export type AgentlineClient = ReturnType<typeof createClient>;
