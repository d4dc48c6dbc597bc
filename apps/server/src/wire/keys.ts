// The calling API key as GET /api/v1/keys/current answers it: the names a person knows it by and
// what its role allows, never anything of its secret.

import type { ApiKeyDescription } from '../db/repositories/api-keys.js';
import type { components } from '../spec-types.js';

export type WireApiKeyInfo = components['schemas']['ApiKeyInfo'];

export const toWireApiKeyInfo = (key: ApiKeyDescription): WireApiKeyInfo => ({
  key_id: key.keyId,
  name: key.name,
  role: key.roleName,
  // Sorted and once each, so a client compares two answers, or shows one, without caring how
  // the role was written down.
  permissions: [...new Set(key.permissions)].sort(),
  organization: { id: key.organizationId, name: key.organizationName },
});
