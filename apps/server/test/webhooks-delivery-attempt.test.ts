// One delivery attempt against a real receiver on 127.0.0.1: the Standard Webhooks headers, checked
// with the reference verification library as a receiver would, and what the attempt makes of a
// failing, slow, redirecting or oversized answer.

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryClient, type OutgoingMessage } from '../src/runtime/webhooks/delivery-attempt.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const ALLOWED = { allowHttp: true, allowPrivateAddresses: true };
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const message: OutgoingMessage = {
  webhookId: 'msg_2KWPBgLlAfxdpx2AI54pPJ',
  payload: JSON.stringify({ type: 'event', position: 'tok', data: { id: 1, note: 'héllo' } }),
};

let receiver: WebhookReceiver;
let client: DeliveryClient;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  client = new DeliveryClient(ALLOWED, 1_000);
});
afterAll(async () => {
  await client.close();
  await receiver.close();
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.answerWith(() => ({ status: 204 }));
});

describe('a delivery attempt', () => {
  it('sends a message that the reference library verifies', async () => {
    const secret = newSecret();
    const result = await client.attempt(receiver.url, message, { current: secret, previous: null });
    expect(result).toMatchObject({ delivered: true, status: 204, error: null });
    const [request] = receiver.received;
    expect(request!.body).toBe(message.payload);
    expect(request!.headers['webhook-id']).toBe(message.webhookId);
    expect(request!.headers['content-type']).toBe('application/json');
    const headers = request!.headers as Record<string, string>;
    expect(new Webhook(secret).verify(request!.body, headers)).toEqual(JSON.parse(message.payload));
    expect(() => new Webhook(newSecret()).verify(request!.body, headers)).toThrow();
  });

  it('signs with both secrets while the previous one is valid', async () => {
    const current = newSecret();
    const previous = newSecret();
    await client.attempt(receiver.url, message, { current, previous });
    const [request] = receiver.received;
    const signatures = String(request!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    for (const signature of signatures) expect(signature).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const headers = request!.headers as Record<string, string>;
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(request!.body, headers)).toEqual(
        JSON.parse(message.payload),
      );
    }
  });

  it('reports a failing answer with a short head of its body', async () => {
    receiver.answerWith(() => ({ status: 500, body: `oops ${'x'.repeat(1000)}` }));
    const result = await client.attempt(receiver.url, message, {
      current: newSecret(),
      previous: null,
    });
    expect(result.delivered).toBe(false);
    expect(result.status).toBe(500);
    expect(result.error).toMatch(/^answered 500: oops x+$/);
    expect(result.error!.length).toBeLessThanOrEqual(256);
  });

  it('reports 410 as such', async () => {
    receiver.answerWith(() => ({ status: 410 }));
    const result = await client.attempt(receiver.url, message, {
      current: newSecret(),
      previous: null,
    });
    expect(result).toMatchObject({ delivered: false, status: 410, error: 'answered 410' });
  });

  it('follows no redirect', async () => {
    receiver.answerWith((_request, index) =>
      index === 0
        ? { status: 307, headers: { location: `${receiver.url}/elsewhere` } }
        : { status: 204 },
    );
    const result = await client.attempt(receiver.url, message, {
      current: newSecret(),
      previous: null,
    });
    expect(result).toMatchObject({ delivered: false, status: 307 });
    expect(result.error).toContain('redirects are not followed');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received).toHaveLength(1);
  });

  it('reads only the head of a huge answer', async () => {
    receiver.answerWith(() => ({ status: 502, bodyBytes: 200 * 1024 * 1024 }));
    const result = await client.attempt(receiver.url, message, {
      current: newSecret(),
      previous: null,
    });
    expect(result).toMatchObject({ delivered: false, status: 502 });
    expect(result.error!.length).toBeLessThanOrEqual(256);
    // 200 MiB would take far longer than the attempt's whole time to read.
    expect(result.durationMs).toBeLessThan(1_000);
  });

  it('gives up on a receiver that answers too slowly', async () => {
    receiver.answerWith(() => ({ status: 204, delayMs: 3_000 }));
    const result = await client.attempt(receiver.url, message, {
      current: newSecret(),
      previous: null,
    });
    expect(result).toMatchObject({ delivered: false, status: null, error: 'no answer within 1 s' });
  });

  it('reports a refused connection by its code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const result = await client.attempt(`http://127.0.0.1:${port}/`, message, {
      current: newSecret(),
      previous: null,
    });
    expect(result).toMatchObject({
      delivered: false,
      status: null,
      error: 'could not deliver: ECONNREFUSED',
    });
  });

  it('is abandoned when its signal aborts', async () => {
    receiver.answerWith(() => ({ status: 204, delayMs: 800 }));
    const result = await client.attempt(
      receiver.url,
      message,
      { current: newSecret(), previous: null },
      AbortSignal.timeout(100),
    );
    expect(result).toMatchObject({ delivered: false, error: 'abandoned' });
  });

  it('refuses non-public addresses unless they are allowed, literal or resolved', async () => {
    const strict = new DeliveryClient({ allowHttp: true, allowPrivateAddresses: false }, 1_000);
    try {
      const secrets = { current: newSecret(), previous: null };
      const literal = await strict.attempt(receiver.url, message, secrets);
      expect(literal).toMatchObject({ delivered: false, status: null });
      expect(literal.error).toContain('127.0.0.1 is a loopback address');
      const named = await strict.attempt(
        receiver.url.replace('127.0.0.1', 'localhost'),
        message,
        secrets,
      );
      expect(named).toMatchObject({ delivered: false, status: null });
      expect(named.error).toContain('localhost resolves to');
      expect(receiver.received).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});
