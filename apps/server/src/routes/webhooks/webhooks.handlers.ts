import { resumeTokensOf } from '../../runtime/resume-tokens.js';
import { listWebhookAttempts } from '../../db/repositories/webhook-deliveries.js';
import {
  findWebhookEndpoint,
  listWebhookEndpoints,
} from '../../db/repositories/webhook-endpoints.js';
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
} from '../../wire/webhooks.js';
import { readListPage, readPage } from '../list-page.js';
import type * as routes from './webhooks.routes.js';

export const webhooksEndpointsList: AppRouteHandler<typeof routes.webhooksEndpointsList> = async (
  c,
) =>
  c.json(
    await readListPage(
      c,
      c.req.valid('query'),
      WEBHOOK_ENDPOINT_LIST,
      listWebhookEndpoints,
      toWireWebhookEndpoint,
    ),
    200,
  );

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
    resumeTokensOf(c.get('db')),
    c.get('auth').organizationId,
    id,
    c.req.valid('json'),
  );
  return c.json({ endpoint: toWireWebhookEndpoint(record), rewound }, 200);
};

export const webhooksEndpointsDeliveries: AppRouteHandler<
  typeof routes.webhooksEndpointsDeliveries
> = async (c) => {
  const { endpoint_id: id } = c.req.valid('param');
  const { status, ...paging } = c.req.valid('query');
  // The log pages like the other lists; its one filter is the outcome, matched exactly.
  const page = await readPage(
    c,
    {
      ...paging,
      search_fields: status === undefined ? [] : ['status' as const],
      search_field_values: status === undefined ? [] : [status],
      fields: [],
    },
    webhookDeliveryList(id),
    async (db, organizationId, query) => {
      if (!(await findWebhookEndpoint(db, organizationId, id))) throw endpointNotFound(id);
      return listWebhookAttempts(db, organizationId, id, query);
    },
    toWireWebhookDelivery,
  );
  return c.json(page, 200);
};
