// A real HTTP server on 127.0.0.1 (an ephemeral port) around a fresh app, for end-to-end tests
// that go through the network stack the way users' clients do.

import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import type { App } from '../../src/app.js';
import { createFrontDoor } from '../../src/http/front-door.js';
import { specValidator } from './contract.js';

export interface LiveServer {
  baseUrl: string;
  close(): Promise<void>;
}

export interface LiveServerOptions {
  /** What the server may drain of a refused request's body (the app's own limit: createApp). */
  bodyLimitBytes?: number;
  logger?: Logger;
}

/** The app behind the server's real front door (src/http/front-door.ts), as main.ts serves it. */
export async function startLiveServer(
  app: App,
  { bodyLimitBytes = 1024 * 1024, logger = pino({ level: 'silent' }) }: LiveServerOptions = {},
): Promise<LiveServer> {
  const server = createFrontDoor({
    fetch: app.fetch,
    logger,
    bodyLimitBytes,
    hostname: '127.0.0.1',
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Connections still draining a refused body would hold close() for up to LINGER_MS.
        server.closeAllConnections();
      }),
  };
}

export interface RawResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

export interface RawRequest {
  method?: string;
  path: string;
  /** Sent as they are: nothing is added (no Content-Type, no key) unless named here. */
  headers?: Record<string, string>;
  /** Written one after the other; without Content-Length in `headers` the body is chunked. */
  chunks?: Array<string | Buffer>;
}

/**
 * Sends a request through node:http exactly as given, the way a careless or hostile client
 * would (fetch would add a Content-Type of its own), and checks the answer against the spec.
 * `T` is the body expected, as for `TestApi.request` (harness.ts).
 */
export function sendRaw<T = unknown>(
  baseUrl: string,
  { method = 'POST', path, headers = {}, chunks = [] }: RawRequest,
): Promise<RawResponse<T>> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method, headers });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        const body: unknown = text ? JSON.parse(text) : undefined;
        const responseHeaders = res.headers as Record<string, string>;
        specValidator.validateResponse({
          method,
          url: path,
          status: res.statusCode!,
          headers: responseHeaders,
          body,
        });
        resolve({ status: res.statusCode!, headers: responseHeaders, body: body as T });
      });
    });
    // The server may answer (413, 401, 429) and close before the whole body is sent.
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}
