// The limits the benchmarks compare the server with: a bare Hono app in a process of its own, like
// the real server, doing only what a request cannot do without (answering fixed bytes; one
// indexed insert into the same SQLite file, opened as the server opens it).

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeCommand } from '../../apps/server/test/support/server-process.js';

const SERVER_DIR = fileURLToPath(new URL('../../apps/server', import.meta.url));

export interface BareServer {
  url: string;
  pid: number;
  stop(): void;
}

/**
 * Runs `app` (module code that builds a Hono app named `app`) on an ephemeral port, pinned to
 * `cpu` when given.
 */
async function startBare(app: string, cpu?: number): Promise<BareServer> {
  const code = `
    import { serve } from '@hono/node-server';
    ${app}
    serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
      console.log('port ' + info.port));`;
  // Under tsx, so that the insert opens SQLite through the server's own module.
  const [command, args] = nodeCommand(['--import', 'tsx', '--input-type=module', '-e', code], cpu);
  const child = spawn(command, args, { cwd: SERVER_DIR });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /port (\d+)/.exec(chunk.toString());
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the bare server exited (${code}): ${errors}`)));
  });
  return { url: `http://127.0.0.1:${port}/`, pid: child.pid!, stop: () => child.kill() };
}

/** Any request answers `body` (written to `directory`) as application/json. */
export async function startBareBodyServer(
  directory: string,
  body: string,
  cpu?: number,
): Promise<BareServer> {
  const bodyFile = join(directory, 'bare-body.json');
  writeFileSync(bodyFile, body);
  return startBare(
    `
    import { readFileSync } from 'node:fs';
    import { Hono } from 'hono';
    const body = readFileSync(${JSON.stringify(bodyFile)}, 'utf8');
    const app = new Hono();
    app.all('*', (c) => c.body(body, 200, { 'content-type': 'application/json' }));`,
    cpu,
  );
}

/**
 * Any GET answers one of `bodies` (written to `directory`) as application/json, the same one for
 * the same path and query: a varied mix of requests served with none of the work behind them.
 */
export async function startBareBodiesServer(
  directory: string,
  bodies: readonly string[],
): Promise<BareServer> {
  const bodiesFile = join(directory, 'bare-bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(bodies));
  return startBare(`
    import { readFileSync } from 'node:fs';
    import { Hono } from 'hono';
    const bodies = JSON.parse(readFileSync(${JSON.stringify(bodiesFile)}, 'utf8'));
    const app = new Hono();
    app.get('*', (c) => {
      let hash = 0;
      for (const char of c.req.url) hash = (hash * 31 + char.charCodeAt(0)) | 0;
      const body = bodies[Math.abs(hash) % bodies.length];
      return c.body(body, 200, { 'content-type': 'application/json' });
    });`);
}

/**
 * POST / with `{"user_id": ...}` inserts one row into an indexed table of its own in the SQLite
 * file `databaseUrl` (opened with the server's settings: openSqlite, then prepareServerConnection)
 * and answers its id: what storing a session costs at the least.
 */
export async function startBareInsertServer(databaseUrl: string): Promise<BareServer> {
  return startBare(`
    import { Hono } from 'hono';
    import { openSqlite, prepareServerConnection } from './src/db/engine/client.ts';
    const db = openSqlite(${JSON.stringify(databaseUrl)});
    prepareServerConnection(db);
    const { sqlite } = db;
    sqlite.exec(\`CREATE TABLE IF NOT EXISTS bench_bare_sessions (
      id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS bench_bare_sessions_user_idx
        ON bench_bare_sessions (user_id, created_at)\`);
    const insert = sqlite.prepare(
      'INSERT INTO bench_bare_sessions (user_id, created_at) VALUES (?, ?) RETURNING id');
    const app = new Hono();
    app.post('/', async (c) => {
      const { user_id } = await c.req.json();
      const { id } = insert.get(user_id, new Date().toISOString());
      return c.json({ session_id: id });
    });`);
}
