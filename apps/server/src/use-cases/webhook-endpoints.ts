// Every change to a webhook endpoint through the API, each in one place: the input's checks (the
// URL's address needs DNS, so it is asked before the transaction), then one write transaction
// that loads what the change depends on and writes (docs/architecture.md, "Where a rule is
// applied"). Each write also clears the endpoint's lease, so the process delivering for it picks
// up the change at once (db/repositories/webhook-endpoints.ts).

import type { components } from '../spec-types.js';
import type { Db } from '../db/engine/client.js';
import { runStepsInTransaction } from '../db/engine/portable-sql.js';
import { currentEventPosition } from '../db/repositories/events.js';
import {
  countWaitingTestMessages,
  insertTestMessage,
} from '../db/repositories/webhook-deliveries.js';
import {
  countWebhookEndpoints,
  deleteWebhookEndpointRow,
  highestHistoryIdOf,
  insertWebhookEndpoint,
  replaceWebhookEndpointSettings,
  storeWebhookEndpointSecret,
  webhookEndpoint,
  webhookEndpointSecret,
  type WebhookEndpointRecord,
  type WebhookEndpointSettings,
} from '../db/repositories/webhook-endpoints.js';
import {
  InputRuleError,
  RecordNotFoundError,
  StateConflictError,
  type InputProblem,
} from '../domain/errors.js';
import type { EventProperty } from '../vocabulary/events.js';
import { nowIso } from '../domain/timestamps.js';
import {
  checkWebhookUrl,
  generateTestWebhookId,
  generateWebhookSecret,
  MAX_ENDPOINTS_PER_ORGANIZATION,
  MAX_WAITING_TEST_MESSAGES,
  PREVIOUS_SECRET_VALIDITY_MS,
  type WebhookTargetPolicy,
} from '../domain/webhooks.js';
import { WEBHOOK_TEST_TYPE, type WebhookMessageType } from '../vocabulary/webhooks.js';
import { checkTargetUrl } from '../domain/webhook-target-address.js';

/** An endpoint's settings as a create (defaults filled in) or an update asks for them. */
export interface WebhookEndpointInput {
  url: string;
  description: string | null;
  enabled: boolean;
  search_fields: EventProperty[];
  search_field_values: string[];
  message_types: WebhookMessageType[];
}

export function endpointNotFound(id: number): RecordNotFoundError {
  return new RecordNotFoundError(`No webhook endpoint ${id} in this organization.`);
}

/**
 * The URL to store, in the form WHATWG parsers (the deliveries' own) read it, or its problem:
 * its form, then (unless the operator allows any) where it points.
 */
async function checkedUrl(
  url: string,
  policy: WebhookTargetPolicy,
): Promise<string | InputProblem> {
  const loc = ['body', 'url'];
  const parsed = checkWebhookUrl(url, policy, loc);
  if (!(parsed instanceof URL)) return parsed;
  const refusal = await checkTargetUrl(parsed.href, policy);
  return refusal ? { loc, msg: refusal.message, type: 'value_error' } : parsed.href;
}

/** Checks a create or update body and returns the settings to store. */
async function checkedSettings(
  input: WebhookEndpointInput,
  policy: WebhookTargetPolicy,
): Promise<WebhookEndpointSettings> {
  const url = await checkedUrl(input.url, policy);
  const problems = typeof url === 'string' ? [] : [url];
  const fields = input.search_fields;
  const values = input.search_field_values;
  if (fields.length !== values.length) {
    problems.push({
      loc: ['body', 'search_field_values'],
      msg: `search_fields has ${fields.length} entries but search_field_values has ${values.length}; give one value per field, in the same order.`,
      type: 'value_error',
    });
  }
  if (typeof url !== 'string' || problems.length > 0) throw new InputRuleError(problems);
  return {
    url,
    description: input.description,
    enabled: input.enabled,
    searchFields: fields,
    searchFieldValues: values,
    messageTypes: [...new Set(input.message_types)],
  };
}

