// Issuing an API key: the key rules (domain/api-keys.ts) make the key and hash its secret here, so
// the repository stores a key id and a hash and the secret exists only in the text handed back.

import type { Db } from '../db/engine/client.js';
import { insertApiKey, type ApiKey, type NewApiKeyRow } from '../db/repositories/api-keys.js';
import { createRole } from '../db/repositories/roles.js';
import { formatApiKey, generateApiKey, hashApiKeySecret } from '../domain/api-keys.js';
import type { Permission } from '../vocabulary/permissions.js';

export type NewApiKey = Omit<NewApiKeyRow, 'keyId' | 'secretHash'>;

/** Stores a new key and returns it with the full key text, which exists nowhere else afterwards. */
export async function createApiKey(
  db: Db,
  newKey: NewApiKey,
): Promise<{ apiKey: ApiKey; fullKey: string }> {
  const parts = generateApiKey();
  const apiKey = await insertApiKey(db, {
    ...newKey,
    keyId: parts.keyId,
    secretHash: hashApiKeySecret(parts.secret),
  });
  return { apiKey, fullKey: formatApiKey(parts) };
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
