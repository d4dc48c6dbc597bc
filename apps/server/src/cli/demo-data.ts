// What `agentline demo` puts in a fresh organization: a small support operation with records
// that are deliberately imperfect (so the prompts list shows validation issues and the A2P check
// has both answers), and a stream of events shaped like real sessions. Generated with a seeded
// generator, so every demo has the same content apart from the dates.

import type { z } from 'zod';
import type { platformRecordsSchema } from '../records/format.js';
import { loadedIds, type LoadedRecord } from '../records/load-result.js';
import type { EventEntry } from './event-import.js';

type RecordsInput = z.input<typeof platformRecordsSchema>;

function endpointTool(options: {
  name: string;
  service: string | null;
  method: string;
  url: string;
  argumentLocation: string;
  description: string;
  properties: Record<string, { type: string; description: string }>;
  required: string[];
  functionName?: string;
  staticParameters?: Array<{ name: string; type: string; description: string; required: boolean }>;
  comments?: string;
}): NonNullable<RecordsInput['tools']>[number] {
  return {
    name: options.name,
    service: options.service,
    version_number: 1,
    last_updated_by: 'demo@agentline.dev',
    last_updated_comments: options.comments ?? null,
    definition: {
      type: 'endpoint',
      endpoint: {
        argument_location: options.argumentLocation,
        method: options.method,
        url: options.url,
      },
      static_parameters: options.staticParameters ?? [],
      tool: {
        type: 'function',
        function: {
          name: options.functionName ?? options.name,
          description: options.description,
          parameters: {
            type: 'object',
            properties: options.properties,
            required: options.required,
          },
        },
      },
    },
  };
}

const SUPPORT_LINE = '+14155550100';
const BILLING_LINE = '+14155550101';
const SCHEDULING_LINE = '+14155550102';
const SPARE_LINE = '+14155550103';

