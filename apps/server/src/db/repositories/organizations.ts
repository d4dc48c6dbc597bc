import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { perDatabase } from '../prepared.js';
import { organizations } from '../schema.js';

export type Organization = typeof organizations.$inferSelect;

/** Throws a unique violation (see `isUniqueViolation`) when the name is taken. */
export async function createOrganization(db: Db, name: string): Promise<Organization> {
  return db.orm.insert(organizations).values({ name }).returning().get();
}

/** `reference` is an id (digits) or a name; an id wins when an organization is named like one. */
export async function findOrganization(db: Db, reference: string): Promise<Organization | null> {
  if (/^\d+$/.test(reference)) {
    const byId = db.orm
      .select()
      .from(organizations)
      .where(eq(organizations.id, Number(reference)))
      .get();
    if (byId) return byId;
  }
  return db.orm.select().from(organizations).where(eq(organizations.name, reference)).get() ?? null;
}

export async function listOrganizations(db: Db): Promise<Organization[]> {
  return db.orm.select().from(organizations).orderBy(asc(organizations.id)).all();
}

const recordsVersionById = perDatabase((db) =>
  db.orm
    .select({ version: organizations.recordsVersion })
    .from(organizations)
    .where(eq(organizations.id, sql.placeholder('organizationId')))
    .prepare(),
);

/** How many times the organization's platform records were loaded: a cache key for answers. */
export async function recordsVersion(db: Db, organizationId: number): Promise<number> {
  return recordsVersionById(db).get({ organizationId })?.version ?? 0;
}
