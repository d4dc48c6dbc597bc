// A webhook message's delivery, from what it is to what its attempts leave stored. Its id is
// derived from what it tells (a retry, a takeover after a crash and a replay all send the same
// webhook-id, by which receivers deduplicate) and its body `{type, position, data}` is the same
// bytes on every attempt. An attempt is signed as Standard Webhooks does (any of its verification
// libraries works unchanged) and POSTed to someone else's server: it gets 10 s, no redirect is
// followed (one could lead to an address the URL check never saw), at most 64 KiB of its answer
// is read. What the outcome means (the next attempt, a failed message, an endpoint turned off) is
// stored, and a handled message lets the endpoint's stored position move past it.

import { createHash, createHmac } from 'node:crypto';
import type { Dispatcher, request } from 'undici';
import type { Db } from '../../db/engine/client.js';
import { storedActor } from '../../db/repositories/experiment-history.js';
import {
  disableEndpoint,
  recordAttempt,
  type LeasedEndpoint,
  type StatusChangeRow,
} from '../../db/repositories/webhook-dispatch.js';
import {
  literalHostRefusal,
  NonPublicAddressError,
  publicOnlyLookup,
  type TargetAddressSettings,
} from '../../domain/webhook-target-address.js';
import type { components } from '../../spec-types.js';
import { toWireActor } from '../../wire/experiments.js';

type StatusChangedMessage = components['schemas']['WebhookStatusChangedMessage'];

export type MessageSource = 'event' | 'history';

/** `msg_` and the base64url of the first 16 bytes of SHA-256 over what the message tells. */
export function webhookIdOf(endpointId: number, source: MessageSource, sourceId: number): string {
  const digest = createHash('sha256').update(`${endpointId}:${source}:${sourceId}`).digest();
  return `msg_${digest.subarray(0, 16).toString('base64url')}`;
}

/** The body of an event message; `eventJson` is the event's wire object as the list shows it. */
export function eventPayload(position: string, eventJson: string): string {
  return `{"type":"event","position":${JSON.stringify(position)},"data":${eventJson}}`;
}

export const STATUS_CHANGED = 'experiment.status_changed';

const STATUS_AFTER: Record<StatusChangeRow['action'], StatusChangedMessage['data']['status']> = {
  started: 'running',
  stopped: 'stopped',
  ended: 'stopped',
};

/** The body of an experiment's start, stop or planned end. */
export function statusChangePayload(position: string, change: StatusChangeRow): string {
  // A stop call is `stopped` whatever the record says later; an end by plan reads its reason
  // from the experiment (the history records the status, not why it ended).
  const endedReason =
    change.action === 'started'
      ? null
      : change.action === 'stopped'
        ? 'stopped'
        : change.endedReason;
  const message: StatusChangedMessage = {
    type: STATUS_CHANGED,
    position,
    data: {
      experiment_id: change.experimentId,
      status: STATUS_AFTER[change.action],
      ended_reason: endedReason,
      occurred_at: change.occurredAt,
      actor: toWireActor(storedActor(change)),
    },
  };
  return JSON.stringify(message);
}

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

/**
 * The webhook-signature header: one `v1,` signature per secret that signs, space-separated, each
 * the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the secret's bytes,
 * as Standard Webhooks signs. Not through the `standardwebhooks` package, whose
 * SHA-256 is written in JavaScript: it was a twentieth of the webhook thread's time where
 * node:crypto's is native (docs/benchmarks.md, "Figures behind the code"); the tests verify
 * every signature with that package.
 */
