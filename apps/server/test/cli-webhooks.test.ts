// agentline webhooks list | deliveries | replay: an organization's endpoints, an endpoint's
// delivery log and a replay, as tables or as the API's JSON, with errors that name the fix.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { resumeTokensOf } from '../src/runtime/resume-tokens.js';
import { webhookEndpoints } from '../src/db/schema/sqlite.js';
import { createWebhookEndpoint } from '../src/use-cases/webhook-endpoints.js';
import type { TempWorkspace } from './fixtures/cli-harness.js';
import { cellsOf, useLoadWorkspace } from './support/cli-load-workspace.js';
import type { Schemas } from './support/harness.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';
import { insertWebhookAttempts } from './support/webhook-attempts.js';
import { findWebhookEndpointPositions } from './support/webhooks-testbed.js';

const ACME = 1;
let workspace: TempWorkspace;
let hook: number;
let quiet: number;

const { withWorkspaceDb } = useLoadWorkspace(async (created) => {
  workspace = created;
  await withWorkspaceDb(async (db) => {
    await insertTestEvents(db, [
      { organizationId: ACME, timestamp: '2026-05-01T00:00:00.000Z', type: 'early' },
      { organizationId: ACME, timestamp: '2026-05-02T00:00:00.000Z', type: 'later' },
    ]);
    const policy = { allowHttp: false, allowPrivateAddresses: true };
    const created = await createWebhookEndpoint(
      db,
      ACME,
      {
        url: 'https://127.0.0.1:9/hook',
        description: null,
        enabled: true,
        search_fields: ['type'],
        search_field_values: ['session-ended'],
        message_types: ['event', 'experiment.status_changed'],
      },
      policy,
    );
    hook = created.record.id;
    const second = await createWebhookEndpoint(
      db,
      ACME,
      {
        url: 'https://127.0.0.1:9/quiet',
        description: 'no longer answers',
        enabled: true,
        search_fields: [],
        search_field_values: [],
        message_types: ['experiment.status_changed'],
      },
      policy,
    );
    quiet = second.record.id;
    await queryTestDb(
      db,
      sql`UPDATE ${webhookEndpoints} SET enabled = (1 = 0), disabled_reason = 'The receiver answered 410 Gone.'
          WHERE id = ${quiet} RETURNING id`,
    );
    await insertWebhookAttempts(db, ACME, hook, ['delivered', 'pending', 'failed', 'delivered']);
  });
});

const run = (...argv: string[]) => workspace.run(['webhooks', ...argv]);

describe('agentline webhooks list', () => {
  it('prints the endpoints with their state and what they receive, never a secret', async () => {
    const result = await run('list', '--org', 'Acme');
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+URL\s+STATE\s+TYPES\s+EVENTS\s+CREATED$/);
    expect(cellsOf(lines.slice(1)).map((cells) => cells.slice(0, 5))).toEqual([
      [
        String(hook),
        'https://127.0.0.1:9/hook',
        'enabled',
        'event, experiment.status_changed',
        'type=session-ended',
      ],
      [
        String(quiet),
        'https://127.0.0.1:9/quiet',
        'disabled: The receiver answered 410 Gone.',
        'experiment.status_changed',
        '-',
      ],
    ]);
    expect(result.stdout).not.toContain('whsec_');
  });

  it("prints the API's items with --json, and says when there are none", async () => {
    const result = await run('list', '--org', 'Acme', '--json');
    expect(result.code, result.stderr).toBe(0);
    const endpoints = JSON.parse(result.stdout) as Array<Schemas['WebhookEndpoint']>;
    expect(
      endpoints.map((endpoint) => [endpoint.id, endpoint.enabled, endpoint.disabled_reason]),
    ).toEqual([
      [hook, true, null],
      [quiet, false, 'The receiver answered 410 Gone.'],
    ]);
    expect(endpoints[0]).not.toHaveProperty('secret');
    const empty = await run('list', '--org', 'Globex');
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect(empty.stderr).toContain('organization "Globex" has no webhook endpoints yet');
  });
});

