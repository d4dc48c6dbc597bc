import { cursorSigner } from '../../serving/cursor-signer.js';
import { listWebhookAttempts } from '../../db/repositories/webhook-deliveries.js';
import {
  findWebhookEndpoint,
  listWebhookEndpoints,
} from '../../db/repositories/webhook-endpoints.js';
import { listPage, parseListQuery, projectItem } from '../../domain/list-query.js';
import { webhookDeliveryList, WEBHOOK_ENDPOINT_LIST } from '../../domain/webhooks.js';
import type { AppRouteHandler } from '../../http/router.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  endpointNotFound,
  rotateWebhookSecret,
  sendWebhookTest,
  updateWebhookEndpoint,
} from '../../use-cases/webhook-endpoints.js';
import { replayWebhookEndpoint } from '../../use-cases/webhook-replay.js';
import {
  toWireWebhookDelivery,
  toWireWebhookEndpoint,
  toWireWebhookEndpointWithSecret,
  type WireWebhookEndpoint,
} from '../../wire/webhooks.js';
import type * as routes from './webhooks.routes.js';

export const webhooksEndpointsList: AppRouteHandler<typeof routes.webhooksEndpointsList> = async (
  c,
) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(
    WEBHOOK_ENDPOINT_LIST,
    c.req.valid('query'),
    organizationId,
    signer,
  );
  const { records, totalCount, next } = await listWebhookEndpoints(db, organizationId, query);
  const items = records.map((record) =>
    projectItem<WireWebhookEndpoint, 'id'>(toWireWebhookEndpoint(record), query.projection),
  );
  return c.json(listPage(items, query, totalCount, next, signer), 200);
};

export const webhooksEndpointsCreate: AppRouteHandler<
  typeof routes.webhooksEndpointsCreate
> = async (c) => {
  const body = c.req.valid('json');
  const { record, secret } = await createWebhookEndpoint(
    c.get('db'),
    c.get('auth').organizationId,
    {
      url: body.url,
      description: body.description ?? null,
      enabled: body.enabled ?? true,
      search_fields: body.search_fields ?? [],
      search_field_values: body.search_field_values ?? [],
      message_types: body.message_types ?? ['event'],
    },
    c.get('webhookPolicy'),
  );
  return c.json(toWireWebhookEndpointWithSecret(record, secret), 200);
};

export const webhooksEndpointsGet: AppRouteHandler<typeof routes.webhooksEndpointsGet> = async (
  c,
) => {
  const { endpoint_id: id } = c.req.valid('param');
  const record = await findWebhookEndpoint(c.get('db'), c.get('auth').organizationId, id);
  if (!record) throw endpointNotFound(id);
  return c.json(toWireWebhookEndpoint(record), 200);
};

export const webhooksEndpointsUpdate: AppRouteHandler<
  typeof routes.webhooksEndpointsUpdate
> = async (c) => {
  const { endpoint_id: id } = c.req.valid('param');
  const record = await updateWebhookEndpoint(
    c.get('db'),
    c.get('auth').organizationId,
    id,
    c.req.valid('json'),
    c.get('webhookPolicy'),
  );
  return c.json(toWireWebhookEndpoint(record), 200);
};

export const webhooksEndpointsDelete: AppRouteHandler<
  typeof routes.webhooksEndpointsDelete
> = async (c) => {
  const { endpoint_id: id } = c.req.valid('param');
  await deleteWebhookEndpoint(c.get('db'), c.get('auth').organizationId, id);
  return c.json({ id, deleted: true as const }, 200);
};

export const webhooksEndpointsRotateSecret: AppRouteHandler<
  typeof routes.webhooksEndpointsRotateSecret
> = async (c) => {
  const { endpoint_id: id } = c.req.valid('param');
  const { record, secret } = await rotateWebhookSecret(
    c.get('db'),
    c.get('auth').organizationId,
    id,
  );
  return c.json(toWireWebhookEndpointWithSecret(record, secret), 200);
};

export const webhooksEndpointsTest: AppRouteHandler<typeof routes.webhooksEndpointsTest> = async (
  c,
) => {
  const { endpoint_id: id } = c.req.valid('param');
  const queued = await sendWebhookTest(c.get('db'), c.get('auth').organizationId, id);
  return c.json(
    {
      endpoint_id: queued.endpointId,
      webhook_id: queued.webhookId,
      type: 'webhook.test' as const,
      queued_at: queued.queuedAt,
    },
    200,
  );
};

export const webhooksEndpointsReplay: AppRouteHandler<
  typeof routes.webhooksEndpointsReplay
> = async (c) => {
  const { endpoint_id: id } = c.req.valid('param');
  const { record, rewound } = await replayWebhookEndpoint(
    c.get('db'),
    c.get('auth').organizationId,
    id,
    c.req.valid('json'),
  );
  return c.json({ endpoint: toWireWebhookEndpoint(record), rewound }, 200);
};

export const webhooksEndpointsDeliveries: AppRouteHandler<
  typeof routes.webhooksEndpointsDeliveries
> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const { endpoint_id: id } = c.req.valid('param');
  const { status, ...paging } = c.req.valid('query');
  // The log pages like the other lists; its one filter is the outcome, matched exactly.
  const signer = await cursorSigner(db);
  const query = await parseListQuery(
    webhookDeliveryList(id),
    {
      ...paging,
      search_fields: status === undefined ? [] : ['status' as const],
      search_field_values: status === undefined ? [] : [status],
      fields: [],
    },
    organizationId,
    signer,
  );
  if (!(await findWebhookEndpoint(db, organizationId, id))) throw endpointNotFound(id);
  const { records, totalCount, next } = await listWebhookAttempts(db, organizationId, id, query);
  return c.json(listPage(records.map(toWireWebhookDelivery), query, totalCount, next, signer), 200);
};
