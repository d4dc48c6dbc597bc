// The console in a real headless Chromium (Debian's `chromium`, driven by playwright-core) against
// the real server with the quick start's demo organization: the paths an experiment owner and an
// operator take, each page checked with axe-core, and a screenshot of each page at 1280 and
// 375 px wide in test-output/ (kept out of git).

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ConflictError, createClient, type AgentlineClient } from '@agentline/sdk';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoServer, type DemoServer } from './support/demo-server.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../../server/test/support/chromium.js';

const OUTPUT_DIR = fileURLToPath(new URL('../test-output/', import.meta.url));
const WIDTHS = [1280, 375];
/** Well formed, so the API looks it up and answers its 401, not a malformed key's. */
const WRONG_KEY = 'agl_aaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

let demo: DemoServer;
let browser: Browser;
let admin: AgentlineClient;

beforeAll(async () => {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  demo = await startDemoServer();
  admin = createClient({ apiKey: demo.adminKey, baseUrl: demo.baseUrl });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await demo?.close();
});

/** A new tab at `width`, signed in with `key` (or at the sign-in form without one). */
async function openConsole(key: string | null, width = 1280): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on('pageerror', (error) => {
    throw error;
  });
  await page.goto(`${demo.baseUrl}/console/`);
  if (key !== null) await signIn(page, key);
  return page;
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** No serious or critical axe-core violation on the page as it is now. */
async function expectAccessible(page: Page, name: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not
  // restrict (it forbids inline scripts, as it should).
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: () => Promise<{
            violations: Array<{ id: string; impact: string; nodes: unknown[] }>;
          }>;
        };
      }
    ).axe;
    const result = await axe.run();
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} (${violation.impact}, ${violation.nodes.length} nodes)`);
  });
  expect(violations, `axe-core on ${name}`).toEqual([]);
}

/** Screenshots of the page at both widths, then back at the first. */
async function screenshots(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${OUTPUT_DIR}${name}-${width}.png`, fullPage: true });
    // Nothing may stick out sideways: the page scrolls down, never across.
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, `${name} at ${width} px is wider than the window`).toBe(0);
  }
  await page.setViewportSize({ width: WIDTHS[0]!, height: 900 });
}

async function demoExperiment() {
  const { items } = await admin.experiments.list({ limit: 1 });
  return admin.experiments.get(items[0]!.id);
}

/** A new draft named `name` on the demo experiment's target, with its variants. */
async function demoDraft(name: string) {
  const { target_id, variants } = await demoExperiment();
  return admin.experiments.create({
    name,
    target_id,
    variants: variants.map(({ name, weight, is_control, agent_id }) => ({
      name,
      weight,
      is_control,
      agent_id,
    })),
  });
}

if (!existsSync(CHROMIUM)) {
  console.warn(
    `console: skipped, ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`,
  );
}

