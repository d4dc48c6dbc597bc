// The server's own secrets: the keys list cursors are signed with and the key stream resume tokens
// are enciphered with. Storage keeps them (every process on the database shares them); they are
// made here, where the other secrets are.

import { randomBytes } from 'node:crypto';

/** 32 random bytes, base64url. */
export function newServerSecret(): string {
  return randomBytes(32).toString('base64url');
}
