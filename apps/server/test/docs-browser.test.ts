// /docs in a real headless Chromium (Debian's `chromium`): the reference renders every operation of
// the spec with nothing but this server, the page asks no other origin for anything, and its try-it
// sends the key in the spec's `Service-API-Key` header.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import spec from '../src/generated/openapi.json' with { type: 'json' };
import { createTenant, createTestApi, type TestApi } from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { CHROMIUM, CHROMIUM_ARGS } from './support/chromium.js';

const OUTPUT_DIR = fileURLToPath(new URL('../test-output', import.meta.url));

// Scalar's placeholder for an API key value ("ALL YOUR BASE..." in base64): the one way to find the
// field, which has no label element.
const SCALAR_KEY_PLACEHOLDER = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';

const summaries = Object.values(spec.paths).flatMap((operations) =>
  Object.values<unknown>(operations).flatMap((operation) =>
    typeof operation === 'object' && operation !== null && 'summary' in operation
      ? [String(operation.summary)]
      : [],
  ),
);

if (!existsSync(CHROMIUM)) {
  console.warn(
    `docs-browser: skipped, ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`,
  );
}

// One page for both tests: a second load of the reference cost some 7 of the file's 34
// core-seconds (most of them Chromium's), and try-it works on the page as rendered.
describe.skipIf(!existsSync(CHROMIUM))('API reference at /docs in Chromium', () => {
  let api: TestApi;
  let server: LiveServer;
  let profileDir: string;
  let context: BrowserContext;
  let page: Page;
  let docsStatus: number | undefined;
  const foreignRequests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    api = await createTestApi();
    server = await startLiveServer(api.app);
    profileDir = mkdtempSync(join(tmpdir(), 'agentline-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1400, height: 1000 },
    });
    page = await context.newPage();
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(server.baseUrl) || url.startsWith('data:') || url.startsWith('blob:')) {
        return route.continue();
      }
      foreignRequests.push(url);
      return route.abort();
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    docsStatus = (await page.goto(`${server.baseUrl}/docs`))?.status();
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    await server?.close();
    await api?.close();
  });

  /** The operations' summaries that no element of the page shows, asked in one round trip. */
  const missingSummaries = async () => {
    const anySummary = summaries
      .map((summary) => page.getByText(summary, { exact: true }))
      .reduce((either, next) => either.or(next));
    const texts = await anySummary.allTextContents();
    const shown = new Set(texts.map((text) => text.trim()));
    return summaries.filter((summary) => !shown.has(summary));
  };

  it('renders every operation from local assets only', async () => {
    expect(docsStatus).toBe(200);
    await expect.poll(missingSummaries, { timeout: 20_000 }).toEqual([]);
    await expect
      .poll(() => page.getByText('Service-API-Key').count(), { timeout: 5_000 })
      .toBeGreaterThan(0);

    mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: join(OUTPUT_DIR, 'docs.png'), fullPage: false });
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('try-it sends the Service-API-Key header and gets the list', async () => {
    const tenant = await createTenant(api.db, 'Docs try-it');
    await page.getByText('List events', { exact: true }).first().waitFor();

    await page.getByPlaceholder(SCALAR_KEY_PLACEHOLDER).first().click();
    await page.keyboard.type(tenant.key);
    await page
      .getByRole('button', { name: /Test Request/ })
      .first()
      .click();
    const eventsRequest = page.waitForRequest((request) =>
      request.url().includes('/api/v1/events/'),
    );
    const eventsResponse = page.waitForResponse((response) =>
      response.url().includes('/api/v1/events/'),
    );
    // Anchored: response descriptions ("Send it with ...") also name disclosure buttons.
    await page.getByRole('button', { name: /^Send/ }).first().click();

    expect((await eventsRequest).headers()['service-api-key']).toBe(tenant.key);
    expect((await eventsResponse).status()).toBe(200);
  }, 60_000);
});
