// Vitest's asymmetric matchers, typed as the value they stand for. Vitest types `expect.any(...)`,
// `expect.stringMatching(...)` and the like as `any`, so putting one in an object a test compares
// with is an unsafe assignment to the type-aware lint rules; these are the same matchers.

import { expect } from 'vitest';

/** Matches any number. */
export const anyNumber = (): number => expect.any(Number) as number;

/** Matches any string. */
export const anyString = (): string => expect.any(String) as string;

/** Matches a string that `pattern` matches. */
export const stringMatching = (pattern: string | RegExp): string =>
  expect.stringMatching(pattern) as string;

/** Matches a string that contains `part`. */
export const stringContaining = (part: string): string => expect.stringContaining(part) as string;
