// Configuration: every variable config.ts reads is in the README's table, and a bad value stops
// start-up with a message that names the variable.

import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { startServerProcess } from './support/server-process.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const configSource = readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');

function variablesReadByConfig(): string[] {
  const names = new Set<string>();
  for (const match of configSource.matchAll(/env\.([A-Z][A-Z0-9_]+)|env,\s*'([A-Z][A-Z0-9_]+)'/g)) {
    names.add((match[1] ?? match[2])!);
  }
  return [...names].sort();
}

function variablesInReadmeTable(): string[] {
  const section = readme.split('\n## Configuration\n')[1]?.split('\n## ')[0] ?? '';
  return [...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]!).sort();
}

describe('configuration', () => {
  it("documents exactly the variables config.ts reads in the README's table", () => {
    expect(variablesReadByConfig().length).toBeGreaterThan(4);
    expect(variablesInReadmeTable()).toEqual(variablesReadByConfig());
  });

  it('names the variable and never echoes a secret when a value is invalid', () => {
    expect(() => loadConfig({ PORT: '80a' })).toThrow(/^PORT must be/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/^LOG_LEVEL must be/);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(
      /^DATABASE_POOL_SIZE must be a whole number from 1 to 1000, got "0"/,
    );
    expect(loadConfig({}).databasePoolSize).toBe(10);
    expect(loadConfig({ DATABASE_POOL_SIZE: '40' }).databasePoolSize).toBe(40);
    expect(() => loadConfig({ METRICS_TOKEN: 'short-secret' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_TOKEN: 'short-secret' })).toThrow(/^METRICS_TOKEN must be/);
    expect(() => loadConfig({ METRICS_TOKEN: 'short-secret' })).not.toThrow(/short-secret/);
    expect(loadConfig({}).metricsToken).toBeUndefined();
  });

  it('keeps every event unless EVENT_RETENTION_DAYS says otherwise, within a hundred years', () => {
    expect(loadConfig({}).eventRetentionDays).toBe(0);
    expect(loadConfig({ EVENT_RETENTION_DAYS: '90' }).eventRetentionDays).toBe(90);
    expect(loadConfig({ EVENT_RETENTION_DAYS: '36500' }).eventRetentionDays).toBe(36_500);
    for (const bad of ['36501', '-1', '1.5', 'ninety']) {
      expect(() => loadConfig({ EVENT_RETENTION_DAYS: bad })).toThrow(
        `EVENT_RETENTION_DAYS must be a whole number from 0 to 36500, got "${bad}"`,
      );
    }
  });

  it('takes DATABASE_READ_URL only as a PostgreSQL replica of a PostgreSQL primary', () => {
    const primary = 'postgres://agentline:secret@127.0.0.1:5432/agentline';
    const replica = 'postgres://agentline:secret@127.0.0.1:5433/agentline';
    expect(loadConfig({}).databaseReadUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica }).databaseReadUrl).toBe(
      replica,
    );
    expect(loadConfig({}).replicaMaxLagMs).toBe(1000);
    for (const env of [
      { DATABASE_READ_URL: replica },
      { DATABASE_URL: primary, DATABASE_READ_URL: 'data/replica.db' },
    ]) {
      expect(() => loadConfig(env)).toThrow(/^DATABASE_READ_URL must be a postgres:\/\/ URL/);
      expect(() => loadConfig(env)).not.toThrow(/secret/);
    }
  });

  it('stops the server process with exit code 1 and a message naming PORT', async () => {
    const failure = await startServerProcess({ PORT: 'eighty', DATABASE_URL: ':memory:' }).then(
      () => new Error('the server started with PORT=eighty'),
      (error: unknown) => error as Error,
    );
    expect(failure.message).toMatch(/exited with 1 before listening/);
    expect(failure.message).toMatch(
      /agentline: invalid configuration: PORT must be a whole number from 0 to 65535, got "eighty"/,
    );
  });

  it('exits 1 with one line naming the address when its port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const failure = await startServerProcess({
        PORT: String(port),
        DATABASE_URL: ':memory:',
      }).then(
        () => new Error(`the server started on the taken port ${port}`),
        (error: unknown) => error as Error,
      );
      expect(failure.message).toMatch(/exited with 1 before listening/);
      expect(failure.message).toContain(
        `agentline: could not start: 127.0.0.1:${port} is already in use by another process; stop it, or set PORT to a free port`,
      );
      expect(failure.message).not.toMatch(/\n\s+at /);
    } finally {
      taken.close();
    }
  });
});
