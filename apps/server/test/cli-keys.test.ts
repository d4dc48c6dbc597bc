// agentline migrate / org / role / key: the operator's way to let a client in.

import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { authenticateApiKey } from '../src/use-cases/authentication.js';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';
import { onSqlite, queryTestDb } from './support/test-database.js';

let workspace: TempWorkspace;

beforeAll(async () => {
  workspace = await createWorkspace();
});

afterAll(() => workspace.remove());

function withDb<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(workspace.databaseUrl);
  return work(db).finally(() => db.close());
}

const KEY_PATTERN = /^agl_[a-z0-9]{12}_[A-Za-z0-9]{32}$/;

describe('migrate', () => {
  it('creates the schema and is a no-op when run again', async () => {
    const first = await workspace.run(['migrate']);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain('is up to date');
    const second = await workspace.run(['migrate']);
    expect(second.code).toBe(0);
    // Reading the table proves it exists (an unknown table is an error on both backends).
    const events = await withDb((db) =>
      queryTestDb<{ n: number }>(db, sql`SELECT count(*) AS n FROM events`),
    );
    expect(events.map((row) => Number(row.n))).toEqual([0]);
  });
});

describe('org, role and key', () => {
  let organizationId: string;
  let fullKey: string;

  it('creates an organization and prints only its id', async () => {
    const result = await workspace.run(['org', 'create', 'Acme Support']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\n$/);
    organizationId = result.stdout.trim();
    expect(result.stderr).toContain('created organization "Acme Support"');
  });

  it('refuses a second organization with the same name', async () => {
    const result = await workspace.run(['org', 'create', 'Acme Support']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `agentline: an organization named "Acme Support" already exists (id ${organizationId}) — use it with --org ${organizationId}, or pick another name\n`,
    );
  });

  it('creates roles by organization name or id, with listed or all permissions', async () => {
    const reader = await workspace.run([
      'role',
      'create',
      '--org',
      'Acme Support',
      '--name',
      'reader',
      '--permissions',
      'EVENTS_READ, prompts_read',
    ]);
    expect(reader.code).toBe(0);
    expect(reader.stdout).toMatch(/^\d+\n$/);
    const admin = await workspace.run([
      'role',
      'create',
      '--org',
      organizationId,
      '--name',
      'admin',
      '--all',
    ]);
    expect(admin.code).toBe(0);
    const roles = await withDb((db) =>
      queryTestDb<{ name: string; permissions: unknown }>(
        db,
        sql`SELECT name, permissions FROM roles ORDER BY id`,
      ),
    );
    // SQLite hands the JSON column back as text, PostgreSQL's jsonb as parsed JSON.
    expect(
      roles.map(({ name, permissions }) => ({
        name,
        permissions:
          typeof permissions === 'string' ? (JSON.parse(permissions) as unknown) : permissions,
      })),
    ).toEqual([
      { name: 'reader', permissions: ['EVENTS_READ', 'PROMPTS_READ'] },
      {
        name: 'admin',
        permissions: [
          'EVENTS_READ',
          'PROMPTS_READ',
          'CHANNELS_READ',
          'CHANNELS_WRITE',
          'CHANNELS_DELETE',
          'SESSIONS_WRITE',
          'WEBHOOKS_READ',
          'WEBHOOKS_WRITE',
        ],
      },
    ]);
  });

  it('rejects unknown permission names with the valid ones, as a usage error', async () => {
    const result = await workspace.run([
      'role',
      'create',
      '--org',
      organizationId,
      '--name',
      'bad',
      '--permissions',
      'EVENTS_READ,EVENTS_WRITE',
    ]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'agentline: unknown permission "EVENTS_WRITE" — use a comma-separated list of EVENTS_READ, PROMPTS_READ, CHANNELS_READ, CHANNELS_WRITE, CHANNELS_DELETE, SESSIONS_WRITE, WEBHOOKS_READ, WEBHOOKS_WRITE, --all, or --none\n',
    );
    const both = await workspace.run([
      'role',
      'create',
      '--org',
      organizationId,
      '--name',
      'bad',
      '--all',
      '--permissions',
      'EVENTS_READ',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('exclude each other');
    const nothing = await workspace.run(['role', 'create', '--org', organizationId, '--name', 'x']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('--none');
  });

  it('creates a role with no permission (--none), whose key authenticates and may do nothing', async () => {
    const parked = await workspace.run([
      'role',
      'create',
      '--org',
      organizationId,
      '--name',
      'parked',
      '--none',
    ]);
    expect(parked.code).toBe(0);
    expect(parked.stderr).toContain('with no permissions');
    const key = await workspace.run([
      'key',
      'create',
      '--org',
      organizationId,
      '--role',
      'parked',
      '--name',
      'on-hold',
    ]);
    expect(key.code).toBe(0);
    const principal = await withDb((db) => authenticateApiKey(db, key.stdout.trim()));
    expect(principal).toMatchObject({ keyName: 'on-hold', permissions: [] });
  });

  it('prints a new key alone on stdout, and the key authenticates', async () => {
    const result = await workspace.run([
      'key',
      'create',
      '--org',
      organizationId,
      '--role',
      'reader',
      '--name',
      'dashboards',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^${KEY_PATTERN.source.slice(1, -1)}\n$`));
    fullKey = result.stdout.trim();
    expect(result.stderr).toContain('only time it is shown');
    const principal = await withDb((db) => authenticateApiKey(db, fullKey));
    expect(principal).toMatchObject({
      organizationId: Number(organizationId),
      keyName: 'dashboards',
      permissions: ['EVENTS_READ', 'PROMPTS_READ'],
    });
  });

  it('stores no trace of the secret in the database', async () => {
    const secret = fullKey.split('_')[2]!;
    // Every column of every key row, as text: only a hash of the secret may be there.
    const keyRows = await withDb((db) => queryTestDb(db, sql`SELECT * FROM api_keys`));
    expect(keyRows.length).toBeGreaterThan(0);
    expect(JSON.stringify(keyRows)).not.toContain(secret);
    if (!onSqlite) return;
    // On SQLite, also the bytes of the files, before and after the WAL is checkpointed.
    const databaseBytes = () =>
      ['', '-wal', '-shm'].flatMap((suffix) => {
        try {
          return [readFileSync(`${workspace.databaseUrl}${suffix}`)];
        } catch {
          return [];
        }
      });
    const beforeCheckpoint = databaseBytes();
    await withDb(async (db) => {
      if (db.kind === 'sqlite') db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    });
    for (const bytes of [...beforeCheckpoint, ...databaseBytes()]) {
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
    }
  });

  it('lists keys without secrets', async () => {
    const result = await workspace.run(['key', 'list', '--org', 'Acme Support']);
    expect(result.code).toBe(0);
    const keyId = fullKey.split('_')[1]!;
    expect(result.stdout).toContain(keyId);
    expect(result.stdout).toContain('dashboards');
    expect(result.stdout).not.toContain(fullKey.split('_')[2]!);
  });

  it('names the missing role and how to create it', async () => {
    const result = await workspace.run([
      'key',
      'create',
      '--org',
      organizationId,
      '--role',
      'owner',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('has no role named "owner"');
    expect(result.stderr).toContain('agentline role create');
  });

  it('revokes by full key or key id; a revoked key no longer authenticates', async () => {
    const keyId = fullKey.split('_')[1]!;
    const result = await workspace.run(['key', 'revoke', fullKey]);
    expect(result).toMatchObject({ code: 0, stdout: `revoked ${keyId}\n` });
    expect(await withDb((db) => authenticateApiKey(db, fullKey))).toBeNull();
    const again = await workspace.run(['key', 'revoke', keyId]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already revoked');
    const list = await workspace.run(['key', 'list', '--org', organizationId]);
    expect(list.stdout).toMatch(new RegExp(`${keyId}.*\\d{4}-\\d{2}-\\d{2}T.*Z\\s*$`, 'm'));
  });

  it('reports unknown keys and malformed references', async () => {
    expect((await workspace.run(['key', 'revoke', 'abcdefghijkl'])).code).toBe(1);
    const malformed = await workspace.run(['key', 'revoke', 'agl_nope']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('neither a key id nor an API key');
  });
});

describe('usage', () => {
  it('prints help for the tool and for each command', async () => {
    const general = await workspace.run(['--help']);
    expect(general.code).toBe(0);
    for (const command of [
      'migrate',
      'org create',
      'role create',
      'key create',
      'key revoke',
      'key list',
      'load',
      'list',
      'events import',
      'demo',
    ]) {
      expect(general.stdout).toContain(command);
      const help = await workspace.run([...command.split(' '), '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: agentline ${command}`);
    }
  });

  it('answers mistakes with exit code 2 and one line saying what to do', async () => {
    const cases = [
      [[], /agentline/],
      [['frobnicate'], /^agentline: unknown command "frobnicate" — run "agentline --help"/],
      [['key'], /^agentline: "agentline key" needs one of: create, revoke, list/],
      [['org', 'create'], /^agentline: missing <name> — usage: agentline org create <name>/],
      [
        ['key', 'list', '--org', '1', '--colour'],
        /^agentline: unknown option --colour — run "agentline key list --help"/,
      ],
      [['key', 'create', '--org', '1'], /^agentline: missing --role/],
      [['org', 'create', ' '], /^agentline: the organization name is empty/],
    ] as const;
    for (const [argv, message] of cases) {
      const result = await workspace.run([...argv]);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('names an unreachable PostgreSQL server and the fix, never its password', async () => {
    const result = await workspace.run([
      'migrate',
      '--database',
      'postgres://agentline:hunter2-secret@127.0.0.1:1/agentline',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^agentline: cannot open the database postgres:\/\/agentline:\*\*\*@127\.0\.0\.1:1\/agentline \(.*ECONNREFUSED.*\)/,
    );
    expect(result.stderr).toContain('check that PostgreSQL is running');
    expect(result.stdout + result.stderr).not.toContain('hunter2-secret');
  });
});
