import { asc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db, PostgresDb, SqliteDb } from '../client.js';
import { idEquals } from '../portable-sql.js';
import { perDatabase } from '../prepared.js';
import { organizations } from '../schema.js';
import { organizations as pgOrganizations } from '../schema-postgres.js';

export type Organization = typeof organizations.$inferSelect;

/** Throws a unique violation (see `isUniqueViolation`) when the name is taken. */
export async function createOrganization(db: Db, name: string): Promise<Organization> {
  if (db.kind === 'sqlite') return db.orm.insert(organizations).values({ name }).returning().get();
  const [created] = await db.orm.insert(pgOrganizations).values({ name }).returning();
  return created!;
}

async function organizationWhere(
  db: Db,
  condition: (table: typeof organizations | typeof pgOrganizations) => SQL,
): Promise<Organization | null> {
  const rows =
    db.kind === 'sqlite'
      ? db.orm.select().from(organizations).where(condition(organizations)).all()
      : await db.orm.select().from(pgOrganizations).where(condition(pgOrganizations));
  return rows[0] ?? null;
}

/** `reference` is an id (digits) or a name; an id wins when an organization is named like one. */
export async function findOrganization(db: Db, reference: string): Promise<Organization | null> {
  if (/^\d+$/.test(reference)) {
    // As bigint: a long run of digits is then a name to look up, not an error on PostgreSQL.
    const byId = await organizationWhere(db, (t) => idEquals(t.id, Number(reference)));
    if (byId) return byId;
  }
  return organizationWhere(db, (t) => eq(t.name, reference));
}

export async function listOrganizations(db: Db): Promise<Organization[]> {
  if (db.kind === 'sqlite') {
    return db.orm.select().from(organizations).orderBy(asc(organizations.id)).all();
  }
  return db.orm.select().from(pgOrganizations).orderBy(asc(pgOrganizations.id));
}

const recordsVersionById = perDatabase((db: SqliteDb) =>
  db.orm
    .select({ version: organizations.recordsVersion })
    .from(organizations)
    .where(eq(organizations.id, sql.placeholder('organizationId')))
    .prepare(),
);

const recordsVersionByIdOnPostgres = perDatabase((db: PostgresDb) =>
  db.orm
    .select({ version: pgOrganizations.recordsVersion })
    .from(pgOrganizations)
    .where(eq(pgOrganizations.id, sql.placeholder('organizationId')))
    .prepare('agentline_records_version_by_id'),
);

/** How many times the organization's platform records were loaded: a cache key for answers. */
export async function recordsVersion(db: Db, organizationId: number): Promise<number> {
  if (db.kind === 'sqlite') {
    return recordsVersionById(db).get({ organizationId })?.version ?? 0;
  }
  const [row] = await recordsVersionByIdOnPostgres(db).execute({ organizationId });
  return row?.version ?? 0;
}
