// Compile-time guarantees of the SDK's types, checked by `pnpm typecheck` (the SDK's tsconfig takes
// test/ in, with exactOptionalPropertyTypes on, the strictest setting a customer may use): a
// failed expectTypeOf is a type error there.

import { expectTypeOf, test } from 'vitest';
import {
  createClient,
  type A2pCheck,
  type A2pMessagingPathCheckResponse,
  type A2pNumberStatus,
  type A2pNumberStatusListQuery,
  type AgentlineClient,
  type ApiPromise,
  type AuthenticationError,
  type BadGatewayError,
  type BadRequestError,
  type ConflictError,
  type GoneError,
  type ErrorCode,
  type components,
  type Event,
  type EventListQuery,
  type EventListResponse,
  type Experiment,
  type ExperimentCreate,
  type ExperimentListItem,
  type ExperimentUpdate,
  type NotFoundError,
  type operations,
  type webhooks,
  type PermissionDeniedError,
  type PostRequestOptions,
  type Prompt,
  type RateLimitError,
  type ServiceUnavailableError,
  type Tool,
  type UnprocessableEntityError,
  type Variant,
  type VariantWrite,
} from '../src/index.js';

const client = createClient({ apiKey: 'k' });
const variants: VariantWrite[] = [
  { name: 'control', weight: 50, agent_id: 1, is_control: true },
  { name: 'candidate', weight: 50, agent_id: 2 },
];

test('variants is required on experiment create and update', () => {
  // @ts-expect-error: variants is required (a widely used generated client wrongly marks it optional)
  void client.experiments.create({ name: 'x', target_id: 1 });
  // @ts-expect-error: variants is required on update too
  void client.experiments.update(1, { name: 'x' });
  void client.experiments.create({ name: 'x', target_id: 1, variants });
  void client.experiments.update(1, { name: 'x', variants });
});

test('options take undefined as not given, as environment variables are', () => {
  void createClient({ apiKey: process.env.AGENTLINE_API_KEY, baseUrl: undefined });
  void client.events.list({}, { signal: undefined, timeout: undefined, headers: undefined });
});

test('wrong field types do not compile', () => {
  const stringWeights = [{ name: 'a', weight: '50', agent_id: 1 }];
  // @ts-expect-error: weight is an integer, not a string
  void client.experiments.create({ name: 'x', target_id: 1, variants: stringWeights });
  // @ts-expect-error: target_id is a number
  void client.experiments.create({ name: 'x', target_id: '1', variants });
  // @ts-expect-error: not an event property
  void client.events.list({ order_by: 'colour' });
  // @ts-expect-error: an Idempotency-Key is for POSTs only
  void client.experiments.get(1, { idempotencyKey: 'k' });
});

test('method signatures name the models, and the items assign to them', () => {
  expectTypeOf(client.events.list).returns.toEqualTypeOf<ApiPromise<EventListResponse>>();
  expectTypeOf(client.events.list).parameter(0).toEqualTypeOf<EventListQuery | undefined>();
  expectTypeOf(client.experiments.get).returns.toEqualTypeOf<ApiPromise<Experiment>>();
  expectTypeOf(client.experiments.create).parameter(0).toEqualTypeOf<ExperimentCreate>();
  expectTypeOf(client.experiments.update).parameter(1).toEqualTypeOf<ExperimentUpdate>();
  expectTypeOf(client.events.iterate).returns.toEqualTypeOf<AsyncGenerator<Event, void>>();
  expectTypeOf(client.events.stream).returns.toExtend<AsyncIterable<Event>>();
  expectTypeOf(client.events.stream).returns.toHaveProperty('position');
  expectTypeOf(client.telephony.a2pStatus).parameter(0).toEqualTypeOf<number>();
  expectTypeOf(client.telephony.a2pStatus)
    .parameter(1)
    .toEqualTypeOf<A2pNumberStatusListQuery | undefined>();
  expectTypeOf(client.telephony.iterateA2pStatus).returns.toEqualTypeOf<
    AsyncGenerator<A2pNumberStatus, void>
  >();
  expectTypeOf<A2pNumberStatus['checks'][number]>().toEqualTypeOf<A2pCheck>();
  expectTypeOf<A2pMessagingPathCheckResponse['checks'][number]>().toEqualTypeOf<A2pCheck>();
  expectTypeOf<EventListResponse['items'][number]>().toEqualTypeOf<Event>();
  expectTypeOf<Experiment['variants'][number]>().toEqualTypeOf<Variant>();
  expectTypeOf<NonNullable<Prompt['tools_full']>[number]>().toEqualTypeOf<Tool>();
  // What the wire gives (openapi-fetch's types) assigns to the named models.
  type Wire<O extends Exclude<ClientOperation, 'events_stream'>> =
    operations[O]['responses'][200]['content']['application/json'];
  expectTypeOf<Wire<'events_list'>['items'][number]>().toExtend<Event>();
  expectTypeOf<Wire<'prompts_list'>['items'][number]>().toExtend<Prompt>();
  expectTypeOf<Wire<'experiments_list'>['items'][number]>().toExtend<ExperimentListItem>();
  expectTypeOf<
    Wire<'channels_telephony_numbers_a2p_status'>['items'][number]
  >().toExtend<A2pNumberStatus>();
});

