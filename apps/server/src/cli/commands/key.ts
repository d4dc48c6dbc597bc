import { listApiKeys, revokeApiKey } from '../../db/repositories/api-keys.js';
import { findRoleByName } from '../../db/repositories/roles.js';
import { isKeyId, parseApiKey } from '../../domain/api-keys.js';
import { createApiKey } from '../../use-cases/api-keys.js';
import { CliError, UsageError } from '../cli-error.js';
import { orgOption, stringOption, type Command } from '../command.js';
import { formatTable } from '../table.js';

export const keyCreateCommand: Command = {
  words: ['key', 'create'],
  summary: 'Create an API key and print it, once, alone on stdout.',
  options: [
    orgOption('the organization the key belongs to'),
    ['--role <name>', 'the role whose permissions the key carries', { required: true }],
    ['--name <label>', 'a label to recognise the key by (default: "<role> key")'],
  ],
  details: [
    'Only a hash of the secret is stored: the key cannot be shown again, so store it now.',
    "Through pnpm, add -s so pnpm's own banner stays off stdout. Example:",
    '  KEY=$(pnpm -s agentline key create --org "Acme Support" --role reader --name dashboards)',
  ],
  async run(context, values) {
    const organization = await context.organization(stringOption(values, 'org'));
    const roleName = stringOption(values, 'role');
    const db = await context.db();
    const role = await findRoleByName(db, organization.id, roleName);
    if (!role) {
      throw new CliError(
        `organization "${organization.name}" has no role named "${roleName}"`,
        `create it first: agentline role create --org ${organization.id} --name ${roleName} --all`,
      );
    }
    const name = typeof values.name === 'string' ? values.name : `${role.name} key`;
    const { apiKey, fullKey } = await createApiKey(db, {
      organizationId: organization.id,
      roleId: role.id,
      name,
    });
    context.out(fullKey);
    context.note(
      `created API key ${apiKey.keyId} ("${name}", role ${role.name}) for organization "${organization.name}"; this is the only time it is shown, so store it now`,
    );
  },
};

export const keyRevokeCommand: Command = {
  words: ['key', 'revoke'],
  positionals: ['<key id or full key>'],
  summary: 'Revoke an API key: requests with it are refused from now on.',
  details: ['Example:', '  agentline key revoke 3k9x2m7q1a0z'],
  async run(context, _values, [reference]) {
    const keyId = parseApiKey(reference!)?.keyId ?? (isKeyId(reference!) ? reference! : null);
    if (keyId === null) {
      throw new UsageError(
        `"${reference}" is neither a key id nor an API key`,
        'pass the 12-character key id shown by "agentline key list", or the full agl_... key',
      );
    }
    const revoked = await revokeApiKey(await context.db(), keyId);
    if (!revoked) {
      throw new CliError(
        `no API key with id ${keyId}`,
        'find the key id with: agentline key list --org <organization>',
      );
    }
    context.out(`revoked ${keyId}`);
    if (revoked.alreadyRevoked) {
      context.note(`key ${keyId} was already revoked at ${revoked.apiKey.revokedAt}`);
    }
  },
};

export const keyListCommand: Command = {
  words: ['key', 'list'],
  summary: "List an organization's API keys (never their secrets).",
  options: [orgOption()],
  async run(context, values) {
    const organization = await context.organization(stringOption(values, 'org'));
    const keys = await listApiKeys(await context.db(), organization.id);
    if (keys.length === 0) {
      context.note(`organization "${organization.name}" has no API keys yet`);
      return;
    }
    const rows = [
      ['KEY ID', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'REVOKED'],
      ...keys.map((key) => [
        key.keyId,
        key.name,
        key.roleName,
        key.createdAt,
        key.lastUsedAt ?? '-',
        key.revokedAt ?? '-',
      ]),
    ];
    for (const line of formatTable(rows)) context.out(line);
  },
};
