// JSON text branded with the type it was made from, for the answers whose bodies a handler does
// not serialise from a typed value in the same request (the events list, the prompts list): the
// jsonTextResponse of http/versioned-cache.ts casts only text branded here (docs/architecture.md,
// "The JSON text brand").

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
