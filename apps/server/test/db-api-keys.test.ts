// API keys: the key format (domain), issuing and authenticating them (use-cases) over the rows the
// repository stores and reads.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { findApiKeyForAuth, listApiKeys, revokeApiKey } from '../src/db/repositories/api-keys.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { createRole } from '../src/db/repositories/roles.js';
import {
  apiKeySecretMatches,
  formatApiKey,
  generateApiKey,
  hashApiKeySecret,
  isKeyId,
  parseApiKey,
} from '../src/domain/api-keys.js';
import { createApiKey } from '../src/use-cases/api-keys.js';
import { authenticateApiKey, recordApiKeyUse } from '../src/use-cases/authentication.js';
import { createTestDb } from './support/test-database.js';

describe('key format', () => {
  it('generates agl_<12 [a-z0-9]>_<32 base62> keys that parse back', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i += 1) {
      const parts = generateApiKey();
      const key = formatApiKey(parts);
      expect(key).toMatch(/^agl_[a-z0-9]{12}_[A-Za-z0-9]{32}$/);
      expect(parseApiKey(key)).toEqual(parts);
      expect(isKeyId(parts.keyId)).toBe(true);
      seen.add(parts.secret);
    }
    expect(seen.size).toBe(50);
  });

  it.each([
    '',
    'agl_abc_def',
    'agl_ABCDEFGHIJKL_0123456789abcdefghijABCDEFGHIJ0123',
    'xyz_abcdefghijkl_0123456789abcdefghijABCDEFGHIJ0123',
    'agl_abcdefghijkl_0123456789abcdefghijABCDEFGHIJ012_',
    ' agl_abcdefghijkl_0123456789abcdefghijABCDEFGHIJ0123',
  ])('rejects the malformed key %j', (text) => {
    expect(parseApiKey(text)).toBeNull();
  });

  it('stores a SHA-256 hex of the secret and compares it in constant time', () => {
    const { secret } = generateApiKey();
    const hash = hashApiKeySecret(secret);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(apiKeySecretMatches(secret, hash)).toBe(true);
    // One character changed (a secret may already end in "x": then it becomes "y").
    const changed = `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`;
    expect(apiKeySecretMatches(changed, hash)).toBe(false);
    expect(apiKeySecretMatches(secret, 'not-a-hash')).toBe(false);
  });
});

describe('keys in the database', () => {
  let db: Db;
  let organizationId: number;
  let roleId: number;

  beforeAll(async () => {
    db = await createTestDb();
    organizationId = (await createOrganization(db, 'Acme')).id;
    roleId = (
      await createRole(db, { organizationId, name: 'reader', permissions: ['EVENTS_READ'] })
    ).id;
  });

  afterAll(() => db.close());

  it('finds an active key with its role permissions and organization for the auth middleware', async () => {
    const { apiKey, fullKey } = await createApiKey(db, { organizationId, roleId, name: 'ci' });
    expect(apiKey).not.toHaveProperty('secretHash');
    const found = await findApiKeyForAuth(db, apiKey.keyId);
    expect(found).toMatchObject({
      organizationId,
      permissions: ['EVENTS_READ'],
      key: { name: 'ci' },
    });
    expect(found!.key.secretHash).toBe(hashApiKeySecret(parseApiKey(fullKey)!.secret));
    expect(await findApiKeyForAuth(db, 'unknownkey00')).toBeNull();
  });

  it('authenticates only the exact key, and not once revoked', async () => {
    const { apiKey, fullKey } = await createApiKey(db, { organizationId, roleId, name: 'app' });
    expect(await authenticateApiKey(db, fullKey)).toEqual({
      apiKeyId: apiKey.id,
      keyId: apiKey.keyId,
      keyName: 'app',
      organizationId,
      permissions: ['EVENTS_READ'],
      lastUsedAt: null,
    });
    const wrongSecret = formatApiKey({ keyId: apiKey.keyId, secret: generateApiKey().secret });
    expect(await authenticateApiKey(db, wrongSecret)).toBeNull();
    expect(await authenticateApiKey(db, 'garbage')).toBeNull();

    expect(await revokeApiKey(db, apiKey.keyId)).toMatchObject({ alreadyRevoked: false });
    expect(await authenticateApiKey(db, fullKey)).toBeNull();
    expect(await findApiKeyForAuth(db, apiKey.keyId)).toBeNull();
    const again = await revokeApiKey(db, apiKey.keyId);
    expect(again).toMatchObject({ alreadyRevoked: true });
    expect(await revokeApiKey(db, 'unknownkey00')).toBeNull();
  });

  it('records use at most once a minute per key', async () => {
    const { apiKey } = await createApiKey(db, { organizationId, roleId, name: 'busy' });
    const lastUsed = async () =>
      (await listApiKeys(db, organizationId)).find((key) => key.id === apiKey.id)!.lastUsedAt;
    await recordApiKeyUse(db, apiKey.id, new Date('2026-03-17T10:00:00.000Z'));
    await recordApiKeyUse(db, apiKey.id, new Date('2026-03-17T10:00:30.000Z'));
    expect(await lastUsed()).toBe('2026-03-17T10:00:00.000Z');
    await recordApiKeyUse(db, apiKey.id, new Date('2026-03-17T10:01:01.000Z'));
    expect(await lastUsed()).toBe('2026-03-17T10:01:01.000Z');
  });
});
