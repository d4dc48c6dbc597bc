import { isUniqueViolation } from '../../db/engine/errors.js';
import { MAX_EVENT_RETENTION_DAYS } from '../../config.js';
import { setOrganizationRetention } from '../../db/repositories/event-retention.js';
import { createOrganization, findOrganization } from '../../db/repositories/organizations.js';
import { CliError, UsageError } from '../cli-error.js';
import { stringOption, type Command } from '../command.js';

export const orgCreateCommand: Command = {
  words: ['org', 'create'],
  positionals: ['<name>'],
  summary: 'Create an organization and print its id.',
  details: ['Example:', '  agentline org create "Acme Support"'],
  async run(context, _values, [name]) {
    if (name!.trim() === '') {
      throw new UsageError('the organization name is empty', 'pass a name, e.g. "Acme Support"');
    }
    const db = await context.db();
    try {
      const organization = await createOrganization(db, name!);
      context.out(String(organization.id));
      context.note(`created organization "${organization.name}" with id ${organization.id}`);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await findOrganization(db, name!);
      throw new CliError(
        `an organization named "${name}" already exists (id ${existing?.id})`,
        `use it with --org ${existing?.id}, or pick another name`,
      );
    }
  },
};

/** `--event-retention-days`: days, 0 to keep every event, or `default` for the server's. */
function retentionDaysFrom(raw: string): number | null {
  if (raw === 'default') return null;
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_EVENT_RETENTION_DAYS) {
    throw new UsageError(
      `--event-retention-days must be a whole number of days from 0 to ${MAX_EVENT_RETENTION_DAYS}, or "default", got "${raw}"`,
      "pass e.g. 90 to keep 90 days of events, 0 to keep every event, or default to follow the server's EVENT_RETENTION_DAYS",
    );
  }
  return Number(raw);
}

function describeRetention(days: number | null): string {
  if (days === null) return "follows the server's EVENT_RETENTION_DAYS";
  return days === 0 ? 'keeps every event' : `keeps events for ${days} days`;
}

export const orgSetCommand: Command = {
  words: ['org', 'set'],
  positionals: ['<id|name>'],
  summary: "Change an organization's settings (its event retention window).",
  options: [
    [
      '--event-retention-days <n|default>',
      "days of events to keep, by their timestamp; 0 keeps every event; default follows the server's EVENT_RETENTION_DAYS",
      { required: true },
    ],
  ],
  details: [
    'Events older than the window are removed by the servers within a minute (every minute, and',
    'at start-up), in small batches; lists, counts and streams stay exact. Removed events are gone:',
    'archive them first with agentline events export. Example:',
    '  agentline events export --org "Acme Support" --before 2026-01-01T00:00:00Z --output acme-2025.ndjson.gz',
    '  agentline org set "Acme Support" --event-retention-days 90',
  ],
  async run(context, values, [reference]) {
    const days = retentionDaysFrom(stringOption(values, 'event-retention-days'));
    const organization = await context.organization(reference!);
    await setOrganizationRetention(await context.db(), organization.id, days);
    context.note(`organization "${organization.name}" now ${describeRetention(days)}`);
  },
};
