// The one place webhook records become the spec's shapes: an endpoint (never with its secret but
// where create and rotate-secret hand over the one they made) and an attempt of the delivery log.

import type { WebhookAttemptRecord } from '../db/repositories/webhook-deliveries.js';
import type { WebhookEndpointRecord } from '../db/repositories/webhook-endpoints.js';
import type { components } from '../spec-types.js';

export type WireWebhookEndpoint = Required<components['schemas']['WebhookEndpoint']>;

export function toWireWebhookEndpoint(record: WebhookEndpointRecord): WireWebhookEndpoint {
  return {
    id: record.id,
    url: record.url,
    description: record.description,
    enabled: record.enabled,
    disabled_reason: record.disabledReason,
    search_fields: record.searchFields,
    search_field_values: record.searchFieldValues,
    message_types: record.messageTypes,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

export type WireWebhookEndpointWithSecret = components['schemas']['WebhookEndpointWithSecret'];

export function toWireWebhookEndpointWithSecret(
  record: WebhookEndpointRecord,
  secret: string,
): WireWebhookEndpointWithSecret {
  return { ...toWireWebhookEndpoint(record), secret };
}

export type WireWebhookDelivery = components['schemas']['WebhookDelivery'];

export function toWireWebhookDelivery(record: WebhookAttemptRecord): WireWebhookDelivery {
  return {
    id: record.id,
    webhook_id: record.webhookId,
    type: record.type,
    position: record.position,
    attempt: record.attempt,
    status: record.status,
    response_status: record.responseStatus,
    error: record.error,
    duration_ms: record.durationMs,
    attempted_at: record.attemptedAt,
    next_attempt_at: record.nextAttemptAt,
  };
}