export const DEMO_RECORDS: RecordsInput = {
  services: [{ name: 'Billing API' }, { name: 'CRM' }, { name: 'Scheduling' }],
  tools: [
    endpointTool({
      name: 'lookup_invoice',
      service: 'Billing API',
      method: 'get',
      url: 'https://billing.example.com/v1/invoices',
      argumentLocation: 'query',
      description: 'Find an invoice by its number.',
      properties: { invoice_id: { type: 'string', description: 'Invoice number, e.g. INV-1042' } },
      required: ['invoice_id'],
    }),
    endpointTool({
      name: 'create_ticket',
      service: 'CRM',
      method: 'post',
      url: 'https://crm.example.com/api/tickets',
      argumentLocation: 'body',
      description: 'Open a support ticket for the caller.',
      properties: {
        subject: { type: 'string', description: 'One-line summary' },
        priority: { type: 'string', description: 'low, normal or high' },
      },
      required: ['subject'],
    }),
    endpointTool({
      name: 'end_call',
      service: 'CRM',
      method: 'post',
      url: 'https://crm.example.com/api/calls/end',
      argumentLocation: 'body',
      description: 'End the conversation politely.',
      properties: { reason: { type: 'string', description: 'Why the call ends' } },
      required: [],
    }),
    // Problems on purpose: an upper-case method, a relative url and a required parameter that
    // is not declared.
    endpointTool({
      name: 'book_appointment',
      service: 'Scheduling',
      method: 'POST',
      url: '/v1/appointments',
      argumentLocation: 'body',
      description: 'Book a visit in a free slot.',
      properties: {
        date: { type: 'string', description: 'YYYY-MM-DD' },
        time: { type: 'string', description: 'HH:MM, local time' },
      },
      required: ['date', 'time', 'customer_id'],
      comments: 'moved to the new scheduling backend',
    }),
    // Problems on purpose: no service, a function name that differs from the tool name, and a
    // static parameter that shadows a function parameter.
    endpointTool({
      name: 'transfer_to_human',
      service: null,
      method: 'post',
      url: 'https://telephony.example.com/transfer',
      argumentLocation: 'body',
      description: 'Hand the caller to a person.',
      functionName: 'transfer',
      properties: { queue: { type: 'string', description: 'Queue to transfer to' } },
      required: ['queue'],
      staticParameters: [
        { name: 'queue', type: 'string', description: 'Default queue', required: false },
      ],
    }),
  ],
  prompts: [
    {
      name: 'Billing assistant',
      description: 'Answers invoice and payment questions.',
      context:
        'You are the billing assistant of Acme. Look invoices up before answering and never guess amounts.',
      llm_config: { model: 'gpt-4o', provider: 'openai', version: '2024-08-06' },
      tools: ['lookup_invoice', 'end_call'],
      session_end_enabled: true,
      session_end_tool: 'end_call',
      version_number: 3,
      edit_comments: 'Ask for the invoice number first.',
      last_updated_by: 'maria@acme.example',
    },
    {
      name: 'Support triage',
      description: 'First line of support: understands the problem and opens a ticket.',
      context:
        'You are the first-line support agent of Acme. Find out what the caller needs, open a ticket, and transfer to a person when asked.',
      llm_config: { model: 'claude-sonnet-4-5', provider: 'anthropic', version: null },
      tools: ['create_ticket', 'transfer_to_human'],
      // Problem on purpose: session end enabled without a session end tool.
      session_end_enabled: true,
      session_end_tool: null,
      version_number: 5,
      last_updated_by: 'sam@acme.example',
    },
    {
      name: 'Support triage (friendly greeting)',
      description: 'Support triage with a warmer opening, for the greeting experiment.',
      context:
        'You are the first-line support agent of Acme. Greet the caller warmly by name when you know it, then find out what they need and open a ticket.',
      llm_config: { model: 'claude-sonnet-4-5', provider: 'anthropic', version: null },
      tools: ['create_ticket', 'end_call'],
      session_end_enabled: true,
      session_end_tool: 'end_call',
      version_number: 1,
      edit_comments: 'Warmer greeting.',
      last_updated_by: 'sam@acme.example',
    },
    {
      name: 'Appointment booker',
      description: 'Books service visits.',
      context: 'You book service visits for Acme customers. Confirm date and time before booking.',
      llm_config: { model: 'gemini-2.5-flash', provider: 'google', version: null },
      tools: ['book_appointment', 'end_call'],
      // Problem on purpose: the session end tool is not one of the prompt's tools.
      session_end_enabled: true,
      session_end_tool: 'transfer_to_human',
      version_number: 2,
      last_updated_by: 'lee@acme.example',
    },
    {
      name: 'After-hours voicemail',
      description: 'Takes messages outside opening hours.',
      // Problem on purpose: empty context.
      context: '',
      llm_config: { model: 'gpt-4o-mini', provider: 'azure_openai', version: '2024-07-18' },
      version_number: 1,
    },
  ],
  agents: [
    { name: 'Billing agent', prompt: 'Billing assistant', pinned_prompt_version: 3 },
    { name: 'Support agent', prompt: 'Support triage', pinned_prompt_version: 5 },
    // Not pinned on purpose: starting the demo experiment warns about it.
    { name: 'Support agent (friendly)', prompt: 'Support triage (friendly greeting)' },
    { name: 'Scheduler', prompt: 'Appointment booker', pinned_prompt_version: 2 },
    { name: 'After-hours agent', prompt: 'After-hours voicemail' },
  ],
  channels: [
    {
      name: 'Main phone line',
      kind: 'telephony',
      provider: 'records',
      numbers: [SUPPORT_LINE, BILLING_LINE, SCHEDULING_LINE, SPARE_LINE],
      targets: [
        { target: SUPPORT_LINE, agent: 'Support agent' },
        { target: BILLING_LINE, agent: 'Billing agent' },
        { target: SCHEDULING_LINE, agent: 'Scheduler' },
        { target: SPARE_LINE, agent: 'After-hours agent' },
        { target: 'agent-test', target_mode: 'test', agent: 'Support agent', is_agent_test: true },
      ],
    },
    {
      name: 'Support SMS',
      kind: 'sms',
      targets: [{ target: SUPPORT_LINE, agent: 'Support agent' }],
    },
    {
      name: 'Website chat',
      kind: 'web_chat',
      targets: [{ target: 'support-widget', agent: 'Support agent' }],
    },
  ],
  // The support and billing lines have an approved path; the scheduling line's brand is still
  // pending; the spare line is on no messaging service at all.
  messaging_services: [
    {
      sid: 'MG00000000000000000000000000000001',
      name: 'Support SMS',
      numbers: [SUPPORT_LINE, BILLING_LINE],
    },
    {
      sid: 'MG00000000000000000000000000000002',
      name: 'Scheduling SMS',
      numbers: [SCHEDULING_LINE],
    },
  ],
  a2p_brands: [
    { sid: 'BN00000000000000000000000000000001', status: 'APPROVED' },
    { sid: 'BN00000000000000000000000000000002', status: 'PENDING' },
  ],
  a2p_campaigns: [
    {
      sid: 'QE00000000000000000000000000000001',
      messaging_service: 'MG00000000000000000000000000000001',
      brand: 'BN00000000000000000000000000000001',
      campaign_status: 'VERIFIED',
    },
    {
      sid: 'QE00000000000000000000000000000002',
      messaging_service: 'MG00000000000000000000000000000002',
      brand: 'BN00000000000000000000000000000002',
      campaign_status: 'VERIFIED',
      is_mock: true,
    },
  ],
  experiments: [
    {
      name: 'Friendly greeting',
      description: 'Does a warmer greeting on the support line change how calls go?',
      target: { channel: 'Main phone line', target: SUPPORT_LINE },
      variants: [
        { name: 'Current greeting', weight: 50, is_control: true, agent: 'Support agent' },
        { name: 'Friendly greeting', weight: 50, agent: 'Support agent (friendly)' },
      ],
    },
  ],
};

