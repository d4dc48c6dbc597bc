// The API reference at /docs: Scalar rendering /openapi.json. Everything the page needs is served
// from the installed packages, and a Content-Security-Policy keeps the browser from reaching any
// other origin, so the page works offline and sends nothing to third parties (fonts, proxy, CDN).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Scalar } from '@scalar/hono-api-reference';
import { createRouter } from '../../http/router.js';

const BUNDLE_PATH = '/docs/scalar.js';

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // Scalar's page starts with an inline script and its components set inline styles.
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
].join('; ');

let bundle: Uint8Array<ArrayBuffer> | undefined;

/** Read on first use (most processes never serve the page) and kept as bytes: it is about 3 MB. */
function scalarBundle(): Uint8Array<ArrayBuffer> {
  bundle ??= new Uint8Array(
    readFileSync(
      createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js'),
    ),
  );
  return bundle;
}

const renderReference = Scalar((c) => ({
  pageTitle: 'Agentline API reference',
  url: '/openapi.json',
  cdn: BUNDLE_PATH,
  withDefaultFonts: false,
  // Twelve operations: showing them all beats making readers expand each tag.
  defaultOpenAllTags: true,
  // The spec names the default local address; try-it should call the server that serves the page.
  servers: [{ url: new URL(c.req.url).origin, description: 'This server' }],
  authentication: { preferredSecurityScheme: 'APIKeyHeader' },
}));

export const docsRouter = createRouter()
  .get(
    '/docs',
    async (c, next) => {
      c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      await next();
    },
    renderReference,
  )
  .get(BUNDLE_PATH, (c) => {
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    c.header('Cache-Control', 'public, max-age=3600');
    return c.body(scalarBundle());
  });
