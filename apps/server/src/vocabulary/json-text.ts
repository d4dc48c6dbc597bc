// The one place an answer's body is JSON text the handler did not serialise from a typed value
// in the same request: the events list, whose items the database renders (repositories/events.ts,
// itemJson), and the prompts list, whose finished pages are kept between requests
// (http/versioned-cache.ts). Hono's typed responses describe objects, not text, so these answers
// need one cast; http/json-text.ts makes it, and only for text branded here with the type it was
// made from.
//
// Why the text is safe to send as the route's 200 body:
// - `jsonText(value)` serialises a value that the compiler checked against that type;
// - the database's JSON is built by one SQL expression from the list's own property list, and the
//   row type of the repository that holds that SQL (ListedEvent) is the one place that brands it;
// - a kept page is the bytes of a `jsonText` made earlier for the same key and data version.
// Tests validate every answer against the spec, cached and database-rendered ones included
// (test/prompts-cache.test.ts, the events list suites), so a drift fails them.

declare const madeFrom: unique symbol;

/** JSON text that is the serialisation of a value of type T. */
export type JsonText<T> = string & { readonly [madeFrom]: T };

export function jsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value) as JsonText<T>;
}

/** The UTF-8 bytes of a JsonText<T>, as a cache keeps them. */
export type JsonBytes<T> = Uint8Array<ArrayBuffer> & { readonly [madeFrom]: T };

const utf8 = new TextEncoder();

/**
 * In an ArrayBuffer of their own: Buffer.from would slice a small text's bytes out of Node's
 * shared 8 KiB pool, and a kept slice holds all of its pool's memory.
 */
export function jsonBytes<T>(text: JsonText<T>): JsonBytes<T> {
  return utf8.encode(text) as JsonBytes<T>;
}
