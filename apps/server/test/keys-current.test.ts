// GET /api/v1/keys/current: the calling key as a console needs it to offer only what the key may
// do: its own name, role, sorted permissions and organization, for any valid key (a parked one
// too), never its secret. Runs on both databases.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../src/db/repositories/api-keys.js';
import { createRole } from '../src/db/repositories/roles.js';
import { jsonText, setValues } from '../src/db/engine/portable-sql.js';
import { roles } from '../src/db/schema/sqlite.js';
import { parseApiKey } from '../src/domain/api-keys.js';
import { createApiKey, createKeyWithOwnRole } from '../src/use-cases/api-keys.js';
import type { Permission } from '../src/vocabulary/permissions.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { queryTestDb } from './support/test-database.js';

const PATH = '/api/v1/keys/current';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme Support');
  globex = await createTenant(api.db, 'Globex');
});

afterAll(() => api.close());

/** `T` is the body expected: the key's description, or an error. */
const current = <T = Schemas['ApiKeyInfo']>(key?: string) => api.request<T>('GET', PATH, { key });

async function keyOf(
  organizationId: number,
  roleName: string,
  keyName: string,
  permissions: readonly Permission[],
): Promise<string> {
  return createKeyWithOwnRole(api.db, { organizationId, roleName, keyName, permissions });
}

describe('GET /api/v1/keys/current', () => {
  it('describes the calling key: its name, role, sorted permissions and organization', async () => {
    const key = await keyOf(acme.organizationId, 'editor', 'console of Ana', [
      'WEBHOOKS_WRITE',
      'CHANNELS_READ',
      'EVENTS_READ',
      'CHANNELS_WRITE',
    ]);
    const res = await current(key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      key_id: parseApiKey(key)!.keyId,
      name: 'console of Ana',
      role: 'editor',
      permissions: ['CHANNELS_READ', 'CHANNELS_WRITE', 'EVENTS_READ', 'WEBHOOKS_WRITE'],
      organization: { id: acme.organizationId, name: 'Acme Support' },
    });
  });

  it('names each permission once, whatever the role holds', async () => {
    const role = await createRole(api.db, {
      organizationId: acme.organizationId,
      name: 'written twice',
      permissions: ['PROMPTS_READ', 'EVENTS_READ', 'PROMPTS_READ'],
    });
    const { fullKey } = await createApiKey(api.db, {
      organizationId: acme.organizationId,
      roleId: role.id,
      name: 'twice',
    });
    expect((await current(fullKey)).body.permissions).toEqual(['EVENTS_READ', 'PROMPTS_READ']);
  });

  it('answers a key whose role holds no permission, with permissions []', async () => {
    const parked = await keyOf(acme.organizationId, 'parked', 'parked key', []);
    const res = await current(parked);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'parked key', role: 'parked', permissions: [] });
  });

  it("tells two keys of one role apart, and shows each organization's own", async () => {
    const role = await createRole(api.db, {
      organizationId: acme.organizationId,
      name: 'shared',
      permissions: ['EVENTS_READ'],
    });
    const names = ['first of shared', 'second of shared'];
    const keys = await Promise.all(
      names.map(async (name) => {
        const created = await createApiKey(api.db, {
          organizationId: acme.organizationId,
          roleId: role.id,
          name,
        });
        return created.fullKey;
      }),
    );
    const answers = await Promise.all(keys.map((key) => current(key)));
    expect(answers.map((res) => [res.body.name, res.body.role, res.body.key_id])).toEqual(
      keys.map((key, i) => [names[i], 'shared', parseApiKey(key)!.keyId]),
    );
    expect((await current(globex.key)).body.organization).toEqual({
      id: globex.organizationId,
      name: 'Globex',
    });
  });

  it("shows a change of the key's role at once", async () => {
    const key = await keyOf(acme.organizationId, 'changing', 'changing key', ['EVENTS_READ']);
    expect((await current(key)).body.permissions).toEqual(['EVENTS_READ']);
    await queryTestDb(
      api.db,
      sql`UPDATE ${roles} SET ${setValues(roles, {
        permissions: jsonText(['SESSIONS_WRITE', 'CHANNELS_READ']),
      })} WHERE ${roles.organizationId} = ${acme.organizationId} AND ${roles.name} = 'changing'
        RETURNING ${roles.id}`,
    );
    expect((await current(key)).body.permissions).toEqual(['CHANNELS_READ', 'SESSIONS_WRITE']);
  });

  it('never carries the secret, nor the key as sent', async () => {
    const key = await keyOf(acme.organizationId, 'reader', 'reader key', ['PROMPTS_READ']);
    const { secret } = parseApiKey(key)!;
    const res = await current<unknown>(key);
    expect(res.status).toBe(200);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(key);
    expect(Object.keys(res.body as object).sort()).toEqual(
      ['key_id', 'name', 'organization', 'permissions', 'role'].sort(),
    );
  });

  it('answers 401 without a key, with a malformed, a wrong or a revoked one', async () => {
    const revoked = await keyOf(acme.organizationId, 'gone', 'gone key', ['EVENTS_READ']);
    await revokeApiKey(api.db, parseApiKey(revoked)!.keyId);
    const wrongSecret = `${acme.key.slice(0, -1)}${acme.key.endsWith('A') ? 'B' : 'A'}`;
    for (const key of [undefined, 'not-a-key', wrongSecret, revoked]) {
      const res = await current<Schemas['ErrorResponse']>(key);
      expect(res.status, String(key)).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toBe('ApiKey header="Service-API-Key"');
    }
  });

  it('answers 401 to a key revoked while its authentication is still trusted', async () => {
    const key = await keyOf(acme.organizationId, 'revoked soon', 'revoked soon', ['EVENTS_READ']);
    expect((await current(key)).status).toBe(200);
    await revokeApiKey(api.db, parseApiKey(key)!.keyId);
    // Inside the trust window authentication still lets it through; the read refuses it.
    const res = await current<Schemas['ErrorResponse']>(key);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHENTICATED');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="Service-API-Key"');
  });
});
