import { and, eq } from 'drizzle-orm';
import type { Permission } from '../../domain/permissions.js';
import type { Db } from '../client.js';
import { roles } from '../schema.js';
import { roles as pgRoles } from '../schema-postgres.js';

export type Role = typeof roles.$inferSelect;

export interface NewRole {
  organizationId: number;
  name: string;
  permissions: readonly Permission[];
}

/** Throws a unique violation (see `isUniqueViolation`) when the organization has the name already. */
export async function createRole(db: Db, role: NewRole): Promise<Role> {
  const values = { ...role, permissions: [...role.permissions] };
  if (db.kind === 'sqlite') return db.orm.insert(roles).values(values).returning().get();
  const [created] = await db.orm.insert(pgRoles).values(values).returning();
  return created!;
}

export async function findRoleByName(
  db: Db,
  organizationId: number,
  name: string,
): Promise<Role | null> {
  const rows =
    db.kind === 'sqlite'
      ? db.orm
          .select()
          .from(roles)
          .where(and(eq(roles.organizationId, organizationId), eq(roles.name, name)))
          .all()
      : await db.orm
          .select()
          .from(pgRoles)
          .where(and(eq(pgRoles.organizationId, organizationId), eq(pgRoles.name, name)));
  return rows[0] ?? null;
}
