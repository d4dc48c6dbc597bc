// EVENT_STREAMS_PER_KEY for every server process on the database together: a stream holds a slot
// row (db/repositories/event-stream-slots.ts) from its opening until its connection closes. This
// process renews its rows every RENEW_MS; a process that dies without removing them leaves its
// slots counting for SLOT_TTL_MS at most, the bound on how long a key may be refused a stream it
// no longer has.

import type { Db } from '../db/engine/client.js';
import {
  releaseStreamSlots,
  renewStreamSlots,
  takeStreamSlot,
} from '../db/repositories/event-stream-slots.js';

/** How long a slot counts after its process last renewed it. */
const SLOT_TTL_MS = 30_000;
/** A third of the lifetime: two renewals may fail before a live stream's slot lapses. */
const RENEW_MS = SLOT_TTL_MS / 3;

export class StreamSlots {
  /** The slots of this process's open streams: at most its open connections. */
  readonly #held = new Set<string>();
  /**
   * Per key, the last of its takes under way: a key's streams opening together take their slots
   * one after the other, where at once their transactions would conflict and be retried.
   */
  readonly #taking = new Map<string, Promise<unknown>>();
  /** Removals under way, which shutdown waits for. */
  readonly #releasing = new Set<Promise<void>>();
  /** The renewal tick, running only while a slot is held: an idle process, or app, has none. */
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    readonly perKey: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A slot of the key's, or null when it holds `perKey` streams in the fleet already. */
  take(keyId: string): Promise<string | null> {
    const taken = (this.#taking.get(keyId) ?? Promise.resolve())
      .catch(() => {})
      .then(async () => {
        const now = this.now();
        const slot = await takeStreamSlot(this.db, keyId, {
          perKey: this.perKey,
          now,
          expiresAt: now + SLOT_TTL_MS,
        });
        if (slot !== null) {
          this.#held.add(slot);
          this.#timer ??= setInterval(() => this.#renew(), RENEW_MS).unref();
        }
        return slot;
      });
    this.#taking.set(keyId, taken);
    void taken
      .catch(() => {})
      .finally(() => {
        if (this.#taking.get(keyId) === taken) this.#taking.delete(keyId);
      });
    return taken;
  }

  release(slot: string): void {
    if (!this.#held.delete(slot)) return;
    if (this.#held.size === 0) this.#stopRenewing();
    // Failed, the slot still lapses within SLOT_TTL_MS, no longer renewed.
    const releasing = releaseStreamSlots(this.db, [slot])
      .catch(() => {})
      .finally(() => this.#releasing.delete(releasing));
    this.#releasing.add(releasing);
  }

  /** Stops renewing and removes every slot still held (shutdown), once removals under way end. */
  async close(): Promise<void> {
    this.#stopRenewing();
    const held = [...this.#held];
    this.#held.clear();
    await Promise.all([...this.#releasing, releaseStreamSlots(this.db, held).catch(() => {})]);
  }

  // The rows dead processes left are removed by a renewal in a process with streams, or by their
  // key's next take.
  #renew(): void {
    const now = this.now();
    // A failed renewal is tried again at the next tick, within the lifetime.
    renewStreamSlots(this.db, [...this.#held], { now, until: now + SLOT_TTL_MS }).catch(() => {});
  }

  #stopRenewing(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
