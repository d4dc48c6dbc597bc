// Timeouts and aborts: the SDK's own timeout, the caller's signal, and what each leaves behind,
// with an injected fetch.

import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { ApiTimeoutError, ApiUserAbortError } from '../src/index.js';
import { client, hanging, json, scripted } from './scripted-fetch.js';

describe('timeouts and aborts', () => {
  it('abandons an attempt after the timeout with ApiTimeoutError', async () => {
    const { fetch, requests } = hanging();
    const started = Date.now();
    const error = await client(fetch, { timeout: 100, maxRetries: 1 })
      .events.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect(requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.each([
    ['abort()', (controller: AbortController) => controller.abort()],
    ["abort('a reason')", (controller: AbortController) => controller.abort('a reason')],
    ['abort(new Error())', (controller: AbortController) => controller.abort(new Error('gone'))],
  ])(
    "stops at once, without retrying, with ApiUserAbortError on the caller's %s",
    async (_, abort) => {
      const { fetch, requests } = hanging();
      const controller = new AbortController();
      const pending = client(fetch, { timeout: 10_000 }).events.list(
        {},
        { signal: controller.signal },
      );
      setTimeout(() => abort(controller), 20);
      const error = await pending.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiUserAbortError);
      expect((error as Error).cause).toBe(controller.signal.reason);
      expect(requests).toHaveLength(1);
    },
  );

  it('adds no listener per call in flight to a signal that many calls share', async () => {
    // A Request listens to its signal: one per call, each new one walking all the others'.
    const { fetch, requests } = hanging();
    const shared = new AbortController();
    const calls = Array.from({ length: 50 }, () =>
      client(fetch, { timeout: 10_000 })
        .events.list({}, { signal: shared.signal })
        .catch((e: unknown) => e),
    );
    await vi.waitFor(() => expect(requests).toHaveLength(50));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    shared.abort();
    for (const error of await Promise.all(calls)) expect(error).toBeInstanceOf(ApiUserAbortError);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const { fetch, requests } = hanging();
    const error = await client(fetch)
      .events.list({}, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiUserAbortError);
    expect(requests).toHaveLength(0);
  });

  it('stops waiting between attempts when the signal aborts', async () => {
    const { fetch, requests } = scripted(() => json(503, {}, { 'Retry-After': '30' }));
    const controller = new AbortController();
    const pending = client(fetch).events.list({}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await pending.catch((e: unknown) => e)).toBeInstanceOf(ApiUserAbortError);
    expect(requests).toHaveLength(1);
  });

  it('gives ApiTimeoutError for an AbortSignal.timeout signal', async () => {
    const { fetch } = hanging();
    const error = await client(fetch, { timeout: 10_000 })
      .events.list({}, { signal: AbortSignal.timeout(30) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect((error as Error).cause).toMatchObject({ name: 'TimeoutError' });
  });
});
