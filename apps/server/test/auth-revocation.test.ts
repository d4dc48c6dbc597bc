// A process trusts an authentication it has made for AUTHENTICATION_TRUST_MS, so a busy key is not
// looked up and hashed on every request; every process reads the key again after that, so a key
// revoked through the CLI is refused by all of them within one second. With two real server
// processes on one database, and the real CLI.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { revokeApiKey } from '../src/db/repositories/api-keys.js';
import { parseApiKey } from '../src/domain/api-keys.js';
import {
  AUTHENTICATION_TRUST_MS,
  authenticateApiKeyTrusted,
} from '../src/use-cases/authentication.js';
import { createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { freshDatabaseUrl } from './support/test-database.js';

const REVOCATION_BOUND_MS = 1_000;

class Discard extends Writable {
  isTTY = false;
  override _write(_chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    done();
  }
}

describe('a remembered authentication', () => {
  let db: Db;
  let acme: Tenant;

  beforeAll(async () => {
    db = createDb(await freshDatabaseUrl());
    await migrateDb(db);
    acme = await createTenant(db, 'Acme');
  });
  afterAll(() => db.close());

  it('is trusted only for its window; a failure is never remembered', async () => {
    const now = Date.now();
    expect(await authenticateApiKeyTrusted(db, acme.key, now)).toMatchObject({
      organizationId: acme.organizationId,
    });
    await revokeApiKey(db, parseApiKey(acme.key)!.keyId);
    // Inside the window the process has not read the key again; past it, it has.
    expect(
      await authenticateApiKeyTrusted(db, acme.key, now + AUTHENTICATION_TRUST_MS - 1),
    ).not.toBeNull();
    expect(await authenticateApiKeyTrusted(db, acme.key, now + AUTHENTICATION_TRUST_MS)).toBeNull();
    expect(
      await authenticateApiKeyTrusted(db, acme.key, now + AUTHENTICATION_TRUST_MS + 1),
    ).toBeNull();
    expect(AUTHENTICATION_TRUST_MS).toBeLessThan(REVOCATION_BOUND_MS);
  });
});

describe('a key revoked through the CLI', () => {
  let databaseUrl: string;
  let workDir: string;
  let acme: Tenant;
  let servers: ServerProcess[] = [];

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    workDir = mkdtempSync(join(tmpdir(), 'agentline-revocation-'));
    const db = createDb(databaseUrl);
    await migrateDb(db);
    acme = await createTenant(db, 'Acme');
    await db.close();
    const env = { DATABASE_URL: databaseUrl };
    servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    rmSync(workDir, { recursive: true, force: true });
  });

  const statusOf = async (server: ServerProcess) =>
    (
      await fetch(`${server.baseUrl}/api/v1/experiments/?limit=0`, {
        headers: { 'Service-API-Key': acme.key },
      })
    ).status;

  it('is refused by two running server processes within one second', async () => {
    // Both processes have just authenticated the key, so both hold it as trusted.
    for (const server of servers) expect(await statusOf(server)).toBe(200);

    const code = await runCli(['key', 'revoke', parseApiKey(acme.key)!.keyId], {
      stdout: new Discard(),
      stderr: new Discard(),
      env: { DATABASE_URL: databaseUrl },
      cwd: workDir,
    });
    expect(code).toBe(0);
    const revokedAt = performance.now();

    const refusedAfter = await Promise.all(
      servers.map(async (server) => {
        while ((await statusOf(server)) !== 401) {
          expect(performance.now() - revokedAt).toBeLessThan(REVOCATION_BOUND_MS * 3);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return performance.now() - revokedAt;
      }),
    );
    for (const elapsed of refusedAfter) expect(elapsed).toBeLessThan(REVOCATION_BOUND_MS);
  });
});
