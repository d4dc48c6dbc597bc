// How many server processes share this database: each key's shares of requests in progress and
// waiting (http/admission.ts) are divided between them, so that behind a load balancer that
// spreads a key's requests a key holds about its share in the fleet, not its share in each
// process. Every process beats every BEAT_MS and counts those that beat within LIVE_MS; one that
// stops leaves at once, one that dies stops counting after LIVE_MS.

import { randomUUID } from 'node:crypto';
import type { Db } from '../db/engine/client.js';
import { heartbeat, leave } from '../db/repositories/server-processes.js';

const BEAT_MS = 5_000;
/** Three beats: a process two beats late still counts. */
const LIVE_MS = 3 * BEAT_MS;
/** A row this old is a process long gone: removed. */
const FORGET_MS = 3_600_000;

export class FleetMembers {
  readonly #id = randomUUID();
  #count = 1;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {}

  /** The processes seen alive at the last beat, this one included. */
  get count(): number {
    return this.#count;
  }

  /** Joins (the first beat, awaited), then beats every BEAT_MS; a failed beat keeps the count. */
  async start(): Promise<void> {
    await this.#beat();
    this.#timer = setInterval(() => void this.#beat().catch(() => {}), BEAT_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await leave(this.db, this.#id).catch(() => {});
  }

  async #beat(): Promise<void> {
    const now = Date.now();
    this.#count = await heartbeat(this.db, this.#id, {
      now,
      liveAfter: now - LIVE_MS,
      forgetBefore: now - FORGET_MS,
    });
  }
}
