// The permission each operation needs is written once, as `x-agentline-permission` on the
// operation in spec/openapi.yaml (`none` where any valid key may call it); the server enforces
// that value (http/auth.ts). The prose of the spec repeats it for readers, in the table of the
// description and in each operation's "Needs `...`" (or "needs no permission"): this keeps both
// in agreement with the extensions.

import { describe, expect, it } from 'vitest';
import { isPermission, NO_PERMISSION, PERMISSIONS } from '../src/vocabulary/permissions.js';
import spec from '../src/generated/openapi.json' with { type: 'json' };
import { SPEC_OPERATIONS, type SpecOperation } from './support/spec-operations.js';

describe('x-agentline-permission', () => {
  it('is on every operation and names a permission a role can hold, or none', () => {
    expect(SPEC_OPERATIONS.length).toBeGreaterThan(0);
    for (const operation of SPEC_OPERATIONS) {
      const permission = operation['x-agentline-permission'];
      expect(permission, operation.operationId).toBeDefined();
      expect(
        permission === NO_PERMISSION || isPermission(permission!),
        `${operation.operationId}: ${permission}`,
      ).toBe(true);
    }
  });

  it("agrees with the permission table of the spec's description", () => {
    const table = new Map<string, string[]>();
    for (const [, permission, cell] of spec.info.description.matchAll(
      /^\| `([A-Z_]+|none)` \| (.+) \|$/gm,
    )) {
      table.set(
        permission!,
        [...cell!.matchAll(/`([a-z0-9_]+)`/g)].map((match) => match[1]!),
      );
    }
    const fromExtensions = new Map<string, string[]>();
    for (const operation of SPEC_OPERATIONS) {
      const permission = operation['x-agentline-permission']!;
      fromExtensions.set(permission, [
        ...(fromExtensions.get(permission) ?? []),
        operation.operationId,
      ]);
    }
    const sorted = (map: Map<string, string[]>) =>
      Object.fromEntries([...map].map(([permission, ids]) => [permission, [...ids].sort()]));
    expect(sorted(table)).toEqual(sorted(fromExtensions));
    expect([...table.keys()].filter((name) => name !== NO_PERMISSION).sort()).toEqual(
      [...PERMISSIONS].sort(),
    );
  });

  it('guards the webhook operations with the webhook permissions, reads with WEBHOOKS_READ', () => {
    const webhooks = Object.entries(spec.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/v1/webhooks/'))
      .flatMap(([, item]) =>
        Object.entries(item).flatMap(([method, operation]) =>
          SPEC_OPERATIONS.includes(operation as SpecOperation)
            ? [{ method, operation: operation as SpecOperation }]
            : [],
        ),
      );
    expect(webhooks).toHaveLength(9);
    for (const { method, operation } of webhooks) {
      expect(operation['x-agentline-permission'], operation.operationId).toBe(
        method === 'get' ? 'WEBHOOKS_READ' : 'WEBHOOKS_WRITE',
      );
    }
  });

  it('agrees with the "Needs `...`" of each operation\'s description', () => {
    for (const operation of SPEC_OPERATIONS) {
      const said = [...(operation.description ?? '').matchAll(/Needs\s+`([A-Z_]+)`/g)].map(
        (match) => match[1],
      );
      const permission = operation['x-agentline-permission'];
      if (permission === NO_PERMISSION) {
        expect(said, operation.operationId).toEqual([]);
        expect(operation.description, operation.operationId).toMatch(/needs no permission/);
      } else {
        expect(said, operation.operationId).toEqual([permission]);
      }
    }
  });
});
