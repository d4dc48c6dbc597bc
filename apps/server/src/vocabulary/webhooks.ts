// The names of webhook endpoints, their messages and delivery log, which their rules
// (domain/webhooks.ts), the dispatcher (runtime/webhooks/), the schema and the repositories all name.

import * as enumValues from '../generated/enum-values.js';
import type { components } from '../spec-types.js';

export type WebhookEndpointProperty = components['schemas']['WebhookEndpointProperties'];
export type WebhookMessageType = components['schemas']['WebhookMessageType'];
export type WebhookDeliveryStatus = components['schemas']['WebhookDeliveryStatus'];
export type WebhookDeliveryType = components['schemas']['WebhookDelivery']['type'];

export const WEBHOOK_MESSAGE_TYPES = enumValues.WebhookMessageType;

export const WEBHOOK_DELIVERY_STATUSES = enumValues.WebhookDeliveryStatus;

/** The type of a test message (POST .../test), beside the message types an endpoint chooses. */
export const WEBHOOK_TEST_TYPE = 'webhook.test' satisfies WebhookDeliveryType;

export type WebhookDeliveryProperty = 'id' | 'status';
