import { sql } from 'drizzle-orm';
import {
  apiKeySecretMatches,
  formatApiKey,
  generateApiKey,
  hashApiKeySecret,
  parseApiKey,
} from '../../domain/api-keys.js';
import type { Permission } from '../../domain/permissions.js';
import { perDatabase, remember } from '../engine/caches.js';
import type { Db } from '../engine/client.js';
import {
  columnsOf,
  execute,
  insertValues,
  parsedJson,
  prepared,
  runSteps,
  runStepsInTransaction,
  runWriteSteps,
  selectRows,
  setValues,
} from '../engine/portable-sql.js';
import { createRole } from './roles.js';
import { apiKeys, roles } from '../schema/sqlite.js';

/** An API key row without its secret hash: safe to print or return. */
export type ApiKey = Omit<typeof apiKeys.$inferSelect, 'secretHash'>;

/** Every column but the secret hash, which is read only to check a presented key. */
const API_KEY = columnsOf(apiKeys, ['secretHash']);

export interface NewApiKey {
  organizationId: number;
  roleId: number;
  name: string;
}

/** Stores a new key and returns it with the full key text, which exists nowhere else afterwards. */
export async function createApiKey(
  db: Db,
  newKey: NewApiKey,
): Promise<{ apiKey: ApiKey; fullKey: string }> {
  const parts = generateApiKey();
  const values = { ...newKey, keyId: parts.keyId, secretHash: hashApiKeySecret(parts.secret) };
  const [apiKey] = await runSteps(db, () =>
    selectRows<ApiKey>(
      sql`INSERT INTO ${apiKeys} ${insertValues(apiKeys, [values])} RETURNING ${API_KEY}`,
    ),
  );
  return { apiKey: apiKey!, fullKey: formatApiKey(parts) };
}

/**
 * A key in a new role of its own that holds exactly `permissions`: the demo's admin key, and the
 * keys tests and benchmarks make. Returns the full key text.
 */
export async function createKeyWithOwnRole(
  db: Db,
  key: {
    organizationId: number;
    roleName: string;
    keyName: string;
    permissions: readonly Permission[];
  },
): Promise<string> {
  const role = await createRole(db, {
    organizationId: key.organizationId,
    name: key.roleName,
    permissions: [...key.permissions],
  });
  const { fullKey } = await createApiKey(db, {
    organizationId: key.organizationId,
    roleId: role.id,
    name: key.keyName,
  });
  return fullKey;
}

export async function listApiKeys(
  db: Db,
  organizationId: number,
): Promise<Array<ApiKey & { roleName: string }>> {
  return runSteps(db, () =>
    selectRows<ApiKey & { roleName: string }>(
      sql`SELECT ${API_KEY}, ${roles.name} AS "roleName" FROM ${apiKeys}
          JOIN ${roles} ON ${roles.id} = ${apiKeys.roleId}
          WHERE ${apiKeys.organizationId} = ${organizationId}
          ORDER BY ${apiKeys.id}`,
    ),
  );
}

/** Revokes the key; a key revoked before keeps its first revocation time. Null if unknown. */
export async function revokeApiKey(
  db: Db,
  keyId: string,
): Promise<{ apiKey: ApiKey; alreadyRevoked: boolean } | null> {
  const revokedAt = new Date().toISOString();
  return runStepsInTransaction(db, function* () {
    const revoked = yield* selectRows(
      sql`UPDATE ${apiKeys} SET ${setValues(apiKeys, { revokedAt })}
          WHERE ${apiKeys.keyId} = ${keyId} AND ${apiKeys.revokedAt} IS NULL
          RETURNING ${apiKeys.id}`,
    );
    const [apiKey] = yield* selectRows<ApiKey>(
      sql`SELECT ${API_KEY} FROM ${apiKeys} WHERE ${apiKeys.keyId} = ${keyId}`,
    );
    return apiKey ? { apiKey, alreadyRevoked: revoked.length === 0 } : null;
  });
}

export interface ApiKeyForAuth {
  key: typeof apiKeys.$inferSelect;
  permissions: Permission[];
  organizationId: number;
}

// Every request runs this.
const activeKeyById = prepared<ApiKeyForAuth['key'] & { permissions: Permission[] | string }>(
  'agentline_active_key_by_id',
  sql`SELECT ${columnsOf(apiKeys)}, ${roles.permissions} AS "permissions" FROM ${apiKeys}
      JOIN ${roles} ON ${roles.id} = ${apiKeys.roleId}
      WHERE ${apiKeys.keyId} = ${sql.placeholder('keyId')} AND ${apiKeys.revokedAt} IS NULL`,
);

/** The active (not revoked) key with this key id, with its role's permissions; else null. */
export async function findApiKeyForAuth(db: Db, keyId: string): Promise<ApiKeyForAuth | null> {
  const [row] = await runSteps(db, () => activeKeyById({ keyId }));
  if (!row) return null;
  const { permissions, ...key } = row;
  return { key, permissions: parsedJson(permissions), organizationId: key.organizationId };
}

/** Key ids read per statement by activeKeyPermissions: well under either database's parameter cap. */
const KEY_IDS_PER_READ = 500;

