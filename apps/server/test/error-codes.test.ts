// The error codes are the spec's `ErrorCode` enum; the server's `ErrorCode` type is generated from
// it, and `STATUS_OF_CODE` (http/errors.ts) must name every code, which the compiler checks. The
// spec's Errors prose repeats each code with its status for readers: this keeps the prose, the
// enum and the table in agreement.

import { describe, expect, it } from 'vitest';
import { STATUS_OF_CODE } from '../src/http/errors.js';
import spec from '../src/generated/openapi.json' with { type: 'json' };

const enumCodes = spec.components.schemas.ErrorCode.enum;

/** Each `CODE` (status ...) the Errors paragraph of the description names, with its first status. */
function codesInProse(): Map<string, number> {
  const errors = spec.info.description.slice(spec.info.description.indexOf('Codes:'));
  return new Map(
    [...errors.matchAll(/`([A-Z_]+)`\s+\((\d{3})/g)].map(([, code, status]) => [
      code!,
      Number(status),
    ]),
  );
}

describe('error codes', () => {
  it('are the same list in the enum and in the status table', () => {
    expect([...enumCodes].sort()).toEqual(Object.keys(STATUS_OF_CODE).sort());
  });

  it("each answer with the status the spec's Errors prose gives them", () => {
    const prose = codesInProse();
    expect([...prose.keys()].sort()).toEqual([...enumCodes].sort());
    for (const [code, status] of Object.entries(STATUS_OF_CODE)) {
      expect(prose.get(code), code).toBe(status);
    }
  });
});
