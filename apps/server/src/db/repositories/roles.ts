import { and, eq } from 'drizzle-orm';
import type { Permission } from '../../domain/permissions.js';
import type { Db } from '../client.js';
import { roles } from '../schema.js';

export type Role = typeof roles.$inferSelect;

export interface NewRole {
  organizationId: number;
  name: string;
  permissions: readonly Permission[];
}

/** Throws a unique violation (see `isUniqueViolation`) when the organization has the name already. */
export async function createRole(db: Db, role: NewRole): Promise<Role> {
  return db.orm
    .insert(roles)
    .values({ ...role, permissions: [...role.permissions] })
    .returning()
    .get();
}

export async function findRoleByName(
  db: Db,
  organizationId: number,
  name: string,
): Promise<Role | null> {
  return (
    db.orm
      .select()
      .from(roles)
      .where(and(eq(roles.organizationId, organizationId), eq(roles.name, name)))
      .get() ?? null
  );
}