function signatureHeader(
  secrets: SigningSecrets,
  message: OutgoingMessage,
  timestamp: string,
): string {
  const signed = `${message.webhookId}.${timestamp}.${message.payload}`;
  return [secrets.current, secrets.previous]
    .filter((secret): secret is string => secret !== null)
    .map((secret) => {
      // As Standard Webhooks' libraries read a secret: the base64 after `whsec_`, decoded.
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
    })
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

/**
 * Sends attempts over one connection pool whose lookup refuses non-public addresses. undici is
 * loaded with the pool, on the first attempt: most server processes deliver nothing, and undici's
 * start-up cost every process start CPU in both its threads (docs/benchmarks.md, "Figures behind
 * the code").
 */
export class DeliveryClient {
  readonly #settings: TargetAddressSettings;
  readonly #timeoutMs: number;
  #pool: Promise<{ dispatcher: Dispatcher; request: typeof request }> | undefined;

  constructor(settings: TargetAddressSettings, timeoutMs = ATTEMPT_TIMEOUT_MS) {
    this.#settings = settings;
    this.#timeoutMs = timeoutMs;
  }

  #connectionPool() {
    this.#pool ??= import('undici').then(({ Agent, request }) => {
      const lookup = publicOnlyLookup(this.#settings);
      const dispatcher = new Agent({
        connect: { timeout: this.#timeoutMs, ...(lookup ? { lookup } : {}) },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      return { dispatcher, request };
    });
    return this.#pool;
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
    // The webhook-timestamp header, in seconds since the epoch, and part of what is signed.
    const timestamp = String(Math.floor(Date.now() / 1000));
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      const { dispatcher, request } = await this.#connectionPool();
      const response = await request(target, {
        method: 'POST',
        dispatcher,
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': message.webhookId,
          'webhook-timestamp': timestamp,
          'webhook-signature': signatureHeader(secrets, message, timestamp),
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
    if (this.#pool) await (await this.#pool).dispatcher.destroy();
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

/** An endpoint whose every attempt has failed for this long is disabled. */
export const FAILING_DISABLE_MS = 5 * 86_400_000;
/** How long the delivery log keeps an attempt, and a finished message. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 86_400_000;
/** How much each wait of the retry schedule varies, either way, so retries do not come in waves. */
const JITTER = 0.1;

/**
 * When the next attempt of a message is due after `attemptsMade` attempts failed, or null when
 * the schedule is used up and the message has failed.
 */
export function nextAttemptAt(
  attemptsMade: number,
  schedule: readonly number[],
  now: number,
  random: () => number = Math.random,
): number | null {
  const wait = schedule[attemptsMade - 1];
  if (wait === undefined) return null;
  return now + Math.round(wait * (1 - JITTER + 2 * JITTER * random()));
}

/** Why an endpoint is turned off after an attempt, or null when it stays on. */
export function disabledReason(
  responseStatus: number | null,
  failingSince: string | null,
  now: number,
): string | null {
  if (responseStatus === 410) {
    return `The receiver answered 410 Gone on ${new Date(now).toISOString()}; set enabled to true once it accepts messages again (delivery resumes where it stopped).`;
  }
  if (failingSince !== null && now - Date.parse(failingSince) >= FAILING_DISABLE_MS) {
    return `Every delivery attempt since ${failingSince} failed (5 days); set enabled to true once the receiver works again (delivery resumes where it stopped).`;
  }
  return null;
}

/** A message an endpoint's worker has taken in, queued or in flight. */
export interface WorkItem {
  /** Where it comes from: an event or history id to count as handled, or a stored message. */
  source: 'event' | 'history' | 'stored';
  /** The event id, history id or webhook_messages id. */
  sourceId: number;
  webhookId: string;
  type: string;
  position: string | null;
  payload: string;
  attemptsMade: number;
  /** When it was read (performance.now()): it is sent only once the lease is known held since. */
  takenAt: number;
}

/** Stores the attempt's outcome; true when it turned the endpoint off. */
export async function storeOutcome(
  db: Db,
  retrySchedule: readonly number[],
  endpoint: Pick<LeasedEndpoint, 'id' | 'organizationId'>,
  item: WorkItem,
  result: AttemptResult,
): Promise<boolean> {
  const now = Date.now();
  const attempt = item.attemptsMade + 1;
  const next = result.delivered ? null : nextAttemptAt(attempt, retrySchedule, now);
  const failingSince = await recordAttempt(
    db,
    {
      endpointId: endpoint.id,
      organizationId: endpoint.organizationId,
      webhookId: item.webhookId,
      type: item.type,
      position: item.position,
      payload: item.payload,
      attempt,
      status: result.delivered ? 'delivered' : next === null ? 'failed' : 'pending',
      responseStatus: result.status,
      error: result.error,
      durationMs: result.durationMs,
      attemptedAt: new Date(now).toISOString(),
      nextAttemptAt: next === null ? null : new Date(next).toISOString(),
    },
    item.source === 'stored' ? item.sourceId : null,
  );
  const reason = disabledReason(result.status, failingSince, now);
  if (reason) await disableEndpoint(db, endpoint.id, reason, new Date(now).toISOString());
  return reason !== null;
}

/**
 * How far a stream of ids (events, or experiment history entries) has been handled when they are
 * taken in order but finish in any order (up to 8 in flight): the position that may be stored is
 * the highest id below which none is still outstanding.
 */
export class HandledThrough {
  readonly #outstanding = new Set<number>();
  #received: number;

  constructor(start: number) {
    this.#received = start;
  }

  /** The highest id taken in, or passed over as matching nothing. */
  get received(): number {
    return this.#received;
  }

  /** Every id at or below this is handled (or matched nothing). */
  get through(): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const id of this.#outstanding) lowest = Math.min(lowest, id);
    return lowest === Number.POSITIVE_INFINITY ? this.#received : lowest - 1;
  }

  take(id: number): void {
    this.#outstanding.add(id);
    this.#received = Math.max(this.#received, id);
  }

  /** Nothing up to `id` was taken in: it is passed over. */
  passOver(id: number): void {
    this.#received = Math.max(this.#received, id);
  }

  done(id: number): void {
    this.#outstanding.delete(id);
  }
}
