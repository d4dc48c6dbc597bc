// A real HTTP server on 127.0.0.1 (an ephemeral port) around a fresh app, for end-to-end tests
// that go through the network stack the way users' clients do.

import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { App } from '../../src/app.js';

export interface LiveServer {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startLiveServer(app: App): Promise<LiveServer> {
  const server: ServerType = await new Promise((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
      resolve(started),
    );
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      ),
  };
}
