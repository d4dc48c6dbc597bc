// `client.webhooks`: the organization's webhook endpoints, their secrets, test messages, replays
// and delivery logs. Verifying a delivered message is another entry point's job
// (`@agentline/sdk/webhooks`), which a receiver loads without the client.

import type { ApiPromise } from './api-promise.js';
import type {
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookDeliveryListResponse,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointDeleteResponse,
  WebhookEndpointListItem,
  WebhookEndpointListQuery,
  WebhookEndpointListResponse,
  WebhookEndpointUpdate,
  WebhookEndpointWithSecret,
  WebhookReplayRequest,
  WebhookReplayResponse,
  WebhookTestMessage,
} from './generated/models.js';
import type { PostRequestOptions, RequestOptions } from './options.js';
import { iteratePages } from './pagination.js';
import type { createTransport } from './transport.js';

/** The webhooks methods of a client, over its transport. */
export function webhookEndpoints({
  raw,
  call,
  callOptions,
}: Pick<ReturnType<typeof createTransport>, 'raw' | 'call' | 'callOptions'>) {
  const endpoint = (endpointId: number, request: RequestOptions) => ({
    params: { path: { endpoint_id: endpointId } },
    ...callOptions(request),
  });
  const webhooks = {
    /** `GET /api/v1/webhooks/endpoints`: one page of webhook endpoints (never their secrets). */
    list: (
      query: WebhookEndpointListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<WebhookEndpointListResponse> =>
      call(
        raw.GET('/api/v1/webhooks/endpoints', { params: { query }, ...callOptions(request) }),
        request,
      ),
    /** Every webhook endpoint matching the query, page after page. */
    iterate: (
      query: WebhookEndpointListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<WebhookEndpointListItem, void> =>
      iteratePages((page) => webhooks.list(page, request), query),
    /**
     * `POST /api/v1/webhooks/endpoints`: the answer's `secret` (`whsec_...`) is shown this once:
     * store it for `verifyWebhook`. The endpoint receives what is committed from now on.
     */
    create: (
      body: WebhookEndpointCreate,
      request: PostRequestOptions = {},
    ): ApiPromise<WebhookEndpointWithSecret> =>
      call(raw.POST('/api/v1/webhooks/endpoints', { body, ...callOptions(request) }), request),
    /** `GET /api/v1/webhooks/endpoints/{endpoint_id}`. */
    get: (endpointId: number, request: RequestOptions = {}): ApiPromise<WebhookEndpoint> =>
      call(
        raw.GET('/api/v1/webhooks/endpoints/{endpoint_id}', endpoint(endpointId, request)),
        request,
      ),
    /**
     * `PUT /api/v1/webhooks/endpoints/{endpoint_id}`: replaces its settings, from the next
     * message on; `enabled: true` resumes a disabled endpoint from where it stopped.
     */
    update: (
      endpointId: number,
      body: WebhookEndpointUpdate,
      request: RequestOptions = {},
    ): ApiPromise<WebhookEndpoint> =>
      call(
        raw.PUT('/api/v1/webhooks/endpoints/{endpoint_id}', {
          ...endpoint(endpointId, request),
          body,
        }),
        request,
      ),
    /** `DELETE /api/v1/webhooks/endpoints/{endpoint_id}`: its deliveries stop within a second. */
    delete: (
      endpointId: number,
      request: RequestOptions = {},
    ): ApiPromise<WebhookEndpointDeleteResponse> =>
      call(
        raw.DELETE('/api/v1/webhooks/endpoints/{endpoint_id}', endpoint(endpointId, request)),
        request,
      ),
    /**
     * `POST /api/v1/webhooks/endpoints/{endpoint_id}/rotate-secret`: a new secret, shown this
     * once; the previous one keeps signing beside it for 24 hours, so verify with both meanwhile.
     */
    rotateSecret: (
      endpointId: number,
      request: PostRequestOptions = {},
    ): ApiPromise<WebhookEndpointWithSecret> =>
      call(
        raw.POST(
          '/api/v1/webhooks/endpoints/{endpoint_id}/rotate-secret',
          endpoint(endpointId, request),
        ),
        request,
      ),
    /**
     * `POST /api/v1/webhooks/endpoints/{endpoint_id}/test`: queues one `webhook.test` message;
     * its attempts are in the delivery log under the answer's `webhook_id`.
     */
    test: (endpointId: number, request: PostRequestOptions = {}): ApiPromise<WebhookTestMessage> =>
      call(
        raw.POST('/api/v1/webhooks/endpoints/{endpoint_id}/test', endpoint(endpointId, request)),
        request,
      ),
    /**
     * `POST /api/v1/webhooks/endpoints/{endpoint_id}/replay`: sends again, with their original
     * `webhook-id`s, every message after `after_position` (a message's `position`) or from
     * `start_datetime`: how a receiver catches up after an outage.
     */
    replay: (
      endpointId: number,
      body: WebhookReplayRequest,
      request: PostRequestOptions = {},
    ): ApiPromise<WebhookReplayResponse> =>
      call(
        raw.POST('/api/v1/webhooks/endpoints/{endpoint_id}/replay', {
          ...endpoint(endpointId, request),
          body,
        }),
        request,
      ),
    /**
     * `GET /api/v1/webhooks/endpoints/{endpoint_id}/deliveries`: one page of the endpoint's
     * delivery log (every attempt of the last 30 days), newest first; `status` keeps one outcome.
     */
    deliveries: (
      endpointId: number,
      query: WebhookDeliveryListQuery = {},
      request: RequestOptions = {},
    ): ApiPromise<WebhookDeliveryListResponse> =>
      call(
        raw.GET('/api/v1/webhooks/endpoints/{endpoint_id}/deliveries', {
          params: { path: { endpoint_id: endpointId }, query },
          ...callOptions(request),
        }),
        request,
      ),
    /** Every attempt of the endpoint's delivery log, newest first, page after page. */
    iterateDeliveries: (
      endpointId: number,
      query: WebhookDeliveryListQuery = {},
      request: RequestOptions = {},
    ): AsyncGenerator<WebhookDelivery, void> =>
      iteratePages((page) => webhooks.deliveries(endpointId, page, request), query),
  };
  return webhooks;
}
