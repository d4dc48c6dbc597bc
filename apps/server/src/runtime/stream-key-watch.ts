// An event stream answers to its API key for as long as it is open, not only when it opens:
// authentication is trusted per process for AUTHENTICATION_TRUST_MS (use-cases/authentication.ts),
// so a revoked key's requests are refused within it, and a stream that outlived its key would
// keep delivering events for as long as its client stayed connected. The process's streams share
// one watch: one read of all their keys per interval, from the database, so a revocation or a role
// change made by any process or the CLI reaches every process's streams.

import { activeKeyPermissions } from '../db/repositories/api-keys.js';
import type { Db } from '../db/engine/client.js';
import type { Permission } from '../vocabulary/permissions.js';
import { eventsStreamRoute } from '../generated/routes.js';
import type { components } from '../spec-types.js';
import { AUTHENTICATION_TRUST_MS } from '../use-cases/authentication.js';

type EventStreamError = components['schemas']['EventStreamError'];

/** Why a stream's key may no longer read it, as the stream's last message says. */
export interface StreamKeyLoss extends EventStreamError {
  code: Extract<EventStreamError['code'], 'UNAUTHENTICATED' | 'PERMISSION_DENIED'>;
}

type KeyLost = (loss: StreamKeyLoss) => void;

/** Twice per trust window, so a change reaches a stream well within a second of its commit. */
const CHECK_INTERVAL_MS = AUTHENTICATION_TRUST_MS / 2;

const STREAM_PERMISSION: Permission = eventsStreamRoute['x-agentline-permission'];

const REVOKED: StreamKeyLoss = {
  code: 'UNAUTHENTICATED',
  detail:
    'The API key this stream was opened with has been revoked or no longer exists, so the stream has ended; ask an operator for a valid key and reconnect with it, sending the last event id received as Last-Event-ID.',
};

const DENIED: StreamKeyLoss = {
  code: 'PERMISSION_DENIED',
  detail: `The role of the API key this stream was opened with no longer has the ${STREAM_PERMISSION} permission, so the stream has ended; ask an operator to add it to the role, or reconnect with another key, sending the last event id received as Last-Event-ID.`,
};

/**
 * The keys of a process's open streams, read again every CHECK_INTERVAL_MS while any is open. It
 * holds one entry per open stream, so it is bounded as the streams are (EVENT_STREAMS_PER_KEY per
 * key).
 */
export class StreamKeyWatch {
  readonly #db: Db;
  readonly #streams = new Map<string, Set<KeyLost>>();
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  #closed = false;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Calls `lost` once, at the first check that finds the key revoked or without the permission. */
  watch(keyId: string, lost: KeyLost): void {
    if (this.#closed) return;
    let streams = this.#streams.get(keyId);
    if (!streams) {
      streams = new Set();
      this.#streams.set(keyId, streams);
    }
    streams.add(lost);
    this.#schedule();
  }

  unwatch(keyId: string, lost: KeyLost): void {
    const streams = this.#streams.get(keyId);
    if (!streams) return;
    streams.delete(lost);
    if (streams.size === 0) this.#streams.delete(keyId);
  }

  /** Stops checking (the process is shutting down and its streams are ending). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#streams.clear();
  }

  #schedule(): void {
    if (this.#closed || this.#checking || this.#timer || this.#streams.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#check();
    }, CHECK_INTERVAL_MS);
  }

  async #check(): Promise<void> {
    this.#checking = true;
    try {
      const keyIds = [...this.#streams.keys()];
      const active = await activeKeyPermissions(this.#db, keyIds);
      for (const keyId of keyIds) {
        const permissions = active.get(keyId);
        if (permissions?.includes(STREAM_PERMISSION)) continue;
        const loss = permissions ? DENIED : REVOKED;
        for (const lost of [...(this.#streams.get(keyId) ?? [])]) lost(loss);
        this.#streams.delete(keyId);
      }
    } catch {
      // The database did not answer: the next interval reads again. The streams' own reads fail
      // the same way meanwhile, and the feed ends them with SERVICE_UNAVAILABLE.
    } finally {
      this.#checking = false;
      this.#schedule();
    }
  }
}
