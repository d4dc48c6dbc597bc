// What one API key holds at once in this process, counted per key id: open event streams
// (event-stream.ts).

/** Slots taken per API key id; a key with none has no entry. */
export class InFlightCounts {
  readonly #counts = new Map<string, number>();

  /** Takes one of `limit` slots of `keyId`; false (nothing taken) when all are taken. */
  tryTake(keyId: string, limit: number): boolean {
    const count = this.#counts.get(keyId) ?? 0;
    if (count >= limit) return false;
    this.#counts.set(keyId, count + 1);
    return true;
  }

  release(keyId: string): void {
    const count = (this.#counts.get(keyId) ?? 0) - 1;
    if (count > 0) this.#counts.set(keyId, count);
    else this.#counts.delete(keyId);
  }

  inFlight(keyId: string): number {
    return this.#counts.get(keyId) ?? 0;
  }
}
