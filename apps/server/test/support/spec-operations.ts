// The operations of the spec (the generated JSON), for tests that check something of each one.

import spec from '../../src/generated/openapi.json' with { type: 'json' };

export interface SpecOperation {
  operationId: string;
  description?: string;
  /** The permission the server enforces for it (http/auth.ts), when the spec names one. */
  'x-agentline-permission'?: string;
}

/** Every operation, in the spec's order (a path item's `parameters` is not one). */
export const SPEC_OPERATIONS: readonly SpecOperation[] = Object.values(
  spec.paths as Record<string, Record<string, unknown>>,
).flatMap((item) =>
  Object.values(item).filter(
    (value): value is SpecOperation =>
      typeof value === 'object' && value !== null && 'operationId' in value,
  ),
);
