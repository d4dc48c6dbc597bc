// What a command gets to work with: its output streams, the environment it was started with and
// a lazily opened database. Commands never touch `process` so tests can run them in-process.

import { isAbsolute, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createDb, describeDatabaseUrl, isPostgresUrl, type Db } from '../db/engine/client.js';
import { migrateDb } from '../db/migrate.js';
import { driverMessage } from '../db/engine/errors.js';
import {
  findOrganization,
  listOrganizations,
  type Organization,
} from '../db/repositories/organizations.js';
import { CliError } from './cli-error.js';

/** What `pg_stat_activity` names the operator CLI's connections. */
export const CLI_APPLICATION_NAME = 'agentline cli';

export interface CliIo {
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
  stdin?: Readable;
  env: NodeJS.ProcessEnv;
  /** Aborted when the command should stop (Ctrl-C): what a command that follows waits for. */
  signal?: AbortSignal;
  /** Directory that relative file arguments start from; defaults to process.cwd(). */
  cwd?: string;
}

export class CommandContext {
  private openedDb: Db | undefined;
  private loadedConfig: Config | undefined;

  constructor(
    readonly io: CliIo,
    /** `--database`, which wins over DATABASE_URL. */
    private readonly databaseOption: string | undefined,
  ) {}

  /** The command's result, for scripts: stdout carries nothing else. */
  out(line: string): void {
    this.io.stdout.write(`${line}\n`);
  }

  /** Notes and progress for the person at the terminal. */
  note(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  get config(): Config {
    if (!this.loadedConfig) {
      try {
        this.loadedConfig = loadConfig(this.io.env);
      } catch (error) {
        if (error instanceof ConfigError) {
          throw new CliError(error.message, 'fix that environment variable and re-run');
        }
        throw error;
      }
    }
    return this.loadedConfig;
  }

  /**
   * Resolves a file argument. Under `pnpm agentline` the process runs in apps/server, so paths
   * start from INIT_CWD, the directory the command was typed in.
   */
  resolvePath(path: string): string {
    if (isAbsolute(path)) return path;
    return resolve(this.io.cwd ?? this.io.env.INIT_CWD ?? process.cwd(), path);
  }

  get databaseUrl(): string {
    if (this.databaseOption === undefined) return this.config.databaseUrl;
    const isFilePath = this.databaseOption !== ':memory:' && !isPostgresUrl(this.databaseOption);
    return isFilePath ? this.resolvePath(this.databaseOption) : this.databaseOption;
  }

  /** The database as messages name it (without a PostgreSQL password). */
  get databaseName(): string {
    return describeDatabaseUrl(this.databaseUrl);
  }

  /** Opens the database and brings its schema up to date (migrations are idempotent and quick). */
  async db(): Promise<Db> {
    if (!this.openedDb) {
      let db: Db | undefined;
      try {
        // Named apart from the servers' connections, so an operator (and `pnpm bench day`) can tell a
        // long import's database work from theirs.
        db = createDb(this.databaseUrl, { applicationName: CLI_APPLICATION_NAME });
        await migrateDb(db);
      } catch (error) {
        await db?.close().catch(() => {});
        throw new CliError(
          `cannot open the database ${this.databaseName} (${driverMessage(error)})`,
          isPostgresUrl(this.databaseUrl)
            ? "check that PostgreSQL is running and the URL's host, port, user, password and database are right"
            : 'check the path and its permissions, or pass another one with --database',
        );
      }
      this.openedDb = db;
    }
    return this.openedDb;
  }

  async organization(reference: string): Promise<Organization> {
    const db = await this.db();
    const found = await findOrganization(db, reference);
    if (found) return found;
    const known = (await listOrganizations(db)).map((org) => `${org.id} "${org.name}"`);
    throw new CliError(
      `no organization "${reference}" in ${this.databaseName}`,
      known.length > 0
        ? `use an id or name of one of: ${known.slice(0, 10).join(', ')}${known.length > 10 ? ', ...' : ''}`
        : `create it first: agentline org create "${reference}"`,
    );
  }

  async close(): Promise<void> {
    await this.openedDb?.close();
    this.openedDb = undefined;
  }
}
