// What a JSON request body may hold, checked in two steps whose cost the body's size cannot run
// away with: a count of its values on its bytes as they arrive, which refuses the body as soon as
// the bound is passed, before JSON.parse; then, for a body within the bound, one walk of the
// parsed value for its depth and its text. A body of half a million numbers once took the event
// loop for hundreds of milliseconds in that walk, and every other organization's requests waited
// behind it.

import type { InputProblem } from '../domain/errors.js';

/**
 * How many values a JSON body may hold: objects, arrays, strings, numbers, booleans and nulls,
 * each counted once (an object's keys are not values). The contract's largest body holds well
 * under a hundred (test/http-body-values.test.ts derives it from the spec and holds this bound to
 * at least a hundred times that), so no client that sends what the spec describes comes near it,
 * unknown properties included; the spec's "Request bodies" section states the same number.
 */
export const MAX_JSON_VALUES = 10_000;

/**
 * How deep a JSON body may nest. The contract's deepest body (a variant inside an experiment)
 * needs four levels; the limit leaves room for any honest client and bounds every walk.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** A number (`-`, a digit) or a literal (`true`, `false`, `null`) starts here. */
function startsScalar(byte: number): boolean {
  return (
    byte === 0x2d ||
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x74 ||
    byte === 0x66 ||
    byte === 0x6e
  );
}

/** A byte of a number or a literal: letters, digits, `.`, `+` and `-`. */
function continuesScalar(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    byte === 0x2e ||
    byte === 0x2b ||
    byte === 0x2d
  );
}

/** How many backslashes end `bytes` before `end`, looking no further back than `start`. */
function backslashesBefore(bytes: Uint8Array, end: number, start: number): number {
  let at = end;
  while (at > start && bytes[at - 1] === BACKSLASH) at -= 1;
  return end - at;
}

/**
 * Counts the values of a JSON body as its bytes arrive, without parsing it: the request is
 * refused once the count passes the bound, so half a million numbers cost a scan of their first
 * kilobytes, and neither the rest of the body nor a parse. It reads the bytes JSON's structure is
 * made of, all ASCII, so UTF-8 text in strings passes unread (its bytes are all 0x80 and above).
 * Exact for valid JSON; for other bytes some count, and JSON.parse refuses the body anyway.
 */
export class JsonValueCounter {
  /** The values counted so far; counting stops once they pass the bound. */
  values = 0;
  private within: 'structure' | 'string' | 'scalar' = 'structure';
  /** In a string, the last byte read was a backslash that escapes the next one. */
  private escaping = false;

  constructor(private readonly bound: number) {}

  get pastBound(): boolean {
    return this.values > this.bound;
  }

  add(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.length && !this.pastBound) {
      const byte = bytes[at]!;
      if (this.within === 'string') {
        at = this.skipString(bytes, at);
      } else if (this.within === 'scalar') {
        if (continuesScalar(byte)) at += 1;
        else this.within = 'structure';
      } else {
        // Every string counts, and the colon after an object's key takes its count back. A key
        // that passes the bound for a moment is always followed by a value that passes it again.
        if (byte === QUOTE) {
          this.values += 1;
          this.within = 'string';
        } else if (byte === COLON) {
          this.values -= 1;
        } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          this.values += 1;
        } else if (startsScalar(byte)) {
          this.values += 1;
          this.within = 'scalar';
        }
        at += 1;
      }
    }
  }

  /** Skips string content from `from`: past its closing quote, or to the end of `bytes`. */
  private skipString(bytes: Uint8Array, from: number): number {
    let at = from;
    if (this.escaping) {
      this.escaping = false;
      at += 1;
    }
    // Nothing from `at` on is escaped by what came before, so a run of backslashes starting there
    // escapes what follows it exactly when its length is odd.
    for (let quote = bytes.indexOf(QUOTE, at); quote !== -1; quote = bytes.indexOf(QUOTE, at)) {
      if (backslashesBefore(bytes, quote, at) % 2 === 0) {
        this.within = 'structure';
        return quote + 1;
      }
      at = quote + 1;
    }
    this.escaping = backslashesBefore(bytes, bytes.length, at) % 2 === 1;
    return bytes.length;
  }
}

export const NUL = '\u0000';
export const NUL_MESSAGE =
  'must not contain the NUL character (U+0000); remove it (PostgreSQL cannot store it, so neither backend accepts it).';
const SURROGATE_MESSAGE =
  'must not contain a lone surrogate (an unpaired \\ud800-\\udfff escape); send well-formed Unicode text.';
const LONE_SURROGATE = /\p{Surrogate}/u;

/** What is wrong with one string of a body (a value or a key), if anything. */
function textProblem(text: string): string | null {
  if (text.includes(NUL)) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(text)) return SURROGATE_MESSAGE;
  return null;
}

const TOO_DEEP = `nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects; no operation takes such a body.`;

/**
 * The first problem of a parsed JSON body, in document order: nesting deeper than
 * MAX_JSON_DEPTH, or text that no backend stores faithfully (NUL, lone surrogates). Recursive, as
 * the depth is checked before each descent: no body takes more than MAX_JSON_DEPTH + 1 frames.
 * It allocates nothing per value; a problem's `loc` is copied from the one path it keeps.
 */
export function jsonBodyProblem(body: unknown): InputProblem | null {
  const path: Array<string | number> = [];
  const problemHere = (msg: string): InputProblem => ({
    loc: ['body', ...path],
    msg,
    type: 'value_error',
  });
  const visit = (value: unknown, depth: number): InputProblem | null => {
    if (typeof value === 'string') {
      const problem = textProblem(value);
      return problem ? problemHere(problem) : null;
    }
    if (value === null || typeof value !== 'object') return null;
    if (depth >= MAX_JSON_DEPTH) return problemHere(TOO_DEEP);
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        path.push(index);
        const problem = visit(value[index], depth + 1);
        path.pop();
        if (problem) return problem;
      }
      return null;
    }
    for (const key of Object.keys(value)) {
      path.push(key);
      const keyProblem = textProblem(key);
      const problem = keyProblem
        ? problemHere(keyProblem)
        : visit((value as Record<string, unknown>)[key], depth + 1);
      path.pop();
      if (problem) return problem;
    }
    return null;
  };
  return visit(body, 0);
}
