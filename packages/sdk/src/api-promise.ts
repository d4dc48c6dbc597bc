// What every method returns: a promise of the answer's body that can also give the whole answer.

import type { RateLimit } from './rate-limit.js';

/** The body of a successful answer with the `Response` it came in and its request id. */
export interface WithResponse<T> {
  data: T;
  response: Response;
  /** The answer's `X-Request-Id`: quote it when reporting a problem. */
  requestId: string | null;
  /** The API key's request quota and what is left of it (`RateLimit` fields); null without them. */
  rateLimit: RateLimit | null;
}

/**
 * A promise of the answer's body: `await client.events.list()` gives the page. With
 * `.withResponse()` it gives the page, the `Response` (status, headers), the request id and the
 * key's rate limit.
 *
 * Subclassing Promise keeps `instanceof Promise`, `Promise.all` and `await` working; `then` reads
 * from the whole answer, so a call whose caller only uses `withResponse()` leaves no second,
 * unobserved promise that could reject unhandled.
 */
export class ApiPromise<T> extends Promise<T> {
  // Promise's own methods (finally) build their results with the species: a plain Promise, since
  // this constructor takes an answer rather than an executor.
  static override get [Symbol.species]() {
    return Promise;
  }

  readonly #answer: Promise<WithResponse<T>>;

  constructor(answer: Promise<WithResponse<T>>) {
    super((resolve) => resolve(undefined as T));
    this.#answer = answer;
  }

  /** The body with the `Response` and the request id. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#answer;
  }

  override then<Fulfilled = T, Rejected = never>(
    onfulfilled?: ((value: T) => Fulfilled | PromiseLike<Fulfilled>) | null,
    onrejected?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null,
  ): Promise<Fulfilled | Rejected> {
    return this.#answer.then((answer) => answer.data).then(onfulfilled, onrejected);
  }
}
