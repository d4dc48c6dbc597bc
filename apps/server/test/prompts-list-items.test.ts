// GET /api/v1/prompts/: what each listed prompt carries: every item field, its tools in full,
// its validation issues, and the projections of `fields`. Records are loaded the way `agentline
// load` loads them, and every response is checked against the spec by the harness.

import { describe, expect, it } from 'vitest';
import type { Schemas } from './support/harness.js';
import { anyString } from './support/matchers.js';
import { search, usePromptsList, type PromptsList } from './support/prompts-list-fixture.js';

let list: PromptsList['list'];

usePromptsList((opened) => ({ list } = opened));

const LOOKUP_ORDER = {
  id: 1,
  name: 'lookup_order',
  service_id: 1,
  service_name: 'Orders API',
  version_number: 2,
  last_updated: '2026-03-01T09:30:00.000Z',
  last_updated_by: 'dana@acme.example',
  last_updated_comments: 'Added the email fallback.',
  prompts_info: [
    { id: 1, name: 'Order status' },
    { id: 2, name: 'Order status (concise)' },
  ],
  agents_info: [
    { id: 1, name: 'Order agent' },
    { id: 2, name: 'Order agent B' },
    { id: 3, name: 'Concise agent' },
  ],
  validation_issues: [],
  definition: {
    type: 'endpoint',
    endpoint: {
      argument_location: 'query',
      method: 'get',
      url: 'https://orders.acme.example/v2/orders',
    },
    static_parameters: [
      { name: 'region', type: 'string', description: 'Store region', required: true },
    ],
    tool: {
      type: 'function',
      function: {
        name: 'lookup_order',
        description: 'Calls lookup_order.',
        parameters: {
          type: 'object',
          properties: {
            order_number: { type: 'string', description: 'e.g. A-10042' },
            email: { type: 'string' },
          },
          required: ['order_number'],
        },
      },
    },
  },
};

const HANG_UP = {
  id: 3,
  name: 'hang_up',
  service_id: 2,
  service_name: 'Helpdesk',
  version_number: 1,
  last_updated: '2026-03-03T11:00:00.000Z',
  last_updated_by: 'sam@acme.example',
  last_updated_comments: null,
  // Prompts 2 and 4 name it as their session end tool without linking it: not listed.
  prompts_info: [{ id: 1, name: 'Order status' }],
  agents_info: [
    { id: 1, name: 'Order agent' },
    { id: 2, name: 'Order agent B' },
  ],
  validation_issues: [],
  definition: {
    type: 'endpoint',
    endpoint: {
      argument_location: 'body',
      method: 'post',
      url: 'https://helpdesk.acme.example/calls/end',
    },
    static_parameters: [],
    tool: {
      type: 'function',
      function: {
        name: 'hang_up',
        description: 'Calls hang_up.',
        parameters: { type: 'object', properties: {}, required: [] },
      },
    },
  },
};

const issue = (id: string, severity: string, path: string, value: string | null) => ({
  id,
  severity,
  path,
  value,
  message: anyString(),
});

