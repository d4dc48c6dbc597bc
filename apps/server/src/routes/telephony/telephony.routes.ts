// The telephony contract: the route comes from the spec (generated); its permission is enforced
// for every operation by http/auth.ts `authorize`.

export { channelsTelephonyNumbersVerifyA2pComplianceRoute as channelsTelephonyNumbersVerifyA2pCompliance } from '../../generated/routes.js';
