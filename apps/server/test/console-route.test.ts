// /console serves the console's built files as they are (apps/console; its own tests drive it in
// a browser): the page and its assets from the folder it was built to, with a policy that keeps
// the browser on this origin, and a sentence that says how to build it when it was not.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleDirectory, consoleRouter } from '../src/routes/console/console.index.js';

describe('/console', () => {
  let built: string;

  beforeAll(() => {
    built = mkdtempSync(join(tmpdir(), 'agentline-console-route-'));
    mkdirSync(join(built, 'assets'));
    writeFileSync(join(built, 'index.html'), '<!doctype html><div id="app"></div>');
    writeFileSync(join(built, 'assets', 'index-abc123.js'), 'console.log(1)');
  });
  afterAll(() => rmSync(built, { recursive: true, force: true }));

  it('moves /console to /console/, where the page links its assets from', async () => {
    const answer = await consoleRouter(built).request('/console');
    expect(answer.status).toBe(308);
    expect(answer.headers.get('location')).toBe('/console/');
  });

  it('serves the page and its assets under a policy that allows this origin only', async () => {
    const router = consoleRouter(built);
    const page = await router.request('/console/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<div id="app">');
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    // The page itself is asked for again on every visit: a new build takes effect at once.
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const byName = await router.request('/console/index.html');
    expect(byName.headers.get('content-type')).toMatch(/^text\/html/);
    expect(byName.headers.get('cache-control')).toBe('no-cache');

    const asset = await router.request('/console/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('serves nothing outside the folder, and no missing file', async () => {
    const router = consoleRouter(built);
    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/nope.js',
    ]) {
      const answer = await router.request(path);
      expect(answer.status, path).toBe(404);
    }
  });

  it('says how to build the console when it was not built', async () => {
    for (const path of ['/console', '/console/']) {
      const answer = await consoleRouter(null).request(path);
      expect(answer.status).toBe(404);
      expect(await answer.text()).toContain('pnpm --filter console build');
    }
  });

  it('finds the first folder that holds a built console', () => {
    const empty = mkdtempSync(join(tmpdir(), 'agentline-console-empty-'));
    try {
      expect(consoleDirectory([empty, built])).toBe(built);
      expect(consoleDirectory([empty])).toBeNull();
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
