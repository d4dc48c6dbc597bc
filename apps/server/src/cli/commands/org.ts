import { isUniqueViolation } from '../../db/engine/errors.js';
import { createOrganization, findOrganization } from '../../db/repositories/organizations.js';
import { CliError, UsageError } from '../cli-error.js';
import type { Command } from '../command.js';

export const orgCreateCommand: Command = {
  words: ['org', 'create'],
  positionals: ['<name>'],
  summary: 'Create an organization and print its id.',
  optionHelp: [],
  details: 'Example:\n  agentline org create "Acme Support"',
  options: {},
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