test('each error class has its status as a literal type', () => {
  expectTypeOf<BadRequestError['status']>().toEqualTypeOf<400>();
  expectTypeOf<AuthenticationError['status']>().toEqualTypeOf<401>();
  expectTypeOf<PermissionDeniedError['status']>().toEqualTypeOf<403>();
  expectTypeOf<NotFoundError['status']>().toEqualTypeOf<404>();
  expectTypeOf<ConflictError['status']>().toEqualTypeOf<409>();
  expectTypeOf<GoneError['status']>().toEqualTypeOf<410>();
  expectTypeOf<UnprocessableEntityError['status']>().toEqualTypeOf<422>();
  expectTypeOf<RateLimitError['status']>().toEqualTypeOf<429>();
  expectTypeOf<BadGatewayError['status']>().toEqualTypeOf<502>();
  expectTypeOf<ServiceUnavailableError['status']>().toEqualTypeOf<503>();
});

/**
 * Every operation of the spec and the client method that calls it. An operation added to the
 * spec without a method here (and on the client) fails the first assertion below.
 */
interface OperationMethods {
  events_list: AgentlineClient['events']['list'];
  events_stream: AgentlineClient['events']['stream'];
  prompts_list: AgentlineClient['prompts']['list'];
  channels_telephony_numbers_verify_a2p_compliance: AgentlineClient['telephony']['verifyA2pCompliance'];
  channels_telephony_numbers_a2p_status: AgentlineClient['telephony']['a2pStatus'];
  experiments_list: AgentlineClient['experiments']['list'];
  experiments_create: AgentlineClient['experiments']['create'];
  experiments_get: AgentlineClient['experiments']['get'];
  experiments_update: AgentlineClient['experiments']['update'];
  experiments_delete: AgentlineClient['experiments']['delete'];
  experiments_start: AgentlineClient['experiments']['start'];
  experiments_stop: AgentlineClient['experiments']['stop'];
  experiments_results: AgentlineClient['experiments']['results'];
  experiments_results_timeline: AgentlineClient['experiments']['timeline'];
  experiments_history: AgentlineClient['experiments']['history'];
  sessions_route: AgentlineClient['sessions']['route'];
  agents_list: AgentlineClient['agents']['list'];
  channel_targets_list: AgentlineClient['channelTargets']['list'];
  channel_targets_assignment: AgentlineClient['channelTargets']['assignment'];
  webhooks_endpoints_list: AgentlineClient['webhooks']['list'];
  webhooks_endpoints_create: AgentlineClient['webhooks']['create'];
  webhooks_endpoints_get: AgentlineClient['webhooks']['get'];
  webhooks_endpoints_update: AgentlineClient['webhooks']['update'];
  webhooks_endpoints_delete: AgentlineClient['webhooks']['delete'];
  webhooks_endpoints_rotate_secret: AgentlineClient['webhooks']['rotateSecret'];
  webhooks_endpoints_test: AgentlineClient['webhooks']['test'];
  webhooks_endpoints_replay: AgentlineClient['webhooks']['replay'];
  webhooks_endpoints_deliveries: AgentlineClient['webhooks']['deliveries'];
  keys_current: AgentlineClient['keys']['current'];
}

/** What the spec's `webhooks` declare: requests Agentline sends, which the client never makes. */
type ReceivedOperation = {
  [K in keyof operations]: operations[K] extends webhooks[keyof webhooks]['post'] ? K : never;
}[keyof operations];
type ClientOperation = Exclude<keyof operations, ReceivedOperation>;
type OkBody<O> = O extends { responses: { 200: { content: { 'application/json': infer B } } } }
  ? B
  : never;
// Distributes over `never` (an operation without a body), which then stays never.
type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type RequestBody<O extends { requestBody?: unknown }> = JsonContent<NonNullable<O['requestBody']>>;
type Answer<M> = M extends (...args: never[]) => ApiPromise<infer T> ? T : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The method's argument that carries the body: the one that is neither an id nor the options. */
type BodyArgument<M> = M extends (...args: infer A) => unknown
  ? Exclude<A[number], number | PostRequestOptions | undefined>
  : never;

test('every operation of the spec has a client method, with its body and its answer', () => {
  expectTypeOf<keyof OperationMethods>().toEqualTypeOf<ClientOperation>();
  expectTypeOf<ReceivedOperation>().toEqualTypeOf<
    'webhook_event' | 'webhook_experiment_status_changed' | 'webhook_test'
  >();
  type WrongAnswer = {
    [K in keyof OperationMethods]: Same<
      Answer<OperationMethods[K]>,
      OkBody<operations[K]>
    > extends true
      ? never
      : K;
  }[keyof OperationMethods];
  expectTypeOf<WrongAnswer>().toEqualTypeOf<never>();
  type WrongBody = {
    [K in keyof OperationMethods]: [RequestBody<operations[K]>] extends [never]
      ? never
      : Same<BodyArgument<OperationMethods[K]>, RequestBody<operations[K]>> extends true
        ? never
        : K;
  }[keyof OperationMethods];
  expectTypeOf<WrongBody>().toEqualTypeOf<never>();
});

test("an error's code is the spec's ErrorCode, or null", () => {
  expectTypeOf<ErrorCode>().toEqualTypeOf<components['schemas']['ErrorCode']>();
  expectTypeOf<NotFoundError['code']>().toEqualTypeOf<ErrorCode | null>();
  expectTypeOf<'NOT_FOUND'>().toExtend<ErrorCode>();
  expectTypeOf<'NOT_A_CODE'>().not.toExtend<ErrorCode>();
});
