export { createClient } from './client.js';
export { SDK_VERSION } from './transport.js';
export { API_KEY_ENV, BASE_URL_ENV } from './options.js';
export type { AgentlineClient, ExperimentTimelineQuery } from './client.js';
export type { ClientOptions, RequestOptions, PostRequestOptions } from './options.js';
export type { EventStream, EventStreamOptions, EventStreamQuery } from './event-stream.js';
// Types only: verifying a message is `@agentline/sdk/webhooks`, which the client does not load.
export type { WebhookMessage, ExperimentStatusChange } from './webhooks.js';
export { ApiPromise, type WithResponse } from './api-promise.js';
export { rateLimitOf, type RateLimit } from './rate-limit.js';
export { MAX_RETRY_AFTER_MS, RETRY_COUNT_HEADER } from './retry.js';
export { newIdempotencyKey } from './idempotency-key.js';
export {
  AgentlineError,
  ApiError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  GoneError,
  UnprocessableEntityError,
  RateLimitError,
  InternalServerError,
  BadGatewayError,
  ServiceUnavailableError,
  ApiConnectionError,
  ApiTimeoutError,
  ApiUserAbortError,
  errorForResponse,
} from './errors.js';
export type * from './generated/models.js';
export type { components, paths, operations, webhooks } from '../../../spec/generated/openapi.js';
