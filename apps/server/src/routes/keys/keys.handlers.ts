import { describeActiveApiKey } from '../../db/repositories/api-keys.js';
import { unknownOrRevokedKey } from '../../http/auth.js';
import type { AppRouteHandler } from '../../http/router.js';
import { toWireApiKeyInfo } from '../../wire/keys.js';
import type * as routes from './keys.routes.js';

export const keysCurrent: AppRouteHandler<typeof routes.keysCurrent> = async (c) => {
  // Read again rather than taken from the authentication, which a process trusts for a moment:
  // the role's name is not in it, and the answer should show a role changed since.
  const key = await describeActiveApiKey(c.get('db'), c.get('auth').keyId);
  // Revoked since the authentication this process still trusts: answered as authentication will.
  if (!key) throw unknownOrRevokedKey();
  return c.json(toWireApiKeyInfo(key), 200);
};
