// verifyWebhook against messages signed by the Standard Webhooks reference library, the one the
// server signs with: what it signed passes, and every change or replay of it is refused.

import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  WEBHOOK_TOLERANCE_SECONDS,
  WebhookVerificationError,
  verifyWebhook,
  type WebhookVerificationReason,
} from '../src/webhooks.js';

/** A secret as the API hands it out: `whsec_` and the base64 of 24 random bytes. */
function newSecret(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

const message = {
  type: 'event',
  position: 'JvMyRXxTUxn1KMXCWfp4ww',
  data: { type: 'session-started', session_id: 's-1', note: 'caf\u00e9 \u2615' },
};
const body = JSON.stringify(message);

/** The headers the server sends: every secret's signature, space-separated. */
function signedHeaders(
  secrets: readonly string[],
  payload = body,
  at = new Date(),
  id = 'msg_QJ1X6dJ7pGm2Ewz9YcRk5A',
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, payload)).join(' '),
  };
}

async function refusal(
  verifying: Promise<unknown>,
): Promise<{ reason: WebhookVerificationReason; message: string }> {
  const error = await verifying.then(
    () => new Error('verified'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  const { reason, message: text } = error as WebhookVerificationError;
  return { reason, message: text };
}

const secret = newSecret();

describe('verifyWebhook', () => {
  it('returns the body of a message the reference library signed, from any body and header form', async () => {
    const headers = signedHeaders([secret]);
    await expect(verifyWebhook(body, headers, secret)).resolves.toEqual(message);
    const bytes = new TextEncoder().encode(body);
    await expect(verifyWebhook(bytes, headers, secret)).resolves.toEqual(message);
    await expect(verifyWebhook(bytes.buffer, headers, secret)).resolves.toEqual(message);
    await expect(verifyWebhook(Buffer.from(body), headers, secret)).resolves.toEqual(message);
    await expect(verifyWebhook(body, new Headers(headers), secret)).resolves.toEqual(message);
    const shouting = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]),
    );
    await expect(verifyWebhook(body, shouting, secret)).resolves.toEqual(message);
    // The prefix is the secret's label: the base64 alone is the same key.
    await expect(verifyWebhook(body, headers, secret.slice('whsec_'.length))).resolves.toEqual(
      message,
    );
  });

  it('refuses a changed body, a changed timestamp and a wrong secret', async () => {
    const headers = signedHeaders([secret]);
    const changed = body.replace('s-1', 's-2');
    expect((await refusal(verifyWebhook(changed, headers, secret))).reason).toBe('bad_signature');
    const reserialized = JSON.stringify(message, null, 1);
    expect((await refusal(verifyWebhook(reserialized, headers, secret))).reason).toBe(
      'bad_signature',
    );
    const later = {
      ...headers,
      'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1),
    };
    expect((await refusal(verifyWebhook(body, later, secret))).reason).toBe('bad_signature');
    const otherId = { ...headers, 'webhook-id': 'msg_another' };
    expect((await refusal(verifyWebhook(body, otherId, secret))).reason).toBe('bad_signature');
    const wrong = await refusal(verifyWebhook(body, headers, newSecret()));
    expect(wrong.reason).toBe('bad_signature');
    expect(wrong.message).toMatch(/raw body.*secret/);
  });

  it('refuses a timestamp more than 5 minutes old or ahead, and takes one within', async () => {
    const minutes = (n: number) => new Date(Date.now() + n * 60_000);
    expect(WEBHOOK_TOLERANCE_SECONDS).toBe(300);
    const stale = await refusal(
      verifyWebhook(body, signedHeaders([secret], body, minutes(-6)), secret),
    );
    expect(stale.reason).toBe('stale_timestamp');
    expect(stale.message).toMatch(/\b3[56]\d s old/);
    const ahead = await refusal(
      verifyWebhook(body, signedHeaders([secret], body, minutes(6)), secret),
    );
    expect(ahead.reason).toBe('stale_timestamp');
    expect(ahead.message).toMatch(/ahead of this clock/);
    // A minute of margin on each side for a slow machine.
    await expect(
      verifyWebhook(body, signedHeaders([secret], body, minutes(-4)), secret),
    ).resolves.toEqual(message);
    await expect(
      verifyWebhook(body, signedHeaders([secret], body, minutes(4)), secret),
    ).resolves.toEqual(message);
  });

  it('passes a message signed during a rotation with either secret, or both', async () => {
    const previous = newSecret();
    const current = newSecret();
    const headers = signedHeaders([current, previous]);
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    await expect(verifyWebhook(body, headers, current)).resolves.toEqual(message);
    await expect(verifyWebhook(body, headers, previous)).resolves.toEqual(message);
    await expect(verifyWebhook(body, headers, [newSecret(), previous])).resolves.toEqual(message);
    // A receiver that already moved to the new secret, after the old one stopped signing.
    await expect(
      verifyWebhook(body, signedHeaders([current]), [current, previous]),
    ).resolves.toEqual(message);
    const neither = await refusal(verifyWebhook(body, headers, [newSecret(), newSecret()]));
    expect(neither.reason).toBe('bad_signature');
  });

  it('names a missing header and a timestamp that is not whole seconds', async () => {
    const headers = signedHeaders([secret]);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const without = Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
      const missing = await refusal(verifyWebhook(body, without, secret));
      expect(missing.reason).toBe('missing_header');
      expect(missing.message).toContain(name);
    }
    for (const timestamp of ['1.7e9', '-5', '12abc', '']) {
      const odd = { ...headers, 'webhook-timestamp': timestamp };
      const { reason } = await refusal(verifyWebhook(body, odd, secret));
      expect(reason).toBe(timestamp === '' ? 'missing_header' : 'invalid_timestamp');
    }
  });

  it('skips signatures of other schemes and malformed ones, and needs one v1 that matches', async () => {
    const headers = signedHeaders([secret]);
    const [, good] = headers['webhook-signature']!.split(',');
    const mixed = { ...headers, 'webhook-signature': `v1a,AAAA v1,%%% v2,${good} v1,${good}` };
    await expect(verifyWebhook(body, mixed, secret)).resolves.toEqual(message);
    for (const signature of [`v1a,${good}`, `v2,${good}`, 'v1,', 'v1,!!!!', good!]) {
      const bad = { ...headers, 'webhook-signature': signature };
      expect((await refusal(verifyWebhook(body, bad, secret))).reason).toBe('bad_signature');
    }
  });

  it('refuses a signed body that is not a JSON message', async () => {
    for (const payload of ['not json', '[1,2]', '"text"', '{"position":"x"}']) {
      const { reason } = await refusal(
        verifyWebhook(payload, signedHeaders([secret], payload), secret),
      );
      expect(reason).toBe('bad_json');
    }
    const invalidUtf8 = new Uint8Array([0x7b, 0xff, 0x7d]);
    const headers = signedHeaders([secret], new TextDecoder().decode(invalidUtf8));
    // Signed over the bytes as they came, so a body that is not UTF-8 never verifies as JSON.
    await expect(verifyWebhook(invalidUtf8, headers, secret)).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
  });

  it("throws a TypeError, not a refusal, for a secret that is not one (the receiver's setup)", async () => {
    const headers = signedHeaders([secret]);
    for (const bad of ['', 'whsec_', 'whsec_not base64!', []]) {
      const error = await verifyWebhook(body, headers, bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/secret/);
    }
  });
});
