// everyValueOf holds a runtime list to a spec enum's generated type. The type errors below are
// the test: `pnpm typecheck` fails if one of them stops being an error.

import { expect, it } from 'vitest';
import { EventProperties } from '../src/generated/enum-values.js';
import { everyValueOf } from '../src/vocabulary/spec-enums.js';
import { EXPERIMENT_STATUSES } from '../src/db/schema/sqlite.js';

type Colour = 'red' | 'green' | 'blue';

it('returns the list as given, in its order', () => {
  expect(everyValueOf<Colour>()(['blue', 'red', 'green'])).toEqual(['blue', 'red', 'green']);
  expect(EXPERIMENT_STATUSES).toEqual(['draft', 'running', 'stopped']);
  expect(EventProperties[0]).toBe('timestamp');
});

it('refuses, at compile time, a list that misses a value or holds one the enum lacks', () => {
  // @ts-expect-error: 'blue' is missing
  const missing = everyValueOf<Colour>()(['red', 'green']);
  // @ts-expect-error: 'purple' is not a Colour
  const extra = everyValueOf<Colour>()(['red', 'green', 'blue', 'purple']);
  expect([missing, extra].map((list) => list.length)).toEqual([2, 4]);
});