/**
 * The role permissions of each of `keyIds` that is active now; a key id missing from the answer is
 * revoked or unknown. For what a process holds open on a key (event streams), which it must read
 * again, as authentication is, to honour a revocation or a role change made by any process.
 */
export async function activeKeyPermissions(
  db: Db,
  keyIds: readonly string[],
): Promise<Map<string, Permission[]>> {
  const active = new Map<string, Permission[]>();
  for (let start = 0; start < keyIds.length; start += KEY_IDS_PER_READ) {
    const chunk = keyIds.slice(start, start + KEY_IDS_PER_READ);
    const rows = await runSteps(db, () =>
      selectRows<{ keyId: string; permissions: Permission[] | string }>(
        sql`SELECT ${apiKeys.keyId} AS "keyId", ${roles.permissions} AS "permissions"
            FROM ${apiKeys} JOIN ${roles} ON ${roles.id} = ${apiKeys.roleId}
            WHERE ${apiKeys.keyId} IN (${sql.join(
              chunk.map((keyId) => sql`${keyId}`),
              sql`, `,
            )}) AND ${apiKeys.revokedAt} IS NULL`,
      ),
    );
    for (const row of rows) active.set(row.keyId, parsedJson(row.permissions));
  }
  return active;
}

export interface ApiKeyPrincipal {
  apiKeyId: number;
  keyId: string;
  keyName: string;
  organizationId: number;
  permissions: Permission[];
  /** Moved on by the caller that records a use, so a remembered principal is not written again. */
  lastUsedAt: string | null;
}

/**
 * Compared against when the key id is unknown, so an unknown id costs the same hash and compare
 * as a wrong secret and response times do not tell which key ids exist.
 */
const UNKNOWN_KEY_SECRET_HASH = hashApiKeySecret('no key has this secret');

/**
 * Who a presented `Service-API-Key` value is, or null when it is malformed, unknown, revoked or
 * its secret does not match (callers answer all of these the same way: 401). `secretMatches` is
 * a parameter so tests can see that both refusals do the same work.
 */
export async function authenticateApiKey(
  db: Db,
  presentedKey: string,
  secretMatches = apiKeySecretMatches,
): Promise<ApiKeyPrincipal | null> {
  const parts = parseApiKey(presentedKey);
  if (!parts) return null;
  const found = await findApiKeyForAuth(db, parts.keyId);
  const matches = secretMatches(parts.secret, found?.key.secretHash ?? UNKNOWN_KEY_SECRET_HASH);
  if (!found || !matches) return null;
  return {
    apiKeyId: found.key.id,
    keyId: found.key.keyId,
    keyName: found.key.name,
    organizationId: found.organizationId,
    permissions: found.permissions,
    lastUsedAt: found.key.lastUsedAt,
  };
}

/**
 * How long a process trusts an authentication it has made. Every process reads the key again
 * after this, so a key revoked (or a role changed) by any process or the CLI is honoured by all of
 * them within it, while a busy key costs one lookup and one hash per process this often instead of
 * on every request.
 */
export const AUTHENTICATION_TRUST_MS = 500;

/** The most authentications one process keeps: past it, the one used longest ago goes. */
const TRUSTED_AUTHENTICATIONS = 10_000;

interface TrustedAuthentication {
  principal: ApiKeyPrincipal;
  trustedUntil: number;
}

// Keyed by the whole presented value, secret included, so only the same key finds an entry; it
// lives in process memory only, as the request's header itself does.
const trustedAuthentications = perDatabase(() => new Map<string, TrustedAuthentication>());

/**
 * authenticateApiKey, remembered for AUTHENTICATION_TRUST_MS after each success. Failures are
 * never remembered, so a new key works at once and a failing one costs what it always did.
 */
export async function authenticateApiKeyTrusted(
  db: Db,
  presentedKey: string,
  now = Date.now(),
): Promise<ApiKeyPrincipal | null> {
  const trusted = trustedAuthentications(db);
  const entry = trusted.get(presentedKey);
  if (entry && entry.trustedUntil > now) return entry.principal;
  const principal = await authenticateApiKey(db, presentedKey);
  if (principal) {
    remember(
      trusted,
      presentedKey,
      { principal, trustedUntil: now + AUTHENTICATION_TRUST_MS },
      TRUSTED_AUTHENTICATIONS,
    );
  } else {
    trusted.delete(presentedKey);
  }
  return principal;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** Whether a key last used at `lastUsedAt` is due a new last-used write (read-only otherwise). */
export function apiKeyUseIsStale(lastUsedAt: string | null, now = new Date()): boolean {
  return lastUsedAt === null || Date.parse(lastUsedAt) < now.getTime() - LAST_USED_RESOLUTION_MS;
}

/** Notes that the key was used; writes at most once a minute per key to keep requests read-only. */
export async function recordApiKeyUse(db: Db, apiKeyId: number, now = new Date()): Promise<void> {
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString();
  const lastUsedAt = now.toISOString();
  await runWriteSteps(db, () =>
    execute(
      sql`UPDATE ${apiKeys} SET ${setValues(apiKeys, { lastUsedAt })}
          WHERE ${apiKeys.id} = ${apiKeyId}
            AND (${apiKeys.lastUsedAt} IS NULL OR ${apiKeys.lastUsedAt} < ${staleBefore})`,
    ),
  );
}
