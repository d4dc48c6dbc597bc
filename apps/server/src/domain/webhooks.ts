// Webhook endpoints (the spec's webhooks tag): their lists, the URL rules that need no network,
// the limits on what a client can make the server hold, and the secrets and ids the server makes.
// Whether a URL's host is a public address needs DNS: domain/webhook-target-address.ts answers that.

import { randomBytes } from 'node:crypto';
import spec from '../generated/openapi.json' with { type: 'json' };
import type { components } from '../spec-types.js';
import type { InputLocation, InputProblem } from './errors.js';
import { keyedById, type ListResource, type NullableKeys } from './list-query.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type { WebhookDeliveryProperty, WebhookEndpointProperty } from '../vocabulary/webhooks.js';

/**
 * Endpoints an organization may have: each one is a subscription to the event feed in the
 * process that serves it, so the number is held to what a dispatcher can serve.
 */
export const MAX_ENDPOINTS_PER_ORGANIZATION = 100;

/** Test messages of one endpoint that may wait at once: each is a row a client could pile up. */
export const MAX_WAITING_TEST_MESSAGES = 10;

/** How long a rotated-out secret still signs beside the new one. */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 60 * 60 * 1000;

export const WEBHOOK_ENDPOINT_LIST: ListResource<WebhookEndpointProperty> = {
  name: 'webhook_endpoints',
  kinds: {
    id: 'integer',
    url: 'text',
    description: 'text',
    enabled: 'boolean',
    disabled_reason: 'text',
    message_types: 'json',
    created_at: 'datetime',
    updated_at: 'datetime',
  },
  ...keyedById(),
  nullable: everyValueOf<
    NullableKeys<components['schemas']['WebhookEndpoint']> & WebhookEndpointProperty
  >()(['description', 'disabled_reason']),
};

/**
 * The delivery log of one endpoint, newest first; `status` is its one filter, matched exactly. The
 * endpoint is in the list's name, so a cursor given out for one endpoint is refused by another.
 */
export function webhookDeliveryList(endpointId: number): ListResource<WebhookDeliveryProperty> {
  return {
    name: `webhook_deliveries:${endpointId}`,
    kinds: { id: 'integer', status: 'exact' },
    ...keyedById('desc'),
    nullable: everyValueOf<
      NullableKeys<components['schemas']['WebhookDelivery']> & WebhookDeliveryProperty
    >()([]),
    // The log's ids are bigint on PostgreSQL: they keep growing as old attempts are swept.
    ids: 'bigint',
  };
}

/** Where the server's operator lets webhooks go (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
export interface WebhookTargetPolicy {
  /** Plain `http` URLs too, not only `https`. */
  allowHttp: boolean;
  /** Loopback, private and other non-public addresses too. */
  allowPrivateAddresses: boolean;
}

/** The longest URL an endpoint may have, sent or stored: the spec's bound on `WebhookUrl`. */
const MAX_URL_LENGTH = spec.components.schemas.WebhookUrl.maxLength;

/**
 * The URL's rules that need no network: absolute, `https` (or allowed `http`), a host, no user
 * name or password, and within the length bound as WHATWG parsers write it. Returns the parsed
 * URL, whose `href` is what is stored, so that what is shown is what deliveries (a WHATWG parser)
 * connect to: parsers disagree about some URLs as typed (`https://8.8.8.8\@127.0.0.1/` is host
 * 8.8.8.8 to a WHATWG parser and 127.0.0.1 to an RFC 3986 one; its href,
 * `https://8.8.8.8/@127.0.0.1/`, is 8.8.8.8 to both). Otherwise the problem at `loc`.
 */
export function checkWebhookUrl(
  raw: string,
  policy: Pick<WebhookTargetPolicy, 'allowHttp'>,
  loc: InputLocation = ['body', 'url'],
): URL | InputProblem {
  const problem = (msg: string): InputProblem => ({ loc, msg, type: 'value_error' });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return problem('is not an absolute URL; write it as https://host/path.');
  }
  const schemes = policy.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return problem(
      policy.allowHttp
        ? `uses ${url.protocol.slice(0, -1)}; a webhook URL uses https or http.`
        : `uses ${url.protocol.slice(0, -1)}; a webhook URL must use https (this server does not allow http).`,
    );
  }
  if (url.hostname === '') return problem('has no host; write it as https://host/path.');
  if (url.username !== '' || url.password !== '') {
    return problem(
      'carries a user name or password: every delivery would send it and every answer show it, and URL parsers disagree about which host such a URL names; remove it (a receiver authenticates messages by their signature).',
    );
  }
  if (url.href.length > MAX_URL_LENGTH) {
    return problem(
      `has ${url.href.length} characters as URL parsers write it (characters outside URLs percent-encoded: é is %C3%A9), the form it is stored in; at most ${MAX_URL_LENGTH} are accepted: shorten it.`,
    );
  }
  return url;
}

/** A new signing secret: `whsec_` and the base64 of 24 random bytes (Standard Webhooks' form). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The webhook-id of a test message: random, as it is sent once (retries aside). */
export function generateTestWebhookId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}
