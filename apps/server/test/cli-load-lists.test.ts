// agentline list: the agents, channels and targets a load wrote, as a table or as JSON, never
// with a channel's secret.

import { describe, expect, it } from 'vitest';
import { RECORDS_EXAMPLE, type TempWorkspace } from './fixtures/cli-harness.js';
import { cellsOf, useLoadWorkspace } from './support/cli-load-workspace.js';

let workspace: TempWorkspace;

const { query, channelIdsByName } = useLoadWorkspace(async (created) => {
  workspace = created;
  expect((await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Acme'])).code).toBe(0);
});

describe('loading the example file', () => {
  it('lists the agents, channels and targets it wrote, with the ids an experiment needs', async () => {
    const agents = await workspace.run(['list', 'agents', '--org', 'Acme']);
    expect(agents.code).toBe(0);
    const agentLines = agents.stdout.trimEnd().split('\n');
    expect(agentLines[0]).toMatch(/^ID\s+NAME\s+PROMPT ID\s+PINNED VERSION$/);
    const dbAgents = (await query(
      'SELECT id, name FROM agents WHERE organization_id = 1 ORDER BY id',
    )) as Array<{ id: number; name: string }>;
    expect(cellsOf(agentLines.slice(1)).map((cells) => cells.slice(0, 2))).toEqual(
      dbAgents.map((agent) => [String(agent.id), agent.name]),
    );

    const targets = await workspace.run(['list', 'targets', '--org', 'Acme']);
    expect(targets.code).toBe(0);
    const targetLines = targets.stdout.trimEnd().split('\n');
    expect(targetLines[0]).toMatch(/^ID\s+CHANNEL\s+TARGET\s+MODE\s+AGENT ID\s+AGENT TEST$/);
    const dbTargets = (await query(
      'SELECT id, target FROM channel_targets WHERE organization_id = 1 ORDER BY id',
    )) as Array<{ id: number; target: string }>;
    expect(cellsOf(targetLines.slice(1)).map(([id, , target]) => [id, target])).toEqual(
      dbTargets.map((target) => [String(target.id), target.target]),
    );

    const channels = await workspace.run(['list', 'channels', '--org', 'Acme']);
    expect(channels.code).toBe(0);
    const channelLines = channels.stdout.trimEnd().split('\n');
    expect(channelLines[0]).toMatch(/^ID\s+NAME\s+KIND\s+PROVIDER\s+TARGETS\s+NUMBERS$/);
    const channelIds = await channelIdsByName();
    expect(cellsOf(channelLines.slice(1))).toEqual([
      [String(channelIds['Customer line']), 'Customer line', 'telephony', 'records', '3', '3'],
      [String(channelIds['Twilio line']), 'Twilio line', 'telephony', 'twilio', '1', '1'],
      [String(channelIds['Chat widget']), 'Chat widget', 'web_chat', '-', '1', '0'],
    ]);

    const empty = await workspace.run(['list', 'agents', '--org', 'Globex']);
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect(empty.stderr).toContain('organization "Globex" has no agents yet');
    const emptyJson = await workspace.run(['list', 'targets', '--org', 'Globex', '--json']);
    expect(emptyJson).toMatchObject({ code: 0, stdout: '[]\n' });
  });

  it('prints each list as one JSON array with --json, in the field names of the API', async () => {
    const listJson = async (name: string) => {
      const result = await workspace.run(['list', name, '--org', 'Acme', '--json']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(result.stdout) as unknown;
    };
    expect(await listJson('agents')).toEqual(
      await query(`SELECT id, name, prompt_id, pinned_prompt_version
                   FROM agents WHERE organization_id = 1 ORDER BY id`),
    );
    const targets = (await listJson('targets')) as Array<Record<string, unknown>>;
    expect(
      targets.map(({ is_agent_test, ...target }) => ({
        ...target,
        is_agent_test: Number(is_agent_test),
      })),
    ).toEqual(
      await query(`SELECT t.id, t.channel_id, c.name AS channel_name, t.target, t.target_mode,
                     t.agent_id, t.is_agent_test
                   FROM channel_targets t JOIN channels c ON c.id = t.channel_id
                   WHERE t.organization_id = 1 ORDER BY t.id`),
    );
    expect(targets.map((target) => typeof target.is_agent_test)).toEqual(Array(5).fill('boolean'));
    const channelIds = await channelIdsByName();
    expect(await listJson('channels')).toEqual([
      {
        id: channelIds['Customer line'],
        name: 'Customer line',
        kind: 'telephony',
        provider: 'records',
        target_count: 3,
        number_count: 3,
      },
      {
        id: channelIds['Twilio line'],
        name: 'Twilio line',
        kind: 'telephony',
        provider: 'twilio',
        target_count: 1,
        number_count: 1,
      },
      {
        id: channelIds['Chat widget'],
        name: 'Chat widget',
        kind: 'web_chat',
        provider: null,
        target_count: 1,
        number_count: 0,
      },
    ]);
  });

  it("never shows a channel's provider settings or secret", async () => {
    for (const format of [[], ['--json']]) {
      const result = await workspace.run(['list', 'channels', '--org', 'Acme', ...format]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Twilio line');
      for (const secret of [
        'example-auth-token',
        'AC00000000000000000000000000000001',
        '127.0.0.1:9',
      ]) {
        expect(result.stdout).not.toContain(secret);
      }
      expect(result.stdout).not.toMatch(/provider_?(secret|config)/i);
    }
  });

  it('refuses an unknown list with exit code 2, naming the lists there are', async () => {
    expect(await workspace.run(['list', 'phones', '--org', 'Acme'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'agentline: unknown list "phones" — name one of: agents, channels, targets, numbers; for example: agentline list agents --org <id|name>\n',
    });
    // The commands it replaces are gone.
    const old = await workspace.run(['agents', 'list', '--org', 'Acme']);
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/^agentline: unknown command "agents"/);
  });
});