describe('agentline webhooks deliveries', () => {
  it('prints the delivery log newest first, filtered by --status', async () => {
    const result = await run('deliveries', String(hook), '--org', 'Acme');
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^ATTEMPTED\s+WEBHOOK ID\s+TYPE\s+TRY\s+STATUS\s+HTTP\s+TOOK\s+NEXT\s+ERROR$/,
    );
    expect(
      cellsOf(lines.slice(1)).map((cells) => [cells[3], cells[4], cells[5], cells[8]]),
    ).toEqual([
      ['4', 'delivered', '204', '-'],
      ['3', 'failed', '500', 'connection refused'],
      ['2', 'pending', '-', 'connection refused'],
      ['1', 'delivered', '204', '-'],
    ]);

    const pending = await run('deliveries', String(hook), '--org', 'Acme', '--status', 'pending');
    expect(cellsOf(pending.stdout.trimEnd().split('\n').slice(1)).map((cells) => cells[7])).toEqual(
      ['2026-06-01T00:00:00.000Z'],
    );
    const newest = await run('deliveries', String(hook), '--org', 'Acme', '--limit', '1', '--json');
    const [attempt] = JSON.parse(newest.stdout) as Array<Schemas['WebhookDelivery']>;
    expect(attempt).toMatchObject({ attempt: 4, status: 'delivered', response_status: 204 });
    expect(newest.stderr).toBe('');
    const cut = await run('deliveries', String(hook), '--org', 'Acme', '--limit', '2');
    expect(cut.stderr).toContain('the newest 2 of 4 attempts; --limit <n> shows more');
  });

  it('names what is wrong: an unknown endpoint, a status, a limit', async () => {
    const foreign = await run('deliveries', String(hook), '--org', 'Globex');
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`organization "Globex" has no webhook endpoint ${hook}`);
    expect(foreign.stderr).toContain('agentline webhooks list --org');
    const status = await run('deliveries', String(hook), '--org', 'Acme', '--status', 'lost');
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('use one of: pending, delivered, failed');
    const limit = await run('deliveries', String(hook), '--org', 'Acme', '--limit', '0');
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain('--limit must be a whole number from 1 to 1000');
    const id = await run('deliveries', 'first', '--org', 'Acme');
    expect(id.code).toBe(2);
    expect(id.stderr).toContain('the endpoint id must be a whole number from 1, got "first"');
  });
});

describe('agentline webhooks replay', () => {
  const positions = () => withWorkspaceDb((db) => findWebhookEndpointPositions(db, ACME, hook));

  it('moves delivery back to a moment, or to just after a position', async () => {
    const [first, last] = await withWorkspaceDb(async (db) =>
      (
        await queryTestDb<{ id: number | string }>(
          db,
          sql`SELECT id FROM events WHERE organization_id = ${ACME} ORDER BY id`,
        )
      ).map((row) => Number(row.id)),
    );
    expect((await positions())?.eventPosition).toBe(last);

    const fromStart = await run(
      'replay',
      String(hook),
      '--org',
      'Acme',
      '--start-datetime',
      '2026-05-01T00:00:00Z',
    );
    expect(fromStart.code, fromStart.stderr).toBe(0);
    expect(fromStart.stdout).toContain(
      `webhook endpoint ${hook}: event messages from 2026-05-01T00:00:00Z will be sent again`,
    );
    expect((await positions())?.eventPosition).toBe(first! - 1);

    const token = await withWorkspaceDb(async (db) => {
      const tokens = resumeTokensOf(db);
      await tokens.ready();
      return tokens.make(ACME, [first!])[0]!;
    });
    // Already before that point: a replay never moves delivery forward.
    const ahead = await run('replay', String(hook), '--org', 'Acme', '--after-position', token);
    expect(ahead.code, ahead.stderr).toBe(0);
    expect(ahead.stdout).toContain('nothing to send again');
    expect((await positions())?.eventPosition).toBe(first! - 1);
  });

  it('says when the endpoint is disabled, and refuses what it cannot replay from', async () => {
    const disabled = await run(
      'replay',
      String(quiet),
      '--org',
      'Acme',
      '--start-datetime',
      '2000-01-01T00:00:00Z',
    );
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stderr).toContain('the endpoint is disabled');

    const refusals: Array<[options: string[], code: number, message: string]> = [
      [['--org', 'Acme'], 2, 'give exactly one: --after-position'],
      [
        ['--org', 'Acme', '--after-position', 'x', '--start-datetime', '2026-05-01T00:00:00Z'],
        2,
        'cannot both be given',
      ],
      [
        ['--org', 'Acme', '--after-position', 'AAAAAAAAAAAAAAAAAAAAAA'],
        2,
        '--after-position: is not a position this API gave',
      ],
      // A token may start with a dash: still the option's value, not an option of its own.
      [
        ['--org', 'Acme', '--after-position', '-AAAAAAAAAAAAAAAAAAAAA'],
        2,
        '--after-position: is not a position this API gave',
      ],
      [
        ['--org', 'Acme', '--after-position'],
        2,
        "Option '--after-position <value>' argument missing",
      ],
      [
        ['--org', 'Acme', '--start-datetime', 'yesterday'],
        2,
        '--start-datetime: "yesterday" is not a date-time',
      ],
      [
        ['--org', 'Globex', '--start-datetime', '2026-05-01T00:00:00Z'],
        1,
        `organization "Globex" has no webhook endpoint ${hook}`,
      ],
    ];
    for (const [options, code, message] of refusals) {
      const refused = await run('replay', String(hook), ...options);
      expect(refused.code, options.join(' ')).toBe(code);
      expect(refused.stderr).toContain(message);
    }
  });
});
