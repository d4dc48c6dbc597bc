// How far a stream of ids (events, or experiment history entries) has been handled when they are
// taken in order but finish in any order (up to 8 in flight): the position that may be stored is
// the highest id below which none is still outstanding.

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
