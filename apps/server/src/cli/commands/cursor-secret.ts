// `agentline cursor-secret rotate`: a new secret for sealing list cursors (runtime/cursor-signer.ts).

import { SEALING_REFRESH_MS } from '../../runtime/cursor-signer.js';
import { isUniqueViolation } from '../../db/engine/errors.js';
import { rotateCursorSecret } from '../../db/repositories/cursor-secrets.js';
import { newServerSecret } from '../../domain/server-secrets.js';
import { CliError } from '../cli-error.js';
import type { Command } from '../command.js';

const REFRESH_SECONDS = SEALING_REFRESH_MS / 1000;

export const cursorSecretRotateCommand: Command = {
  words: ['cursor-secret', 'rotate'],
  summary:
    'Seal list cursors with a new secret; cursors of the previous one keep working, older ones are refused.',
  details: [
    'Every server process on the database seals with the new secret within',
    `${REFRESH_SECONDS} seconds, without a restart. Cursors sealed with the secret before it still`,
    'verify, so walks in progress go on; the rotation after this one retires it. Run two',
    `rotations at least ${REFRESH_SECONDS} seconds apart (plus the time clients take between two`,
    'pages), or walks that began before the first must start again. Example:',
    '  agentline cursor-secret rotate --database postgres://agentline:***@db:5432/agentline',
  ],
  async run(context) {
    const db = await context.db();
    let rotation;
    try {
      rotation = await rotateCursorSecret(db, newServerSecret());
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw new CliError(
        'another rotation of the cursor secret ran at the same time, and took effect',
        'nothing more is needed; run it again only if you meant to rotate twice',
      );
    }
    context.out(String(rotation.sealing));
    context.note(
      `cursor secret ${rotation.sealing} seals list cursors from now on (running servers switch within ${REFRESH_SECONDS} s)`,
    );
    if (rotation.verifying !== null) {
      context.note(
        `secret ${rotation.verifying} still verifies the cursors it sealed, until the next rotation`,
      );
    }
    if (rotation.retired.length > 0) {
      context.note(
        `retired ${rotation.retired.map((id) => `secret ${id}`).join(', ')}: cursors sealed with it are refused (422)`,
      );
    }
  },
};
