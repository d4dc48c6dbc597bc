// agentline events tail: the organization's events as they are committed, read from the database
// through the same feed as GET /api/v1/events/stream (runtime/event-feed.ts), so it sees
// every writer and means by its filters what the API means.

import { EventFeed } from '../../runtime/event-feed.js';
import type { FeedStart, Subscription } from '../../runtime/feed-subscription.js';
import type { FeedEvent } from '../../db/repositories/events.js';
import { InputRuleError } from '../../domain/errors.js';
import { EventProperties } from '../../generated/enum-values.js';
import type { EventProperty } from '../../vocabulary/events.js';
import { EVENT_LIST } from '../../domain/events.js';
import { parseListQuery } from '../../domain/list-query.js';
import { cursorSigner } from '../../runtime/cursor-signer.js';
import { CliError, UsageError } from '../cli-error.js';
import { orgOption, stringOption, type Command, type OptionValues } from '../command.js';

function isEventProperty(name: string): name is EventProperty {
  return (EventProperties as readonly string[]).includes(name);
}

function propertyList(values: readonly string[], option: string): EventProperty[] {
  return values.map((name) => {
    if (!isEventProperty(name)) {
      throw new UsageError(
        `${option}: "${name}" is not an event property`,
        `use one of ${EventProperties.join(', ')}`,
      );
    }
    return name;
  });
}

function searchPairs(values: OptionValues['search'] | string[]): [EventProperty[], string[]] {
  const pairs = (Array.isArray(values) ? values : []).map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) {
      throw new UsageError(
        `--search "${pair}" is not <property>=<value>`,
        'write it as --search type=session-started (repeat --search for more; they combine with AND)',
      );
    }
    return [pair.slice(0, at), pair.slice(at + 1)] as const;
  });
  return [
    propertyList(
      pairs.map(([name]) => name),
      '--search',
    ),
    pairs.map(([, value]) => value),
  ];
}

/** One line per event for a person: time, category/type, the identifiers, the description. */
function describe(json: string): string {
  const event = JSON.parse(json) as Record<string, unknown>;
  const kind = [event['category'], event['type']]
    .filter((part) => part != null)
    .map(String)
    .join('/');
  const ids = (
    [
      ['session', 'session_id'],
      ['conversation', 'conversation_id'],
      ['user', 'user_id'],
      ['source', 'source'],
    ] as const
  )
    .filter(([, key]) => event[key] != null)
    .map(([label, key]) => `${label}=${String(event[key])}`);
  const rest = [event['description'], event['attributes'] && JSON.stringify(event['attributes'])];
  return [event['timestamp'], kind, ...ids, ...rest.filter((part) => part != null && part !== '')]
    .filter((part) => part !== '')
    .join('  ');
}

export const eventsTailCommand: Command = {
  words: ['events', 'tail'],
  summary: "Follow an organization's events as they are committed, until interrupted (Ctrl-C).",
  options: [
    orgOption(),
    [
      '--search <property>=<value>',
      'only matching events, as the events list matches (repeatable)',
      { multiple: true },
    ],
    ['--fields <a,b,...>', 'only these properties of each event (with --json)'],
    ['--start <date-time>', 'first replay the events whose timestamp is at or after it'],
    ['--after <position>', 'continue after the position a previous tail stopped at'],
    ['--json', 'one JSON event per line, as the API sends it'],
  ],
  details: [
    'Reads the database directly, so it sees events from every server process and every import.',
    'Without --start or --after it shows what is committed from now on. When it stops it prints',
    'its position on standard error; --after <position> continues from there, skipping nothing.',
    'Examples:',
    '  agentline events tail --org "Acme Support" --search type=session-ended',
    '  agentline events tail --org 1 --start 2026-05-01T00:00:00Z --json --fields type,session_id',
  ],
  async run(context, values) {
    const organization = await context.organization(stringOption(values, 'org'));
    const [search_fields, search_field_values] = searchPairs(values['search']);
    const fieldsOption = values['fields'];
    const fields =
      typeof fieldsOption === 'string'
        ? propertyList(fieldsOption.split(',').filter(Boolean), '--fields')
        : [];
    const startOption = values['start'];
    const db = await context.db();
    let query;
    try {
      query = await parseListQuery(
        EVENT_LIST,
        {
          page: 0,
          limit: 0,
          search_fields,
          search_field_values,
          fields,
          start_datetime: typeof startOption === 'string' ? startOption : undefined,
        },
        organization.id,
        await cursorSigner(db),
      );
    } catch (error) {
      if (!(error instanceof InputRuleError)) throw error;
      throw new UsageError(
        error.problems.map((problem) => problem.msg).join('; '),
        'fix that option and run the command again',
      );
    }
    const afterOption = values['after'];
    if (typeof afterOption === 'string' && !/^\d{1,16}$/.test(afterOption)) {
      throw new UsageError(
        `--after "${afterOption}" is not a position this command printed`,
        'pass the position from its "stopped after" line, or leave --after out',
      );
    }
    const start: FeedStart =
      typeof afterOption === 'string'
        ? { afterId: Number(afterOption) }
        : query.window.start
          ? { afterId: 0 }
          : 'now';
    const render = values['json']
      ? (event: FeedEvent) => event.json
      : (event: FeedEvent) => describe(event.json);
    const feed = new EventFeed<readonly FeedEvent[]>(db, { encode: (events) => events });
    context.note(
      `following the events of "${organization.name}" ${
        start === 'now'
          ? 'from now'
          : query.window.start
            ? `from ${query.window.start}`
            : `after ${afterOption}`
      }; Ctrl-C to stop`,
    );
    const signal = context.io.signal;
    let subscription: Subscription | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return resolve();
        signal?.addEventListener('abort', () => resolve(), { once: true });
        void feed
          .subscribe(organization.id, query, start, {
            send: (events) => {
              for (const event of events) context.out(render(event));
              return true;
            },
            ready: () => Promise.resolve(Number.POSITIVE_INFINITY),
            fail: (failure) =>
              reject(
                new CliError(
                  failure.detail,
                  'run the command again with --after <position> to continue',
                ),
              ),
            end: () => resolve(),
          })
          .then((opened) => (subscription = opened), reject);
      });
    } finally {
      subscription?.close();
      feed.close();
      // Everything matching up to here was printed: a filtered tail's position moves past the
      // events it did not print too, so continuing from it skips nothing and repeats nothing.
      if (subscription) {
        const { position } = subscription;
        context.note(`stopped at position ${position}; continue with --after ${position}`);
      }
    }
  },
};
