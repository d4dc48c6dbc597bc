// The limit the day benchmark compares the server with (day-closed-loop.ts): a bare Hono app in a
// process of its own, like the real server, answering bytes sampled from the server's answers.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER_DIR = fileURLToPath(new URL('../../apps/server', import.meta.url));

export interface BareServer {
  url: string;
  stop(): void;
}

/** Runs `app` (module code that builds a Hono app named `app`) on an ephemeral port. */
async function startBare(app: string): Promise<BareServer> {
  const code = `
    import { serve } from '@hono/node-server';
    ${app}
    serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
      console.log('port ' + info.port));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: SERVER_DIR,
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /port (\d+)/.exec(chunk.toString());
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the bare server exited (${code}): ${errors}`)));
  });
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill() };
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
