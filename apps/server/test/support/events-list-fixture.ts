// The organizations and events the GET /api/v1/events/ list tests read (events-list-*.test.ts):
// Acme's six events, with ties, nulls and every field set somewhere, and one event of Globex's
// that Acme must never see.

import type { events } from '../../src/db/schema/sqlite.js';
import { createTenant, createTestApi, type Schemas } from './harness.js';
import { insertTestEvents } from './test-database.js';

type Fixture = Partial<typeof events.$inferInsert> & { timestamp: string };

const ACME_EVENTS: Fixture[] = [
  {
    timestamp: '2026-05-01T10:00:00.000Z',
    sessionId: 's-1',
    conversationId: 'c-1',
    source: 'router',
    category: 'session',
    type: 'session-started',
    userId: '+14155550100',
    description: 'Session started on the support line',
    attributes: { agent_id: 7, channel: 'phone' },
  },
  {
    timestamp: '2026-05-01T10:00:05.000Z',
    sessionId: 's-1',
    conversationId: 'c-1',
    source: 'tool',
    sourceId: '12',
    category: 'tool',
    type: 'tool-call',
    userId: '+14155550100',
    description: 'Called lookup_order (50% done)',
    attributes: { tool: 'lookup_order', latency_ms: 120 },
  },
  {
    timestamp: '2026-05-01T10:00:05.000Z',
    sessionId: 's-1',
    conversationId: 'c-1',
    source: 'prompt',
    sourceId: '3',
    category: 'llm',
    type: 'completion',
    userId: '+14155550100',
    description: 'LLM answered',
    attributes: null,
  },
  {
    timestamp: '2026-05-02T08:30:00.000Z',
    sessionId: 's-2',
    conversationId: 'c-2',
    source: 'router',
    category: 'session',
    type: 'session-started',
    userId: '+14155550101',
    description: 'Session started on SMS',
    attributes: { agent_id: 8, channel: 'sms' },
  },
  {
    timestamp: '2026-06-15T23:59:59.999Z',
    sessionId: 's-3',
    conversationId: null,
    source: 'tool',
    sourceId: '12',
    category: 'tool',
    type: 'tool-error',
    userId: null,
    description: 'lookup_order timed out',
    attributes: { tool: 'lookup_order', error: 'timeout' },
  },
  {
    timestamp: '2026-06-16T00:00:00.000Z',
    sessionId: null,
    conversationId: null,
    source: null,
    category: null,
    type: null,
    userId: null,
    description: null,
    attributes: null,
  },
];

const GLOBEX_EVENTS: Fixture[] = [
  {
    timestamp: '2026-05-01T12:00:00.000Z',
    sessionId: 's-1',
    category: 'session',
    type: 'session-started',
    description: 'Globex session started',
    attributes: { secret_project: 'globex' },
  },
];

/** A fresh app with Acme's and Globex's events, and `list` reading the list as Acme by default. */
export async function openEventsList() {
  const api = await createTestApi();
  const acme = await createTenant(api.db, 'Acme');
  const globex = await createTenant(api.db, 'Globex');
  const rows = [
    ...ACME_EVENTS.map((e) => ({ ...e, organizationId: acme.organizationId })),
    ...GLOBEX_EVENTS.map((e) => ({ ...e, organizationId: globex.organizationId })),
  ];
  await insertTestEvents(api.db, rows);
  /** `T` is the body expected: the page, or the error envelope of a refusal. */
  const list = <T = Schemas['EventListResponse']>(query: string, key = acme.key) =>
    api.request<T>('GET', `/api/v1/events/${query}`, { key });
  return { api, acme, globex, list };
}

export type EventsList = Awaited<ReturnType<typeof openEventsList>>;

export const timestamps = (body: { items: Array<{ timestamp: string }> }) =>
  body.items.map((i) => i.timestamp);
