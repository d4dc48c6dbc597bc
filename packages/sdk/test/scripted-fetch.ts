// Fetches for the SDK's tests: one that answers from a script, one that never answers, and a
// client over either.

import { createClient } from '../src/index.js';

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });

/** A fetch that answers from a script, one entry per attempt, and records the requests. */
export function scripted(...answers: Array<() => Response | Promise<Response>>) {
  const requests: Request[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    requests.push(new Request(input, init));
    const answer = answers[Math.min(requests.length - 1, answers.length - 1)]!;
    return answer();
  };
  return { fetch, requests };
}

export const client = (
  fetch: typeof globalThis.fetch,
  options: { maxRetries?: number; timeout?: number } = {},
) => createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch, ...options });

/** A fetch that never answers: each attempt ends only when its signal aborts. */
export function hanging() {
  const requests: Request[] = [];
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    requests.push(request);
    // The given signal, as fetch itself listens to: a copy on a new Request follows it only while
    // undici keeps that Request's own controller, which it holds weakly, and on Node 22 and 24 a
    // garbage collection mid-test left the copy never aborting.
    const signal = init?.signal ?? request.signal;
    return new Promise<Response>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
    );
  };
  return { fetch, requests };
}