/** Creates an endpoint that receives what is committed from now on; answers its secret once. */
export async function createWebhookEndpoint(
  db: Db,
  organizationId: number,
  input: WebhookEndpointInput,
  policy: WebhookTargetPolicy,
): Promise<{ record: WebhookEndpointRecord; secret: string }> {
  const settings = await checkedSettings(input, policy);
  // Read before the insert: whatever commits after this read is the endpoint's to receive.
  const eventPosition = await currentEventPosition(db, organizationId);
  const secret = generateWebhookSecret();
  const record = await runStepsInTransaction(db, function* () {
    if ((yield* countWebhookEndpoints(organizationId)) >= MAX_ENDPOINTS_PER_ORGANIZATION) {
      throw new StateConflictError(
        `This organization has ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints, the most it may have; delete one it no longer needs, or send more message types or events to one endpoint.`,
      );
    }
    return yield* insertWebhookEndpoint({
      organizationId,
      ...settings,
      secret,
      eventPosition,
      historyPosition: yield* highestHistoryIdOf(organizationId),
      now: nowIso(),
    });
  });
  return { record, secret };
}

/**
 * Replaces every editable field. Enabling a disabled endpoint clears why it was disabled and
 * since when it was failing: it resumes where it stopped, with five days before it may be
 * disabled again.
 */
export async function updateWebhookEndpoint(
  db: Db,
  organizationId: number,
  id: number,
  input: WebhookEndpointInput,
  policy: WebhookTargetPolicy,
): Promise<WebhookEndpointRecord> {
  const settings = await checkedSettings(input, policy);
  return runStepsInTransaction(db, function* () {
    const current = yield* webhookEndpoint(organizationId, id);
    if (!current) throw endpointNotFound(id);
    const updated = yield* replaceWebhookEndpointSettings(organizationId, id, settings, {
      now: nowIso(),
      clearFailure: settings.enabled && !current.enabled,
    });
    return updated!;
  });
}

/** A new secret, answered once; the current one keeps signing beside it for a day. */
export async function rotateWebhookSecret(
  db: Db,
  organizationId: number,
  id: number,
): Promise<{ record: WebhookEndpointRecord; secret: string }> {
  const secret = generateWebhookSecret();
  const record = await runStepsInTransaction(db, function* () {
    const previousSecret = yield* webhookEndpointSecret(organizationId, id);
    if (previousSecret === null) throw endpointNotFound(id);
    const now = new Date();
    const updated = yield* storeWebhookEndpointSecret(organizationId, id, {
      secret,
      previousSecret,
      previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS).toISOString(),
      now: now.toISOString(),
    });
    return updated!;
  });
  return { record, secret };
}

/** A queued test message: the dispatcher sends it as it sends retries. */
export interface QueuedTestMessage {
  endpointId: number;
  webhookId: string;
  queuedAt: string;
}

/** Queues one `webhook.test` message for the endpoint, due now. */
export async function sendWebhookTest(
  db: Db,
  organizationId: number,
  id: number,
): Promise<QueuedTestMessage> {
  const webhookId = generateTestWebhookId();
  return runStepsInTransaction(db, function* () {
    if (!(yield* webhookEndpoint(organizationId, id))) throw endpointNotFound(id);
    if ((yield* countWaitingTestMessages(id)) >= MAX_WAITING_TEST_MESSAGES) {
      throw new StateConflictError(
        `Webhook endpoint ${id} has ${MAX_WAITING_TEST_MESSAGES} test messages waiting to be sent, the most it may have; wait until its delivery log shows them delivered or failed.`,
      );
    }
    const now = nowIso();
    const message: components['schemas']['WebhookTestMessageBody'] = {
      type: WEBHOOK_TEST_TYPE,
      position: null,
      data: { endpoint_id: id, sent_at: now },
    };
    const payload = JSON.stringify(message);
    yield* insertTestMessage({ endpointId: id, organizationId, webhookId, payload, now });
    return { endpointId: id, webhookId, queuedAt: now };
  });
}

/** Deletes the endpoint with its queued messages and delivery log. */
export async function deleteWebhookEndpoint(
  db: Db,
  organizationId: number,
  id: number,
): Promise<void> {
  if (!(await deleteWebhookEndpointRow(db, organizationId, id))) throw endpointNotFound(id);
}
