// The telephony contract: the route comes from the spec (generated), plus the permission it needs.

import { createRoute } from '@hono/zod-openapi';
import { channelsTelephonyNumbersVerifyA2pComplianceRoute } from '../../generated/routes.js';
import { requirePermission } from '../../http/auth.js';

export const channelsTelephonyNumbersVerifyA2pCompliance = createRoute({
  ...channelsTelephonyNumbersVerifyA2pComplianceRoute,
  middleware: [requirePermission(channelsTelephonyNumbersVerifyA2pComplianceRoute)],
});
