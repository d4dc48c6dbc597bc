// One delivery attempt: sign the message as Standard Webhooks does (so any of its verification
// libraries works unchanged), POST it, and tell what came of it. The receiver is someone else's
// server: it gets 10 s, no redirect is followed (a redirect could lead to an address the URL check
// never saw), at most 64 KiB of its answer is read, and only a short head of that is kept.

import { Webhook } from 'standardwebhooks';
import { Agent, request, type Dispatcher } from 'undici';
import {
  literalHostRefusal,
  NonPublicAddressError,
  publicOnlyLookup,
  type TargetAddressSettings,
} from '../../domain/webhook-target-address.js';

/** The signing secrets of an endpoint: the current one, and the one before it while it still signs. */
export interface SigningSecrets {
  current: string;
  previous: string | null;
}

/** A message as every attempt sends it: its stable id and its body, the same bytes each time. */
export interface OutgoingMessage {
  webhookId: string;
  payload: string;
}

export interface AttemptResult {
  /** A 2xx answer. */
  delivered: boolean;
  /** The receiver's status, or null when none came (refused, timed out, not allowed). */
  status: number | null;
  /** Why it was not delivered, short: never a secret, at most the head of the receiver's answer. */
  error: string | null;
  durationMs: number;
}

export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Bytes of an answer read at most; the rest is dropped with the connection. */
export const ANSWER_BYTES_READ = 64 * 1024;
/** Characters of an answer kept in the delivery log at most. */
export const ANSWER_CHARS_KEPT = 256;

const USER_AGENT = 'Agentline-Webhooks/1';

/** The webhook-signature header: one `v1,` signature per secret that signs, space-separated. */
export function signatureHeader(
  secrets: SigningSecrets,
  message: OutgoingMessage,
  timestamp: Date,
): string {
  return [secrets.current, secrets.previous]
    .filter((secret): secret is string => secret !== null)
    .map((secret) => new Webhook(secret).sign(message.webhookId, timestamp, message.payload))
    .join(' ');
}

/** The answer's head as one printable line, for the log. */
function answerHead(bytes: Buffer): string {
  return bytes
    .toString('utf8', 0, Math.min(bytes.length, ANSWER_CHARS_KEPT * 4))
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .slice(0, ANSWER_CHARS_KEPT);
}

function failureText(error: unknown): string {
  if (error instanceof NonPublicAddressError) return error.message;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof NonPublicAddressError) return cause.message;
  const code = [error, cause]
    .map((value) => (value as { code?: unknown } | undefined)?.code)
    .find((value): value is string => typeof value === 'string');
  return `could not deliver: ${code ?? (error as Error).name}`;
}

/** Sends attempts over one connection pool whose lookup refuses non-public addresses. */
export class DeliveryClient {
  readonly #settings: TargetAddressSettings;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;

  constructor(settings: TargetAddressSettings, timeoutMs = ATTEMPT_TIMEOUT_MS) {
    this.#settings = settings;
    this.#timeoutMs = timeoutMs;
    const lookup = publicOnlyLookup(settings);
    this.#dispatcher = new Agent({
      connect: { timeout: timeoutMs, ...(lookup ? { lookup } : {}) },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  }

  /** Attempts `message` once at `url`; `signal` abandons it (the process is stopping). */
  async attempt(
    url: string,
    message: OutgoingMessage,
    secrets: SigningSecrets,
    signal?: AbortSignal,
  ): Promise<AttemptResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const target = new URL(url);
    const refusal = literalHostRefusal(target.hostname, this.#settings);
    if (refusal) return { delivered: false, status: null, error: refusal, durationMs: 0 };
    const now = new Date();
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await request(target, {
        method: 'POST',
        dispatcher: this.#dispatcher,
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': message.webhookId,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signatureHeader(secrets, message, now),
        },
        body: message.payload,
      });
      const head = await readHead(response.body);
      const { statusCode } = response;
      const delivered = statusCode >= 200 && statusCode < 300;
      let error: string | null = null;
      if (statusCode >= 300 && statusCode < 400) {
        error = `answered ${statusCode}: redirects are not followed; point the endpoint at the final URL`;
      } else if (!delivered) {
        const text = answerHead(head);
        error = text ? `answered ${statusCode}: ${text}` : `answered ${statusCode}`;
      }
      return {
        delivered,
        status: statusCode,
        error: error?.slice(0, ANSWER_CHARS_KEPT) ?? null,
        durationMs: took(),
      };
    } catch (error) {
      return {
        delivered: false,
        status: null,
        error: timeout.aborted
          ? `no answer within ${this.#timeoutMs / 1000} s`
          : signal?.aborted
            ? 'abandoned'
            : failureText(error),
        durationMs: took(),
      };
    }
  }

  async close(): Promise<void> {
    await this.#dispatcher.destroy();
  }
}

/** Up to ANSWER_BYTES_READ bytes of a body; the rest is not read (the connection is dropped). */
async function readHead(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= ANSWER_BYTES_READ) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, ANSWER_BYTES_READ);
}
