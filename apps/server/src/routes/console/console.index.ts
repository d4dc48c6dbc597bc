// The operator console (apps/console) at /console: its built files, served as they are. The page
// is a client of the public API like any other (the key a user pastes, sent by the SDK), so the
// server gives it nothing but files; the Content-Security-Policy keeps the browser on this origin,
// so it works offline and sends nothing elsewhere.
//
// Where the files are: next to the server's package in a deployed folder (`console/`, copied by
// scripts/deploy-build.sh), or the console's own build output in the workspace.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { createRouter } from '../../http/router.js';
import { PACKAGE_ROOT } from '../../package-root.js';

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // Preact and uPlot set styles from script (CSSOM), which style-src does not restrict, and the
  // built page has no inline script or style.
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The first folder holding a built console, or null when it was never built. */
export function consoleDirectory(
  candidates = [join(PACKAGE_ROOT, 'console'), join(PACKAGE_ROOT, '..', 'console', 'dist')],
): string | null {
  return candidates.find((folder) => existsSync(`${folder}/index.html`)) ?? null;
}

const NOT_BUILT =
  'The console is not built. Build it with `pnpm --filter console build` (scripts/quickstart.sh does), then reload.';

export function consoleRouter(directory = consoleDirectory()) {
  const router = createRouter();
  router.use('/console', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  });
  router.use('/console/*', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    if (!c.res.ok) return;
    // Built asset names carry a hash of their content: a new build has new names. The page's name
    // never changes, so a browser must ask for it again on every visit (no-cache): a page kept
    // from an earlier build would load assets that a new build no longer has.
    c.header(
      'Cache-Control',
      c.req.path.startsWith('/console/assets/')
        ? 'public, max-age=31536000, immutable'
        : 'no-cache',
    );
  });
  if (directory === null) {
    router.get('/console', (c) => c.text(NOT_BUILT, 404));
    router.get('/console/*', (c) => c.text(NOT_BUILT, 404));
    return router;
  }
  // The page links its assets relative to /console/, so /console itself moves there.
  router.get('/console', (c) => c.redirect('/console/', 308));
  router.get(
    '/console/*',
    serveStatic({
      root: directory,
      rewriteRequestPath: (path) => path.slice('/console'.length),
    }),
  );
  return router;
}
