// agentline load: bad input loads nothing, with errors that point into the file.

import { beforeAll, describe, expect, it } from 'vitest';
import { RECORDS_EXAMPLE, type TempWorkspace } from './fixtures/cli-harness.js';
import { useLoadWorkspace } from './support/cli-load-workspace.js';

let workspace: TempWorkspace;

// Both organizations hold the example's records, so the file may refer to them.
const { query, tableCounts, writeRecords } = useLoadWorkspace(async (created) => {
  workspace = created;
  for (const org of ['Acme', 'Globex']) {
    expect((await workspace.run(['load', RECORDS_EXAMPLE, '--org', org])).code).toBe(0);
  }
});

describe('bad input loads nothing', () => {
  let before: Record<string, number>;

  beforeAll(async () => {
    before = await tableCounts();
  });

  async function expectFailure(content: unknown, expectedLines: string[]) {
    writeRecords('bad.json', content);
    // Relative, as typed by a person: resolved from the workspace, the command's directory.
    const result = await workspace.run(['load', 'bad.json', '--org', 'Acme']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual(expectedLines);
    expect(await tableCounts()).toEqual(before);
  }

  it('reports invalid JSON with its line and column', async () => {
    await expectFailure('{\n  "services": [\n    { "name": "A" },\n  ]\n}\n', [
      `agentline: bad.json is not valid JSON: line 4, column 3: Unexpected token ']' — fix the JSON there (a trailing comma, a missing comma or quote, and comments are the usual causes) and run the command again; nothing was written`,
    ]);
    await expectFailure('{\n  "services": [\n    { "name": "A" }\n    { "name": "B" }\n  ]\n}\n', [
      `agentline: bad.json is not valid JSON: line 4, column 5: Expected ',' or ']' after array element — fix the JSON there (a trailing comma, a missing comma or quote, and comments are the usual causes) and run the command again; nothing was written`,
    ]);
  });

  it('reports schema violations by JSON path', async () => {
    await expectFailure(
      {
        services: [{ name: '' }],
        tools: [{ name: 'x', definition: { endpoint: { url: 5 } }, colour: 'red' }],
        prompts: [{ name: 'p', llm_config: { model: 'm', provider: 'openia' } }],
        agents: [{ prompt: 'p' }],
      },
      [
        'agentline: bad.json: services[0].name: must not be empty',
        'agentline: bad.json: tools[0].definition.endpoint.url: must be text, not 5',
        'agentline: bad.json: tools[0].colour: unknown field; check its spelling or remove it',
        'agentline: bad.json: prompts[0].llm_config.provider: must be one of "openai", "azure_openai", "anthropic", "google", not "openia"',
        'agentline: bad.json: agents[0].name: is required (text); add it',
        'agentline: bad.json was not loaded: 5 problems — fix them and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('reports rules across records: duplicate names, experiment weights, channel settings', async () => {
    await expectFailure(
      {
        services: [{ name: 'S' }, { name: 'S' }],
        channels: [
          { name: 'chat', kind: 'web_chat', provider: 'twilio' },
          { name: 'phone', kind: 'telephony', provider: 'twilio' },
        ],
        experiments: [
          {
            name: 'E',
            target: 1,
            variants: [
              { name: 'a', weight: 60, agent: 'Order agent' },
              { name: 'b', weight: 30, agent: 'Order agent' },
            ],
          },
        ],
      },
      [
        'agentline: bad.json: services[1].name: "S" is used twice (also services[0]); give each entry its own name or merge them',
        'agentline: bad.json: channels[0].provider: only telephony channels have a provider; remove it or set kind to "telephony"',
        'agentline: bad.json: channels[1].provider_config: the twilio provider needs provider_config.account_sid; add the account SID',
        'agentline: bad.json: channels[1].provider_secret: the twilio provider needs provider_secret (the auth token); add it',
        "agentline: bad.json: experiments[0].variants: The variant weights total 90; they must total 100 (weights are whole percentages of the target's traffic).",
        'agentline: bad.json: experiments[0].variants: Exactly one variant must have is_control: true; 0 do.',
        'agentline: bad.json: experiments[0].variants[1].agent: Agent "Order agent" is already used by variant 0; each variant must use a different agent.',
        'agentline: bad.json was not loaded: 7 problems — fix them and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('reports every dangling reference and rolls back records written before it', async () => {
    await expectFailure(
      {
        services: [{ name: 'New service' }],
        tools: [{ name: 'new_tool', service: 'Missing service', definition: {} }],
        prompts: [
          {
            name: 'New prompt',
            llm_config: { model: 'm', provider: 'openai' },
            tools: ['new_tool', 'lookup', 9999],
          },
        ],
        agents: [{ name: 'New agent', prompt: 'New prompt' }],
        a2p_campaigns: [
          {
            sid: 'QE9',
            messaging_service: 'MG9',
            brand: 'BN00000000000000000000000000000001',
            campaign_status: 'VERIFIED',
          },
        ],
        experiments: [
          {
            name: 'On the test line',
            target: { channel: 'Customer line', target: 'agent-test', target_mode: 'test' },
            variants: [
              { name: 'a', weight: 50, is_control: true, agent: 'New agent' },
              { name: 'b', weight: 50, agent: 'Order agent' },
            ],
          },
        ],
      },
      [
        'agentline: bad.json: tools[0].service: no service named "Missing service" in this file or organization; add it under "services"',
        'agentline: bad.json: prompts[0].tools[1]: no tool named "lookup" in this file or organization; add it under "tools"',
        'agentline: bad.json: prompts[0].tools[2]: no tool with id 9999 in this organization; use the name of one in this file or an existing id',
        'agentline: bad.json: a2p_campaigns[0].messaging_service: no messaging service with sid "MG9" in this file or organization; add it under "messaging_services"',
        // The API's own rule and message (domain/experiments.ts targetProblems).
        'agentline: bad.json: experiments[0].target: Channel target 3 is a built-in agent-test target, which experiments do not support; choose a live target.',
        'agentline: bad.json was not loaded: 5 problems — fix them and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('does not see records of another organization', async () => {
    const globexOnly = writeRecords('globex-ref.json', {
      agents: [{ name: 'Stranger', prompt: 9999 }],
    });
    const result = await workspace.run(['load', globexOnly, '--org', 'Acme']);
    expect(result.code).toBe(1);
    const [globexPrompt] = (await query(
      `SELECT id FROM prompts WHERE organization_id = 2 ORDER BY id LIMIT 1`,
    )) as Array<{ id: number }>;
    const crossTenant = writeRecords('cross.json', {
      agents: [{ name: 'Stranger', prompt: globexPrompt!.id }],
    });
    const crossResult = await workspace.run(['load', crossTenant, '--org', 'Acme']);
    expect(crossResult.code).toBe(1);
    expect(crossResult.stderr).toContain(
      `agents[0].prompt: no prompt with id ${globexPrompt!.id} in this organization`,
    );
  });

  it('keeps a number in one messaging service', async () => {
    await expectFailure(
      { messaging_services: [{ sid: 'MG-other', name: 'Other', numbers: ['+15550100001'] }] },
      [
        'agentline: bad.json: messaging_services[0].numbers[0]: +15550100001 already belongs to messaging service MG00000000000000000000000000000001 of this organization and a number belongs to one service only; list MG00000000000000000000000000000001 in this file without it, or drop it here',
        'agentline: bad.json was not loaded: 1 problem — fix it and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('names a missing file and a missing organization', async () => {
    const missing = await workspace.run(['load', 'nope.json', '--org', 'Acme']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^agentline: cannot read .*nope\.json \(ENOENT\) — check the file name/,
    );
    const unknownOrg = await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Initech']);
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stderr).toContain('no organization "Initech"');
  });
});