/** mulberry32: a tiny seeded generator, so demo data is the same on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface DemoLine {
  channel: string;
  agent: string;
  prompt: string;
  tools: string[];
  topics: string[];
}

const DEMO_LINES: DemoLine[] = [
  {
    channel: 'telephony',
    agent: 'Support agent',
    prompt: 'Support triage',
    tools: ['create_ticket', 'transfer_to_human'],
    topics: ['router keeps rebooting', 'cannot log in', 'order arrived damaged'],
  },
  {
    channel: 'telephony',
    agent: 'Billing agent',
    prompt: 'Billing assistant',
    tools: ['lookup_invoice', 'end_call'],
    topics: ['charged twice', 'invoice missing', 'update card details'],
  },
  {
    channel: 'telephony',
    agent: 'Scheduler',
    prompt: 'Appointment booker',
    tools: ['book_appointment', 'end_call'],
    topics: ['book a repair visit', 'move my appointment'],
  },
  {
    channel: 'web_chat',
    agent: 'Support agent',
    prompt: 'Support triage',
    tools: ['create_ticket'],
    topics: ['where is my order', 'return an item'],
  },
];

const OUTCOMES = ['resolved', 'resolved', 'resolved', 'ticket-opened', 'transferred', 'abandoned'];
const THIRTY_DAYS_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * `count` events in sessions of 4 to 12 events, spread over the 30 days before `now`, pointing
 * at the loaded demo records by their ids.
 */
export function* demoEvents(
  count: number,
  now: Date,
  loaded: readonly LoadedRecord[],
): Generator<EventEntry> {
  const ids = {
    agents: loadedIds(loaded, 'agents'),
    prompts: loadedIds(loaded, 'prompts'),
    tools: loadedIds(loaded, 'tools'),
  };
  const idOf = (section: keyof typeof ids, name: string) => ids[section][name] ?? null;
  const random = seededRandom(20260317);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const hex = (length: number) =>
    Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join('');
  let produced = 0;
  while (produced < count) {
    const line = pick(DEMO_LINES);
    const sessionId = `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
    const conversationId = `conv-${hex(12)}`;
    const userId = `+1415${String(Math.floor(random() * 10_000_000)).padStart(7, '0')}`;
    const topic = pick(line.topics);
    const outcome = pick(OUTCOMES);
    let time = now.getTime() - THIRTY_DAYS_MS + random() * (THIRTY_DAYS_MS - 3_600_000);
    const session = { session_id: sessionId, conversation_id: conversationId, user_id: userId };
    const steps: Array<Record<string, unknown>> = [
      {
        category: 'session',
        type: 'session-started',
        description: `Session started on ${line.channel}`,
        attributes: { agent_id: idOf('agents', line.agent), channel: line.channel },
      },
      { category: 'message', type: 'user-message', description: `Caller: ${topic}` },
    ];
    const turns = 1 + Math.floor(random() * 4);
    for (let turn = 0; turn < turns; turn += 1) {
      steps.push({
        category: 'llm',
        type: 'prompt-response',
        source: 'prompt',
        source_id: String(idOf('prompts', line.prompt)),
        description: 'Model answered',
        attributes: {
          prompt_tokens: 300 + Math.floor(random() * 900),
          completion_tokens: 20 + Math.floor(random() * 180),
          latency_ms: 350 + Math.floor(random() * 1500),
        },
      });
      if (random() < 0.6) {
        const tool = pick(line.tools);
        const failed = random() < 0.07;
        steps.push({
          category: 'tool',
          type: failed ? 'tool-error' : 'tool-call',
          source: 'tool',
          source_id: String(idOf('tools', tool)),
          description: failed ? `${tool} failed` : `Called ${tool}`,
          attributes: { status: failed ? 502 : 200, latency_ms: 40 + Math.floor(random() * 400) },
        });
      }
    }
    steps.push({
      category: 'session',
      type: 'session-ended',
      description: `Session ended: ${outcome}`,
      attributes: { outcome, turns },
    });
    for (const step of steps) {
      if (produced >= count) return;
      time += 1_000 + random() * 20_000;
      produced += 1;
      yield {
        lineNumber: produced,
        value: {
          import_key: `demo-${produced}`,
          timestamp: new Date(time).toISOString(),
          ...session,
          ...step,
        },
      };
    }
  }
}
