// The real `agentline` process: exit codes, the key alone on stdout, and stdin, as a shell sees them.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryArgs } from './support/server-process.js';

const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
let dir: string;
let database: string;

function agentline(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [...entryArgs('cli/main'), ...args], {
    cwd: SERVER_DIR,
    input,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, DATABASE_URL: join(dir, 'from-env.db') },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentline-process-'));
  database = join(dir, 'agentline.db');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agentline as a process', () => {
  it('creates an organization, a role and a key; the key is all of stdout', () => {
    expect(agentline(['migrate', '--database', database]).code).toBe(0);
    const org = agentline(['--database', database, 'org', 'create', 'Acme']);
    expect(org).toMatchObject({ code: 0, stdout: '1\n' });
    expect(
      agentline([
        'role',
        'create',
        '--org',
        'Acme',
        '--name',
        'admin',
        '--all',
        '--database',
        database,
      ]).code,
    ).toBe(0);
    const key = agentline([
      'key',
      'create',
      '--org',
      '1',
      '--role',
      'admin',
      '--database',
      database,
    ]);
    expect(key.code).toBe(0);
    expect(key.stdout).toMatch(/^agl_[a-z0-9]{12}_[A-Za-z0-9]{32}\n$/);
    expect(key.stderr).toContain('only time it is shown');
  }, 60_000);

  it('imports events piped to stdin', () => {
    const lines = [1, 2, 3].map((n) =>
      JSON.stringify({ import_key: `p-${n}`, timestamp: `2026-01-0${n}T00:00:00Z` }),
    );
    const result = agentline(
      ['events', 'import', '-', '--org', 'Acme', '--database', database],
      lines.join('\n'),
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^imported 3 events, skipped 0 duplicates/);
  }, 60_000);

  it('exits 2 on a usage error and 1 on a failure, with one line and no stack trace', () => {
    const usage = agentline(['key', 'create', '--database', database]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      'agentline: missing --org, --role — run "agentline key create --help" for its options\n',
    );
    const failure = agentline([
      'key',
      'create',
      '--org',
      'Nobody',
      '--role',
      'admin',
      '--database',
      database,
    ]);
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(
      /^agentline: no organization "Nobody" in .* — use an id or name of one of: 1 "Acme"\n$/,
    );
  }, 60_000);

  it('uses DATABASE_URL when --database is absent', () => {
    const result = agentline(['migrate']);
    expect(result).toMatchObject({
      code: 0,
      stdout: `database ${join(dir, 'from-env.db')} is up to date\n`,
    });
  }, 60_000);
});
