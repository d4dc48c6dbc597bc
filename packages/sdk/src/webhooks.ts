// `@agentline/sdk/webhooks`: verifies a message Agentline's webhooks delivered, as the Standard
// Webhooks specification says. It is an entry point of its own, written on Web Crypto alone, so a
// receiver (Node.js, a browser worker, an edge runtime) loads neither the client nor its
// dependencies.

import type {
  ExperimentStatusChange,
  WebhookEventMessage,
  WebhookStatusChangedMessage,
  WebhookTestMessageBody,
} from './generated/models.js';

export type { ExperimentStatusChange };

/**
 * The body of a webhook message, as the spec's `webhooks` declare it; `type` says what `data`
 * holds. `position` is the opaque token of what it reports (for an event, the one the event
 * stream sends as its `id:`): replay after it to have everything later sent again. A test message
 * has none.
 */
export type WebhookMessage =
  WebhookEventMessage | WebhookStatusChangedMessage | WebhookTestMessageBody;

/** How far `webhook-timestamp` may be from the receiver's clock, either way (the specification's 5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** Why a message was refused; each is the sender's doing, or an attacker's, never the receiver's setup. */
export type WebhookVerificationReason =
  'missing_header' | 'invalid_timestamp' | 'stale_timestamp' | 'bad_signature' | 'bad_json';

/**
 * The message is not one Agentline signed with one of the receiver's secrets just now: answer it
 * with a 400 and do not act on it. `reason` says which check refused it.
 */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/** The request's headers: a `Headers` (fetch, edge runtimes) or a plain object (Node.js, Express). */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

/**
 * The raw body exactly as received. A body parsed as JSON and serialized again rarely has the
 * bytes that were signed, so read the raw text or bytes (`await request.text()`,
 * `express.raw({ type: 'application/json' })`).
 */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

const SECRET_PREFIX = 'whsec_';
const MAX_SIGNATURES = 8;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== name) continue;
    if (Array.isArray(value)) return value.join(' ');
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function requiredHeader(headers: WebhookHeaders, name: string): string {
  const value = header(headers, name);
  if (!value) {
    throw new WebhookVerificationError(
      'missing_header',
      `The request has no ${name} header: it is not a webhook message, or a proxy dropped the header.`,
    );
  }
  return value;
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
}

/** A signing secret as the endpoint's create or rotate-secret answer gave it. */
function importSecret(secret: string) {
  let key: Uint8Array<ArrayBuffer> | undefined;
  try {
    key = decodeBase64(
      secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    );
  } catch {
    // left undefined: reported below
  }
  if (!key || key.length === 0) {
    // The receiver's own configuration, not the message: a TypeError, so that it is not answered
    // as a refused message but surfaces as the receiver's failure.
    throw new TypeError(
      'verifyWebhook: a secret is not whsec_ followed by base64: pass the secret exactly as the endpoint create or rotate-secret answer gave it',
    );
  }
  return globalThis.crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
}

function bytesOf(body: WebhookBody): Uint8Array {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/**
 * The decoded `v1` signatures of a webhook-signature header. Other schemes (`v1a`) may stand beside
 * them and are not ours to check; a malformed one matches nothing. Agentline sends two at most
 * (during a secret rotation), so a header with more is cut to the first few rather than costing
 * the receiver an HMAC per entry.
 */
function v1Signatures(header: string): Array<Uint8Array<ArrayBuffer>> {
  const signatures: Array<Uint8Array<ArrayBuffer>> = [];
  for (const entry of header.split(' ')) {
    const [version, encoded] = entry.split(',');
    if (version !== 'v1' || !encoded) continue;
    try {
      signatures.push(decodeBase64(encoded));
    } catch {
      continue;
    }
    if (signatures.length === MAX_SIGNATURES) break;
  }
  return signatures;
}

async function signedByAny(
  // Not CryptoKey by name: the server, which compiles this module too, has Node's types, not the DOM's.
  keys: ReadonlyArray<Awaited<ReturnType<typeof importSecret>>>,
  signatures: ReadonlyArray<Uint8Array<ArrayBuffer>>,
  signed: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  for (const key of keys) {
    for (const signature of signatures) {
      // subtle.verify computes the HMAC and compares it with the signature in constant time.
      if (await globalThis.crypto.subtle.verify('HMAC', key, signature, signed)) return true;
    }
  }
  return false;
}

/**
 * Checks that a webhook message comes from Agentline, unchanged and recent, and returns its
 * body. Pass the raw body, the request's headers and the endpoint's secret; during a rotation,
 * pass both secrets (`[newSecret, oldSecret]`): any one that signed the message passes.
 *
 * Throws `WebhookVerificationError` (answer 400, do nothing) when a header is missing, the
 * timestamp is more than 5 minutes from this clock, no signature matches, or the body is not a
 * JSON object; a `TypeError` when a secret is not `whsec_` plus base64 (the receiver's setup).
 * A message may arrive more than once: deduplicate by the `webhook-id` header.
 *
 * @example
 * const message = await verifyWebhook(await request.text(), request.headers, process.env.AGENTLINE_WEBHOOK_SECRET!);
 */
export async function verifyWebhook(
  body: WebhookBody,
  headers: WebhookHeaders,
  secret: string | readonly string[],
): Promise<WebhookMessage> {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) {
    throw new TypeError("verifyWebhook: no secret given: pass the endpoint's whsec_ secret");
  }
  const keys = await Promise.all(secrets.map(importSecret));

  const id = requiredHeader(headers, 'webhook-id');
  const timestampText = requiredHeader(headers, 'webhook-timestamp');
  const signatures = requiredHeader(headers, 'webhook-signature');

  if (!/^\d{1,15}$/.test(timestampText)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      `webhook-timestamp is "${timestampText.slice(0, 40)}", not whole seconds since 1970.`,
    );
  }
  const timestamp = Number(timestampText);
  const skew = Math.floor(Date.now() / 1000) - timestamp;
  if (Math.abs(skew) > WEBHOOK_TOLERANCE_SECONDS) {
    throw new WebhookVerificationError(
      'stale_timestamp',
      `webhook-timestamp is ${Math.abs(skew)} s ${skew > 0 ? 'old' : 'ahead of this clock'}, past the ${WEBHOOK_TOLERANCE_SECONDS} s allowed: a replayed message, or a wrong clock here.`,
    );
  }

  // Signed: `${id}.${timestamp}.` then the body's bytes, as they came.
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const bodyBytes = bytesOf(body);
  const signed = new Uint8Array(prefix.length + bodyBytes.length);
  signed.set(prefix);
  signed.set(bodyBytes, prefix.length);

  if (!(await signedByAny(keys, v1Signatures(signatures), signed))) {
    throw new WebhookVerificationError(
      'bad_signature',
      "No v1 signature of webhook-signature matches the body with the secret(s) given: the body was changed (verify the raw body, not re-serialized JSON), or the secret is not this endpoint's.",
    );
  }

  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bodyBytes));
  } catch {
    message = undefined;
  }
  if (
    typeof message !== 'object' ||
    message === null ||
    typeof (message as WebhookMessage).type !== 'string'
  ) {
    throw new WebhookVerificationError(
      'bad_json',
      'The signed body is not a JSON object with a type: not an Agentline webhook message.',
    );
  }
  return message as WebhookMessage;
}
