import { isUniqueViolation } from '../../db/engine/errors.js';
import { createRole } from '../../db/repositories/roles.js';
import { isPermission, PERMISSIONS, type Permission } from '../../vocabulary/permissions.js';
import { CliError, UsageError } from '../cli-error.js';
import { orgOption, stringOption, type Command, type OptionValues } from '../command.js';

const CHOICES = `pass --permissions with a comma-separated list of ${PERMISSIONS.join(', ')}, --all, or --none`;

function permissionsFrom(values: OptionValues): Permission[] {
  const listed = values.permissions;
  const given = [values.all === true, values.none === true, listed !== undefined];
  if (given.filter(Boolean).length > 1) {
    throw new UsageError(
      '--permissions, --all and --none exclude each other',
      'pass only one of them',
    );
  }
  if (values.all === true) return [...PERMISSIONS];
  // A role with nothing parks a key: it still authenticates, and every operation is a 403.
  if (values.none === true) return [];
  if (typeof listed !== 'string') throw new UsageError('a role needs permissions', CHOICES);
  const names = listed
    .split(',')
    .map((name) => name.trim().toUpperCase())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !isPermission(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new UsageError(
      names.length === 0
        ? '--permissions is empty'
        : `unknown permission${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `"${name}"`).join(', ')}`,
      `use a comma-separated list of ${PERMISSIONS.join(', ')}, --all, or --none`,
    );
  }
  return [...new Set(names as Permission[])];
}

export const roleCreateCommand: Command = {
  words: ['role', 'create'],
  summary: 'Create a role (a named set of permissions) in an organization and print its id.',
  options: [
    orgOption(),
    ['--name <name>', 'the role name, unique in the organization', { required: true }],
    [`--permissions <list>`, `comma-separated: ${PERMISSIONS.join(',')}`],
    ['--all', 'every permission'],
    ['--none', 'no permission: a key of the role authenticates and may do nothing (to park it)'],
  ],
  details: [
    'Example:',
    '  agentline role create --org "Acme Support" --name reader --permissions EVENTS_READ,PROMPTS_READ',
  ],
  async run(context, values) {
    const permissions = permissionsFrom(values);
    const name = stringOption(values, 'name');
    if (name.trim() === '') {
      throw new UsageError('the role name is empty', 'pass a name with --name, e.g. --name reader');
    }
    const organization = await context.organization(stringOption(values, 'org'));
    try {
      const role = await createRole(await context.db(), {
        organizationId: organization.id,
        name,
        permissions,
      });
      context.out(String(role.id));
      context.note(
        `created role "${role.name}" (id ${role.id}) in organization "${organization.name}" with ${permissions.length > 0 ? permissions.join(', ') : 'no permissions'}`,
      );
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw new CliError(
        `organization "${organization.name}" already has a role named "${name}"`,
        'pick another name, or create keys for the existing role',
      );
    }
  },
};