describe('items', () => {
  it("lists the organization's prompts by id with the envelope", async () => {
    const res = await list('');
    expect(res.body).toMatchObject({ page: 0, page_size: 25, total_count: 5, total_pages: 1 });
    expect(res.body.items.map((item) => item.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it('carries every field of a prompt, its tools in full and its session end tool', async () => {
    const res = await list('?limit=1');
    expect(res.body.items[0]).toEqual({
      id: 1,
      name: 'Order status',
      type: 'prompt_v1',
      description: 'Tells customers where their order is.',
      context: 'You help Acme customers track orders.',
      llm_config: { model: 'gpt-4o', provider: 'openai', version: '2024-08-06' },
      tools: 'lookup_order,hang_up',
      session_end_enabled: true,
      session_end_tool_id: 3,
      session_end_tool: HANG_UP,
      tools_full: [LOOKUP_ORDER, HANG_UP],
      agent_count: 2,
      version_number: 4,
      edit_comments: 'Shorter greeting.',
      last_updated: '2026-03-10T14:05:00.000Z',
      last_updated_by: 'dana@acme.example',
      validation_issues: [],
    });
  });

  it('shows nulls, empty tools and zero agents for a bare prompt', async () => {
    const res = await list(search('id', '5'));
    expect(res.body.items).toEqual([
      {
        id: 5,
        name: 'Blank',
        type: 'prompt_v1',
        description: 'Nothing yet',
        context: null,
        llm_config: { model: 'gpt-4o', provider: 'openai', version: null },
        tools: '',
        session_end_enabled: false,
        session_end_tool_id: null,
        session_end_tool: null,
        tools_full: [],
        agent_count: 0,
        version_number: 1,
        edit_comments: null,
        last_updated: '2026-05-01T00:00:00.000Z',
        last_updated_by: null,
        validation_issues: [issue('context-empty', 'error', '$.context', null)],
      },
    ]);
  });

  it('shows a session end tool that is set while session end is off, without an issue', async () => {
    const [concise] = (await list(search('id', '2'))).body.items;
    expect(concise).toMatchObject({
      session_end_enabled: false,
      session_end_tool_id: 3,
      session_end_tool: HANG_UP,
      tools: 'lookup_order',
      agent_count: 1,
      validation_issues: [],
    });
  });

  it("reports the prompt's issues and each tool's own, with paths into their objects", async () => {
    const [complaints] = (await list(search('id', '3'))).body.items;
    expect(complaints!.validation_issues).toEqual([
      issue('session-end-tool-missing', 'error', '$.session_end_tool', null),
      issue('context-empty', 'error', '$.context', ''),
      issue('tool-has-errors', 'error', '$.tools_full[0]', 'open_ticket'),
    ]);
    expect(complaints!.tools_full[0]?.validation_issues).toEqual([
      issue('endpoint-url-invalid', 'error', '$.definition.endpoint.url', 'tickets/new'),
      issue(
        'required-parameter-undefined',
        'error',
        '$.definition.tool.function.parameters.required[1]',
        'priority',
      ),
    ]);
  });

  it('reports tools with errors by position and leaves tools with only warnings out', async () => {
    const [transfers] = (await list(search('id', '4'))).body.items;
    expect(transfers!.tools).toBe('transfer_to_human,send_survey');
    expect(transfers!.validation_issues).toEqual([
      issue('session-end-tool-not-linked', 'error', '$.session_end_tool', 'hang_up'),
      issue('tool-has-errors', 'error', '$.tools_full[0]', 'transfer_to_human'),
    ]);
    const [transfer, survey] = transfers!.tools_full;
    expect(transfer?.validation_issues).toEqual([
      issue('service-missing', 'error', '$.service_id', null),
      issue('endpoint-method-invalid', 'error', '$.definition.endpoint.method', 'POST'),
      issue('function-name-mismatch', 'warning', '$.definition.tool.function.name', 'transfer'),
      issue(
        'static-parameter-shadows-function-parameter',
        'warning',
        '$.definition.static_parameters[1].name',
        'queue',
      ),
    ]);
    expect(transfer).toMatchObject({ service_id: null, service_name: null, agents_info: [] });
    expect(survey?.validation_issues).toEqual([
      issue('function-name-mismatch', 'warning', '$.definition.tool.function.name', 'survey'),
    ]);
    expect(transfers!.session_end_tool?.validation_issues).toEqual([]);
  });

  it('fills in the parts a stored definition lacks, so every tool has the whole shape', async () => {
    const [complaints] = (await list(search('id', '3'))).body.items;
    expect(complaints!.tools_full[0]?.definition).toEqual({
      type: 'endpoint',
      endpoint: { argument_location: 'body', method: 'post', url: 'tickets/new' },
      static_parameters: [],
      tool: {
        type: 'function',
        function: {
          name: 'open_ticket',
          description: 'Calls open_ticket.',
          parameters: {
            type: 'object',
            properties: { subject: { type: 'string' } },
            required: ['subject', 'priority'],
          },
        },
      },
    });
  });

  it('gives the same items on every request', async () => {
    expect((await list('')).body).toEqual((await list('')).body);
  });
});

describe('fields', () => {
  it('keeps only the listed properties, and always the id', async () => {
    const res = await list<Schemas['PromptListResponse']>(
      '?fields=name&fields=agent_count&limit=2',
    );
    expect(res.body.items).toEqual([
      { id: 1, name: 'Order status', agent_count: 2 },
      { id: 2, name: 'Order status (concise)', agent_count: 1 },
    ]);
  });

  it('reads name_exact as name and name_description as name and description', async () => {
    expect(
      (await list<Schemas['PromptListResponse']>('?fields=name_exact&limit=1')).body.items,
    ).toEqual([{ id: 1, name: 'Order status' }]);
    expect(
      (await list<Schemas['PromptListResponse']>('?fields=name_description&limit=1')).body.items,
    ).toEqual([
      { id: 1, name: 'Order status', description: 'Tells customers where their order is.' },
    ]);
  });

  it('brings nested objects whole: llm_config, and the full tools with tools', async () => {
    const res = await list<Schemas['PromptListResponse']>(
      '?fields=llm_config&fields=tools&limit=1',
    );
    expect(res.body.items).toEqual([
      {
        id: 1,
        llm_config: { model: 'gpt-4o', provider: 'openai', version: '2024-08-06' },
        tools: 'lookup_order,hang_up',
        tools_full: [LOOKUP_ORDER, HANG_UP],
      },
    ]);
  });

  it('brings the session end tool with session_end_enabled', async () => {
    const res = await list<Schemas['PromptListResponse']>('?fields=session_end_enabled&limit=1');
    expect(res.body.items).toEqual([
      { id: 1, session_end_enabled: true, session_end_tool_id: 3, session_end_tool: HANG_UP },
    ]);
  });

  it('rejects an unknown field name', async () => {
    const res = await list<Schemas['HTTPValidationError']>('?fields=validation_issues');
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['query', 'fields', 0]);
  });
});