describe.skipIf(!existsSync(CHROMIUM))('the console', () => {
  it('shows the 401 sentence for a wrong key', async () => {
    const page = await openConsole(null);
    await page.getByLabel('API key').fill(WRONG_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const answer = await fetch(`${demo.baseUrl}/api/v1/keys/current`, {
      headers: { 'Service-API-Key': WRONG_KEY },
    });
    expect(answer.status).toBe(401);
    const sentence = ((await answer.json()) as { detail: string }).detail;
    expect(await alert.innerText()).toBe(sentence);
    await expectAccessible(page, 'sign-in');
    await screenshots(page, 'sign-in');
    await page.close();
  }, 60_000);

  it('starts the demo experiment, charts the routed sessions as /results counts them, and stops it', async () => {
    const experiment = await demoExperiment();
    const page = await openConsole(demo.adminKey);
    await page.getByRole('link', { name: experiment.name }).click();
    await page.getByRole('heading', { level: 1, name: new RegExp(experiment.name) }).waitFor();
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByRole('button', { name: 'Yes, start' }).click();
    await page.getByText('running', { exact: true }).first().waitFor();

    for (let i = 0; i < 24; i++) {
      await admin.sessions.route(experiment.target_id, { user_id: `console-user-${i}` });
    }
    const results = await admin.experiments.results(experiment.id);
    expect(results.total_sessions).toBe(24);
    // The page reads its numbers again every 5 s while the experiment runs.
    for (const variant of results.variants) {
      await expectText(page, `chart-total-${variant.variant_id}`, String(variant.session_count));
      await expectText(page, `results-${variant.variant_id}`, String(variant.session_count));
    }
    await expectAccessible(page, 'experiment');
    await screenshots(page, 'experiment');

    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('button', { name: 'Yes, stop' }).click();
    await page.getByText('stopped', { exact: true }).first().waitFor();
    const { name: keyName } = await admin.keys.current();
    const history = page.getByTestId('history');
    await history.getByText('stopped', { exact: true }).first().waitFor();
    const entries = await history.locator('li').allInnerTexts();
    expect(entries[0]).toMatch(/^stopped .* by key “/);
    expect(entries[0]).toContain(keyName);
    expect(entries[1]).toMatch(/^started .* by key “/);
    expect(entries[1]).toContain(keyName);

    await page.getByRole('link', { name: 'All experiments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Experiments' }).waitFor();
    await expectAccessible(page, 'experiments');
    await screenshots(page, 'experiments');
    await page.close();
  }, 90_000);

  it('shows a read-only key no start or stop button', async () => {
    const draft = await demoDraft('Read-only check');
    const page = await openConsole(demo.readOnlyKey);
    await page.getByText(demo.readOnlyKeyName).waitFor();
    await page.goto(`${demo.baseUrl}/console/#/experiments/${draft.id}`);
    await page.getByRole('heading', { level: 1, name: /Read-only check/ }).waitFor();
    await page.getByTestId('history').locator('li').first().waitFor();
    expect(await page.getByRole('button', { name: 'Start' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(0);
    expect(await page.getByLabel('Planned end').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('sets a planned end, shows the refusal to start past it, and previews an assignment', async () => {
    const draft = await demoDraft('Planned end check');
    const page = await openConsole(demo.adminKey);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${demo.baseUrl}/console/#/experiments/${draft.id}`);
    await page.getByRole('heading', { level: 1, name: /Planned end check/ }).waitFor();
    const setPlannedEnd = async (fromNowMs: number): Promise<string> => {
      // The input takes the browser's wall time; the instant it stands for, as the API stores it.
      const [local, instant] = await page.evaluate((offset) => {
        const at = new Date(Date.now() + offset);
        at.setSeconds(0, 0);
        const pad = (n: number) => String(n).padStart(2, '0');
        return [
          `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`,
          at.toISOString(),
        ];
      }, fromNowMs);
      await page.getByLabel('Planned end').fill(local);
      await page.getByRole('button', { name: 'Set planned end' }).click();
      await page.getByRole('button', { name: 'Yes, set the planned end' }).click();
      await expect.poll(async () => (await admin.experiments.get(draft.id)).end_at).toBe(instant);
      await page.getByRole('button', { name: 'Set planned end' }).waitFor();
      return instant;
    };

    // A planned end already past: the draft cannot start, and the page says why in the API's words.
    const past = await setPlannedEnd(-3_600_000);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByRole('button', { name: 'Yes, start' }).click();
    const refusal: unknown = await admin.experiments.start(draft.id).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(ConflictError);
    const sentence = ((refusal as ConflictError).body as { detail: string }).detail;
    expect(sentence).toContain(past);
    await page.getByRole('alert').getByText(sentence, { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();

    await setPlannedEnd(2 * 86_400_000);
    expect((await admin.experiments.get(draft.id)).status).toBe('draft');

    // The preview is the API's answer for that user, whatever runs on the target now.
    await page.getByLabel('User id').fill('preview-user-1');
    await page.getByRole('button', { name: 'Preview' }).click();
    const assignment = await admin.channelTargets.assignment(draft.target_id, 'preview-user-1');
    const status = page.getByRole('status');
    await status.getByText(`Agent ${assignment.agent_id}`).waitFor();
    expect(await status.innerText()).toBe(
      assignment.variant_id === null
        ? `Agent ${assignment.agent_id} (no experiment is running on this target)`
        : `Agent ${assignment.agent_id}, variant ${assignment.variant_id} of experiment ${assignment.experiment_id}`,
    );
    await expectAccessible(page, 'experiment-draft');
    await page.close();
  }, 60_000);

  it('tails new events live within 2 s, and keeps going after the server restarts', async () => {
    const experiment = await demoExperiment();
    const page = await openConsole(demo.adminKey);
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
    await page.getByLabel('Live tail').check();
    const tail = page.getByTestId('live-tail');
    await tail.waitFor();
    // The stream opens before the first event is routed: routed right away, it could begin after.
    await page.waitForTimeout(500);

    const first = await admin.sessions.route(experiment.target_id, { user_id: 'tail-before' });
    const shownAt = performance.now();
    await tail.getByText(first.session_id).first().waitFor({ timeout: 2_000 });
    expect(performance.now() - shownAt).toBeLessThan(2_000);
    await expectAccessible(page, 'events');
    await screenshots(page, 'events');

    await demo.restart();
    const second = await admin.sessions.route(experiment.target_id, { user_id: 'tail-after' });
    // The SDK's stream reconnects with its backoff and resumes after the last event it showed.
    await tail.getByText(second.session_id).first().waitFor({ timeout: 20_000 });
    expect(await tail.getByText(first.session_id).count()).toBeGreaterThan(0);
    await page.close();
  }, 60_000);

  it('shows the mock-campaign number as not approved, with what to fix', async () => {
    const targets = await admin.channelTargets.list({ limit: 100 });
    const channelIds = [...new Set(targets.items.map((target) => target.channel_id!))];
    let mockNumber: { phone: string; detail: string } | undefined;
    let channelName = '';
    for (const channelId of channelIds) {
      const statuses = await admin.telephony.a2pStatus(channelId, { limit: 100 }).catch(() => null);
      for (const number of statuses?.items ?? []) {
        const failed = number.checks.find(
          (check) => check.passed === false && /mock/i.test(check.detail),
        );
        if (!number.a2p_approved && failed) {
          mockNumber = { phone: number.phone, detail: failed.detail };
          channelName = targets.items.find(
            (target) => target.channel_id === channelId,
          )!.channel_name!;
        }
      }
    }
    expect(mockNumber, 'the demo has a number on a mock campaign').toBeDefined();
    const page = await openConsole(demo.adminKey);
    await page.getByRole('link', { name: 'Telephony' }).click();
    await page.getByLabel('Channel').selectOption({ label: channelName });
    const number = page.getByTestId(`number-${mockNumber!.phone}`);
    await number.waitFor();
    expect(await number.getByText('not approved').count()).toBe(1);
    expect(await number.innerText()).toContain(mockNumber!.detail);
    await expectAccessible(page, 'telephony');
    await screenshots(page, 'telephony');
    await page.close();
  }, 60_000);

  it('sends a test message to a webhook endpoint and shows its delivery', async () => {
    const received: string[] = [];
    const receiver = createServer((request, response) => {
      received.push(String(request.headers['webhook-id']));
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = receiver.address() as AddressInfo;
      const endpoint = await admin.webhooks.create({
        url: `http://127.0.0.1:${port}/agentline`,
        message_types: ['experiment.status_changed'],
      });
      const page = await openConsole(demo.adminKey);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('button', { name: endpoint.url }).click();
      await page.getByRole('heading', { name: `Deliveries to ${endpoint.url}` }).waitFor();
      await page.getByRole('button', { name: 'Send a test message' }).click();
      const queued = await page.getByRole('status').innerText();
      const webhookId = /Test message (\S+) queued/.exec(queued)?.[1];
      expect(webhookId).toBeDefined();
      // Up to 15 s: the whole suite beside it on two cores has held a delivery past 5 s.
      for (let tries = 0; tries < 150 && !received.includes(webhookId!); tries++) {
        await page.waitForTimeout(100);
      }
      expect(received).toContain(webhookId);
      // The attempt is logged once the receiver has answered.
      const row = page.getByRole('row', { name: new RegExp(webhookId!) });
      for (let tries = 0; tries < 30 && (await row.count()) === 0; tries++) {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await page.waitForTimeout(200);
      }
      expect(await row.innerText()).toContain('delivered');
      await expectAccessible(page, 'webhooks');
      await screenshots(page, 'webhooks');
      await page.close();
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 60_000);

  it('is usable with the keyboard alone: sign in and reach every page, focus on its heading', async () => {
    const page = await openConsole(null);
    await page.keyboard.press('Tab');
    await page.keyboard.type(demo.adminKey);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    for (const name of ['Events', 'Telephony', 'Webhooks', 'Experiments']) {
      let focused = '';
      // Forward only, wrapping past the end of the page, as a keyboard user goes.
      for (let presses = 0; presses < 80 && focused !== name; presses++) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
      }
      expect(focused).toBe(name);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: new RegExp(name) }).waitFor();
      // The page's heading takes the focus, so a screen reader announces where the link led.
      const heading = await page.evaluate(() => {
        const active = document.activeElement;
        return active?.tagName === 'H1' ? active.textContent : null;
      });
      expect(heading).toMatch(new RegExp(name));
      expect(await page.title()).toBe(`${heading} · Agentline console`);
    }
    await page.close();
  }, 60_000);
});

async function expectText(page: Page, testId: string, text: string): Promise<void> {
  await page.getByTestId(testId).getByText(text, { exact: true }).waitFor({ timeout: 15_000 });
}
