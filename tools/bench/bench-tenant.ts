// An organization and an admin key for a benchmark, made with the server's own repositories the
// way `agentline org create`, `role create --all` and `key create` make them. Benchmarks keep to
// this module rather than borrowing the tests' harness.

import type { Db } from '../../apps/server/src/db/engine/client.js';
import { createKeyWithOwnRole } from '../../apps/server/src/db/repositories/api-keys.js';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { PERMISSIONS } from '../../apps/server/src/domain/permissions.js';

/** A key holding every permission, in a role of its own, of an existing organization. */
export function benchKey(db: Db, organizationId: number): Promise<string> {
  return createKeyWithOwnRole(db, {
    organizationId,
    roleName: `bench admin ${Date.now()}`,
    keyName: 'bench',
    permissions: PERMISSIONS,
  });
}

/** A new organization and an admin key of it. */
export async function benchTenant(
  db: Db,
  name: string,
): Promise<{ organizationId: number; key: string }> {
  const organization = await createOrganization(db, name);
  return { organizationId: organization.id, key: await benchKey(db, organization.id) };
}
