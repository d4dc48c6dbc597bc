// One query at a time for a value many callers ask for at once (a WAL position): a caller gets
// the answer of a query that began after it asked, so the value is at least as new as its
// question, while callers who asked during one query share the next.

export interface FreshValue<T> {
  value: T;
  /** When its query began (performance.now()). */
  askedAt: number;
}

export class FreshReads<T> {
  readonly #read: () => Promise<T>;
  readonly #onRead: (fresh: FreshValue<T>) => void;
  #inFlight: { askedAt: number; done: Promise<FreshValue<T>> } | undefined;
  /** The query that begins once the one in flight has ended, shared by who asks meanwhile. */
  #next: Promise<FreshValue<T>> | undefined;

  /** `onRead` hears every answer, in the order the queries ran. */
  constructor(read: () => Promise<T>, onRead: (fresh: FreshValue<T>) => void) {
    this.#read = read;
    this.#onRead = onRead;
  }

  /** The value as read by a query that began at or after `since` (performance.now()). */
  since(since: number): Promise<FreshValue<T>> {
    if (this.#next) return this.#next;
    const current = this.#inFlight;
    if (!current) return this.#begin();
    if (current.askedAt >= since) return current.done;
    const next = current.done
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined;
        return this.#begin();
      });
    this.#next = next;
    return next;
  }

  #begin(): Promise<FreshValue<T>> {
    const askedAt = performance.now();
    const done = this.#read()
      .then((value) => {
        const fresh = { value, askedAt };
        this.#onRead(fresh);
        return fresh;
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    this.#inFlight = { askedAt, done };
    return done;
  }
}
